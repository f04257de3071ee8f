package report

import (
	"bytes"
	"context"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestStoredStatsServeLaterReports: the first report of a finished run
// computes its statistics and stores them; later reports read them (no
// recomputation) and are the same bytes as a report computed afresh; when
// a score changes, the inputs' hash changes and they are computed again.
func TestStoredStatsServeLaterReports(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 200)
		build := func() (*Report, []int) {
			var recomputed []int
			rep, err := BuildWith(ctx, db, wsID, runID, Options{Recomputed: func(ci int) { recomputed = append(recomputed, ci) }})
			if err != nil {
				t.Fatal(err)
			}
			return rep, recomputed
		}
		fresh := func() []byte {
			// Everything loaded as BuildWith does, computed without storage.
			run, _ := db.FindRun(ctx, wsID, runID)
			ds, _ := db.FindDataset(ctx, wsID, run.DatasetID)
			rows, _ := db.ListDatasetRows(ctx, ds.ID, 0, 0)
			scores, _ := db.ListScores(ctx, runID)
			batches, err := db.ListBatches(ctx, runID)
			if err != nil {
				t.Fatal(err)
			}
			return exportBytes(t, ComputeWith(run, ds, rows, batches, scores, Options{}))
		}

		first, re := build()
		if len(re) != 2 {
			t.Fatalf("first report recomputed criteria %v, want both", re)
		}
		stored, err := db.ListRunStats(ctx, runID)
		if err != nil || len(stored) != 2 {
			t.Fatalf("%d rows stored (%v), want 2", len(stored), err)
		}
		if first.Criteria[0].System == nil || first.Criteria[0].Pearson.CILow != first.Criteria[0].Pearson.CILow {
			t.Fatalf("the synthesized run has no system-level figures or interval: the test would prove nothing")
		}

		second, re := build()
		if len(re) != 0 {
			t.Errorf("second report recomputed criteria %v, want none", re)
		}
		if got, want := exportBytes(t, second), fresh(); !bytes.Equal(got, want) {
			t.Errorf("report from stored statistics differs from one computed afresh:\n%s\n%s", got, want)
		}

		// A changed score changes the inputs: computed again, and stored.
		must(t, db.Gorm.Model(&models.RunScore{}).Where("run_id = ? AND criterion_index = 1", runID).
			Update("score", 1.0).Error)
		third, re := build()
		if len(re) != 1 || re[0] != 1 {
			t.Errorf("after a change to criterion 1, recomputed %v, want [1]", re)
		}
		if got, want := exportBytes(t, third), fresh(); !bytes.Equal(got, want) {
			t.Errorf("report after the change differs from one computed afresh")
		}
		if _, re := build(); len(re) != 0 {
			t.Errorf("fourth report recomputed %v, want none", re)
		}
	})
}

func exportBytes(t *testing.T, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStoredStatsIntervalMethod: a run at or below stats.AnalyticAbove
// samples gets bootstrap intervals, a larger one Fisher-z intervals; at
// system level every coefficient's interval is over the systems' means at
// any size (stats-8: Fisher's for Pearson and Spearman, the bootstrap for
// Kendall; the rank coefficients' was a two-stage bootstrap,
// "two-stage-normal" in large runs); the method is stored with the
// figures and served with them, so a page read from storage can say it.
func TestStoredStatsIntervalMethod(t *testing.T) {
	cases := []struct {
		name      string
		n         int
		want      stats.IntervalMethod
		wantLabel string
	}{
		{"small run", 300, stats.IntervalBootstrap, "bootstrap (1000 resamples)"},
		// 8 systems of about 1,125 samples, 49 in 50 scores readable.
		{"large run", 9_000, stats.IntervalFisherZ, "Fisher z (large sample)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *models.DB) {
				ctx := context.Background()
				wsID, runID := synthRun(t, db, c.n)
				if err := StoreStats(ctx, db, wsID, runID); err != nil {
					t.Fatal(err)
				}
				recomputed := 0
				rep, err := BuildWith(ctx, db, wsID, runID, Options{Recomputed: func(int) { recomputed++ }})
				if err != nil {
					t.Fatal(err)
				}
				if recomputed != 0 {
					t.Fatalf("stored figures recomputed %d times", recomputed)
				}
				// The exports say how their intervals were computed.
				for _, jc := range rep.Export().Report.Criteria {
					if jc.IntervalMethod != string(c.want) {
						t.Errorf("export %s: interval_method %q, want %q", jc.Name, jc.IntervalMethod, c.want)
					}
					// Every system-level interval is over the systems'
					// means, whatever the run's size.
					if jc.SystemLevel != nil && (jc.SystemLevel.Pearson.IntervalMethod != string(stats.IntervalSystemFisherZ) ||
						jc.SystemLevel.Spearman.IntervalMethod != string(stats.IntervalSystemFisherZ) || jc.SystemLevel.Kendall.IntervalMethod != string(stats.IntervalSystemBootstrap)) {
						t.Errorf("export %s: system-level interval_method %q, %q, %q; want %q, %q, %q", jc.Name, jc.SystemLevel.Pearson.IntervalMethod,
							jc.SystemLevel.Spearman.IntervalMethod, jc.SystemLevel.Kendall.IntervalMethod, stats.IntervalSystemFisherZ, stats.IntervalSystemFisherZ, stats.IntervalSystemBootstrap)
					}
				}
				for _, cr := range rep.Criteria {
					if cr.Interval != c.want || cr.IntervalLabel() != c.wantLabel {
						t.Errorf("%s: interval %q (%q), want %q (%q)", cr.Criterion.Name, cr.Interval, cr.IntervalLabel(), c.want, c.wantLabel)
					}
					for _, corr := range []stats.Correlation{cr.Pearson, cr.Spearman, cr.Kendall} {
						if !(corr.CILow < corr.Coef && corr.Coef < corr.CIHigh) {
							t.Errorf("%s: interval [%v, %v] does not hold %v", cr.Criterion.Name, corr.CILow, corr.CIHigh, corr.Coef)
						}
					}
					for m, sl := range cr.System {
						want := stats.IntervalSystemFisherZ
						if m == stats.MethodKendall {
							want = stats.IntervalSystemBootstrap
						}
						if sl.Interval != want {
							t.Errorf("%s %s: system-level interval %q, want %q", cr.Criterion.Name, m, sl.Interval, want)
						}
					}
				}
			})
		})
	}
}
