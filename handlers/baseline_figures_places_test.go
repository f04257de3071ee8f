package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// baselineCases are the runs of TestBaselineFiguresSameInEveryPlace: each
// sample-wise baseline once, G-Eval both ways it estimates a score and
// LLM-Eval on both its scales.
var baselineCases = []struct {
	name, method string
	change       func(*models.Run)
}{
	{"G-Eval, log-probabilities", models.MethodGEval, func(r *models.Run) {
		r.MethodSettings = evaluator.DefaultMethodSettings()
		r.MethodSettings.UseLogprobs = true
	}},
	{"G-Eval, sampled", models.MethodGEval, func(r *models.Run) {
		r.MethodSettings = evaluator.DefaultMethodSettings()
		r.MethodSettings.UseLogprobs, r.MethodSettings.Samples = false, 6
	}},
	{"LLM-Eval", models.MethodLLMEval, nil},
	{"CloserLook", models.MethodCloserLook, nil},
	{"LLM-Eval, 0 to 100", models.MethodLLMEval, func(r *models.Run) {
		r.MethodSettings = evaluator.DefaultMethodSettings()
		r.MethodSettings.LLMEvalScale = evaluator.LLMEvalHundred
	}},
}

// TestBaselineFiguresSameInEveryPlace is TestRunFiguresSameInEveryPlace
// (which runs BatchEval only) for the three baselines: one run of each
// (G-Eval with log-probabilities and, without them, sampled), in one
// experiment on the demo's dialogues grouped by topic, on the simulated
// judge (LLM-Eval also on its 0 to 100 scale). For each run, every figure (coefficients, p-values, intervals,
// n and missing, within topics, human ceiling, samples' scores) reads the
// same on the run page, its share link, the downloaded report, the CSV
// and JSON exports, the API and the command line's table
// (figuresSameInEveryPlace). Then, with no help from the product's code:
// each stored score is recomputed from the answers the run stored, as
// method.md defines the method (G-Eval: Σ s·p(s) over the allowed scores,
// p the stored probabilities or the shares of the readable sampled
// answers; LLM-Eval: the JSON number of each criterion; CloserLook: the
// mean of the readable ratings), the export's finals must be those scores
// and its human ratings the dataset's, and Pearson r, Spearman ρ and
// Kendall τ-b with their p-values, n and missing are recomputed from them.
// The experiment's page, report, share link and API show each run's
// export, and two comparisons of baselines (page, share link, API) give
// the textbook paired figures. Last, every run's bytes (export, CSV, the
// command line's table, the shared report, the comparisons' and the
// experiment's figures) are the same on SQLite and PostgreSQL.
func TestBaselineFiguresSameInEveryPlace(t *testing.T) {
	var mu sync.Mutex
	got := map[string]map[string]string{} // database -> what -> bytes
	ids := regexp.MustCompile(`/(runs|experiments)/\d+|[?&](a|b)=\d+|run \d+|data-run="\d+"|/s/[^/"?#<]+`)
	numbers := regexp.MustCompile(`[−+-]?\d+\.\d+|±\d+\.\d+`)
	expiry := regexp.MustCompile(`(data-testid="share-expiry">)[^<]*`)
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		ds := env.topicCopyOf(d.dataset, "Dialogues, three topics", []string{"hobbies", "travel", "food"})
		must(t, env.db.Gorm.Model(&models.Dataset{}).Where("id = ?", ds.ID).Update("group_column", "topic").Error)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, RubricID: &d.rubric.ID, Name: "Baselines"}
		must(t, env.db.CreateExperiment(context.Background(), &e))
		// One after the other: the two G-Eval runs ask for the same
		// evaluation steps, and which of them the answer cache serves
		// (its calls, tokens and cost) must not depend on which ran first.
		runs := make([]models.Run, len(baselineCases))
		for i, c := range baselineCases {
			run := env.startRun(ds, c.name, c.method, func(r *models.Run) {
				r.ExperimentID = &e.ID
				if c.change != nil {
					c.change(r)
				}
			})
			if runs[i] = env.waitRun(run.ID, 90*time.Second); runs[i].Status != models.RunSucceeded {
				t.Fatalf("%s: run %s (%s), want succeeded", runs[i].Name, runs[i].Status, runs[i].Error)
			}
		}
		out := map[string]string{}
		exports := map[int64][]exportedCriterion{}
		for i, c := range baselineCases {
			run := runs[i]
			t.Run(c.name, func(t *testing.T) {
				rep := figuresSameInEveryPlace(t, env, run, true, true)
				var ex struct {
					Criteria []exportedCriterion `json:"criteria"`
				}
				must(t, json.Unmarshal(rep, &ex))
				exports[run.ID] = ex.Criteria
				baselineScoresRecomputed(t, env, run, ex.Criteria)
				baselineCoefficientsRecomputed(t, rep)
				if run.Method == models.MethodGEval {
					gevalSourcesInEveryPlace(t, env, run)
				}
				out[c.name+" report"] = string(rep)
				out[c.name+" csv"] = env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String()
				link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
				// The link's expiry is said to the minute from when each
				// database's link was made: not a figure compared here.
				shared := expiry.ReplaceAllString(reportBody(t, env.get(link).Body.String()), "${1}EXPIRY")
				out[c.name+" shared report"] = ids.ReplaceAllString(shared, "ID")
				built, err := report.Build(env.localCtx(), env.db, env.ws.ID, run.ID)
				must(t, err)
				out[c.name+" command line"] = built.CorrelationTable()
			})
		}
		if t.Failed() {
			return
		}
		t.Run("experiment", func(t *testing.T) {
			experimentShowsEachExport(t, env, e, exports)
			out["experiment"] = strings.Join(numbers.FindAllString(ids.ReplaceAllString(env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String(), "ID"), -1), " ")
		})
		// LLM-Eval with CloserLook; G-Eval's two ways; LLM-Eval's two scales.
		for _, pair := range [][2]int{{2, 3}, {0, 1}, {2, 4}} {
			a, b := runs[pair[0]], runs[pair[1]]
			t.Run(a.Name+" vs "+b.Name, func(t *testing.T) {
				out["compare "+a.Name+" "+b.Name] = comparisonRecomputed(t, env, a, b, exports)
			})
		}
		mu.Lock()
		got[t.Name()] = out
		mu.Unlock()
	})
	if len(got) < 2 || t.Failed() {
		return // one database only: nothing to compare across databases
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	a, b := got[names[0]], got[names[1]]
	for what, x := range a {
		if y := b[what]; x != y {
			t.Errorf("%s differs between %s and %s:\n%s", what, names[0], names[1], firstDifference(x, y))
		}
	}
}

