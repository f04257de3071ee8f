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

// TestReviewRefusedForRoleKeepsWhatWasTyped: a reviewer whose role an
// owner lowers to viewer while they type a review is refused the save
// (403), and the refusal page keeps what they typed (escaped), says why
// it was not saved and what to do (ask an owner for the reviewer role),
// and links back to the page they rated on; nothing is stored. Other
// refusals of the role keep nothing of what was sent. On the old code the
// page was the bare "Your role ... does not allow this" and the comment
// was lost.
func TestReviewRefusedForRoleKeepsWhatWasTyped(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Refused", 2)
		run := env.storedRun(d, "judged", d.human, nil)
		rita := env.createUser(env.ws.ID, "rita@refused.test", models.RoleReviewer)
		ritaCookie := env.sessionCookie(rita)
		reviewPath := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		back := reviewPath + "?criterion=0"
		row := d.rowIDs[0]
		comment := "<b>Too long</b> & off topic: the answer repeats itself"
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"}, "score": {"4"},
			"agree": {"disagree"}, "reason": {"it <i>misses</i> the point"}, "comment": {comment}, "tags": {"long, <off>"}, "back": {back}}

		// The form is shown to the reviewer; then an owner lowers the role.
		if rec := env.send(http.MethodGet, reviewPath+"?criterion=0&run="+fmt.Sprint(run.ID), nil, "", ritaCookie); !strings.Contains(rec.Body.String(), `data-testid="review-form"`) {
			t.Fatalf("the reviewer is shown no review form: %d %.300s", rec.Code, rec.Body)
		}
		must(t, env.db.SetMemberRole(ctx, env.ws.ID, rita.ID, models.RoleViewer))

		tests := []struct {
			name   string
			path   string
			form   url.Values
			kept   bool
			want   []string
			absent []string
		}{
			{"the review's save", reviewPath, form, true, []string{
				"(viewer) does not allow this: it needs reviewer",
				"Nothing of this review was saved",
				"your role in this workspace is now viewer",
				"Ask an owner of the workspace to give you the reviewer role",
				`<strong data-testid="kept-score">4</strong>`,
				`<strong data-testid="kept-agree">disagree</strong>`,
				`data-testid="kept-comment">&lt;b&gt;Too long&lt;/b&gt; &amp; off topic: the answer repeats itself</textarea>`,
				`data-testid="kept-reason">it &lt;i&gt;misses&lt;/i&gt; the point</textarea>`,
				`data-testid="kept-tags">long, &lt;off&gt;</textarea>`,
				`href="` + strings.ReplaceAll(back, "&", "&amp;") + `" data-testid="review-refused-back"`,
			}, []string{"<b>Too long</b>", "<i>misses</i>", "<off>"}},
			// Another form's refusal keeps nothing it was sent.
			{"another form", "/projects", url.Values{"name": {"<b>kept?</b>"}}, false, []string{
				"(viewer) does not allow this: it needs editor",
			}, []string{"kept?", "data-testid=\"review-refused\""}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.send(http.MethodPost, tt.path, tt.form, "", ritaCookie)
				if rec.Code != http.StatusForbidden {
					t.Fatalf("POST %s = %d, want 403: %.300s", tt.path, rec.Code, rec.Body)
				}
				body := rec.Body.String()
				if got := strings.Contains(body, `data-testid="review-refused"`); got != tt.kept {
					t.Errorf("POST %s: refusal page keeps what was typed %v, want %v", tt.path, got, tt.kept)
				}
				for _, w := range tt.want {
					if !strings.Contains(body, w) {
						t.Errorf("POST %s: page lacks %q:\n%s", tt.path, w, body)
					}
				}
				for _, a := range tt.absent {
					if strings.Contains(body, a) {
						t.Errorf("POST %s: page has %q", tt.path, a)
					}
				}
			})
		}
		all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
		must(t, err)
		for _, r := range all["Quality"] {
			if r.UserID != nil && *r.UserID == rita.ID {
				t.Errorf("the refused review was stored: %+v", r)
			}
		}
	})
}

