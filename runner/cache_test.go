package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestIdenticalRerunIsAnsweredFromTheCache launches the same run twice:
// the judge sees requests only for the first, the second counts every call
// as cached and costs nothing, and both report the same figures. With the
// cache turned off, a third identical run asks the judge again.
func TestIdenticalRerunIsAnsweredFromTheCache(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, nil)
		r := env.startRunner(Config{})
		finish := func(noCache bool) models.Run {
			run := env.newRun(fj.URL(), 2, 2, 30)
			run.Settings.NoCache = noCache
			run = env.launch(r, run)
			run = env.waitFinished(run.ID, 30*time.Second)
			if run.Status != models.RunSucceeded {
				t.Fatalf("run %d %s: %s", run.ID, run.Status, run.Error)
			}
			return run
		}

		first := finish(false)
		sent := fj.Total()
		if sent == 0 || first.Calls != sent || first.CachedCalls != 0 {
			t.Fatalf("first run: %d calls, %d cached, judge saw %d; want calls = requests > 0 and none cached", first.Calls, first.CachedCalls, sent)
		}

		// Each answer the run paid for is stored as that run's, to go
		// with it when it is deleted for good (migration 00044).
		// An answer is written with its call's result, or up to
		// answerLinger later when no result follows it at once: wait that
		// long for the count to settle at want.
		cachedOf := func(runID, want int64) (n int64) {
			t.Helper()
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if err := env.db.Gorm.Raw("SELECT COUNT(*) FROM judge_response_cache WHERE run_id = ?", runID).Scan(&n).Error; err != nil {
					t.Fatal(err)
				}
				if n == want || time.Now().After(deadline) {
					return n
				}
			}
		}
		// Counted once the run's answers are written (cachedOf waits):
		// read before, as it was, it could only see none.
		got := cachedOf(first.ID, int64(sent))
		var noRun int64
		if err := env.db.Gorm.Raw("SELECT COUNT(*) FROM judge_response_cache WHERE run_id IS NULL").Scan(&noRun).Error; err != nil {
			t.Fatal(err)
		}
		if got != int64(sent) || noRun != 0 {
			t.Errorf("first run: %d cached answers stored as its own and %d with no run, want %d and 0", got, noRun, sent)
		}

		// The statistics are stored when the run finishes (just after its
		// status is written, hence the wait).
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := env.db.ListRunStats(context.Background(), first.ID)
			if err == nil && len(st) == len(first.RubricSnapshot.Criteria) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run statistics not stored after the run finished: %d rows, %v", len(st), err)
			}
			time.Sleep(20 * time.Millisecond)
		}

		second := finish(false)
		if got := fj.Total(); got != sent {
			t.Errorf("the judge saw %d more requests for the identical re-run, want 0", got-sent)
		}
		if second.Calls != first.Calls || second.CachedCalls != second.Calls {
			t.Errorf("re-run: %d calls, %d cached; want %d and %d", second.Calls, second.CachedCalls, first.Calls, first.Calls)
		}
		if second.PromptTokens != 0 || second.CompletionTokens != 0 || second.CostUSD == nil || *second.CostUSD != 0 {
			t.Errorf("re-run cost %d/%d tokens, $%v; want nothing", second.PromptTokens, second.CompletionTokens, second.CostUSD)
		}
		a, b := exportWithoutCounters(t, env, first.ID), exportWithoutCounters(t, env, second.ID)
		if !bytes.Equal(a.json, b.json) {
			t.Errorf("JSON reports differ apart from counters:\n%s\n%s", a.json, b.json)
		}
		if !bytes.Equal(a.csv, b.csv) {
			t.Errorf("CSV exports differ")
		}
		if !bytes.Contains(b.full, []byte(`"cached_calls":`)) {
			t.Errorf("the re-run's JSON export does not show its cached calls")
		}

		if got := cachedOf(second.ID, 0); got != 0 {
			t.Errorf("the re-run answered from the cache stored %d answers as its own, want 0", got)
		}

		third := finish(true)
		if got := cachedOf(third.ID, int64(third.Calls)); got != int64(third.Calls) {
			t.Errorf("the run with the cache off stored %d answers as its own, want its %d calls", got, third.Calls)
		}
		if got := fj.Total(); got != 2*sent {
			t.Errorf("with the cache off the judge saw %d requests in all, want %d", got, 2*sent)
		}
		if third.CachedCalls != 0 || third.PromptTokens != first.PromptTokens {
			t.Errorf("cache off: %d cached, %d prompt tokens; want 0 and %d", third.CachedCalls, third.PromptTokens, first.PromptTokens)
		}
	})
}

type exported struct{ json, csv, full []byte }

// exportWithoutCounters returns a run's JSON report with the run's
// counters (calls, tokens, cost) blanked, its CSV export and the whole
// JSON export.
func exportWithoutCounters(t *testing.T, env *testEnv, runID int64) exported {
	t.Helper()
	rep, err := report.Build(context.Background(), env.db, env.ws.ID, runID)
	if err != nil {
		t.Fatal(err)
	}
	var full, csv bytes.Buffer
	if err := rep.WriteJSON(&full); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	x := rep.Export().Report
	x.Run.Calls, x.Run.CachedCalls, x.Run.PromptTokens, x.Run.CompletionTokens, x.Run.CostUSD = 0, 0, 0, 0, nil
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return exported{json: b, csv: csv.Bytes(), full: full.Bytes()}
}
