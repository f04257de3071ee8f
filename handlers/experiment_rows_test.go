package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestExperimentRowsMatchRunPages launches every method on the demo data
// ("Launch all methods") and checks each row of the experiment against the
// run's own figures: per criterion Pearson and Spearman and their averages
// (the API's full floats against the run's JSON export; the page's three
// decimals against the run page's), tokens per sample, calls and failures.
func TestExperimentRowsMatchRunPages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		form := d.methodForm("batcheval", map[string]string{"rounds": "2", "name": "Every method"})
		rec := env.postForm(fmt.Sprintf("/projects/%d/experiments", env.project.ID), form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("launch all: %d %s", rec.Code, rec.Body.String())
		}
		expID, err := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/experiments/"), 10, 64)
		if err != nil {
			t.Fatalf("launch all redirected to %q", rec.Header().Get("Location"))
		}
		runs, err := env.db.ListExperimentRuns(ctx, env.ws.ID, expID)
		if err != nil || len(runs) < 4 {
			t.Fatalf("experiment runs: %v (%d)", err, len(runs))
		}
		methods := map[string]bool{}
		for _, r := range runs {
			if got := env.waitRun(r.ID, 120*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("run %s: %s (%s)", r.Name, got.Status, got.Error)
			}
			methods[r.Method] = true
		}
		for _, m := range []string{models.MethodBatchEval, models.MethodGEval, models.MethodLLMEval, models.MethodCloserLook} {
			if !methods[m] {
				t.Errorf("the experiment has no %s run", m)
			}
		}

		var api struct {
			Runs []struct {
				Run struct {
					ID               int64 `json:"id"`
					Name             string
					Calls            int `json:"calls"`
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
					CachedCalls      int `json:"cached_calls"`
					CachedPrompt     int `json:"cached_prompt_tokens"`
					CachedCompletion int `json:"cached_completion_tokens"`
				} `json:"run"`
				Pearson         []*float64 `json:"pearson"`
				Spearman        []*float64 `json:"spearman"`
				AveragePearson  *float64   `json:"average_pearson"`
				AverageSpearman *float64   `json:"average_spearman"`
				TokensPerSample *float64   `json:"tokens_per_sample"`
				Failures        int        `json:"failures"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/experiments/%d", expID)).Body.Bytes(), &api); err != nil {
			t.Fatal(err)
		}
		if len(api.Runs) != len(runs) {
			t.Fatalf("API experiment has %d runs, want %d", len(api.Runs), len(runs))
		}
		page := env.get(fmt.Sprintf("/experiments/%d", expID)).Body.String()
		cell := func(row, testid string) []string {
			var out []string
			for _, m := range regexp.MustCompile(`data-testid="`+testid+`">([^<]*)<`).FindAllStringSubmatch(row, -1) {
				out = append(out, m[1])
			}
			return out
		}
		for _, x := range api.Runs {
			name := x.Run.Name
			var export struct {
				Report struct {
					Criteria []struct {
						Name     string
						Pearson  struct{ Coef *float64 }
						Spearman struct{ Coef *float64 }
						Scored   int
						Samples  []json.RawMessage
					}
				}
			}
			if err := json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", x.Run.ID)).Body.Bytes(), &export); err != nil {
				t.Fatal(err)
			}
			crits := export.Report.Criteria
			if len(x.Pearson) != len(crits) || len(x.Spearman) != len(crits) {
				t.Errorf("%s: %d Pearson, %d Spearman figures, the run has %d criteria", name, len(x.Pearson), len(x.Spearman), len(crits))
				continue
			}
			var sumP, sumS float64
			for i, c := range crits {
				same := func(what string, row, run *float64) {
					if (row == nil) != (run == nil) || (row != nil && *row != *run) {
						t.Errorf("%s, %s %s: experiment %v, run's export %v", name, c.Name, what, orNil(row), orNil(run))
					}
				}
				same("Pearson", x.Pearson[i], c.Pearson.Coef)
				same("Spearman", x.Spearman[i], c.Spearman.Coef)
				if c.Pearson.Coef != nil {
					sumP += *c.Pearson.Coef
				}
				if c.Spearman.Coef != nil {
					sumS += *c.Spearman.Coef
				}
			}
			if x.AveragePearson == nil || math.Abs(*x.AveragePearson-sumP/float64(len(crits))) > 1e-12 ||
				x.AverageSpearman == nil || math.Abs(*x.AverageSpearman-sumS/float64(len(crits))) > 1e-12 {
				t.Errorf("%s: averages %v/%v, the run's criteria give %v/%v", name, orNil(x.AveragePearson), orNil(x.AverageSpearman), sumP/float64(len(crits)), sumS/float64(len(crits)))
			}
			rows := len(crits[0].Samples)
			// Runs launched together share identical requests (their first
			// rounds): the calls answered so are counted at the tokens they
			// used when paid for, as if paid.
			used := x.Run.PromptTokens + x.Run.CompletionTokens + x.Run.CachedPrompt + x.Run.CachedCompletion
			if want := float64(used) / float64(rows); x.TokensPerSample == nil || *x.TokensPerSample != want {
				t.Errorf("%s: tokens per sample %v, the run's %d tokens (%d of %d calls cached) over %d samples give %v", name, orNil(x.TokensPerSample), used, x.Run.CachedCalls, x.Run.Calls, rows, want)
			}

			// The page: each figure as the run's own page shows it.
			row := rowOf(page, templEscape(name))
			if row == "" {
				t.Errorf("experiment page has no row for %s", name)
				continue
			}
			runPage := env.get(fmt.Sprintf("/runs/%d", x.Run.ID)).Body.String()
			coefs := cell(runPage, "coef") // Pearson, Spearman, Kendall per criterion
			if len(coefs) != 3*len(crits) {
				t.Errorf("%s: run page has %d correlations, want %d", name, len(coefs), 3*len(crits))
				continue
			}
			var wantP, wantS []string
			for i := range crits {
				wantP, wantS = append(wantP, coefs[3*i]), append(wantS, coefs[3*i+1])
			}
			if got := cell(row, "pearson"); strings.Join(got, " ") != strings.Join(wantP, " ") {
				t.Errorf("%s: experiment row Pearson %v, run page %v", name, got, wantP)
			}
			if got := cell(row, "spearman"); strings.Join(got, " ") != strings.Join(wantS, " ") {
				t.Errorf("%s: experiment row Spearman %v, run page %v", name, got, wantS)
			}
			if got := cell(row, "calls"); len(got) != 1 || got[0] != runCount(x.Run.Calls) {
				t.Errorf("%s: experiment row calls %v, the run made %d", name, got, x.Run.Calls)
			}
			if got := cell(row, "failures"); len(got) != 1 || got[0] != strconv.Itoa(x.Failures) {
				t.Errorf("%s: experiment row failures %v, API %d", name, got, x.Failures)
			}
			tokens := strconv.FormatFloat(float64(used)/float64(rows), 'f', 0, 64)
			if got := cell(row, "tokens-per-sample"); len(got) != 1 || strings.ReplaceAll(got[0], ",", "") != tokens {
				t.Errorf("%s: experiment row tokens per sample %v, want %s", name, got, tokens)
			}
		}
	})
}

func orNil(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// templEscape escapes a name as the pages write it.
func templEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