// TestReviewRefusedForLeavingKeepsWhatWasTyped: a reviewer whom an owner
// removes from the workspace while they type a review is refused the save
// (403), and the refusal page keeps what they typed (escaped, read-only),
// says they are no longer a member and that nothing was saved, and what to
// do (ask an owner of that workspace to invite them again), whether they
// work in another workspace now or in none; it links to no page of the
// workspace they left. Another form sent after removal keeps nothing. On
// the old code the page was the bare "You are no longer a member" and the
// comment was lost.
func TestReviewRefusedForLeavingKeepsWhatWasTyped(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Left", 2)
		run := env.storedRun(d, "judged", d.human, nil)
		rita := env.createUser(env.ws.ID, "rita@left.test", models.RoleReviewer) // has a workspace of her own too
		rob := env.createUser(env.ws.ID, "rob@left.test", models.RoleReviewer)   // has none but this one
		if _, err := env.db.CreateWorkspace(ctx, "Rita own", rita.ID); err != nil {
			t.Fatal(err)
		}
		reviewPath := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		back := reviewPath + "?criterion=0"
		row := d.rowIDs[1]
		comment := "<b>Too long</b> & off topic: the answer repeats itself"
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"}, "score": {"2"},
			"agree": {"agree"}, "reason": {"it <i>misses</i> the point"}, "comment": {comment}, "tags": {"long, <off>"}, "back": {back}}
		left := "You are no longer a member of workspace " + html.EscapeString(web.Quoted(env.ws.Name)) + ": an owner removed you. Nothing you sent from its pages was saved."
		todo := "Ask an owner of workspace " + html.EscapeString(web.Quoted(env.ws.Name)) + " to invite you again, then rate the sample again; what you typed is below, to copy."
		kept := []string{
			`<strong data-testid="kept-score">2</strong>`,
			`<strong data-testid="kept-agree">agree</strong>`,
			`data-testid="kept-comment">&lt;b&gt;Too long&lt;/b&gt; &amp; off topic: the answer repeats itself</textarea>`,
			`data-testid="kept-reason">it &lt;i&gt;misses&lt;/i&gt; the point</textarea>`,
			`data-testid="kept-tags">long, &lt;off&gt;</textarea>`,
		}
		escaped := []string{"<b>Too long</b>", "<i>misses</i>", "<off>", `data-testid="review-refused-back"`}

		// The form is shown to both reviewers; then an owner removes them.
		cookies := map[int64]*http.Cookie{}
		for _, u := range []models.User{rita, rob} {
			cookies[u.ID] = env.workspaceCookie(u, env.ws.ID)
			if rec := env.send(http.MethodGet, reviewPath+"?criterion=0&run="+fmt.Sprint(run.ID), nil, "", cookies[u.ID]); !strings.Contains(rec.Body.String(), `data-testid="review-form"`) {
				t.Fatalf("%s is shown no review form: %d %.300s", u.Email, rec.Code, rec.Body)
			}
			if _, err := env.db.RemoveMember(ctx, env.ws.ID, u.ID, false); err != nil {
				t.Fatal(err)
			}
		}

		tests := []struct {
			name   string
			who    models.User
			path   string
			form   url.Values
			kept   bool
			want   []string
			absent []string
		}{
			{"the review's save, now working elsewhere", rita, reviewPath, form, true,
				append([]string{left, "You now work in workspace", todo}, kept...), escaped},
			{"the review's save, in no workspace now", rob, reviewPath, form, true,
				append([]string{left, "Ask an owner of a workspace for an invite", todo}, kept...), escaped},
			// Another form's refusal keeps nothing it was sent.
			{"another form", rita, "/projects", url.Values{"name": {"<b>kept?</b>"}}, false,
				[]string{left}, []string{"kept?", todo}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// A fresh session on the page of the workspace left: a
				// refusal moves a session on to the next workspace.
				rec := env.send(http.MethodPost, tt.path, tt.form, "", env.workspaceCookie(tt.who, env.ws.ID))
				if rec.Code != http.StatusForbidden {
					t.Fatalf("POST %s = %d, want 403: %.300s", tt.path, rec.Code, rec.Body)
				}
				body := rec.Body.String()
				if got := strings.Contains(body, `data-testid="review-refused"`); got != tt.kept {
					t.Errorf("POST %s: refusal page keeps what was typed %v, want %v", tt.path, got, tt.kept)
				}
				for _, w := range tt.want {
					if !strings.Contains(body, w) {
						t.Errorf("POST %s: page lacks %q:\n%s", tt.path, w, body)
					}
				}
				for _, a := range tt.absent {
					if strings.Contains(body, a) {
						t.Errorf("POST %s: page has %q", tt.path, a)
					}
				}
			})
		}
		all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
		must(t, err)
		for _, r := range all["Quality"] {
			if r.UserID != nil && (*r.UserID == rita.ID || *r.UserID == rob.ID) {
				t.Errorf("the refused review was stored: %+v", r)
			}
		}
	})
}

