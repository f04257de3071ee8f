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

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// startRun launches a run of the demo rubric with the simulated judge on
// ds through the runner (2 rounds, batches of 10), after change.
func (env *testEnv) startRun(ds models.Dataset, name, method string, change func(*models.Run)) models.Run {
	env.t.Helper()
	d := env.demo()
	s := evaluator.DefaultSettings()
	s.Rounds = 2
	run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, RubricID: &d.rubric.ID, JudgeID: &d.judge.ID,
		Name: name, Method: method, Settings: s, RubricSnapshot: d.rubric.Evaluator(), JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
	if change != nil {
		change(&run)
	}
	if err := env.runner.Launch(context.Background(), &run); err != nil {
		env.t.Fatalf("launch %s: %v", name, err)
	}
	return run
}

// demoExperiment is an experiment on the demo data with a finished
// BatchEval run and a finished G-Eval run.
type demoExperiment struct {
	exp              models.Experiment
	batchEval, gEval models.Run
}

func (env *testEnv) demoExperiment() demoExperiment {
	env.t.Helper()
	d := env.demo()
	e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, RubricID: &d.rubric.ID, Name: "Methods on the <demo>"}
	if err := env.db.CreateExperiment(context.Background(), &e); err != nil {
		env.t.Fatal(err)
	}
	in := func(r *models.Run) { r.ExperimentID = &e.ID }
	be := env.startRun(d.dataset, "BatchEval <default>", models.MethodBatchEval, in)
	ge := env.startRun(d.dataset, "G-Eval", models.MethodGEval, in)
	return demoExperiment{exp: e, batchEval: env.waitRun(be.ID, 60*time.Second), gEval: env.waitRun(ge.ID, 60*time.Second)}
}

func TestExperimentPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		for _, r := range []models.Run{x.batchEval, x.gEval} {
			if r.Status != models.RunSucceeded {
				t.Fatalf("run %s: %s (%s), want succeeded", r.Name, r.Status, r.Error)
			}
		}
		reseed, err := env.runner.LaunchReseed(ctx, env.ws.ID, x.batchEval.ID, 99)
		if err != nil {
			t.Fatal(err)
		}
		env.waitRun(reseed.ID, 60*time.Second)
		rows := env.demo().dataset.RowCount
		tokens := func(r models.Run) string {
			return strconv.FormatFloat(float64(r.PromptTokens+r.CompletionTokens)/float64(rows), 'f', 0, 64)
		}
		expPath := fmt.Sprintf("/experiments/%d", x.exp.ID)
		body := env.get(expPath).Body.String()

		wants := []string{
			"Methods on the &lt;demo&gt;", "BatchEval &lt;default&gt;", ">G-Eval<", "BatchEval", `data-testid="simulated-badge"`,
			`data-testid="tokens-per-sample">` + tokens(x.batchEval) + "<",
			`data-testid="tokens-per-sample">` + tokens(x.gEval) + "<",
			`data-testid="cost-per-sample">$0 (simulated)<`,
			`class="num best"`, "<svg", "tokens per sample", "On your data, ",
			fmt.Sprintf("reseed of run %d: average Pearson ", x.batchEval.ID), `data-testid="experiment-verdict"`,
			`data-testid="repeatability-band"`, x.batchEval.Name[:9] + " &lt;default&gt; over 2 seeds",
			`name="a"`, `name="b"`,
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("experiment page lacks %q", w)
			}
		}
		if strings.Contains(body, "<demo>") || strings.Contains(body, "<default>") {
			t.Errorf("a name reached the page unescaped")
		}
		if got := strings.Count(body, `data-testid="experiment-row"`); got != 3 {
			t.Errorf("experiment page has %d rows, want 3", got)
		}
		chart := body[strings.Index(body, `data-testid="experiment-chart"`):]
		for _, r := range []models.Run{x.batchEval, x.gEval, reseed} {
			if !strings.Contains(chart, fmt.Sprintf(`<a href="/runs/%d" data-testid="scatter-point"`, r.ID)) {
				t.Errorf("chart has no point linking to run %d", r.ID)
			}
		}
		if strings.Contains(body, `data-testid="running-note"`) {
			t.Errorf("a note on running runs, but all are finished")
		}

		// A run still going: a note, and it is not marked best.
		long := env.startRun(env.demo().dataset, "Long one", models.MethodBatchEval, func(r *models.Run) {
			r.ExperimentID = &x.exp.ID
			r.Settings.Rounds, r.Settings.BatchSize = 50, 1
		})
		t.Cleanup(func() { _, _ = env.runner.Cancel(context.Background(), env.ws.ID, long.ID) })
		body = env.get(expPath).Body.String()
		if !strings.Contains(body, `data-testid="running-note"`) {
			t.Errorf("no note while a run is still going")
		}
		if row := rowOf(body, long.Name); strings.Contains(row, "best") {
			t.Errorf("the running run's row is marked best: %s", row)
		}

		list := env.get(fmt.Sprintf("/projects/%d/experiments", env.project.ID)).Body.String()
		for _, w := range []string{`href="` + expPath + `"`, "Methods on the &lt;demo&gt;"} {
			if !strings.Contains(list, w) {
				t.Errorf("experiments list lacks %q", w)
			}
		}
		if code := env.get("/experiments/999999").Code; code != http.StatusNotFound {
			t.Errorf("unknown experiment: status %d, want 404", code)
		}
	})
}

