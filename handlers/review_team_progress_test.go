package handlers

import (
	"context"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewQueueTeamProgress: the queue says how many of the run's
// samples the team rated (at least one rating that counts) and how many
// the reader did. A history of reviews on a finished demo run: Ann rates
// three samples; Bob rates one of hers and another, then withdraws the
// other; Eve rates a sample twice; Cid (an account) rates a sample and an
// owner excludes his ratings; Dan rates a sample on another scale. The
// team's count is recomputed here from every stored review by the rule
// the line states (a reviewer's latest review of a sample on the
// criterion's scale holds a rating, the reviewer not excluded) and read
// from the page in the stored and the full path alike. It failed before:
// the queue had no team line.
func TestReviewQueueTeamProgress(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.startRun(d.dataset, "progress", models.MethodBatchEval, nil).ID, 60*time.Second)
		crit := run.RubricSnapshot.Criteria[0]
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		cid := env.createUser(env.ws.ID, "cid@example.org", models.RoleReviewer)
		rate := func(who string, user *int64, row int, score *float64, lo, hi float64) {
			t.Helper()
			r := models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[row].ID, Criterion: crit.Name,
				HumanColumn: crit.HumanColumn, Reviewer: who, UserID: user, RunID: &run.ID, Lo: lo, Hi: hi, Score: score}
			if score == nil {
				r.Comment = "withdrawn: not sure"
			}
			_, err := env.db.AddReviewRating(ctx, r)
			must(t, err)
		}
		v := func(x float64) *float64 { return &x }
		lo, hi := crit.Lo, crit.Hi
		rate("Ann", nil, 0, v(lo), lo, hi)
		rate("Ann", nil, 1, v(hi), lo, hi)
		rate("Ann", nil, 2, v(lo), lo, hi)
		rate("Bob", nil, 2, v(hi), lo, hi)
		rate("Bob", nil, 3, v(hi), lo, hi)
		rate("Bob", nil, 3, nil, lo, hi) // withdrawn: sample 3 is no one's now
		rate("Eve", nil, 6, v(lo), lo, hi)
		rate("Eve", nil, 6, v(hi), lo, hi)
		rate(cid.Email, &cid.ID, 4, v(lo), lo, hi)
		must(t, env.db.SetRatingsExcluded(ctx, env.ws.ID, cid.ID, true, "owner"))
		rate("Dan", nil, 5, v(0), 0, 100) // another scale

		// The rule, applied to every stored review.
		all, err := env.db.ListDatasetReviews(ctx, env.ws.ID, d.dataset.ID)
		must(t, err)
		excluded, err := env.db.ExcludedRaters(ctx, env.ws.ID)
		must(t, err)
		latest := map[string]models.ReviewRating{}
		for _, r := range all { // oldest first
			if r.Criterion != crit.Name || r.Lo != lo || r.Hi != hi {
				continue
			}
			latest[fmt.Sprintf("%s/%d", r.ReviewerKey(), r.RowID)] = r
		}
		team := map[int64]bool{}
		for _, r := range latest {
			if r.Score != nil && (r.UserID == nil || !excluded[*r.UserID]) {
				team[r.RowID] = true
			}
		}
		if len(team) != 4 {
			t.Fatalf("the history should leave 4 samples rated by the team (0, 1, 2 and 6), the rule finds %d", len(team))
		}
		want := fmt.Sprintf("Team progress: %d of the run's %d samples rated by at least one reviewer (ratings an owner excluded do not count); you rated 3.",
			len(team), d.dataset.RowCount)
		for _, full := range []bool{false, true} {
			code, body := renderQueue(t, env, d.dataset, fmt.Sprintf("run=%d&criterion=0", run.ID), "Ann", full)
			if code != 200 {
				t.Fatalf("queue (full %v): %d", full, code)
			}
			if !strings.Contains(body, `data-testid="review-team-progress">`+html.EscapeString(want)+"<") {
				i := strings.Index(body, "review-progress")
				t.Errorf("queue (full %v) does not say %q:\n%.600s", full, want, body[max(i, 0):])
			}
		}
		// Counted in SQL, bounded: with a limit of 2 it stops at 2.
		n, err := env.db.TeamRatedSamples(ctx, env.ws.ID, d.dataset.ID, crit.Name, lo, hi, 2)
		must(t, err)
		if n != 2 {
			t.Errorf("TeamRatedSamples with limit 2: %d", n)
		}
		n, err = env.db.TeamRatedSamples(ctx, env.ws.ID, d.dataset.ID, crit.Name, lo, hi, 0)
		must(t, err)
		if n != len(team) {
			t.Errorf("TeamRatedSamples: %d, the rule finds %d", n, len(team))
		}
	})
}
