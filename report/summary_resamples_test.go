package report

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// usedResamplesOracle counts, independently of evaluator/stats, the
// bootstrap resamples of the (score, rating) pairs whose coefficient is
// defined, as the stats package documents its bootstrap: the pairs sorted
// by score then rating, drawn with replacement from PCG(seed, "batchev"),
// and a resample left out when either series drawn is one value (then
// Pearson's, Spearman's and Kendall's coefficients are all undefined, and
// only then, for pairs of distinct scores).
func usedResamplesOracle(x, y []float64, draws int, seed uint64) int {
	type pair struct{ x, y float64 }
	ps := make([]pair, len(x))
	for i := range x {
		ps[i] = pair{x[i], y[i]}
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.y, b.y)) })
	rng := rand.New(rand.NewPCG(seed, 0x62617463686576))
	used := 0
	for range draws {
		xs, ys := map[float64]bool{}, map[float64]bool{}
		for range ps {
			p := ps[rng.IntN(len(ps))]
			xs[p.x], ys[p.y] = true, true
		}
		if len(xs) > 1 && len(ys) > 1 {
			used++
		}
	}
	return used
}

// TestSummaryIntervalsSayHowManyResamples: a finished run's stored summary
// keeps, for each bootstrap interval, how many resamples it is from, the
// count usedResamplesOracle gives, and the JSON export states it (with the
// page's words) only when some were left out. Coherence's human ratings
// are all 3 but for two 4s on 60 samples, so about a third of the
// resamples draw only 3s and are left out; Fluency's vary and lose none.
// A summary stored by summary-16 (with stats-11's figures), which held no
// count, is not served: it is computed again.
func TestSummaryIntervalsSayHowManyResamples(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 60)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		for i, r := range rows {
			v := 3.0
			if i == 7 || i == 41 {
				v = 4
			}
			r.Ratings["coherence"] = &v
			must(t, db.Gorm.Model(&r).Select("Ratings").Updates(&r).Error)
		}
		full, err := BuildWith(ctx, db, wsID, runID, Options{})
		must(t, err)
		want := make([]int, len(full.Criteria))
		for ci, c := range full.Criteria {
			var xs, ys []float64
			for _, s := range c.Samples {
				if s.Final != nil && s.Human != nil {
					xs, ys = append(xs, *s.Final), append(ys, *s.Human)
				}
			}
			if len(xs) < 50 {
				t.Fatalf("criterion %d: %d pairs, want the bootstrap's 50 or more", ci, len(xs))
			}
			want[ci] = usedResamplesOracle(xs, ys, 1000, bootstrapSeed)
		}
		if want[0] == 1000 || want[0] < 500 || want[1] != 1000 {
			t.Fatalf("the fixture wants resamples left out of Coherence only, some hundreds: the oracle uses %v of 1000", want)
		}
		// The system level's Kendall interval, a bootstrap over the 8
		// systems' means: Coherence's human means are 3 but for the two
		// systems holding a 4, so draws of the six others are left out.
		var mx, my []float64
		{
			sum := map[string][2]float64{}
			cnt := map[string]int{}
			for i, s := range full.Criteria[0].Samples {
				if s.Final == nil || s.Human == nil {
					continue
				}
				sys := rows[i].Data["system"]
				sum[sys] = [2]float64{sum[sys][0] + *s.Final, sum[sys][1] + *s.Human}
				cnt[sys]++
			}
			for sys, v := range sum {
				mx, my = append(mx, v[0]/float64(cnt[sys])), append(my, v[1]/float64(cnt[sys]))
			}
		}
		wantSystem := usedResamplesOracle(mx, my, 1000, bootstrapSeed)
		if len(mx) != 8 || wantSystem == 1000 {
			t.Fatalf("the fixture wants 8 systems with resamples left out: %d systems, %d of 1000 used", len(mx), wantSystem)
		}

		check := func(when string, rep *Report) {
			t.Helper()
			exp := rep.Export()
			raw, err := json.Marshal(exp)
			must(t, err)
			// Each criterion's three correlations, read by name.
			var loose struct {
				Report struct {
					Criteria []map[string]json.RawMessage `json:"criteria"`
				} `json:"report"`
			}
			must(t, json.Unmarshal(raw, &loose))
			for ci, c := range rep.Criteria {
				for m, got := range map[string]struct{ drawn, used int }{
					"pearson": {c.Pearson.Resamples, c.Pearson.ResamplesUsed}, "spearman": {c.Spearman.Resamples, c.Spearman.ResamplesUsed},
					"kendall": {c.Kendall.Resamples, c.Kendall.ResamplesUsed}} {
					if got.drawn != 1000 || got.used != want[ci] {
						t.Errorf("%s, criterion %d %s: interval from %d of %d resamples, the oracle's %d of 1000", when, ci, m, got.used, got.drawn, want[ci])
					}
					var jc struct {
						Resamples     *int   `json:"resamples"`
						ResamplesUsed *int   `json:"resamples_used"`
						ResamplesNote string `json:"resamples_note"`
					}
					must(t, json.Unmarshal(loose.Report.Criteria[ci][m], &jc))
					if want[ci] == 1000 {
						if jc.Resamples != nil || jc.ResamplesUsed != nil || jc.ResamplesNote != "" {
							t.Errorf("%s, criterion %d %s: none left out, but the export says %v of %v (%q)", when, ci, m, jc.ResamplesUsed, jc.Resamples, jc.ResamplesNote)
						}
						continue
					}
					note := fmt.Sprintf("from %d of 1000 resamples", want[ci])
					if jc.Resamples == nil || *jc.Resamples != 1000 || jc.ResamplesUsed == nil || *jc.ResamplesUsed != want[ci] || jc.ResamplesNote != note {
						t.Errorf("%s, criterion %d %s: the export says %v of %v (%q), want %q", when, ci, m, jc.ResamplesUsed, jc.Resamples, jc.ResamplesNote, note)
					}
				}
			}
		}
		checkSystem := func(when string, rep *Report) {
			t.Helper()
			sl := rep.Criteria[0].System[stats.MethodKendall]
			if sl.Resamples != 1000 || sl.ResamplesUsed != wantSystem {
				t.Errorf("%s: the system level's Kendall interval from %d of %d resamples, the oracle's %d of 1000", when, sl.ResamplesUsed, sl.Resamples, wantSystem)
			}
			js := rep.Export().Report.Criteria[0].SystemLevel
			note := fmt.Sprintf("from %d of 1000 resamples", wantSystem)
			if js == nil || js.Kendall.ResamplesUsed == nil || *js.Kendall.ResamplesUsed != wantSystem || js.Kendall.ResamplesNote != note ||
				js.Pearson.ResamplesUsed != nil || js.Spearman.ResamplesUsed != nil {
				t.Errorf("%s: the export's system level says %+v, want Kendall's %q only", when, js, note)
			}
		}
		checkSystem("full build", full)
		check("full build", full)
		sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		check("stored summary", sum)
		checkSystem("stored summary", sum)

		// A summary-16 row: its figures held no count (gob reads them as
		// 0 of 0), stored under the key summary-16 and stats-11 gave.
		look, err := LookupSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		row, found, err := db.FindRunSummary(ctx, runID, summaryVariant(Options{}))
		must(t, err)
		if !found || look.Stored == nil {
			t.Fatalf("no summary stored")
		}
		old, err := decodeSummary(row.Summary)
		must(t, err)
		for i := range old.Criteria {
			c := &old.Criteria[i]
			c.Pearson.Resamples, c.Pearson.ResamplesUsed = 0, 0
			c.Spearman.Resamples, c.Spearman.ResamplesUsed = 0, 0
			c.Kendall.Resamples, c.Kendall.ResamplesUsed = 0, 0
		}
		enc, err := encodeSummary(old)
		must(t, err)
		oldKey := summaryKeyAt("summary-16", "stats-11", look.Run, look.choice, look.ratings, look.ds, Options{})
		if oldKey == row.InputKey {
			t.Fatalf("summary-16's key is the current one")
		}
		must(t, db.Gorm.Model(&models.RunSummary{}).Where("run_id = ?", runID).
			Updates(map[string]any{"input_key": oldKey, "summary": enc}).Error)
		sum, err = LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		check("after a summary-16 row", sum)
		checkSystem("after a summary-16 row", sum)
		row, _, err = db.FindRunSummary(ctx, runID, summaryVariant(Options{}))
		must(t, err)
		if row.InputKey == oldKey {
			t.Errorf("the summary-16 row was not stored again")
		}
	})
}
