package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestRemovalRecordMatchesTheAccount: a former member of workspace A whose
// session works in their own workspace B opens a page of A, and presses
// Save on a review typed in a tab of A. The removal's record
// (models.WorkspaceRemoval) answers both with a 403 naming A and who
// removed them, keeping what was typed and storing nothing, however the
// membership ended and whatever their address is now: removed by an owner
// and then changed their address; removed with no audit entry; an owner
// who left. One invited again who joined sees A's page and saves the
// review as any member. On the old code (the audit log matched by the
// address at the time, and the session's memory of a removal) the first
// two were answered "not found" and the typed text was lost.
func TestRemovalRecordMatchesTheAccount(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Data of A", 2)
		run := env.storedRun(d, "judged", d.human, nil)
		owner := env.createUser(env.ws.ID, "ada@record.test", models.RoleOwner)
		oc := env.workspaceCookie(owner, env.ws.ID)
		page := fmt.Sprintf("/datasets/%d", d.ds.ID)
		reviewPath := page + "/review"
		quotedA := html.EscapeString(web.Quoted(env.ws.Name))
		removeAs := func(t *testing.T, u models.User, cookie *http.Cookie) {
			t.Helper()
			if rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/remove", u.ID), url.Values{}, "", cookie); rec.Code != http.StatusSeeOther {
				t.Fatalf("remove %s: %d %.300s", u.Email, rec.Code, rec.Body)
			}
		}
		tests := []struct {
			name string
			role models.Role
			// end ends the membership of u (and does what follows).
			end func(t *testing.T, u models.User)
			// by is who the refusal says removed them; "" when u is a
			// member again.
			by string
		}{
			{"address changed after the removal", models.RoleReviewer, func(t *testing.T, u models.User) {
				removeAs(t, u, oc)
				must(t, env.db.Gorm.Model(&models.User{}).Where("id = ?", u.ID).Update("email", "now-"+u.Email).Error)
			}, html.EscapeString(owner.Name+" <"+owner.Email+">") + " removed you"},
			{"removed without an audit entry", models.RoleReviewer, func(t *testing.T, u models.User) {
				if _, err := env.db.RemoveMember(ctx, env.ws.ID, u.ID, false); err != nil {
					t.Fatal(err)
				}
			}, "an owner removed you"},
			{"an owner who left", models.RoleOwner, func(t *testing.T, u models.User) {
				removeAs(t, u, env.workspaceCookie(u, env.ws.ID))
			}, "you removed yourself"},
			{"invited again and joined", models.RoleReviewer, func(t *testing.T, u models.User) {
				removeAs(t, u, oc)
				rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"reviewer"}}, "", oc)
				m := onceLinkRE.FindStringSubmatch(rec.Body.String())
				if rec.Code != http.StatusOK || m == nil {
					t.Fatalf("create invite = %d, link %v", rec.Code, m)
				}
				// Joined from a session of their own workspace, which then
				// moves back there (the checks below work in B).
				if rec := env.send(http.MethodPost, "/invites/"+m[2], url.Values{}, "", env.workspaceCookie(u, 0)); rec.Code != http.StatusSeeOther {
					t.Fatalf("join = %d: %.300s", rec.Code, rec.Body)
				}
			}, ""},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				u := env.createUser(env.ws.ID, fmt.Sprintf("m%d@record.test", i), tt.role)
				b, err := env.db.CreateWorkspace(ctx, fmt.Sprint("B ", i), u.ID)
				must(t, err)
				tt.end(t, u)
				// Their session works in B; a session in A when a member
				// again (the page of A is then theirs to open).
				cookie := env.workspaceCookie(u, b.ID)
				if tt.by == "" {
					cookie = env.workspaceCookie(u, env.ws.ID)
				}
				form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(d.rowIDs[i%2])}, "criterion": {"Quality"}, "score": {"2"},
					"agree": {"agree"}, "comment": {"<b>typed</b> & kept"}, "back": {reviewPath + "?criterion=0"}}
				removed := "You are no longer a member of workspace " + quotedA + ": " + tt.by + "."

				get := env.send(http.MethodGet, page, nil, "", cookie)
				save := env.send(http.MethodPost, reviewPath, form, "", cookie)
				stored := false
				all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{d.rowIDs[i%2]})
				must(t, err)
				for _, r := range all["Quality"] {
					stored = stored || (r.UserID != nil && *r.UserID == u.ID)
				}

				if tt.by == "" {
					if get.Code != http.StatusOK || !strings.Contains(get.Body.String(), "Data of A") || strings.Contains(get.Body.String(), "no longer a member") {
						t.Errorf("GET %s = %d, want A's page without a removal notice: %.400s", page, get.Code, get.Body)
					}
					if save.Code != http.StatusSeeOther || !stored {
						t.Errorf("save = %d, stored %v; want 303 and the review stored: %.400s", save.Code, stored, save.Body)
					}
					return
				}
				if get.Code != http.StatusForbidden || !strings.Contains(get.Body.String(), removed) || strings.Contains(get.Body.String(), "Data of A") {
					t.Errorf("GET %s = %d, want 403 saying %q and nothing of A's data: %.600s", page, get.Code, removed, get.Body)
				}
				body := save.Body.String()
				if save.Code != http.StatusForbidden {
					t.Fatalf("save = %d, want 403: %.400s", save.Code, body)
				}
				for _, w := range []string{`data-testid="review-refused"`, removed + " Nothing you sent from its pages was saved.",
					`data-testid="kept-comment">&lt;b&gt;typed&lt;/b&gt; &amp; kept</textarea>`} {
					if !strings.Contains(body, w) {
						t.Errorf("the refusal lacks %q:\n%s", w, body)
					}
				}
				if stored {
					t.Error("the refused review was stored")
				}
			})
		}
	})
}
