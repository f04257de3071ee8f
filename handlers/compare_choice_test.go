package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web/webtest"
)

// criterionAs gives a stored run one criterion of that name and scale,
// read against the same human column.
func criterionAs(name string, lo, hi float64) func(*models.Run) {
	return func(r *models.Run) {
		r.RubricSnapshot.Criteria = []evaluator.Criterion{{Name: name, Lo: lo, Hi: hi, HumanColumn: "q"}}
	}
}

// TestCompareOffersComparableRuns: the run page offers only runs that
// judged the same criterion, on any scale; comparing runs of different
// criteria by address warns and neither compares their agreement with the
// humans nor shows paired tests, while still showing each run's agreement
// with the humans. Runs on different scales get no verdict on how closely
// their scores agree, but their correlations with the humans (which do not
// depend on the scale) are compared, with a note saying so.
func TestCompareOffersComparableRuns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 40)
		a := env.storedRun(d, "quality A", noisy(d.human, 0.4, 1), nil)
		same := env.storedRun(d, "quality B", noisy(d.human, 0.8, 2), nil)
		// Fluency on 1-3 scored like a squeezed copy of A: the two runs'
		// scores correlate, which used to print "moderate agreement".
		squeezed := make([]float64, len(d.human))
		for i, h := range noisy(d.human, 0.4, 1) {
			squeezed[i] = math.Round(1 + (h-1)/2)
		}
		fluency := env.storedRun(d, "fluency", squeezed, criterionAs("Fluency", 1, 3))
		narrow := env.storedRun(d, "quality on 1-3", squeezed, criterionAs("quality", 1, 3))

		// The run page's "Compare with…" offers the runs of the same
		// criterion, whatever their scale, and on the narrow run's page
		// too (it was missing there, as on LLM-Eval's 0-5 runs).
		offered := func(from models.Run) string {
			page := env.get(fmt.Sprintf("/runs/%d", from.ID)).Body.String()
			return regexp.MustCompile(`(?s)<select id="compare-b".*?</select>`).FindString(page)
		}
		for _, r := range []models.Run{same, narrow} {
			if !strings.Contains(offered(a), fmt.Sprintf(`value="%d"`, r.ID)) {
				t.Errorf("compare selector does not offer %q, which judged the same criterion", r.Name)
			}
		}
		if strings.Contains(offered(a), fmt.Sprintf(`value="%d"`, fluency.ID)) {
			t.Errorf("compare selector offers %q, which judged another criterion", fluency.Name)
		}
		if !strings.Contains(offered(narrow), fmt.Sprintf(`value="%d"`, a.ID)) {
			t.Errorf("the run on another scale has no compare selector offering %q", a.Name)
		}

		cases := []struct {
			name        string
			b           models.Run
			mismatch    string // "" when comparable
			wantVerdict bool   // on how closely the runs' scores agree
			wantPaired  bool   // agreement with the humans compared, with paired tests
		}{
			{"same criterion and scale", same, "", true, true},
			{"another criterion", fluency, "different criteria", false, false},
			{"same criterion, another scale", narrow, "different scales", false, true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, tc.b.ID))
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
				body := rec.Body.String()
				warned := strings.Contains(body, `data-testid="compare-mismatch"`)
				if warned != (tc.mismatch != "") || !strings.Contains(body, tc.mismatch) {
					t.Errorf("mismatch warning shown %v, want it to say %q", warned, tc.mismatch)
				}
				reading := regexp.MustCompile(`data-testid="runs-reading">([^<]*)<`).FindStringSubmatch(body)
				if reading == nil {
					t.Fatal("no reading of how the runs agree")
				}
				saysAgreement := regexp.MustCompile(`(?i)(strong|moderate|weak|negligible) (dis)?agreement`).MatchString(reading[1])
				if saysAgreement != tc.wantVerdict {
					t.Errorf("runs reading %q: verdict given %v, want %v", reading[1], saysAgreement, tc.wantVerdict)
				}
				agreement := regexp.MustCompile(`data-testid="agreement-reading">([^<]*)<`).FindStringSubmatch(body)
				if agreement == nil {
					t.Fatal("no reading of agreement with the humans")
				}
				if noVerdict := strings.HasPrefix(agreement[1], "No verdict"); noVerdict == tc.wantPaired {
					t.Errorf("agreement reading %q, want a verdict: %v", agreement[1], tc.wantPaired)
				}
				// The page's words and figures agree: paired statistics
				// only when the text says the runs are compared.
				for _, w := range []string{`data-testid="agreement-table"`, `data-testid="agreement-diff"`, "Williams", "compared as a pair"} {
					if strings.Contains(body, w) != tc.wantPaired {
						t.Errorf("page shows %q: %v, want %v", w, !tc.wantPaired, tc.wantPaired)
					}
				}
				if strings.Contains(body, "shown side by side but not compared") && tc.wantPaired {
					t.Errorf("page says the agreement is not compared, and compares it")
				}
				if tc.mismatch == "different scales" && !strings.Contains(body, "a correlation does not depend on the scale") {
					t.Errorf("runs on different scales compared without saying why that is sound")
				}
				// Each run's own agreement with the humans, side by side.
				for _, side := range []string{"a", "b"} {
					m := regexp.MustCompile(`data-testid="human-agreement-` + side + `">\s*With the humans: Pearson r <strong>([^<]*)</strong>`).FindStringSubmatch(body)
					if m == nil {
						t.Errorf("card %s does not show its run's agreement with the humans", side)
						continue
					}
					if _, err := webtest.ParseNumber(m[1]); err != nil {
						t.Errorf("card %s: Pearson %q is not a number", side, m[1])
					}
				}
			})
		}
	})
}