// baselineScoresRecomputed recomputes each score of a baseline run from
// the answers it stored, as method.md defines the method, and checks
// the stored scores and the export's finals against them, and the
// export's human ratings against the dataset's.
func baselineScoresRecomputed(t *testing.T, env *testEnv, run models.Run, crits []exportedCriterion) {
	t.Helper()
	ctx := context.Background()
	var batches []models.RunBatch
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Order("id").Find(&batches).Error)
	var stored []models.RunScore
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Find(&stored).Error)
	rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
	must(t, err)
	external := map[int64]string{}
	for _, r := range rows {
		external[r.ID] = r.ExternalID
	}
	cs := run.RubricSnapshot.Criteria
	if len(crits) != len(cs) {
		t.Fatalf("the export has %d criteria, the rubric %d", len(crits), len(cs))
	}
	type key struct {
		ci int
		id string
	}
	want := map[key]*float64{}
	ptr := func(v float64) *float64 { return &v }
	mean := func(vs []float64) *float64 {
		if len(vs) == 0 {
			return nil
		}
		var sum float64
		for _, v := range vs {
			sum += v
		}
		return ptr(sum / float64(len(vs)))
	}
	ratingRE := regexp.MustCompile(`(?im)^\s*rating\s*:\s*([-+]?\d+(?:\.\d+)?)\s*$`)
	sampledAnswers := 0
	// sampled[ci]: the answers sampled for criterion ci and the unreadable
	// ones among them.
	sampled := make([][2]int, len(cs))
	for _, b := range batches {
		if len(b.RowIDs) != 1 || b.Status != models.BatchDone {
			t.Fatalf("unit %d holds %d samples, status %s: a baseline judges one sample a call", b.ID, len(b.RowIDs), b.Status)
		}
		id := external[b.RowIDs[0]]
		c := cs[b.CriterionIndex]
		switch run.Method {
		case models.MethodGEval:
			if !run.MethodSettings.UseLogprobs {
				// The shares of the sampled answers that are one allowed
				// integer: Σ s·count(s) / readable is their mean.
				texts := strings.Split(b.Response, "\n---\n")
				sampledAnswers += len(texts)
				var vs []float64
				for _, x := range texts {
					if v, err := strconv.Atoi(strings.TrimSpace(x)); err == nil && float64(v) >= c.Lo && float64(v) <= c.Hi {
						vs = append(vs, float64(v))
					}
				}
				want[key{b.CriterionIndex, id}] = mean(vs)
				sampled[b.CriterionIndex][0] += len(texts)
				sampled[b.CriterionIndex][1] += len(texts) - len(vs)
				break
			}
			// The probabilities read from the log-probabilities, one per
			// allowed score, summing to 1.
			probs, _ := b.Details["probabilities"].(map[string]any)
			var sum, total float64
			for s := int(c.Lo); s <= int(c.Hi); s++ {
				p, ok := probs[strconv.Itoa(s)].(float64)
				if !ok {
					t.Errorf("%s %s: no probability of %d in %v", id, c.Name, s, probs)
				}
				sum, total = sum+float64(s)*p, total+p
			}
			if len(probs) != int(c.Hi-c.Lo)+1 || math.Abs(total-1) > 1e-9 {
				t.Errorf("%s %s: probabilities %v do not cover the scale once", id, c.Name, probs)
			}
			want[key{b.CriterionIndex, id}] = ptr(sum)
		case models.MethodCloserLook:
			texts := strings.Split(b.Response, "\n---\n")
			sampledAnswers += len(texts)
			var vs []float64
			for _, x := range texts {
				m := ratingRE.FindAllStringSubmatch(x, -1)
				if m == nil {
					continue
				}
				if v, err := strconv.ParseFloat(m[len(m)-1][1], 64); err == nil && v >= c.Lo && v <= c.Hi {
					vs = append(vs, v)
				}
			}
			want[key{b.CriterionIndex, id}] = mean(vs)
			sampled[b.CriterionIndex][0] += len(texts)
			sampled[b.CriterionIndex][1] += len(texts) - len(vs)
		case models.MethodLLMEval:
			// One call judges every criterion: a JSON object of numbers on
			// the run's scale (0 to 5 or 0 to 100), keyed by criterion name.
			lo, hi := 0.0, 5.0
			if run.MethodSettings.LLMEvalScale == evaluator.LLMEvalHundred {
				hi = 100
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(b.Response), &obj); err != nil {
				t.Errorf("%s: the stored answer %q is not JSON: %v", id, b.Response, err)
			}
			for ci, c := range cs {
				var v *float64
				if x, ok := obj[c.Name].(float64); ok && x >= lo && x <= hi {
					v = ptr(x)
				}
				want[key{ci, id}] = v
			}
		}
	}
	if run.Method == models.MethodCloserLook && sampledAnswers != 20*len(batches) {
		t.Errorf("%d sampled answers stored over %d units, want 20 each", sampledAnswers, len(batches))
	}
	if run.Method == models.MethodGEval && !run.MethodSettings.UseLogprobs && sampledAnswers != run.MethodSettings.Samples*len(batches) {
		t.Errorf("%d sampled answers stored over %d units, want %d each", sampledAnswers, len(batches), run.MethodSettings.Samples)
	}
	same := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || math.Abs(*a-*b) <= 1e-12) }
	for _, s := range stored {
		k := key{s.CriterionIndex, external[s.RowID]}
		if w, ok := want[k]; !ok || !same(s.Score, w) {
			t.Errorf("%s %s: stored score %v, recomputed from its answers %v", k.id, cs[k.ci].Name, exportedOrNil(s.Score), exportedOrNil(w))
		}
	}
	humans := map[string]map[string]*float64{}
	for _, r := range rows {
		humans[r.ExternalID] = r.Ratings
	}
	seen := 0
	for ci, ec := range crits {
		for _, s := range ec.Samples {
			w := want[key{ci, s.ID}]
			// Σ s·p(s) with p the shares of n answers and the answers' mean
			// are one number but for the last bit of a float.
			if !same(s.Final, w) {
				t.Errorf("%s %s: the export's final %v, recomputed %v", ec.Name, s.ID, exportedOrNil(s.Final), exportedOrNil(w))
			}
			var h *float64
			if col := cs[ci].HumanColumn; col != "" {
				h = humans[s.ID][col]
			}
			if !same(s.Human, h) {
				t.Errorf("%s %s: the export's human rating %v, the dataset's %v", ec.Name, s.ID, exportedOrNil(s.Human), exportedOrNil(h))
			}
			if w != nil {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatalf("no score recomputed: the test shows nothing")
	}
	sampledAnswersInEveryPlace(t, env, run, sampled)
}

// sampledAnswersInEveryPlace: a run that samples its judge's answers
// (CloserLook, G-Eval without log-probabilities) exports, per criterion,
// the answers sampled and the unreadable ones as recomputed from its
// stored answers (sampled), and its run page, share link and downloaded
// reports say so in one sentence; a run that does not sample exports
// none.
func sampledAnswersInEveryPlace(t *testing.T, env *testEnv, run models.Run, sampled [][2]int) {
	t.Helper()
	var ex struct {
		Report struct {
			Criteria []struct {
				Name           string
				SampledAnswers *struct{ Answers, Unreadable int } `json:"sampled_answers"`
			} `json:"criteria"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &ex))
	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
	var cards [][]string
	for _, path := range []string{fmt.Sprintf("/runs/%d", run.ID), link, fmt.Sprintf("/runs/%d/report.html", run.ID), link + "/report.html"} {
		cards = append(cards, strings.Split(env.get(path).Body.String(), `data-testid="criterion-card"`)[1:])
	}
	for ci, c := range ex.Report.Criteria {
		got, n := c.SampledAnswers, sampled[ci]
		if n[0] == 0 {
			if got != nil {
				t.Errorf("%s: the export counts %+v sampled answers; the run sampled none", c.Name, *got)
			}
			continue
		}
		if got == nil || got.Answers != n[0] || got.Unreadable != n[1] {
			t.Errorf("%s: the export's sampled answers %+v; its stored answers: %d, %d unreadable", c.Name, got, n[0], n[1])
		}
		pct := readerRounds(100*float64(n[1])/float64(n[0]), 0, false)
		want := fmt.Sprintf("Of the %s answers sampled for this criterion, those of its missing scores included, %s (%s%%) could not be read", groupThousands(n[0]), groupThousands(n[1]), pct)
		for i, place := range []string{"run page", "share link", "downloaded report", "share link's report"} {
			if ci >= len(cards[i]) || !strings.Contains(pageText(cards[i][ci]), want) {
				t.Errorf("%s, %s: no %q", place, c.Name, want)
			}
		}
	}
}

// baselineCoefficientsRecomputed recomputes each criterion's Pearson r,
// Spearman ρ (Pearson's of the average ranks) and Kendall τ-b, with
// their two-sided p-values, n and missing, from the export's finals and
// human ratings, by the textbook formulas.
func baselineCoefficientsRecomputed(t *testing.T, rep []byte) {
	t.Helper()
	var ex struct {
		Criteria []struct {
			Name                       string
			Pearson, Spearman, Kendall placesCorrelation
			Samples                    []struct {
				ID           string
				Final, Human *float64
			}
		} `json:"criteria"`
	}
	must(t, json.Unmarshal(rep, &ex))
	checked := 0
	for _, c := range ex.Criteria {
		var xs, ys []float64
		for _, s := range c.Samples {
			if s.Final != nil && s.Human != nil {
				xs, ys = append(xs, *s.Final), append(ys, *s.Human)
			}
		}
		if len(xs) == 0 {
			if c.Pearson.Coef != nil {
				t.Errorf("%s: Pearson r %v with no sample both scored and rated", c.Name, *c.Pearson.Coef)
			}
			continue
		}
		checked++
		r, rho, tau := textbookPearson(xs, ys), textbookPearson(averageRanks(xs), averageRanks(ys)), textbookTauB(xs, ys)
		for _, f := range []struct {
			name    string
			c       placesCorrelation
			coef, p float64
		}{{"Pearson r", c.Pearson, r, tTestP(r, len(xs))}, {"Spearman ρ", c.Spearman, rho, tTestP(rho, len(xs))},
			{"Kendall τ-b", c.Kendall, tau, textbookKendallP(xs, ys)}} {
			if f.c.Coef == nil || math.Abs(*f.c.Coef-f.coef) > 1e-9 {
				t.Errorf("%s %s: exported %v; recomputed from its finals and human ratings %v", c.Name, f.name, exportedOrNil(f.c.Coef), f.coef)
			}
			if f.c.P == nil || math.Abs(*f.c.P-f.p) > 1e-6 {
				t.Errorf("%s %s: exported p %v; recomputed %v", c.Name, f.name, exportedOrNil(f.c.P), f.p)
			}
			if f.c.N != len(xs) || f.c.Missing != len(c.Samples)-len(xs) {
				t.Errorf("%s %s: n %d, missing %d; the export's samples give %d and %d", c.Name, f.name, f.c.N, f.c.Missing, len(xs), len(c.Samples)-len(xs))
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no criterion with human ratings: the test shows nothing")
	}
}

// gevalSourcesInEveryPlace: a G-Eval run's export counts the scores
// estimated each way, as its batches record them, and the run page, its
// share link and the downloaded report say so in the same words.
func gevalSourcesInEveryPlace(t *testing.T, env *testEnv, run models.Run) {
	t.Helper()
	var batches []models.RunBatch
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Find(&batches).Error)
	counts := map[string]int{}
	for _, b := range batches {
		s, _ := b.Details["source"].(string)
		counts[s]++
	}
	var ex struct {
		Report struct {
			Run struct {
				GEvalSources *struct{ Logprobs, Samples int } `json:"geval_sources"`
			} `json:"run"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &ex))
	g := ex.Report.Run.GEvalSources
	want := fmt.Sprintf("Every score (%d) was estimated from the endpoint's log-probabilities.", len(batches))
	if !run.MethodSettings.UseLogprobs {
		want = fmt.Sprintf("Every score (%d) was estimated from %d sampled answers (log-probabilities were not asked for).", len(batches), run.MethodSettings.Samples)
	}
	if g == nil || g.Logprobs != counts[evaluator.GEvalSourceLogprobs] || g.Samples != len(batches)-counts[evaluator.GEvalSourceLogprobs] ||
		run.MethodSettings.UseLogprobs != (g.Logprobs == len(batches)) {
		t.Errorf("the export's geval_sources %+v; the batches record %v", g, counts)
	}
	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
	for _, path := range []string{fmt.Sprintf("/runs/%d", run.ID), link, fmt.Sprintf("/runs/%d/report.html", run.ID), link + "/report.html"} {
		if body := pageText(env.get(path).Body.String()); !strings.Contains(body, want) {
			t.Errorf("%s does not say %q", path, want)
		}
	}
}

// experimentShowsEachExport: the experiment's API gives each run's
// exported Pearson r and Spearman ρ and their averages over the
// criteria, and its page, downloaded report and share link show them
// rounded as a reader of the export rounds them.
func experimentShowsEachExport(t *testing.T, env *testEnv, e models.Experiment, exports map[int64][]exportedCriterion) {
	t.Helper()
	rec := env.get(fmt.Sprintf("/api/v1/experiments/%d", e.ID))
	if rec.Code != http.StatusOK {
		t.Fatalf("the experiment's API: %d", rec.Code)
	}
	var apiExp APIExperiment
	must(t, json.Unmarshal(rec.Body.Bytes(), &apiExp))
	if len(apiExp.Runs) != len(exports) {
		t.Fatalf("the API's experiment has %d runs, want %d", len(apiExp.Runs), len(exports))
	}
	var wantP, wantS, wantAvg, wantAvgS, wantTokens, wantCalls, wantFailures []string
	for _, row := range apiExp.Runs {
		if row.TokensPerSample == nil {
			t.Errorf("run %d: no tokens per sample in the API's experiment", row.Run.ID)
		} else {
			wantTokens = append(wantTokens, readerRounds(*row.TokensPerSample, 0, false))
		}
		wantCalls, wantFailures = append(wantCalls, strconv.Itoa(row.Run.Calls)), append(wantFailures, strconv.Itoa(row.Failures))
		crits := exports[row.Run.ID]
		var sumP, sumS float64
		for i := range apiExp.Criteria {
			if i >= len(crits) || crits[i].Name != apiExp.Criteria[i] {
				t.Fatalf("the API's experiment's criteria %q; run %d's export has others", apiExp.Criteria, row.Run.ID)
			}
			p, s := row.Pearson[i], row.Spearman[i]
			if p == nil || crits[i].Pearson.Coef == nil || *p != *crits[i].Pearson.Coef || s == nil || *s != *crits[i].Spearman.Coef {
				t.Errorf("the API's experiment gives run %d's %s as %v / %v; its export %v / %v", row.Run.ID, apiExp.Criteria[i], exportedOrNil(p), exportedOrNil(s),
					exportedOrNil(crits[i].Pearson.Coef), exportedOrNil(crits[i].Spearman.Coef))
				continue
			}
			wantP, wantS = append(wantP, placesCoef(p)), append(wantS, placesCoef(s))
			sumP, sumS = sumP+*p, sumS+*s
		}
		n := float64(len(apiExp.Criteria))
		if row.AveragePearson == nil || math.Abs(*row.AveragePearson-sumP/n) > 1e-12 || row.AverageSpearman == nil || math.Abs(*row.AverageSpearman-sumS/n) > 1e-12 {
			t.Errorf("run %d: averages %v / %v, the means of its criteria's %v / %v", row.Run.ID, exportedOrNil(row.AveragePearson), exportedOrNil(row.AverageSpearman), sumP/n, sumS/n)
		} else {
			wantAvg, wantAvgS = append(wantAvg, placesCoef(row.AveragePearson)), append(wantAvgS, placesCoef(row.AverageSpearman))
		}
	}
	cells := func(body, testid string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`data-testid="`+regexp.QuoteMeta(testid)+`"[^>]*>([^<]*)<`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	link := env.createShareVia(url.Values{"kind": {"experiment"}, "experiment_id": {fmt.Sprint(e.ID)}, "expires": {"7d"}})
	var first string
	for _, path := range []string{fmt.Sprintf("/experiments/%d", e.ID), fmt.Sprintf("/experiments/%d/report.html", e.ID), link, link + "/report.html"} {
		rec := env.get(path)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", path, rec.Code)
			continue
		}
		body := rec.Body.String()
		for _, c := range []struct {
			testid string
			want   []string
		}{{"pearson", wantP}, {"spearman", wantS}, {"avg-pearson", wantAvg}, {"avg-spearman", wantAvgS}, {"tokens-per-sample", wantTokens},
			{"calls", wantCalls}, {"failures", wantFailures}} {
			if got := cells(body, c.testid); strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("%s: %s cells %v; the API's, rounded: %v", path, c.testid, got, c.want)
			}
		}
		// The rest of the table and the cost sentence read the same too.
		var rest []string
		for _, id := range []string{"cost-per-sample", "experiment-summary", "x-tick", "y-tick"} {
			rest = append(rest, strings.Join(cells(body, id), " | "))
		}
		if got := strings.Join(rest, "\n"); first == "" {
			first = got
		} else if got != first {
			t.Errorf("%s shows other costs, summary or chart ticks than the experiment page:\n%s\nvs\n%s", path, got, first)
		}
	}
}

