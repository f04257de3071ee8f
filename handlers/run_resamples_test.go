package handlers

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"testing"
)

// runBootstrapUsedOracle counts, sharing no code with evaluator/stats, the
// resamples of a run's (final score, human rating) pairs whose correlation
// is defined: the pairs sorted by score then rating, drawn with replacement
// from PCG(seed, "batchev") as the stats package documents its bootstrap,
// a draw left out when either series it holds is one value (every
// coefficient is then undefined).
func runBootstrapUsedOracle(x, y []float64, draws int, seed uint64) int {
	type pair struct{ x, y float64 }
	ps := make([]pair, len(x))
	for i := range x {
		ps[i] = pair{x[i], y[i]}
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.y, b.y)) })
	rng := rand.New(rand.NewPCG(seed, 0x62617463686576))
	used := 0
	for range draws {
		first := ps[rng.IntN(len(ps))]
		xVaries, yVaries := false, false
		for range len(ps) - 1 {
			p := ps[rng.IntN(len(ps))]
			xVaries, yVaries = xVaries || p.x != first.x, yVaries || p.y != first.y
		}
		if xVaries && yVaries {
			used++
		}
	}
	return used
}

// TestRunIntervalsSayHowManyResamples: when some of a run's bootstrap
// resamples are left out (60 samples whose human ratings are all 3 but
// for two 4s: a draw without a 4 has no correlation), the run page, its
// downloaded report and the JSON export say how many the three intervals
// are from, one number, the oracle's; a run whose ratings vary loses
// none and none of them says anything.
func TestRunIntervalsSayHowManyResamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 60
		scores := make([]float64, n)
		for i := range scores {
			scores[i] = 1 + float64((i*37)%n)/15 // 60 distinct scores from 1 to 4.93
		}
		for _, tc := range []struct {
			name  string
			human func(i int) float64
		}{
			{"two ratings apart", func(i int) float64 {
				if i == 7 || i == 41 {
					return 4
				}
				return 3
			}},
			{"varied ratings", func(i int) float64 { return float64(1 + (i*7)%5) }},
		} {
			human := make([]float64, n)
			for i := range human {
				human[i] = tc.human(i)
			}
			d := env.ratedDatasetOf(tc.name, human)
			run := env.storedRounds(d, tc.name, [][]float64{scores})
			// report's bootstrapSeed: every run's intervals use it.
			used := runBootstrapUsedOracle(scores, human, 1000, 20240101)
			if tc.name == "two ratings apart" && (used == 1000 || used < 500) {
				t.Fatalf("%s: the oracle uses %d of 1000 resamples; the test wants some hundreds left out", tc.name, used)
			}
			if tc.name == "varied ratings" && used != 1000 {
				t.Fatalf("%s: the oracle leaves out %d resamples, want none", tc.name, 1000-used)
			}
			want := ""
			if used < 1000 {
				want = fmt.Sprintf("from %d of 1000 resamples", used)
			}
			note := regexp.MustCompile(`data-testid="resamples-used">([^<]*)<`)
			for _, path := range []string{fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/runs/%d/report.html", run.ID)} {
				rec := env.get(path)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s %s: %d", tc.name, path, rec.Code)
				}
				got := note.FindAllStringSubmatch(rec.Body.String(), -1)
				if want == "" {
					if len(got) != 0 {
						t.Errorf("%s %s: none left out, but it says %q", tc.name, path, got)
					}
					continue
				}
				if len(got) != 3 {
					t.Errorf("%s %s: %d notes on resamples, want one under each of the three intervals", tc.name, path, len(got))
				}
				for _, g := range got {
					if g[1] != want {
						t.Errorf("%s %s: says %q, want %q", tc.name, path, g[1], want)
					}
				}
			}
			rec := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID))
			if rec.Code != http.StatusOK {
				t.Fatalf("%s export: %d", tc.name, rec.Code)
			}
			type corr struct {
				Resamples     *int   `json:"resamples"`
				ResamplesUsed *int   `json:"resamples_used"`
				ResamplesNote string `json:"resamples_note"`
			}
			var exp struct {
				Report struct {
					Criteria []struct {
						Pearson, Spearman, Kendall corr
					} `json:"criteria"`
				} `json:"report"`
			}
			must(t, json.Unmarshal(rec.Body.Bytes(), &exp))
			if len(exp.Report.Criteria) != 1 {
				t.Fatalf("%s: %d criteria exported", tc.name, len(exp.Report.Criteria))
			}
			c := exp.Report.Criteria[0]
			for m, jc := range map[string]corr{"pearson": c.Pearson, "spearman": c.Spearman, "kendall": c.Kendall} {
				if want == "" {
					if jc.Resamples != nil || jc.ResamplesUsed != nil || jc.ResamplesNote != "" {
						t.Errorf("%s %s: none left out, but the export says %v of %v (%q)", tc.name, m, jc.ResamplesUsed, jc.Resamples, jc.ResamplesNote)
					}
					continue
				}
				if jc.Resamples == nil || *jc.Resamples != 1000 || jc.ResamplesUsed == nil || *jc.ResamplesUsed != used || jc.ResamplesNote != want {
					t.Errorf("%s %s: the export says %v of %v (%q), want %q", tc.name, m, jc.ResamplesUsed, jc.Resamples, jc.ResamplesNote, want)
				}
			}
		}
	})
}
