package runner

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestMigrate migrates an empty database to head on both dialects and
// checks the product's schema and River's are both there.
func TestMigrate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v < 1 {
			t.Errorf("schema version = %d, want >= 1", v)
		}
		// Migrating again is a no-op, as every start does it.
		if err := db.MigrateSchema(ctx, nil); err != nil {
			t.Errorf("migrate product schema again: %v", err)
		}
		if err := Migrate(ctx, db, nil); err != nil {
			t.Errorf("migrate job schema again: %v", err)
		}
		env := newTestEnv(t, db)
		run := env.launch(env.jobs, env.newRun("http://127.0.0.1:1/v1", 1, 1, 10))
		j := env.job(*run.JobID)
		if j.Kind != (RunArgs{}).Kind() {
			t.Errorf("job kind = %q, want %q", j.Kind, (RunArgs{}).Kind())
		}
		if j.State != rivertype.JobStateAvailable {
			t.Errorf("job state = %s, want available", j.State)
		}
		if got := env.getRun(run.ID); got.Status != models.RunQueued || got.JobID == nil || *got.JobID != j.ID {
			t.Errorf("stored run: status %s, job %v; want queued with job %d", got.Status, got.JobID, j.ID)
		}
	}, migrateJobs)
}

// TestEndToEnd runs the demo dataset through the real engine against an
// OpenAI-compatible endpoint answered by the simulated judge.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 3}, nil)
		r := env.startRunner(Config{})
		run := env.launch(r, env.newRun(fj.URL(), 3, 3, 30))
		run = env.waitFinished(run.ID, 20*time.Second)

		if run.Status != models.RunSucceeded || run.Error != "" {
			t.Fatalf("run %s (error %q), want succeeded", run.Status, run.Error)
		}
		if run.BatchesTotal != 9 || run.BatchesDone != 9 {
			t.Errorf("batches done/total = %d/%d, want 9/9", run.BatchesDone, run.BatchesTotal)
		}
		if run.BatchesFailed != 0 || run.MissingScores != 0 {
			t.Errorf("failed batches %d, missing scores %d; want 0 and 0", run.BatchesFailed, run.MissingScores)
		}
		if got := fj.Total(); run.Calls != got || got != 9 {
			t.Errorf("run counted %d calls, the judge saw %d requests; want 9 and 9", run.Calls, got)
		}
		if run.PromptTokens <= 0 || run.CompletionTokens <= 0 {
			t.Errorf("tokens = %d prompt, %d completion; want both > 0", run.PromptTokens, run.CompletionTokens)
		}
		if run.CostUSD == nil || *run.CostUSD <= 0 {
			t.Errorf("cost = %v, want > 0 with known prices", run.CostUSD)
		}
		if run.StartedAt == nil || run.FinishedAt == nil || run.LeaseOwner != "" {
			t.Errorf("started %v, finished %v, lease owner %q; want both times and no owner", run.StartedAt, run.FinishedAt, run.LeaseOwner)
		}

		batches := env.batches(run.ID)
		if len(batches) != 9 {
			t.Fatalf("%d batches stored, want 9", len(batches))
		}
		prompt, completion := 0, 0
		for _, b := range batches {
			if b.Status != models.BatchDone || b.Calls != 1 || b.Attempts != 1 {
				t.Errorf("batch %d (round %d): status %s, calls %d, attempts %d; want done, 1, 1", b.BatchIndex, b.Round, b.Status, b.Calls, b.Attempts)
			}
			if k := storedKey(run, b); fj.Count(k, false) != 1 {
				t.Errorf("batch %d (round %d) was requested %d times, want 1", b.BatchIndex, b.Round, fj.Count(k, false))
			}
			prompt += b.PromptTokens
			completion += b.CompletionTokens
		}
		if prompt != run.PromptTokens || completion != run.CompletionTokens {
			t.Errorf("batch tokens sum to %d/%d, run has %d/%d", prompt, completion, run.PromptTokens, run.CompletionTokens)
		}

		// Every row has one score per round, in range.
		crit := env.rubric.Criteria[0]
		byRow := map[int64]map[int]float64{}
		for _, s := range env.scores(run.ID) {
			if s.Score == nil {
				t.Errorf("row %d round %d: score missing", s.RowID, s.Round)
				continue
			}
			if *s.Score < crit.Lo || *s.Score > crit.Hi {
				t.Errorf("row %d round %d: score %g outside [%g, %g]", s.RowID, s.Round, *s.Score, crit.Lo, crit.Hi)
			}
			if s.Analysis == "" {
				t.Errorf("row %d round %d: no analysis stored", s.RowID, s.Round)
			}
			if byRow[s.RowID] == nil {
				byRow[s.RowID] = map[int]float64{}
			}
			byRow[s.RowID][s.Round] = *s.Score
		}
		if len(byRow) != 30 {
			t.Errorf("%d rows have scores, want 30", len(byRow))
		}
		for id, rounds := range byRow {
			if len(rounds) != 3 {
				t.Errorf("row %d has scores for %d rounds, want 3", id, len(rounds))
			}
		}

		// Heterogeneous composition: every batch of rounds 2 and 3 spans the
		// previous round's score range. With 30 rows in batches of 10 each
		// batch takes one sample of every consecutive triple of the sorted
		// scores, so it holds one of the three best and one of the three worst.
		for round := 1; round < 3; round++ {
			var prev []float64
			for _, rounds := range byRow {
				prev = append(prev, rounds[round-1])
			}
			sort.Float64s(prev)
			low, high := prev[2], prev[len(prev)-3]
			seen := map[int64]bool{}
			for _, b := range batches {
				if b.Round != round {
					continue
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, id := range b.RowIDs {
					seen[id] = true
					lo = math.Min(lo, byRow[id][round-1])
					hi = math.Max(hi, byRow[id][round-1])
				}
				if lo > low || hi < high {
					t.Errorf("round %d batch %d spans previous scores [%g, %g]; want it to reach %g and %g", round+1, b.BatchIndex, lo, hi, low, high)
				}
			}
			if len(seen) != 30 {
				t.Errorf("round %d batches cover %d rows, want 30", round+1, len(seen))
			}
		}
	})
}