// comparisonRecomputed checks the comparison of runs a and b on each
// criterion: the API's paired figures against their textbook formulas
// from its rows, those rows' scores against the runs' exports, and the
// compare page's and the share link's cells against the API's. It returns
// the API's comparisons with the run ids set aside, for the comparison
// across databases.
func comparisonRecomputed(t *testing.T, env *testEnv, a, b models.Run, exports map[int64][]exportedCriterion) string {
	t.Helper()
	var all []string
	for ci := range exports[a.ID] {
		rec := env.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=%d", a.ID, b.ID, ci))
		if rec.Code != http.StatusOK {
			t.Fatalf("criterion %d: the API's comparison: %d %s", ci, rec.Code, rec.Body.String())
		}
		var cmp APIComparison
		must(t, json.Unmarshal(rec.Body.Bytes(), &cmp))
		finals := func(run int64) map[string]*float64 {
			out := map[string]*float64{}
			for _, s := range exports[run][ci].Samples {
				out[s.ID] = s.Final
			}
			return out
		}
		fa, fb := finals(a.ID), finals(b.ID)
		var ra, rb []float64
		for _, r := range cmp.Rows {
			for _, x := range []struct {
				name string
				api  *report.JSONScore
				ex   *float64
			}{{a.Name, r.A, fa[r.ExternalID]}, {b.Name, r.B, fb[r.ExternalID]}} {
				if (x.api == nil) != (x.ex == nil) || x.api != nil && float64(*x.api) != *x.ex {
					t.Errorf("criterion %d, sample %s: the comparison gives %s's score %v; its export %v", ci, r.ExternalID, x.name, x.api, exportedOrNil(x.ex))
				}
			}
			if r.A != nil && r.B != nil {
				ra, rb = append(ra, float64(*r.A)), append(rb, float64(*r.B))
			}
		}
		d, rA, n := pearsonDifferenceRecomputed(t, ci, cmp)
		if ex := exports[a.ID][ci]; ex.Pearson.N == n && math.Abs(*ex.Pearson.Coef-rA) > 1e-12 {
			t.Errorf("criterion %d: A's export gives Pearson r %v, its paired figure %v on the same %d samples", ci, *ex.Pearson.Coef, rA, n)
		}
		if cmp.Pearson.Coef == nil || math.Abs(*cmp.Pearson.Coef-textbookPearson(ra, rb)) > 1e-12 || cmp.Pearson.N != len(ra) {
			t.Fatalf("criterion %d: the runs' Pearson r with each other %v on %d; recomputed %v on %d", ci, exportedOrNil(cmp.Pearson.Coef), cmp.Pearson.N,
				textbookPearson(ra, rb), len(ra))
		}
		runsR := readerRounds(*cmp.Pearson.Coef, 3, false)
		body := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=%d", a.ID, b.ID, ci)).Body.String()
		if got := regexp.MustCompile(`data-testid="runs-pearson"[^>]*>([^<]*)<`).FindAllStringSubmatch(body, -1); len(got) != 1 || got[0][1] != runsR {
			t.Errorf("criterion %d: the compare page shows the runs' Pearson r as %v; the API's, rounded: %s", ci, got, runsR)
		}
		i := strings.Index(body, `data-testid="agreement-pearson"`)
		if i < 0 {
			t.Fatalf("criterion %d: the compare page has no Pearson row of agreement", ci)
		}
		row := body[i:]
		row = row[:strings.Index(row, "</tr>")]
		var cellsShown []string
		for _, m := range regexp.MustCompile(`<td class="num"[^>]*>([^<]*)<`).FindAllStringSubmatch(row, -1) {
			cellsShown = append(cellsShown, m[1])
		}
		want := []string{readerRounds(*d.A, 3, false), readerRounds(*d.B, 3, false), readerRounds(*d.Diff, 3, true),
			readerRounds(*d.CILow, 3, true) + " to " + readerRounds(*d.CIHigh, 3, true), fmt.Sprint(n)}
		if strings.Join(cellsShown, "|") != strings.Join(want, "|") {
			t.Errorf("criterion %d: the compare page's Pearson row %v; the API's, rounded: %v", ci, cellsShown, want)
		}
		rho := textbookPearson(averageRanks(ra), averageRanks(rb))
		if cmp.Spearman.Coef == nil || math.Abs(*cmp.Spearman.Coef-rho) > 1e-9 || cmp.Spearman.N != len(ra) {
			t.Errorf("criterion %d: the runs' Spearman ρ with each other %v on %d; recomputed %v on %d", ci, exportedOrNil(cmp.Spearman.Coef), cmp.Spearman.N, rho, len(ra))
		}
		if ci == 0 {
			shared := env.get(env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {fmt.Sprint(a.ID)}, "other_run_id": {fmt.Sprint(b.ID)}, "expires": {"7d"}})).Body.String()
			cell := func(body, id string) []string {
				var out []string
				for _, m := range regexp.MustCompile(`data-testid="`+id+`"[^>]*>([^<]*)<`).FindAllStringSubmatch(body, -1) {
					out = append(out, m[1])
				}
				return out
			}
			if got := cell(shared, "agreement-pearson"); len(got) != 1 || got[0] != runsR {
				t.Errorf("the comparison's share link shows the runs' Pearson r as %v; the API's, rounded: %s", got, runsR)
			}
			if got := cell(shared, "agreement-spearman"); cmp.Spearman.Coef == nil || len(got) != 1 || got[0] != readerRounds(*cmp.Spearman.Coef, 3, false) {
				t.Errorf("the comparison's share link shows the runs' Spearman ρ as %v; the API's %v", got, exportedOrNil(cmp.Spearman.Coef))
			}
			// Each run's cost and unreadable scores, as on the compare page.
			for _, id := range []string{"compare-cost-a", "compare-cost-b", "compare-unreadable-a", "compare-unreadable-b"} {
				if p, s := cell(body, id), cell(shared, id); len(p) != 1 || fmt.Sprint(p) != fmt.Sprint(s) {
					t.Errorf("%s: the compare page shows %q, its share link %q", id, p, s)
				}
			}
		}
		cmp.A, cmp.B = APIRun{}, APIRun{}
		j, err := json.Marshal(cmp)
		must(t, err)
		all = append(all, regexp.MustCompile(`"row_id":\d+`).ReplaceAllString(string(j), `"row_id":ID`))
	}
	return strings.Join(all, "\n")
}
