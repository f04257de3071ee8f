package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestRemovedWhileWorkingElsewhere: a person removed from workspace A by
// an owner while their session works in workspace B (so no page ever told
// them), who then opens a page of A (a link from a mail, a bookmark) or
// presses Save on a review typed in a tab of A, is answered 403 saying
// they were removed from A (its name escaped), by whom (the owner as the
// log recorded them, escaped), and what to do; a review's save keeps what
// was typed (escaped, read-only) and stores nothing. Nothing of A's data
// is shown. The same holds for one who signed in again after the removal
// and works in no workspace, and for one whose role in B is too weak to
// save a review there. A stranger to A (never a member) still gets "not
// found", and no word of A. On the old code the pages and the save were
// answered 404 (or "not a member of any workspace yet", or refused for
// B's role) and the typed text was lost. One whose session worked in A is
// told on their first page who removed them (it said "an owner").
func TestRemovedWhileWorkingElsewhere(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const wsName = `<i>Acme</i> & "Co"`
		must(t, env.db.Gorm.Table("workspaces").Where("id = ?", env.ws.ID).Update("name", wsName).Error)
		d := env.ratedDataset("Secret <dataset> of A", 2)
		run := env.storedRun(d, "judged", d.human, nil)
		owner := env.createUser(env.ws.ID, "ada@removed.test", models.RoleOwner)
		owner.Name = "Ada <b>Boss</b>"
		must(t, env.db.Gorm.Model(&models.User{}).Where("id = ?", owner.ID).Update("name", owner.Name).Error)

		// rita works in her own workspace B; vic is a viewer of B; rob
		// has only A; sam was never a member of A.
		rita := env.createUser(env.ws.ID, "rita@removed.test", models.RoleReviewer)
		b, err := env.db.CreateWorkspace(ctx, "Rita <own>", rita.ID)
		must(t, err)
		vic := env.createUser(b.ID, "vic@removed.test", models.RoleViewer)
		must(t, env.db.Gorm.Create(&models.Membership{WorkspaceID: env.ws.ID, UserID: vic.ID, Role: models.RoleReviewer, CreatedAt: time.Now().UTC()}).Error)
		rob := env.createUser(env.ws.ID, "rob@removed.test", models.RoleReviewer)
		sam := env.createUser(b.ID, "sam@removed.test", models.RoleOwner)
		tina := env.createUser(env.ws.ID, "tina@removed.test", models.RoleReviewer) // her session works in A
		tinaCookie := env.workspaceCookie(tina, env.ws.ID)

		// Their sessions work in B before the removal (rob's in A).
		cookies := map[int64]*http.Cookie{rita.ID: env.workspaceCookie(rita, b.ID), vic.ID: env.workspaceCookie(vic, b.ID), sam.ID: env.workspaceCookie(sam, b.ID)}
		oc := env.workspaceCookie(owner, env.ws.ID)
		for _, u := range []models.User{rita, vic, rob, tina} {
			if rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/remove", u.ID), url.Values{}, "", oc); rec.Code != http.StatusSeeOther {
				t.Fatalf("remove %s: %d %.300s", u.Email, rec.Code, rec.Body)
			}
		}
		// rob signs in again after the removal: a session in no workspace.
		cookies[rob.ID] = env.sessionCookie(rob)

		quotedA := html.EscapeString(web.Quoted(wsName))
		removed := "You are no longer a member of workspace " + quotedA + ": " + html.EscapeString(owner.Name+" <"+owner.Email+">") + " removed you."
		openAgain := "To open the pages of workspace " + quotedA + " again, ask one of its owners to invite you again."
		todo := "Ask an owner of workspace " + quotedA + " to invite you again, then rate the sample again; what you typed is below, to copy."
		secret := []string{"Secret", "&lt;dataset&gt;", "<i>Acme</i>", "<b>Boss</b>"}

		reviewPath := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		pages := []string{
			fmt.Sprintf("/datasets/%d", d.ds.ID),
			reviewPath + "?criterion=0&run=" + fmt.Sprint(run.ID),
			fmt.Sprintf("/runs/%d", run.ID),
			fmt.Sprintf("/runs/%d/samples/%d", run.ID, d.rowIDs[0]),
			fmt.Sprintf("/projects/%d", env.project.ID),
		}
		for _, tt := range []struct {
			name string
			who  models.User
			now  string
		}{
			{"working in another workspace", rita, "You now work in workspace " + html.EscapeString(web.Quoted(b.Name)) + "."},
			{"a viewer of another workspace", vic, "You now work in workspace " + html.EscapeString(web.Quoted(b.Name)) + "."},
			{"signed in again, in no workspace", rob, "Ask an owner of a workspace for an invite"},
		} {
			for _, path := range pages {
				t.Run(tt.name+" GET "+path, func(t *testing.T) {
					rec := env.send(http.MethodGet, path, nil, "", cookies[tt.who.ID])
					if rec.Code != http.StatusForbidden {
						t.Fatalf("GET %s = %d, want 403: %.400s", path, rec.Code, rec.Body)
					}
					body := rec.Body.String()
					for _, w := range []string{removed, tt.now, openAgain} {
						if !strings.Contains(body, w) {
							t.Errorf("GET %s lacks %q:\n%s", path, w, body)
						}
					}
					for _, a := range append(secret, "Nothing you sent") {
						if strings.Contains(body, a) {
							t.Errorf("GET %s shows %q", path, a)
						}
					}
				})
			}
		}

		// A session that worked in A: its first page says so, naming the
		// remover too.
		t.Run("the session's workspace left, its first page", func(t *testing.T) {
			rec := env.send(http.MethodGet, "/account", nil, "", tinaCookie)
			for _, w := range []string{removed, openAgain} {
				if !strings.Contains(rec.Body.String(), w) {
					t.Errorf("GET /account = %d, lacks %q:\n%s", rec.Code, w, rec.Body)
				}
			}
		})

		row := d.rowIDs[1]
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"}, "score": {"2"},
			"agree": {"agree"}, "reason": {"it <i>misses</i> the point"}, "comment": {"<b>Too long</b> & off topic"}, "tags": {"long, <off>"}, "back": {reviewPath + "?criterion=0"}}
		kept := []string{
			`<strong data-testid="kept-score">2</strong>`,
			`<strong data-testid="kept-agree">agree</strong>`,
			`data-testid="kept-comment">&lt;b&gt;Too long&lt;/b&gt; &amp; off topic</textarea>`,
			`data-testid="kept-reason">it &lt;i&gt;misses&lt;/i&gt; the point</textarea>`,
			`data-testid="kept-tags">long, &lt;off&gt;</textarea>`,
		}
		for _, u := range []models.User{rita, vic, rob} {
			t.Run("review save of "+u.Email, func(t *testing.T) {
				rec := env.send(http.MethodPost, reviewPath, form, "", cookies[u.ID])
				if rec.Code != http.StatusForbidden {
					t.Fatalf("save = %d, want 403: %.400s", rec.Code, rec.Body)
				}
				body := rec.Body.String()
				for _, w := range append([]string{`data-testid="review-refused"`, removed + " Nothing you sent from its pages was saved.", todo}, kept...) {
					if !strings.Contains(body, w) {
						t.Errorf("the refusal lacks %q:\n%s", w, body)
					}
				}
				for _, a := range append(secret, "<b>Too long</b>", "<off>", `data-testid="review-refused-back"`) {
					if strings.Contains(body, a) {
						t.Errorf("the refusal shows %q", a)
					}
				}
			})
		}
		all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
		must(t, err)
		for _, r := range all["Quality"] {
			if r.UserID != nil && *r.UserID != owner.ID {
				t.Errorf("a refused review was stored: %+v", r)
			}
		}

		// Never a member of A: "not found", and no word of A or its owner.
		for _, path := range pages {
			rec := env.send(http.MethodGet, path, nil, "", cookies[sam.ID])
			if rec.Code != http.StatusNotFound {
				t.Errorf("stranger GET %s = %d, want 404", path, rec.Code)
			}
			for _, a := range append(secret, "Acme", "Ada", "no longer a member") {
				if strings.Contains(rec.Body.String(), a) {
					t.Errorf("stranger GET %s shows %q", path, a)
				}
			}
		}
		if rec := env.send(http.MethodPost, reviewPath, form, "", cookies[sam.ID]); rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "Acme") {
			t.Errorf("stranger's save = %d, want 404 naming nothing of A: %.300s", rec.Code, rec.Body)
		}
	})
}