// TestUnits covers the small exported helpers.
func TestUnits(t *testing.T) {
	t.Run("Cost", func(t *testing.T) {
		one, two := 1.0, 2.0
		tests := []struct {
			name    string
			in, out *float64
			want    *float64
		}{
			{"both prices", &one, &two, ptr(1.0*1e6/1e6 + 2.0*5e5/1e6)},
			{"no input price", nil, &two, nil},
			{"no output price", &one, nil, nil},
		}
		for _, tt := range tests {
			got := Cost(models.JudgeSnapshot{PriceInputPerMTok: tt.in, PriceOutputPerMTok: tt.out}, 1_000_000, 500_000)
			switch {
			case (got == nil) != (tt.want == nil):
				t.Errorf("%s: cost = %v, want %v", tt.name, got, tt.want)
			case got != nil && math.Abs(*got-*tt.want) > 1e-12:
				t.Errorf("%s: cost = %g, want %g", tt.name, *got, *tt.want)
			}
		}
	})
	t.Run("DecodeMessages", func(t *testing.T) {
		msgs := []evaluator.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u \"q\""}}
		if got := DecodeMessages(methods.EncodeMessages(msgs)); !slices.Equal(got, msgs) {
			t.Errorf("round trip = %v, want %v", got, msgs)
		}
		if got := DecodeMessages("  plain text  "); len(got) != 1 || got[0].Content != "plain text" || got[0].Role != "user" {
			t.Errorf("plain text decodes to %v, want one user message", got)
		}
	})
	t.Run("New", func(t *testing.T) {
		if _, err := New(Config{}); err == nil {
			t.Error("New without a database: no error")
		}
		if got := (RunArgs{}).Kind(); got != "batcheval_run" {
			t.Errorf("job kind = %q; it is stored in River's table and must not change", got)
		}
	})
	t.Run("runLevel", func(t *testing.T) {
		if err := runLevel(errors.New("plain")); err == nil {
			t.Error("a non-judge error does not stop the run")
		}
	})
}

func ptr[T any](v T) *T { return &v }

// batchesByKey indexes a run's stored batches by their prompt key.
func batchesByKey(run models.Run, bs []models.RunBatch) map[string]models.RunBatch {
	m := map[string]models.RunBatch{}
	for _, b := range bs {
		if b.Request != "" {
			m[storedKey(run, b)] = b
		}
	}
	return m
}

func containsAny(list []string, sub string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, sub) })
}
