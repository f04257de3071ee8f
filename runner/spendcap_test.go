package runner

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestSpendingCap: a run with a cap stops sending calls once the cost so
// far plus the next call's estimate would pass it, fails saying so, and
// finishes after the cap is raised and the run resumed. One call of the
// fake judge at the test prices ($1 / $2 per million tokens) costs well
// under a cent and more than a micro-dollar.
func TestSpendingCap(t *testing.T) {
	t.Parallel()
	tiny, ample := 1e-6, 100.0
	for _, tc := range []struct {
		name       string
		capUSD     *float64
		wantStatus string
		wantCalls  int // judge requests before the run ended
	}{
		{"no cap", nil, models.RunSucceeded, 3},
		{"ample cap", &ample, models.RunSucceeded, 3},
		// The first call has no estimate yet and goes; after it the run
		// has spent more than the cap, so the second is never sent.
		{"cap below one call", &tiny, models.RunFailed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
				r := env.startRunner(Config{LeaseTTL: leaseTTL})
				spec := env.newRun(fj.URL(), 1, 1, 30) // 3 batches, one at a time
				spec.Settings.SpendCapUSD = tc.capUSD
				run := env.waitFinished(env.launch(r, spec).ID, 20*time.Second)
				if run.Status != tc.wantStatus || fj.Total() != tc.wantCalls {
					t.Fatalf("status %s after %d judge requests (error %q); want %s after %d", run.Status, fj.Total(), run.Error, tc.wantStatus, tc.wantCalls)
				}
				if tc.wantStatus != models.RunFailed {
					return
				}
				if !strings.Contains(run.Error, "spending cap reached") || run.CostUSD == nil || *run.CostUSD <= tiny {
					t.Errorf("capped run: error %q, cost %v", run.Error, run.CostUSD)
				}
				// Raised cap: the run resumes and sends only what is left.
				if _, err := env.db.SetRunSpendCap(context.Background(), env.ws.ID, run.ID, &ample); err != nil {
					t.Fatal(err)
				}
				if _, err := r.Resume(context.Background(), env.ws.ID, run.ID); err != nil {
					t.Fatalf("resume: %v", err)
				}
				run = env.waitFinished(run.ID, 20*time.Second)
				if run.Status != models.RunSucceeded || fj.Total() != 3 || run.MissingScores != 0 {
					t.Errorf("after raising the cap: %s, %d requests in all, %d missing (error %q); want succeeded after 3",
						run.Status, fj.Total(), run.MissingScores, run.Error)
				}
			})
		})
	}
}

// TestSetRunSpendCap: the cap of a run still going cannot change; a bad
// amount is refused.
func TestSetRunSpendCap(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		spec := env.newRun("http://127.0.0.1:1/v1", 1, 1, 30)
		noJob := func(context.Context, *sql.Tx, *models.Run) (int64, error) { return 0, nil }
		if err := env.db.CreateRun(ctx, &spec, noJob); err != nil {
			t.Fatal(err)
		}
		one, neg := 1.0, -1.0
		if _, err := env.db.SetRunSpendCap(ctx, env.ws.ID, spec.ID, &one); models.ErrorCode(err) != models.EConflict {
			t.Errorf("cap of a queued run: %v, want a conflict", err)
		}
		if _, err := env.db.SetRunSpendCap(ctx, env.ws.ID, spec.ID, &neg); models.ErrorCode(err) != models.EInvalid {
			t.Errorf("negative cap: %v, want invalid", err)
		}
	})
}
