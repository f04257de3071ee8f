package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestRepeatabilityFiguresRecomputed: a BatchEval run of the demo
// experiment and two reseeds of it. Every figure about how the agreement
// moves from one seed to the next is recomputed from the three runs' JSON
// exports, by formulas written out here (not stats.SpreadOf):
//   - the run page's repeatability table: per criterion, the number of
//     runs with a Pearson r and their mean ± sample standard deviation
//     (n − 1) (lowest to highest);
//   - the run page's "change in average Pearson" of each reseed: its
//     average Pearson over the criteria with one, minus the run's;
//   - the experiment page's repeatability band: the run's and its
//     reseeds' average Pearson, lowest to highest, and the spread between.
//
// Each printed number must be the recomputed one rounded to the decimals
// it shows (three or more).
func TestRepeatabilityFiguresRecomputed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		if x.batchEval.Status != models.RunSucceeded {
			t.Fatalf("run %s: %s (%s)", x.batchEval.Name, x.batchEval.Status, x.batchEval.Error)
		}
		runs := []models.Run{x.batchEval}
		for _, seed := range []int64{42, 4242} {
			r, err := env.runner.LaunchReseed(ctx, env.ws.ID, x.batchEval.ID, seed)
			must(t, err)
			if got := env.waitRun(r.ID, 60*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("reseed %d: %s (%s)", seed, got.Status, got.Error)
			}
			runs = append(runs, r)
		}
		// pearson[r][c] is run r's exported Pearson r of criterion c (NaN
		// when undefined).
		var names []string
		var pearson [][]float64
		for _, r := range runs {
			var ex struct {
				Criteria []struct {
					Name    string
					Pearson struct {
						Coef *float64 `json:"coef"`
					}
				} `json:"criteria"`
			}
			rep, _ := splitExport(t, env.get(fmt.Sprintf("/runs/%d/export.json", r.ID)).Body.Bytes())
			must(t, json.Unmarshal(rep, &ex))
			var ps []float64
			names = names[:0]
			for _, c := range ex.Criteria {
				names = append(names, c.Name)
				v := math.NaN()
				if c.Pearson.Coef != nil {
					v = *c.Pearson.Coef
				}
				ps = append(ps, v)
			}
			pearson = append(pearson, ps)
		}
		average := func(ps []float64) float64 {
			var sum float64
			n := 0
			for _, p := range ps {
				if !math.IsNaN(p) {
					sum += p
					n++
				}
			}
			return sum / float64(n)
		}

		page := env.get(fmt.Sprintf("/runs/%d", x.batchEval.ID)).Body.String()
		rows := tableRows(t, page, `data-testid="repeatability"`)
		if len(rows) != len(names) {
			t.Fatalf("the repeatability table has %d rows, the runs %d criteria: %q", len(rows), len(names), rows)
		}
		spread := regexp.MustCompile(`^(\S+) ± (\S+) \((\S+) to (\S+)\)$`)
		checked := 0
		for ci, row := range rows {
			var vals []float64
			for r := range runs {
				if v := pearson[r][ci]; !math.IsNaN(v) {
					vals = append(vals, v)
				}
			}
			if len(row) != 3 || row[0] != names[ci] || row[1] != strconv.Itoa(len(vals)) {
				t.Errorf("repeatability row %q; want %s over %d runs", row, names[ci], len(vals))
				continue
			}
			if len(vals) < 2 || slices.Min(vals) == slices.Max(vals) {
				continue // worded, not a spread (web's spread tests)
			}
			var mean float64
			for _, v := range vals {
				mean += v
			}
			mean /= float64(len(vals))
			var ss float64
			for _, v := range vals {
				ss += (v - mean) * (v - mean)
			}
			sd := math.Sqrt(ss / float64(len(vals)-1))
			m := spread.FindStringSubmatch(row[2])
			if m == nil {
				t.Errorf("%s: repeatability %q, want \"mean ± sd (lowest to highest)\"", names[ci], row[2])
				continue
			}
			for i, want := range []float64{mean, sd, slices.Min(vals), slices.Max(vals)} {
				shownAtLeast(t, fmt.Sprintf("%s's repeatability, figure %d of %q", names[ci], i+1, row[2]), m[i+1], want, 3)
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("no criterion's Pearson r moved between seeds: the test shows nothing (%v)", pearson)
		}

		// Each reseed's change in average Pearson.
		deltas := regexp.MustCompile(`data-testid="derived-delta">reseed: ([^<]*)<`).FindAllStringSubmatch(page, -1)
		if len(deltas) != 2 {
			t.Fatalf("the run page lists %d reseed changes, want 2", len(deltas))
		}
		own := average(pearson[0])
		for i, d := range deltas {
			// Listed newest first or oldest first: either reseed may be first.
			a, b := average(pearson[1])-own, average(pearson[2])-own
			got, err := strconv.ParseFloat(strings.NewReplacer("−", "-", "+", "", "±", "").Replace(d[1]), 64)
			if err != nil || (math.Abs(got-a) > 0.0005+1e-12 && math.Abs(got-b) > 0.0005+1e-12) {
				t.Errorf("reseed change %d shows %q; recomputed %v or %v", i, d[1], a, b)
			}
		}

		// The experiment page's band over the three seeds.
		avgs := []float64{average(pearson[0]), average(pearson[1]), average(pearson[2])}
		lo, hi := slices.Min(avgs), slices.Max(avgs)
		exp := env.get(fmt.Sprintf("/experiments/%d", x.exp.ID)).Body.String()
		var band string
		for _, m := range regexp.MustCompile(`data-testid="repeatability-band">([^<]*)<`).FindAllStringSubmatch(exp, -1) {
			if s := pageText(m[1]); strings.HasPrefix(s, x.batchEval.Name+" over 3 seeds") {
				band = s
			}
		}
		if lo == hi {
			t.Fatalf("every seed gave average Pearson %v: the band shows nothing to check", lo)
		}
		m := regexp.MustCompile(`over 3 seeds: average Pearson (\S+) to (\S+) \(spread (\S+)\)$`).FindStringSubmatch(band)
		if m == nil {
			t.Fatalf("the experiment page's band for %s over 3 seeds: %q", x.batchEval.Name, band)
		}
		for i, want := range []float64{lo, hi, hi - lo} {
			shownAtLeast(t, fmt.Sprintf("the experiment's band, figure %d of %q", i+1, band), m[i+1], want, 3)
		}
	})
}

// shownAtLeast checks that text, a number with at least min decimals, is
// want rounded to the decimals it shows (either way at a half).
func shownAtLeast(t *testing.T, what, text string, want float64, min int) {
	t.Helper()
	s := strings.NewReplacer("−", "-", "+", "", "±", "").Replace(text)
	got, err := strconv.ParseFloat(s, 64)
	digits := len(s) - strings.IndexByte(s, '.') - 1
	if err != nil || !strings.Contains(s, ".") || digits < min || math.Abs(got-want) > 0.5*math.Pow(10, -float64(digits))+1e-12 {
		t.Errorf("%s: shows %q; recomputed %v", what, text, want)
	}
}