// rowOf returns the table row of the experiment page that names a run.
func rowOf(body, name string) string {
	for _, row := range regexp.MustCompile(`(?s)<tr data-testid="experiment-row">.*?</tr>`).FindAllString(body, -1) {
		if strings.Contains(row, ">"+name+"<") {
			return row
		}
	}
	return ""
}

func TestBestOf(t *testing.T) {
	nan := math.NaN()
	all := []bool{true, true, true}
	cases := []struct {
		name     string
		vals     []float64
		eligible []bool
		higher   bool
		want     string
	}{
		{"highest wins", []float64{0.5, 0.7, 0.6}, all, higherBetter, "010"},
		{"lowest wins", []float64{0.5, 0.7, 0.6}, all, lowerBetter, "100"},
		{"ties both marked", []float64{0.7, 0.7001, 0.6}, all, higherBetter, "110"},
		{"undefined left out", []float64{nan, 0.2, 0.3}, all, lowerBetter, "010"},
		{"all equal: nothing", []float64{0.4, 0.4, 0.4}, all, higherBetter, "000"},
		{"only one competes: nothing", []float64{0.9, nan, nan}, all, higherBetter, "000"},
		{"ineligible cannot win", []float64{0.9, 0.2, 0.3}, []bool{false, true, true}, higherBetter, "001"},
	}
	for _, tc := range cases {
		var got strings.Builder
		for _, b := range bestOf(tc.vals, tc.eligible, 3, tc.higher) {
			if b {
				got.WriteByte('1')
			} else {
				got.WriteByte('0')
			}
		}
		if got.String() != tc.want {
			t.Errorf("%s: marks %s, want %s", tc.name, got.String(), tc.want)
		}
	}
}

