package handlers

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestRemovedReviewersRatings walks what happens to a reviewer's ratings
// when an owner removes them mid-review. Their ratings keep counting (a
// removal must not change a report's figures), and every page and answer
// that lists their reviews marks them "no longer a member", where they
// were shown as if the person were still in the workspace; the removal's
// message says their ratings still count and where to exclude them. An
// owner who excludes the person's ratings on the members page leaves them
// out everywhere ratings count: the run's report (its samples' human
// ratings, which states how many it left out), the dataset's export, the
// API's review list (marked excluded) and the sample page (marked);
// counting them again restores the figures.
func TestRemovedReviewersRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		x := env.demoExperiment()
		run := x.batchEval
		crit := run.RubricSnapshot.Criteria[0]
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		owner := env.createUser(env.ws.ID, "owner@team.test", models.RoleOwner)
		rita := env.createUser(env.ws.ID, "rita@team.test", models.RoleEditor)
		rob := env.createUser(env.ws.ID, "rob@team.test", models.RoleEditor)
		oc := env.sessionCookie(owner)
		rate := func(u models.User, row int, score float64) {
			t.Helper()
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: run.DatasetID, RowID: rows[row].ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: u.Email, UserID: &u.ID, RunID: &run.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &score})
			must(t, err)
		}
		// Rows 0 and 1: both rate; row 2: Rita alone.
		rate(rita, 0, crit.Lo)
		rate(rob, 0, crit.Hi)
		rate(rita, 1, crit.Hi)
		rate(rob, 1, crit.Hi)
		rate(rita, 2, crit.Lo)
		if rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}, "", oc); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute = %d: %.300s", rec.Code, rec.Body)
		}
		type exported struct {
			Report struct {
				Criteria []struct {
					Samples []struct {
						ID    string   `json:"id"`
						Human *float64 `json:"human"`
					}
				}
			}
		}
		humans := func(what string) (map[string]*float64, string) {
			t.Helper()
			rec := env.getAs(fmt.Sprintf("/runs/%d/export.json", run.ID), oc)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: export = %d: %.300s", what, rec.Code, rec.Body)
			}
			var ex exported
			must(t, json.Unmarshal(rec.Body.Bytes(), &ex))
			out := map[string]*float64{}
			for _, s := range ex.Report.Criteria[0].Samples {
				out[s.ID] = s.Human
			}
			return out, rec.Body.String()
		}
		near := func(what string, got *float64, want float64) {
			t.Helper()
			switch {
			case math.IsNaN(want) && got != nil:
				t.Errorf("%s: human rating %v, want none", what, *got)
			case !math.IsNaN(want) && (got == nil || math.Abs(*got-want) > 1e-9):
				t.Errorf("%s: human rating %v, want %v", what, exportedOrNil(got), want)
			}
		}
		mid := (crit.Lo + crit.Hi) / 2
		id := func(i int) string { return rows[i].ExternalID }
		sample := fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[2].ID)
		reviewsAPI := func(tok string) []APIReview {
			t.Helper()
			req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/reviews?criterion=%s", run.DatasetID, url.QueryEscape(crit.Name)), nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("review list = %d: %.300s", rec.Code, rec.Body)
			}
			var page Page[APIReview]
			must(t, json.Unmarshal(rec.Body.Bytes(), &page))
			return page.Items
		}
		_, tok := env.apiToken(env.ws.ID, owner.ID)

		// Removed mid-review: the ratings still count, marked.
		rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/remove", rita.ID), url.Values{}, "", oc)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("remove = %d: %.300s", rec.Code, rec.Body)
		}
		if msg := flashText(t, rec); !strings.Contains(msg, "Their 3 browser ratings still count") || !strings.Contains(msg, "Browser ratings by person") {
			t.Errorf("the removal's message does not say the 3 ratings still count and where to exclude them: %q", msg)
		}
		h, body := humans("after the removal")
		near("row 0", h[id(0)], mid)
		near("row 2", h[id(2)], crit.Lo)
		if !strings.Contains(body, `"excluded_ratings": 0`) {
			t.Errorf("the export says ratings were left out before anyone excluded them")
		}
		page := env.getAs(sample, oc).Body.String()
		if !strings.Contains(page, `data-testid="review-former-member"`) || !strings.Contains(page, "(no longer a member)") {
			t.Errorf("the sample page does not mark the removed reviewer's review")
		}
		for _, r := range reviewsAPI(tok) {
			if want := r.UserID != nil && *r.UserID == rita.ID; r.FormerMember != want || r.Excluded {
				t.Errorf("API review %d by %s: former_member %v (want %v), excluded %v (want false)", r.ID, r.Reviewer, r.FormerMember, want, r.Excluded)
			}
		}
		members := env.getAs("/members", oc).Body.String()
		if !strings.Contains(members, `data-testid="rater-former"`) || !strings.Contains(members, "Exclude their ratings") {
			t.Errorf("the members page does not list the former member's ratings with the way to exclude them")
		}

		// Excluded by an owner: left out everywhere ratings count.
		before, err := env.db.GetRun(ctx, run.ID)
		must(t, err)
		rec = env.send(http.MethodPost, fmt.Sprintf("/members/%d/ratings", rita.ID), url.Values{"exclude": {"1"}}, "", oc)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("exclude = %d: %.300s", rec.Code, rec.Body)
		}
		after, err := env.db.GetRun(ctx, run.ID)
		must(t, err)
		if after.HumansVersion <= before.HumansVersion {
			t.Errorf("the run's human ratings version stayed %d: another server process would serve its cached report", after.HumansVersion)
		}
		h, body = humans("after the exclusion")
		near("row 0", h[id(0)], crit.Hi)
		near("row 1", h[id(1)], crit.Hi)
		near("row 2", h[id(2)], math.NaN())
		if !strings.Contains(body, `"excluded_ratings": 3`) || !strings.Contains(body, `"excluded_people": 1`) {
			t.Errorf("the export does not say which ratings it left out")
		}
		// The alignment reads the report's human ratings.
		as, err := env.h.alignSamplesOf(env.localCtx(), after, 0, false, false, env.h.newRunReviews())
		must(t, err)
		for _, s := range as.scores {
			if s.RowID == rows[2].ID && s.Human != nil {
				t.Errorf("the alignment reads row 2's human rating %v, given only by the excluded reviewer", *s.Human)
			}
		}
		runPage := env.getAs(fmt.Sprintf("/runs/%d", run.ID), oc).Body.String()
		if !strings.Contains(runPage, "leaving out 3 ratings by 1 person whose ratings an owner excluded") {
			t.Errorf("the run page does not say which ratings its report left out")
		}
		page = env.getAs(sample, oc).Body.String()
		if !strings.Contains(page, `data-testid="review-excluded"`) || !strings.Contains(page, "only by people whose ratings an owner excluded") {
			t.Errorf("the sample page does not mark the excluded review, or does not say why the sample has no human rating")
		}
		csv := env.getAs(fmt.Sprintf("/datasets/%d/export.csv", run.DatasetID), oc).Body.String()
		if header := strings.SplitN(csv, "\n", 2)[0]; strings.Contains(header, "@browser:rita") || !strings.Contains(header, "@browser:rob") {
			t.Errorf("the dataset export's header %q: want Rob's column and not Rita's", header)
		}
		for _, r := range reviewsAPI(tok) {
			if want := r.UserID != nil && *r.UserID == rita.ID; r.Excluded != want {
				t.Errorf("API review %d by %s: excluded %v, want %v", r.ID, r.Reviewer, r.Excluded, want)
			}
		}
		if !strings.Contains(env.getAs("/members", oc).Body.String(), "Count their ratings again") {
			t.Errorf("the members page offers no way to count the excluded ratings again")
		}

		// Counted again: the figures are back.
		if rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/ratings", rita.ID), url.Values{"exclude": {"0"}}, "", oc); rec.Code != http.StatusSeeOther {
			t.Fatalf("count again = %d: %.300s", rec.Code, rec.Body)
		}
		h, _ = humans("counted again")
		near("row 0", h[id(0)], mid)
		near("row 2", h[id(2)], crit.Lo)

		// Only someone who rated in this workspace; only an owner.
		if rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/ratings", owner.ID), url.Values{"exclude": {"1"}}, "", oc); rec.Code != http.StatusNotFound {
			t.Errorf("excluding someone who never rated = %d, want 404", rec.Code)
		}
		if rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/ratings", rita.ID), url.Values{"exclude": {"1"}}, "", env.sessionCookie(rob)); rec.Code != http.StatusForbidden {
			t.Errorf("an editor excluding ratings = %d, want 403", rec.Code)
		}
	})
}
