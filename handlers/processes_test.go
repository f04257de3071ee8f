package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAnotherProcessSeesNewHumanRatings: two server processes on one
// database each keep finished runs' reports in memory. When the human
// ratings a run's report uses are chosen again through one, the other's
// run page and full report (which the experiment and compare pages read)
// follow at once, instead of serving what it had cached until a restart.
func TestAnotherProcessSeesNewHumanRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		id := env.launch(env.demo().launchForm("1", "10"))
		run := env.waitRun(id, 60*time.Second)
		if !run.Completed() {
			t.Fatalf("run %s", run.Status)
		}
		// The second process: its own handlers and caches, the same database.
		h2, e2 := newTestHandlers(t, env.db, env.runner, env.ws, env.sim.URL)
		runPage := func() string {
			rec := httptest.NewRecorder()
			e2.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/runs/"+strconv.FormatInt(id, 10), nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("run page in the second process: %d %.300s", rec.Code, rec.Body.String())
			}
			return rec.Body.String()
		}
		if body := runPage(); !strings.Contains(body, `data-testid="human-source-used">imported column<`) {
			t.Fatalf("the second process's run page does not use the imported ratings at first")
		}
		before, err := h2.buildReport(env.localCtx(), id, "")
		if err != nil {
			t.Fatal(err)
		}
		// A browser rating far from the imported one of the first sample.
		crit := run.RubricSnapshot.Criteria[0]
		s := before.Criteria[0].Samples[0]
		score := crit.Hi
		if s.Human != nil && *s.Human > (crit.Lo+crit.Hi)/2 {
			score = crit.Lo
		}
		if _, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: run.DatasetID, RowID: s.RowID,
			Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann Lee", Score: &score, Lo: crit.Lo, Hi: crit.Hi}); err != nil {
			t.Fatal(err)
		}
		// Chosen through the first process.
		if rec := env.postForm("/runs/"+strconv.FormatInt(id, 10)+"/humans", url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("choose browser ratings: %d %s", rec.Code, rec.Body.String())
		}
		if body := runPage(); !strings.Contains(body, `data-testid="human-source-used">browser ratings`) {
			t.Errorf("the second process's run page still shows its cached report after the human ratings were chosen elsewhere")
		}
		after, err := h2.buildReport(env.localCtx(), id, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range after.Criteria[0].Samples {
			if got.RowID == s.RowID && (got.Human == nil || *got.Human != score) {
				t.Errorf("the second process's full report gives sample %d the human rating %v, want the browser rating %v", s.RowID, deref1(got.Human), score)
			}
		}
		if after == before {
			t.Errorf("the second process served its cached full report")
		}
	})
}
