package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// sendAPI calls the JSON API with a bearer token and a JSON body ("" for
// none).
func (env *testEnv) sendAPI(method, path, token, body string) *httptest.ResponseRecorder {
	env.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, req)
	return rec
}

// TestReviewerRole: a reviewer opens the review queue and rates samples
// (saves, edits and withdraws their own review) by the form and the API,
// and is refused every other write an editor may make, each refusal
// naming the role it needs; a viewer still cannot rate. On the old code
// the queue offered a reviewer no form and every rating was refused
// ("it needs editor"), and the role did not exist to give.
func TestReviewerRole(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Reviewed", 4)
		run := env.storedRun(d, "judged", d.human, nil)
		demo := env.demo()
		owner := env.createUser(env.ws.ID, "owner@rev.test", models.RoleOwner)
		rita := env.createUser(env.ws.ID, "rita@rev.test", models.RoleReviewer)
		vic := env.createUser(env.ws.ID, "vic@rev.test", models.RoleViewer)
		_, ritaToken := env.apiToken(env.ws.ID, rita.ID)
		_, vicToken := env.apiToken(env.ws.ID, vic.ID)
		ritaCookie, vicCookie := env.sessionCookie(rita), env.sessionCookie(vic)
		i := func(n int64) string { return fmt.Sprint(n) }
		reviewPath := "/datasets/" + i(d.ds.ID) + "/review"
		apiReviews := "/api/v1/datasets/" + i(d.ds.ID) + "/reviews"
		row := d.rowIDs[0]

		// current is the reviewer's latest review of the sample.
		current := func(who models.User) *models.ReviewRating {
			t.Helper()
			all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
			must(t, err)
			var last *models.ReviewRating
			for k := range all["Quality"] {
				if r := all["Quality"][k]; r.UserID != nil && *r.UserID == who.ID {
					last = &all["Quality"][k]
				}
			}
			return last
		}
		rating := func(r *models.ReviewRating) string {
			if r == nil {
				return "no review"
			}
			return fmtRating(r.Score)
		}

		// The queue offers the reviewer a form, the viewer a note.
		queue := reviewPath + "?criterion=0&run=" + i(run.ID)
		for _, c := range []struct {
			who      string
			cookie   *http.Cookie
			form     bool
			wantNote string
		}{
			{"reviewer", ritaCookie, true, ""},
			{"viewer", vicCookie, false, "rating samples takes the reviewer, editor or owner role"},
		} {
			rec := env.send(http.MethodGet, queue, nil, "", c.cookie)
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("queue as %s: %d %.300s", c.who, rec.Code, body)
			}
			if got := strings.Contains(body, `data-testid="review-mine"`); got != c.form {
				t.Errorf("queue as %s: rating form shown %v, want %v", c.who, got, c.form)
			}
			if c.wantNote != "" && !strings.Contains(body, c.wantNote) {
				t.Errorf("queue as %s: no note %q", c.who, c.wantNote)
			}
		}

		// The reviewer saves, edits and withdraws by the form, then by
		// the API; each step leaves the wanted current rating.
		form := func(score, comment string, withdraw bool) url.Values {
			f := url.Values{"run": {i(run.ID)}, "row": {i(row)}, "criterion": {"Quality"}, "score": {score}, "comment": {comment}, "back": {reviewPath}}
			if withdraw {
				f.Set("clear_rating", "1")
			}
			return f
		}
		steps := []struct {
			name string
			do   func() *httptest.ResponseRecorder
			code int
			want string
		}{
			{"form: save", func() *httptest.ResponseRecorder {
				return env.send(http.MethodPost, reviewPath, form("4", "", false), "", ritaCookie)
			}, http.StatusSeeOther, "4"},
			{"form: edit", func() *httptest.ResponseRecorder {
				return env.send(http.MethodPost, reviewPath, form("2", "", false), "", ritaCookie)
			}, http.StatusSeeOther, "2"},
			{"form: withdraw", func() *httptest.ResponseRecorder {
				return env.send(http.MethodPost, reviewPath, form("", "wrong sample", true), "", ritaCookie)
			}, http.StatusSeeOther, fmtRating(nil)},
			{"API: save", func() *httptest.ResponseRecorder {
				return env.sendAPI(http.MethodPost, apiReviews, ritaToken, fmt.Sprintf(`{"run_id": %d, "criterion": "Quality", "row_id": %d, "rating": 5}`, run.ID, row))
			}, http.StatusCreated, "5"},
			{"API: edit", func() *httptest.ResponseRecorder {
				return env.sendAPI(http.MethodPost, apiReviews, ritaToken, fmt.Sprintf(`{"run_id": %d, "criterion": "Quality", "row_id": %d, "rating": 3}`, run.ID, row))
			}, http.StatusCreated, "3"},
			{"API: withdraw", func() *httptest.ResponseRecorder {
				return env.sendAPI(http.MethodPost, apiReviews, ritaToken, fmt.Sprintf(`{"run_id": %d, "criterion": "Quality", "row_id": %d, "clear_rating": true, "comment": "not mine"}`, run.ID, row))
			}, http.StatusCreated, fmtRating(nil)},
		}
		for _, s := range steps {
			rec := s.do()
			if rec.Code != s.code {
				t.Fatalf("reviewer, %s: %d %.300s, want %d", s.name, rec.Code, rec.Body, s.code)
			}
			if rec.Code == http.StatusSeeOther && strings.Contains(rec.Header().Get("Location"), "error") {
				t.Errorf("reviewer, %s: sent to %s", s.name, rec.Header().Get("Location"))
			}
			if got := rating(current(rita)); got != s.want {
				t.Errorf("reviewer, %s: current rating %s, want %s", s.name, got, s.want)
			}
		}
		// The run's page offers the reviewer no recompute of its report
		// with the ratings (an editor's); the owner gets it.
		for _, c := range []struct {
			who    string
			cookie *http.Cookie
			offer  bool
		}{{"reviewer", ritaCookie, false}, {"owner", env.sessionCookie(owner), true}} {
			body := env.send(http.MethodGet, "/runs/"+i(run.ID), nil, "", c.cookie).Body.String()
			if !strings.Contains(body, `data-testid="human-source"`) {
				t.Fatalf("run page as %s: no human ratings panel", c.who)
			}
			if got := strings.Contains(body, `data-testid="recompute-humans"`); got != c.offer {
				t.Errorf("run page as %s: recompute offered %v, want %v", c.who, got, c.offer)
			}
		}
		var acct APIAccount
		rec := env.sendAPI(http.MethodGet, "/api/v1/account", ritaToken, "")
		must(t, json.Unmarshal(rec.Body.Bytes(), &acct))
		if acct.Role != "reviewer" || !slices.Equal(acct.Permissions, []string{"read", "rate"}) {
			t.Errorf("reviewer's account: role %q permissions %v, want reviewer with read and rate", acct.Role, acct.Permissions)
		}

		// A viewer still cannot rate, by either way.
		for _, rec := range []*httptest.ResponseRecorder{
			env.send(http.MethodPost, reviewPath, form("4", "", false), "", vicCookie),
			env.sendAPI(http.MethodPost, apiReviews, vicToken, fmt.Sprintf(`{"run_id": %d, "criterion": "Quality", "row_id": %d, "rating": 4}`, run.ID, row)),
		} {
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "(viewer) does not allow this: it needs reviewer") {
				t.Errorf("viewer rates: %d %.300s, want 403 naming the reviewer role", rec.Code, rec.Body)
			}
		}
		if r := current(vic); r != nil {
			t.Errorf("the viewer's refused rating was stored: %+v", r)
		}

		// Every other write an editor or owner makes is refused to the
		// reviewer, naming the role it needs, and changes nothing.
		runsBefore, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		must(t, err)
		invitesBefore, err := env.db.ListOpenInvites(ctx, env.ws.ID)
		must(t, err)
		refused := []struct {
			name, method, path string
			form               url.Values
			api                string // a JSON body for the API ("" for a form)
			need               models.Role
		}{
			{"launch a run", http.MethodPost, "/projects/" + i(env.project.ID) + "/runs", demo.launchForm("1", "10"), "", models.RoleEditor},
			{"upload a dataset", http.MethodPost, "/projects/" + i(env.project.ID) + "/datasets/upload", url.Values{}, "", models.RoleEditor},
			{"edit a rubric", http.MethodPost, "/rubrics/" + i(demo.rubric.ID), url.Values{"name": {"changed"}}, "", models.RoleEditor},
			{"change a judge or its key", http.MethodPost, "/judges/" + i(demo.judge.ID), url.Values{"name": {"changed"}, "api_key": {"sk-stolen"}}, "", models.RoleOwner},
			{"delete a run", http.MethodPost, "/runs/" + i(run.ID) + "/delete", url.Values{}, "", models.RoleEditor},
			{"make a share link", http.MethodPost, "/shares", url.Values{"kind": {"run"}, "run_id": {i(run.ID)}}, "", models.RoleEditor},
			{"invite a member", http.MethodPost, "/members/invites", url.Values{"role": {"editor"}}, "", models.RoleOwner},
			{"recompute a report with the ratings", http.MethodPost, "/runs/" + i(run.ID) + "/humans", url.Values{}, "", models.RoleEditor},
			{"API: launch a run", http.MethodPost, "/api/v1/projects/" + i(env.project.ID) + "/runs", nil,
				fmt.Sprintf(`{"dataset_id": %d, "rubric_id": %d, "judge_id": %d}`, demo.dataset.ID, demo.rubric.ID, demo.judge.ID), models.RoleEditor},
			{"API: change a judge", http.MethodPut, "/api/v1/judges/" + i(demo.judge.ID), nil, `{"name": "changed"}`, models.RoleOwner},
			{"API: make a share link", http.MethodPost, "/api/v1/shares", nil, fmt.Sprintf(`{"kind": "run", "run_id": %d}`, run.ID), models.RoleEditor},
			{"API: edit a rubric", http.MethodPut, "/api/v1/rubrics/" + i(demo.rubric.ID), nil, `{"name": "changed"}`, models.RoleEditor},
		}
		for _, c := range refused {
			var rec *httptest.ResponseRecorder
			if c.form != nil {
				rec = env.send(c.method, c.path, c.form, "", ritaCookie)
			} else {
				rec = env.sendAPI(c.method, c.path, ritaToken, c.api)
			}
			want := "(reviewer) does not allow this: it needs " + string(c.need)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), want) {
				t.Errorf("reviewer may not %s: got %d %.300s, want 403 saying %q", c.name, rec.Code, rec.Body, want)
			}
		}
		runsAfter, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		must(t, err)
		invitesAfter, err := env.db.ListOpenInvites(ctx, env.ws.ID)
		must(t, err)
		if len(runsAfter) != len(runsBefore) || len(invitesAfter) != len(invitesBefore) {
			t.Errorf("refused writes changed things: runs %d → %d, invites %d → %d", len(runsBefore), len(runsAfter), len(invitesBefore), len(invitesAfter))
		}
		if j, err := env.db.FindJudge(ctx, env.ws.ID, demo.judge.ID); err != nil || j.Name != demo.judge.Name {
			t.Errorf("the judge after the refused change: %q, %v; want %q", j.Name, err, demo.judge.Name)
		}
	})
}

