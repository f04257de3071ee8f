package handlers

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestLastOwnerSurvivesConcurrentChanges: two owners demoting or removing
// each other at the same moment leave one owner, never none. On
// PostgreSQL both requests counted two owners before either change was
// written, so both passed the "at least one owner stays" check and the
// workspace was left without an owner (no one could manage it again).
// Each case runs in fresh workspaces several times, as the race is not
// lost every time.
func TestLastOwnerSurvivesConcurrentChanges(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		demote := func(u models.User) (string, url.Values) {
			return "/members/" + itoa(u.ID) + "/role", url.Values{"role": {"editor"}}
		}
		remove := func(u models.User) (string, url.Values) {
			return "/members/" + itoa(u.ID) + "/remove", nil
		}
		cases := []struct {
			name         string
			aDoes, bDoes func(models.User) (string, url.Values)
		}{
			{"each demotes the other", demote, demote},
			{"each removes the other", remove, remove},
			{"one demotes, the other removes", demote, remove},
			{"each demotes themself", nil, nil},
		}
		const tries = 20
		for ci, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				// The same two accounts in every try's fresh workspace: an
				// account's password hash (argon2id) cost more than the
				// race itself, some 0.4 s a try under load.
				tag := itoa(int64(ci))
				a := env.createUser(env.ws.ID, "a"+tag+"@race.test", models.RoleViewer)
				b := env.createUser(env.ws.ID, "b"+tag+"@race.test", models.RoleViewer)
				for i := range tries {
					tag := tag + "-" + itoa(int64(i))
					ws, err := env.db.CreateWorkspace(ctx, "race "+tag, a.ID)
					if err != nil {
						t.Fatal(err)
					}
					if err := env.db.Gorm.Create(&models.Membership{WorkspaceID: ws.ID, UserID: b.ID, Role: models.RoleOwner, CreatedAt: time.Now().UTC()}).Error; err != nil {
						t.Fatal(err)
					}
					// Each acts on the other, or on themself.
					pa, fa := demote(a)
					pb, fb := demote(b)
					if tc.aDoes != nil {
						pa, fa = tc.aDoes(b)
						pb, fb = tc.bDoes(a)
					}
					ca, cb := env.workspaceCookie(a, ws.ID), env.workspaceCookie(b, ws.ID)
					start := make(chan struct{})
					codes := make([]int, 2)
					var wg sync.WaitGroup
					for k, r := range []struct {
						path string
						form url.Values
						ck   *http.Cookie
					}{{pa, fa, ca}, {pb, fb, cb}} {
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							codes[k] = env.send(http.MethodPost, r.path, r.form, "", r.ck).Code
						}()
					}
					close(start)
					wg.Wait()
					ms, err := env.db.ListMembers(ctx, ws.ID)
					if err != nil {
						t.Fatal(err)
					}
					owners := 0
					for _, m := range ms {
						if m.Role == models.RoleOwner {
							owners++
						}
					}
					if owners != 1 {
						t.Fatalf("try %d: %d owners left (answers %v), want exactly 1", i, owners, codes)
					}
				}
			})
		}
	})
}

// workspaceCookie signs u in with wsID as the current workspace.
func (env *testEnv) workspaceCookie(u models.User, wsID int64) *http.Cookie {
	env.t.Helper()
	sm := env.h.Sessions
	ctx, err := sm.Load(context.Background(), "")
	if err != nil {
		env.t.Fatal(err)
	}
	sm.Put(ctx, sessUserID, u.ID)
	sm.Put(ctx, sessEpoch, u.SessionEpoch)
	sm.Put(ctx, sessWorkspaceID, wsID)
	token, _, err := sm.Commit(ctx)
	if err != nil {
		env.t.Fatal(err)
	}
	return &http.Cookie{Name: sm.Cookie.Name, Value: token}
}