// TestComparePages: the per-sample table is paged, largest disagreement
// first across pages, and the pages together list every sample once.
func TestComparePages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 120
		d := env.ratedDataset("Many", n)
		a := env.storedRun(d, "A", noisy(d.human, 0.4, 1), nil)
		b := env.storedRun(d, "B", noisy(d.human, 1.2, 2), nil)
		rowRe := regexp.MustCompile(`data-testid="compare-row" data-diff="([^"]*)">\s*<td><a href="[^"]*row=(\d+)"`)
		seen := map[string]bool{}
		prev := math.Inf(1)
		pages := (n + comparePageSize - 1) / comparePageSize
		for p := 1; p <= pages; p++ {
			body := env.get(fmt.Sprintf("/compare?a=%d&b=%d&page=%d", a.ID, b.ID, p)).Body.String()
			rows := rowRe.FindAllStringSubmatch(body, -1)
			want := min(comparePageSize, n-(p-1)*comparePageSize)
			if len(rows) != want {
				t.Fatalf("page %d: %d rows, want %d", p, len(rows), want)
			}
			for _, r := range rows {
				if seen[r[2]] {
					t.Errorf("page %d repeats row %s", p, r[2])
				}
				seen[r[2]] = true
				v, err := webtest.ParseNumber(r[1])
				if err != nil {
					t.Fatalf("difference %q: %v", r[1], err)
				}
				if math.Abs(v) > prev+1e-9 {
					t.Errorf("page %d: |difference| %.4f after %.4f, want largest first", p, math.Abs(v), prev)
				}
				prev = math.Abs(v)
			}
			hasNext := strings.Contains(body, `data-testid="compare-next"`)
			if hasNext != (p < pages) {
				t.Errorf("page %d: next link %v", p, hasNext)
			}
			if !strings.Contains(body, fmt.Sprintf("Page %d of %d", p, pages)) {
				t.Errorf("page %d does not say which page it is", p)
			}
		}
		if len(seen) != n {
			t.Errorf("pages list %d samples, want %d", len(seen), n)
		}
	})
}

// TestCompareOffersOnlyRunsWithScores: "Compare with…" on a run's page
// leaves out a run that has no answered call yet, running or waiting for
// its judge (QA: such a run, the newest, was the picker's first choice, and
// its comparison read "undefined: a run or the humans gave every sample
// the same score"), and still offers a run that has scores.
func TestCompareOffersOnlyRunsWithScores(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 20)
		a := env.storedRun(d, "quality A", noisy(d.human, 0.4, 1), nil)
		b := env.storedRun(d, "quality B", noisy(d.human, 0.8, 2), nil)
		waiting := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "waiting for its judge",
			Method: models.MethodBatchEval, Settings: a.Settings, Simulated: true, RubricSnapshot: a.RubricSnapshot}
		if err := env.db.CreateRun(context.Background(), &waiting, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := env.db.CreateRoundBatches(context.Background(), waiting.ID, 0, 0, [][]int64{d.rowIDs}); err != nil {
			t.Fatal(err)
		}
		page := env.get(fmt.Sprintf("/runs/%d", a.ID)).Body.String()
		picker := regexp.MustCompile(`(?s)<select id="compare-b".*?</select>`).FindString(page)
		if !strings.Contains(picker, fmt.Sprintf(`value="%d"`, b.ID)) {
			t.Errorf("the picker does not offer %q, which has scores: %q", b.Name, picker)
		}
		if strings.Contains(picker, fmt.Sprintf(`value="%d"`, waiting.ID)) {
			t.Errorf("the picker offers %q, which has no score yet: %q", waiting.Name, picker)
		}
	})
}