// TestReviewRefusedForLeavingAfterAnotherPageKeepsWhatWasTyped: a reviewer
// removed from the workspace while typing a review, whose other tab opens
// a page first (which tells them they were removed and moves their session
// on), then presses Save in the first tab: the save is refused (403) and
// the page keeps what they typed (escaped, read-only), says they are no
// longer a member and what to do, whether they now work in another
// workspace or in none, and whichever page the other tab opened. Nothing
// is saved. On the old code
// the save was answered "not found" from the workspace they work in now
// (or refused for a role when in none), and what they typed was lost.
func TestReviewRefusedForLeavingAfterAnotherPageKeepsWhatWasTyped(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Left", 2)
		run := env.storedRun(d, "judged", d.human, nil)
		reviewPath := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		queue := reviewPath + "?criterion=0&run=" + fmt.Sprint(run.ID)
		row := d.rowIDs[1]
		comment := "<b>Too long</b> & off topic: the answer repeats itself"
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"}, "score": {"2"},
			"agree": {"agree"}, "reason": {"it <i>misses</i> the point"}, "comment": {comment}, "tags": {"long, <off>"}, "back": {reviewPath + "?criterion=0"}}
		left := "You are no longer a member of workspace " + html.EscapeString(web.Quoted(env.ws.Name)) + ": an owner removed you. Nothing you sent from its pages was saved."
		todo := "Ask an owner of workspace " + html.EscapeString(web.Quoted(env.ws.Name)) + " to invite you again, then rate the sample again; what you typed is below, to copy."
		kept := []string{
			`<strong data-testid="kept-score">2</strong>`,
			`<strong data-testid="kept-agree">agree</strong>`,
			`data-testid="kept-comment">&lt;b&gt;Too long&lt;/b&gt; &amp; off topic: the answer repeats itself</textarea>`,
			`data-testid="kept-reason">it &lt;i&gt;misses&lt;/i&gt; the point</textarea>`,
			`data-testid="kept-tags">long, &lt;off&gt;</textarea>`,
		}
		tests := []struct {
			name, first string // the page the other tab opens first
			own         bool   // whether the reviewer has a workspace of their own
			now         string // where the page says they work now
		}{
			{"working elsewhere, the home page first", "/", true, "You now work in workspace"},
			{"working elsewhere, the queue of the workspace left first", queue, true, "You now work in workspace"},
			{"working elsewhere, their account page first", "/account", true, "You now work in workspace"},
			{"in no workspace, the home page first", "/", false, "Ask an owner of a workspace for an invite"},
			{"in no workspace, the queue of the workspace left first", queue, false, "Ask an owner of a workspace for an invite"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				u := env.createUser(env.ws.ID, fmt.Sprintf("rev%d@left.test", i), models.RoleReviewer)
				if tt.own {
					if _, err := env.db.CreateWorkspace(ctx, fmt.Sprint("Own ", i), u.ID); err != nil {
						t.Fatal(err)
					}
				}
				cookie := env.workspaceCookie(u, env.ws.ID)
				if rec := env.send(http.MethodGet, queue, nil, "", cookie); !strings.Contains(rec.Body.String(), `data-testid="review-form"`) {
					t.Fatalf("no review form: %d %.300s", rec.Code, rec.Body)
				}
				if _, err := env.db.RemoveMember(ctx, env.ws.ID, u.ID, false); err != nil {
					t.Fatal(err)
				}
				// The other tab: a page of their own says they were removed
				// (the queue of the workspace left is not theirs now: "not
				// found" where they work, or the notice when in none).
				rec := env.send(http.MethodGet, tt.first, nil, "", cookie)
				if notice := strings.Contains(rec.Body.String(), "You are no longer a member of workspace "+html.EscapeString(web.Quoted(env.ws.Name))); rec.Code >= 500 || (tt.first != queue && !notice) {
					t.Fatalf("GET %s first: %d, notice of the removal %v: %.300s", tt.first, rec.Code, notice, rec.Body)
				}
				// Save in the first tab, twice (a second press as well).
				for range 2 {
					rec = env.send(http.MethodPost, reviewPath, form, "", cookie)
					if rec.Code != http.StatusForbidden {
						t.Fatalf("save after GET %s = %d, want 403: %.500s", tt.first, rec.Code, rec.Body)
					}
					body := rec.Body.String()
					if !strings.Contains(body, `data-testid="review-refused"`) {
						t.Errorf("the refusal does not keep what was typed:\n%s", body)
					}
					for _, w := range append([]string{left, tt.now, todo}, kept...) {
						if !strings.Contains(body, w) {
							t.Errorf("the refusal lacks %q:\n%s", w, body)
						}
					}
					for _, a := range []string{"<b>Too long</b>", "<i>misses</i>", "<off>", `data-testid="review-refused-back"`} {
						if strings.Contains(body, a) {
							t.Errorf("the refusal has %q", a)
						}
					}
				}
				all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
				must(t, err)
				for _, r := range all["Quality"] {
					if r.UserID != nil && *r.UserID == u.ID {
						t.Errorf("the refused review was stored: %+v", r)
					}
				}
			})
		}
	})
}