func TestPerSampleCostAndSummary(t *testing.T) {
	cost := func(v float64) *float64 { return &v }
	done := func(name, method string, simulated bool) models.Run {
		return models.Run{Name: name, Method: method, Status: models.RunSucceeded, Simulated: simulated}
	}
	costCases := []struct {
		name string
		f    runFigures
		want string
	}{
		{"unknown price", runFigures{run: done("a", "batcheval", false)}, "unknown"},
		{"simulated", runFigures{run: done("a", "batcheval", true), cost: cost(0)}, "$0 (simulated)"},
		{"priced", runFigures{run: done("a", "batcheval", false), cost: cost(0.0042)}, "$0.0042"},
	}
	for _, tc := range costCases {
		if got := perSampleCost(tc.f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	summaries := []struct {
		name string
		figs []runFigures
		want string
	}{
		{"priced", []runFigures{
			{run: done("BatchEval (default)", "batcheval", false), avgP: 0.74, tokens: 800, cost: cost(0.004)},
			{run: done("BatchEval, random", "batcheval", false), avgP: 0.73, tokens: 800, cost: cost(0.004)},
			{run: done("CloserLook", "closerlook", false), avgP: 0.68, tokens: 1300, cost: cost(0.0064)},
		}, "Cost: BatchEval (default) (average Pearson 0.74) costs $0.004 per sample; CloserLook (average Pearson 0.68) costs 1.6× as much per sample."},
		{"unknown prices compare tokens", []runFigures{
			{run: done("G-Eval", "geval", false), avgP: 0.61, tokens: 500},
			{run: done("BatchEval", "batcheval", false), avgP: 0.70, tokens: 250},
		}, "Cost: BatchEval (average Pearson 0.70) uses 250 tokens per sample (cost unknown: the judge has no prices); G-Eval (average Pearson 0.61) uses 2.0× as many tokens per sample."},
		{"a ratio half-way at its decimal", []runFigures{
			{run: done("G-Eval", "geval", false), avgP: 0.61, tokens: 500},
			{run: done("BatchEval", "batcheval", false), avgP: 0.70, tokens: 400},
		}, "Cost: BatchEval (average Pearson 0.70) uses 400 tokens per sample (cost unknown: the judge has no prices); G-Eval (average Pearson 0.61) uses 1.3× as many tokens per sample."},
		{"no finished run", []runFigures{{run: models.Run{Name: "x", Status: models.RunRunning}, avgP: 0.9, tokens: 10}}, ""},
		{"a cached run is left out, and said to be", []runFigures{
			{run: done("BatchEval again", "batcheval", false), avgP: 0.75, tokens: math.NaN(), cached: true},
			{run: done("BatchEval (default)", "batcheval", false), avgP: 0.74, tokens: 800, cost: cost(0.004)},
			{run: done("CloserLook", "closerlook", false), avgP: 0.68, tokens: 1300, cost: cost(0.0064)},
		}, "Cost: BatchEval (default) (average Pearson 0.74) costs $0.004 per sample; CloserLook (average Pearson 0.68) costs 1.6× as much per sample. (BatchEval again is left out: its calls were answered from the answer cache of earlier runs, so its cost is not known.)"},
		{"every run cached", []runFigures{
			{run: done("CloserLook", "closerlook", false), avgP: 0.68, tokens: math.NaN(), cached: true},
		}, "Cost: not known for these runs: their calls were answered from the answer cache of earlier runs, which costs nothing, so what they paid is less than their methods cost."},
	}
	for _, tc := range summaries {
		if got := experimentSummary(tc.figs); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// A run answered from the answer cache paid nothing for those calls; it
// keeps what they cost when first paid for, so its tokens per sample are
// its method's (the same as the run that paid), said to be counted so, and
// compared with the others (before, they showed "cached" and were left out
// of every comparison).
func TestExperimentPageCachedRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		x := env.demoExperiment()
		// The same setup again: every call is answered from the cache.
		again := env.startRun(env.demo().dataset, "BatchEval again", models.MethodBatchEval, func(r *models.Run) { r.ExperimentID = &x.exp.ID })
		again = env.waitRun(again.ID, 60*time.Second)
		if again.Status != models.RunSucceeded || !again.WhollyCached() {
			t.Fatalf("repeat run: %s with %d of %d calls cached, want succeeded from the cache", again.Status, again.CachedCalls, again.Calls)
		}
		first := x.batchEval
		if again.PromptTokens != 0 || again.CachedPromptTokens != first.PromptTokens || again.CachedCompletionTokens != first.CompletionTokens {
			t.Fatalf("repeat run: paid %d tokens, cached %d+%d; want 0 paid and the first run's %d+%d kept",
				again.PromptTokens, again.CachedPromptTokens, again.CachedCompletionTokens, first.PromptTokens, first.CompletionTokens)
		}
		body := env.get(fmt.Sprintf("/experiments/%d", x.exp.ID)).Body.String()
		tokens := regexp.MustCompile(`data-testid="tokens-per-sample">([0-9,]+)<`)
		was, now := tokens.FindStringSubmatch(rowOf(body, templ.EscapeString(first.Name))), tokens.FindStringSubmatch(rowOf(body, again.Name))
		if was == nil || now == nil || was[1] != now[1] {
			t.Errorf("tokens per sample: first run %v, repeat %v; want the same figure", was, now)
		}
		row := rowOf(body, again.Name)
		for _, w := range []string{"as if every call were paid: 12 of 12 calls answered from the answer cache", "counted with the tokens they used when first paid for, at the prices of this run"} {
			if !strings.Contains(row, w) {
				t.Errorf("cached run's row lacks %q: %s", w, row)
			}
		}
		if !strings.Contains(body, `data-testid="cached-note"`) || !strings.Contains(body, "as if every call were paid") {
			t.Errorf("no note explaining the cached run's figures")
		}
		if !strings.Contains(body, fmt.Sprintf(`<a href="/runs/%d" data-testid="scatter-point"`, again.ID)) {
			t.Errorf("chart leaves out the cached run, whose cost is known")
		}
		var api struct {
			Runs []struct {
				Run struct {
					ID int64 `json:"id"`
				} `json:"run"`
				Tokens       *float64 `json:"tokens_per_sample"`
				PartlyCached bool     `json:"partly_cached"`
				AsPaid       bool     `json:"cached_counted_as_paid"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/experiments/%d", x.exp.ID)).Body.Bytes(), &api); err != nil {
			t.Fatal(err)
		}
		byID := map[int64]int{}
		for i, r := range api.Runs {
			byID[r.Run.ID] = i
		}
		a, f := api.Runs[byID[again.ID]], api.Runs[byID[first.ID]]
		if !a.AsPaid || a.PartlyCached || a.Tokens == nil || f.Tokens == nil || *a.Tokens != *f.Tokens || f.AsPaid {
			t.Errorf("API: repeat run as paid %v, partly cached %v, tokens %v; first run tokens %v, as paid %v", a.AsPaid, a.PartlyCached, a.Tokens, f.Tokens, f.AsPaid)
		}
	})
}

// TestExperimentSaysTheSimulatedJudgeIgnoresTheProcedure: BatchEval runs
// on the simulated judge that differ only in their prompt's procedure get
// the same scores, which read as a defect; the experiment says why, and
// says nothing when the runs share their procedure.
func TestExperimentSaysTheSimulatedJudgeIgnoresTheProcedure(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("variants", 12)
		experiment := func(name string, procedures ...evaluator.Procedure) models.Experiment {
			e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name}
			if err := env.db.CreateExperiment(ctx, &e); err != nil {
				t.Fatal(err)
			}
			for i, p := range procedures {
				env.storedRun(d, fmt.Sprintf("%s %d", name, i), d.human, func(r *models.Run) {
					r.ExperimentID, r.Settings.Procedure = &e.ID, p
				})
			}
			return e
		}
		mixed := experiment("mixed", evaluator.OneStage, evaluator.TwoStage)
		same := experiment("same", evaluator.TwoStage, evaluator.TwoStage)
		if body := env.get(fmt.Sprintf("/experiments/%d", mixed.ID)).Body.String(); !strings.Contains(body, `data-testid="simulated-note"`) ||
			!strings.Contains(body, "get the same scores here") {
			t.Errorf("one- and two-stage runs on the simulated judge: no note saying why they score alike")
		}
		if body := env.get(fmt.Sprintf("/experiments/%d", same.ID)).Body.String(); strings.Contains(body, `data-testid="simulated-note"`) {
			t.Errorf("runs of one procedure got the note")
		}
	})
}
