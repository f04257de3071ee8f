package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
)

// The seeded demo's first run goes through the real runner on the
// simulated judge and finishes with a score for every sample and
// criterion; the home page's guide links to it, labelled simulated.
func TestDemoFirstRunAndGuide(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		// newTestEnv seeded the demo without its run; purged, it is seeded
		// again as a fresh server seeds it, with its first run queued.
		entry, _, err := env.db.Trash(ctx, env.ws.ID, models.KindProject, env.project.ID, models.Actor{Label: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.db.Purge(ctx, env.ws.ID, entry.ID); err != nil {
			t.Fatal(err)
		}
		p, created, err := demo.SeedProject(ctx, env.db, env.ws, env.runner)
		if err != nil || !created {
			t.Fatalf("seed: created %v, %v", created, err)
		}
		env.project = p
		runs, err := env.db.ListRuns(ctx, env.ws.ID, p.ID)
		if err != nil || len(runs) != 1 {
			t.Fatalf("the seeded demo has %d runs (%v), want its first run", len(runs), err)
		}
		// Seeding again creates nothing, so a restarted server launches no
		// second demo run.
		if _, created, err := demo.SeedProject(ctx, env.db, env.ws, env.runner); err != nil || created {
			t.Fatalf("second seed: created %v, %v", created, err)
		}
		run := env.waitRun(runs[0].ID, 90*time.Second)
		if run.Status != models.RunSucceeded || !run.Simulated || run.Name != demo.FirstRunName || run.Method != models.MethodBatchEval {
			t.Fatalf("demo run: status %s (%s), simulated %v, name %q, method %q", run.Status, run.Error, run.Simulated, run.Name, run.Method)
		}
		d := env.demo()
		// The run records the rubric version it judged with, as a launch
		// from the form does: the versions page and an alignment started
		// from it read that version, not whatever the rubric is by then.
		if run.RubricVersion == nil || *run.RubricVersion != d.rubric.Version {
			t.Errorf("demo run's rubric version %v, want %d", run.RubricVersion, d.rubric.Version)
		}
		scores, err := env.db.ListScores(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		final := map[[2]int64]bool{}
		for _, s := range scores {
			if s.Score != nil {
				final[[2]int64{s.RowID, int64(s.CriterionIndex)}] = true
			}
		}
		if want := d.dataset.RowCount * len(d.rubric.Criteria); len(final) != want {
			t.Errorf("%d sample-criterion pairs scored, want %d", len(final), want)
		}

		home := env.get("/").Body.String()
		guide := home[strings.Index(home, `data-testid="start-guide"`):]
		guide = guide[:strings.Index(guide, "</section>")]
		for _, want := range []string{fmt.Sprintf(`href="/runs/%d"`, run.ID), demo.FirstRunName, "succeeded", "simulated judge, not a language model", "<ol>"} {
			if !strings.Contains(guide, want) {
				t.Errorf("the start guide lacks %q:\n%s", want, guide)
			}
		}
	})
}

// The guide is hidden and shown again by a form (a cookie), without JS.
func TestStartGuideHides(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct {
			name, value string
			visible     bool
		}{
			{"hide", "hide", false},
			{"show again", "show", true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.postForm("/guide", url.Values{"guide": {tc.value}})
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("status %d, want 303", rec.Code)
				}
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				for _, ck := range rec.Result().Cookies() {
					if ck.MaxAge >= 0 && ck.Value != "" {
						req.AddCookie(ck)
					}
				}
				res := httptest.NewRecorder()
				env.e.ServeHTTP(res, req)
				home := res.Body.String()
				if got := strings.Contains(home, `data-testid="start-guide"`); got != tc.visible {
					t.Errorf("guide visible = %v, want %v", got, tc.visible)
				}
				if got := strings.Contains(home, `data-testid="guide-show"`); got == tc.visible {
					t.Errorf("'show the guide' offered = %v while the guide visible = %v", got, tc.visible)
				}
			})
		}
	})
}