// TestOwnerGivesReviewerRole: Members offers the reviewer role, with a
// line on what each role allows, in the invite form and the role change
// form; an owner invites as reviewer and changes a member to reviewer and
// back, each change in the audit log.
func TestOwnerGivesReviewerRole(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@give.test", models.RoleOwner)
		member := env.createUser(env.ws.ID, "member@give.test", models.RoleEditor)
		oc := env.sessionCookie(owner)

		body := env.send(http.MethodGet, "/members", nil, "", oc).Body.String()
		for _, want := range []string{
			`<option value="reviewer">reviewer: ` + models.RoleReviewer.Allows() + `</option>`,
			`<option value="viewer">viewer: reads, cannot rate samples</option>`,
			`<option value="editor" selected>editor: `,
			`<li><strong>reviewer</strong>: ` + models.RoleReviewer.Allows() + `</li>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("Members lacks %q", want)
			}
		}
		if n := strings.Count(body, `<option value="reviewer"`); n != 3 { // the invite form and both members' role forms
			t.Errorf("Members offers reviewer %d times, want 3 (invite form, two members)", n)
		}

		rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"reviewer"}}, "", oc)
		if rec.Code >= 400 {
			t.Fatalf("invite as reviewer: %d %.300s", rec.Code, rec.Body)
		}
		invs, err := env.db.ListOpenInvites(ctx, env.ws.ID)
		must(t, err)
		if len(invs) != 1 || invs[0].Role != models.RoleReviewer {
			t.Fatalf("open invites %+v, want one as reviewer", invs)
		}

		// Whoever opens a reviewer's invite is told what the role allows.
		_, token, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleReviewer, owner.ID, time.Hour)
		must(t, err)
		page := env.send(http.MethodGet, "/invites/"+token, nil, "").Body.String()
		if want := `invited as <strong>reviewer</strong> <span class="muted" data-testid="invite-role-allows">(` + models.RoleReviewer.Allows() + `)</span>`; !strings.Contains(page, want) {
			t.Errorf("the invite page lacks %q", want)
		}

		for _, c := range []struct {
			to   string
			want models.Role
			code int
		}{
			{"reviewer", models.RoleReviewer, http.StatusSeeOther},
			{"viewer", models.RoleViewer, http.StatusSeeOther},
			{" Reviewer ", models.RoleReviewer, http.StatusSeeOther},
			{"editor", models.RoleEditor, http.StatusSeeOther},
			{"rater", models.RoleEditor, http.StatusUnprocessableEntity},
		} {
			rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/role", member.ID), url.Values{"role": {c.to}}, "", oc)
			if rec.Code != c.code {
				t.Errorf("change role to %q: %d %.300s, want %d", c.to, rec.Code, rec.Body, c.code)
			}
			if c.code == http.StatusUnprocessableEntity && !strings.Contains(rec.Body.String(), "choose owner, editor, reviewer or viewer") {
				t.Errorf("change role to %q: the refusal does not list the roles: %.300s", c.to, rec.Body)
			}
			got, err := env.db.MemberRole(ctx, env.ws.ID, member.ID)
			must(t, err)
			if got != c.want {
				t.Errorf("after changing the role to %q: %s, want %s", c.to, got, c.want)
			}
		}
		events, err := env.db.ListAudit(ctx, env.ws.ID, 0, 50)
		must(t, err)
		var details []string
		for _, e := range events {
			if e.Action == models.AuditMemberRole {
				details = append(details, e.Detail)
			}
		}
		slices.Sort(details)
		if want := []string{"editor → reviewer", "reviewer → editor", "reviewer → viewer", "viewer → reviewer"}; !slices.Equal(details, want) {
			t.Errorf("audit of the role changes %q, want %q", details, want)
		}
	})
}