// TestLeftWorkspaceTextSaysWhoRemoved: the removal notice names who
// removed the person when the log says (else "an owner"), says so of one
// who removed themselves, and says how to open the workspace's pages again
// unless it refuses a form (the review's refusal page says what to do).
func TestLeftWorkspaceTextSaysWhoRemoved(t *testing.T) {
	b := models.Workspace{ID: 2, Name: "B"}
	for _, tt := range []struct {
		name    string
		p       Principal
		refused bool
		want    string
	}{
		{"unknown remover, a page", Principal{Left: "A", Workspace: b}, false,
			`You are no longer a member of workspace “A”: an owner removed you. You now work in workspace “B”. To open the pages of workspace “A” again, ask one of its owners to invite you again.`},
		{"known remover, a page", Principal{Left: "A", LeftBy: "Ada <ada@x.test>", Workspace: b}, false,
			`You are no longer a member of workspace “A”: Ada <ada@x.test> removed you. You now work in workspace “B”. To open the pages of workspace “A” again, ask one of its owners to invite you again.`},
		{"removed themselves, in no workspace", Principal{Left: "A", LeftSelf: true}, false,
			`You are no longer a member of workspace “A”: you removed yourself. Ask an owner of a workspace for an invite, or create a workspace of your own on Your account. To open the pages of workspace “A” again, ask one of its owners to invite you again.`},
		{"known remover, a form", Principal{Left: "A", LeftBy: "Ada <ada@x.test>", Workspace: b}, true,
			`You are no longer a member of workspace “A”: Ada <ada@x.test> removed you. Nothing you sent from its pages was saved. You now work in workspace “B”.`},
	} {
		if got := leftWorkspaceText(tt.p, tt.refused); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
