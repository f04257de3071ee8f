package handlers

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// ratedData is a dataset of n samples with a human rating "q" on 1 to 5
// and a "system" column naming one of three systems, whose quality
// differs (S3 best).
type ratedData struct {
	ds     models.Dataset
	rowIDs []int64
	human  []float64
}

func (env *testEnv) ratedDataset(name string, n int) ratedData {
	env.t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]models.DatasetRow, n)
	human := make([]float64, n)
	for i := range rows {
		sys := i % 3
		h := math.Min(5, float64(1+rng.IntN(3)+sys))
		human[i] = h
		rows[i] = models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%03d", i),
			Data:    map[string]string{"id": fmt.Sprintf("s%03d", i), "text": fmt.Sprintf("sample %d", i), "system": fmt.Sprintf("S%d", sys+1)},
			Ratings: map[string]*float64{"q": &human[i]}}
	}
	ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: name, Format: "csv", IDColumn: "id",
		Columns: []string{"id", "text", "system"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}}
	if err := env.db.CreateDataset(ctx, &ds, rows); err != nil {
		env.t.Fatal(err)
	}
	stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		env.t.Fatal(err)
	}
	ids := make([]int64, len(stored))
	for i, r := range stored {
		ids[i] = r.ID
	}
	return ratedData{ds: ds, rowIDs: ids, human: human}
}

// storedRun stores a succeeded one-round run whose final scores are
// finals (in dataset order), as the runner would have left it.
func (env *testEnv) storedRun(d ratedData, name string, finals []float64, change func(*models.Run)) models.Run {
	env.t.Helper()
	ctx := context.Background()
	s := evaluator.DefaultSettings()
	s.Rounds = 1
	run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name, Method: models.MethodBatchEval,
		Settings: s, Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
			Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
	if change != nil {
		change(&run)
	}
	if err := env.db.CreateRun(ctx, &run, nil); err != nil {
		env.t.Fatal(err)
	}
	bs, err := env.db.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{d.rowIDs})
	if err != nil {
		env.t.Fatal(err)
	}
	b := bs[0]
	b.Status = models.BatchDone
	scores := make([]models.RunScore, len(finals))
	for i, v := range finals {
		scores[i] = models.RunScore{RunID: run.ID, BatchID: b.ID, Round: 0, RowID: d.rowIDs[i], Label: i + 1, Score: &v}
	}
	if err := env.db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: scores}); err != nil {
		env.t.Fatal(err)
	}
	if err := env.db.FinishRun(ctx, run.ID, models.RunSucceeded, ""); err != nil {
		env.t.Fatal(err)
	}
	run, err = env.db.GetRun(ctx, run.ID)
	if err != nil {
		env.t.Fatal(err)
	}
	return run
}

// noisy is the human ratings plus normal noise of the given size.
func noisy(human []float64, sd float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]float64, len(human))
	for i, h := range human {
		out[i] = math.Round((h+sd*rng.NormFloat64())*10) / 10
	}
	return out
}

// nudged is xs with the scores of the first two samples swapped: almost
// the same judge.
func nudged(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	out[0], out[1] = out[1], out[0]
	return out
}

var verdictRe = regexp.MustCompile(`data-testid="experiment-verdict" data-verdict="([^"]*)">([^<]*)<`)

func TestExperimentHeadline(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Rated", 90)
		newExp := func(name string) *int64 {
			e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name}
			if err := env.db.CreateExperiment(ctx, &e); err != nil {
				t.Fatal(err)
			}
			return &e.ID
		}
		in := func(id *int64) func(*models.Run) { return func(r *models.Run) { r.ExperimentID = id } }
		sharp := noisy(d.human, 0.3, 1)
		blunt := noisy(d.human, 1.5, 2)
		headline := func(expID *int64) (kind, text string) {
			body := env.get(fmt.Sprintf("/experiments/%d", *expID)).Body.String()
			m := verdictRe.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("experiment page has no verdict")
			}
			return m[1], strings.ReplaceAll(m[2], "&#39;", "'")
		}

		// Better: a sharp judge against a blunt one on 90 samples.
		better := newExp("better")
		env.storedRun(d, "Sharp", sharp, in(better))
		env.storedRun(d, "Blunt", blunt, in(better))
		env.storedRun(d, "Blunter", noisy(d.human, 2.5, 3), in(better))
		kind, text := headline(better)
		t.Logf("better headline: %s", text)
		// The two comparisons of finished runs are kept: a reload does not
		// redo the resampling, and reads the same.
		if n := len(env.h.reports.pairs); n != 2 {
			t.Errorf("%d cached comparisons after the better page, want 2", n)
		}
		if k2, t2 := headline(better); k2 != kind || t2 != text {
			t.Errorf("reload changed the headline: %q then %q", text, t2)
		}
		if kind != "better" || !strings.Contains(text, "Sharp agrees best") || !strings.Contains(text, "significantly better than the next, Blunt") {
			t.Errorf("better: %s %q", kind, text)
		}

		// A run that finished with gaps competes as the table ranks it
		// (QA: it was bold in the table and absent from the headline).
		gaps := newExp("gaps")
		withGaps := env.storedRun(d, "Sharp with gaps", sharp, in(gaps))
		if err := env.db.Gorm.Exec("UPDATE runs SET status = ? WHERE id = ?", models.RunFinishedWithGaps, withGaps.ID).Error; err != nil {
			t.Fatal(err)
		}
		env.storedRun(d, "Blunt", blunt, in(gaps))
		env.storedRun(d, "Blunter", noisy(d.human, 2.5, 3), in(gaps))
		if kind, text := headline(gaps); kind != "better" || !strings.Contains(text, "Sharp with gaps agrees best") {
			t.Errorf("gaps: %s %q", kind, text)
		}

		// Tied: the best is not significantly better than a judge that
		// differs on two samples; the blunt one is behind.
		tied := newExp("tied")
		env.storedRun(d, "Sharp A", sharp, in(tied))
		env.storedRun(d, "Sharp B", nudged(sharp), in(tied))
		env.storedRun(d, "Blunt", blunt, in(tied))
		kind, text = headline(tied)
		t.Logf("tied headline: %s", text)
		if kind != "tied" || !strings.Contains(text, "statistically tied") || !strings.Contains(text, "Sharp A (") ||
			!strings.Contains(text, "Sharp B (") || !strings.Contains(text, "Blunt is significantly behind") {
			t.Errorf("tied: %s %q", kind, text)
		}
		if strings.Contains(text, "agrees best") {
			t.Errorf("tied headline names a winner: %q", text)
		}

		// Noise: significant by the test, but smaller than the spread of
		// the sharp setup across seeds. The reseed itself never wins, even
		// with the highest figure.
		noise := newExp("noise")
		base := env.storedRun(d, "Sharp", sharp, in(noise))
		env.storedRun(d, "Medium", noisy(d.human, 0.7, 5), in(noise))
		env.storedRun(d, "Sharp, seed 2", noisy(d.human, 1.2, 6), func(r *models.Run) {
			r.ExperimentID, r.ParentRunID, r.Variant = noise, &base.ID, runner.VariantReseed
		})
		env.storedRun(d, "Sharp, seed 3", noisy(d.human, 0.05, 7), func(r *models.Run) {
			r.ExperimentID, r.ParentRunID, r.Variant = noise, &base.ID, runner.VariantReseed
		})
		kind, text = headline(noise)
		t.Logf("noise headline: %s", text)
		if kind != "tied" || !strings.Contains(text, "spread across seeds") || !strings.Contains(text, "noise") {
			t.Errorf("noise: %s %q", kind, text)
		}
		if strings.Contains(text, "seed 3 (") || strings.Contains(text, "seed 2 (") {
			t.Errorf("a reseed competes in the headline: %q", text)
		}
		body := env.get(fmt.Sprintf("/experiments/%d", *noise)).Body.String()
		if !strings.Contains(body, "Sharp over 3 seeds: average Pearson ") {
			t.Errorf("no repeatability band for Sharp over 3 seeds")
		}
		if row := rowOf(body, "Sharp, seed 3"); strings.Contains(row, "best") {
			t.Errorf("a reseed's row is marked best: %s", row)
		}
	})
}

func TestComparePageSignificance(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 90)
		sharp := noisy(d.human, 0.3, 1)
		a := env.storedRun(d, "Sharp", sharp, nil)
		b := env.storedRun(d, "Blunt", noisy(d.human, 1.5, 2), nil)
		c := env.storedRun(d, "Sharp again", nudged(sharp), nil)
		constant := make([]float64, len(d.human))
		for i := range constant {
			constant[i] = 3
		}
		k := env.storedRun(d, "Constant", constant, nil)
		page := func(x, y models.Run) string {
			return env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=0", x.ID, y.ID)).Body.String()
		}
		body := page(a, b)
		for _, w := range []string{`data-testid="agreement-table"`, "Sharp agrees better with the humans than Blunt", "Williams&#39; t p", "Steiger&#39;s z p",
			"paired permutation p", `data-testid="agreement-spearman"`, `data-testid="agreement-kendall"`} {
			if !strings.Contains(body, w) {
				t.Errorf("sharp vs blunt: page lacks %q", w)
			}
		}
		if again := page(a, b); again != body || len(env.h.reports.criterionPairs) != 1 {
			t.Errorf("a reload recomputed or changed the comparison (%d cached)", len(env.h.reports.criterionPairs))
		}
		if body := page(a, c); !strings.Contains(body, "cannot tell the two runs apart") {
			t.Errorf("sharp vs sharp again: no tie in %q", regexp.MustCompile(`agreement-reading">[^<]*`).FindString(body))
		}
		body = page(a, k)
		if !strings.Contains(body, "The difference is undefined") || strings.Count(body, ">undefined<") < 6 {
			t.Errorf("against a constant run: want every figure undefined, got %q", regexp.MustCompile(`(?s)agreement-table.*?</table>`).FindString(body))
		}
		// In an experiment, its row says undefined too, and it never wins.
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "with a constant judge"}
		if err := env.db.CreateExperiment(context.Background(), &e); err != nil {
			t.Fatal(err)
		}
		for _, r := range []models.Run{a, k} {
			if err := env.db.SetRunExperiment(context.Background(), env.ws.ID, r.ID, e.ID); err != nil {
				t.Fatal(err)
			}
		}
		exp := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
		if row := rowOf(exp, "Constant"); !strings.Contains(row, `data-testid="pearson">undefined<`) || !strings.Contains(row, `data-testid="avg-pearson">undefined<`) {
			t.Errorf("constant run's row: %s", row)
		}
		if m := verdictRe.FindStringSubmatch(exp); m == nil || m[1] != "alone" {
			t.Errorf("verdict with one measurable run: %v, want alone", m)
		}
		// The constant run's own page says undefined, not a number.
		run := env.get(fmt.Sprintf("/runs/%d", k.ID)).Body.String()
		if strings.Count(run, `data-testid="coef">undefined<`) != 3 {
			t.Errorf("constant run page: coefficients not all undefined")
		}
	})
}

func TestRunPageSystemLevel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 90)
		run := env.storedRun(d, "Sharp", noisy(d.human, 0.3, 1), nil)
		body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		for _, w := range []string{`data-testid="system-table"`, `data-testid="system-count">3<`, `<option value="system" selected>system (found by its name)</option>`} {
			if !strings.Contains(body, w) {
				t.Errorf("run page lacks %q", w)
			}
		}
		// Three systems whose means the sharp judge orders as the humans:
		// Spearman and Kendall are exactly 1 (Pearson rounds to 1.000 too).
		if n := strings.Count(body, `data-testid="system-coef">1.000<`); n < 2 {
			t.Errorf("system-level coefficients equal to 1: %d, want at least Spearman and Kendall", n)
		}
		off := env.get(fmt.Sprintf("/runs/%d?system=-", run.ID)).Body.String()
		if strings.Contains(off, `data-testid="system-table"`) {
			t.Errorf("system=- still shows the system table")
		}
	})
}

// TestVerdictSaysWhenPairedAveragesDiffer: the best run by the table's
// average is compared with another on the samples both scored; when a run
// has unreadable scores the two averages differ, even in sign (QA saw
// "CloserLook − LLM-Eval: −0.013" under a table with CloserLook ahead,
// 0.343 to 0.341), and the line now gives the paired averages and says why.
func TestVerdictSaysWhenPairedAveragesDiffer(t *testing.T) {
	run := func(name string) models.Run { return models.Run{Name: name, Status: models.RunSucceeded} }
	best := contender{fig: runFigures{run: run("CloserLook"), avgP: 0.343}}
	for _, tc := range []struct {
		name string
		test stats.AveragedDifference
		want bool
	}{
		{"same samples", stats.AveragedDifference{A: 0.343, B: 0.341, Diff: 0.002, CILow: -0.05, CIHigh: 0.05, P: 0.9}, false},
		{"gaps flip the sign", stats.AveragedDifference{A: 0.330, B: 0.343, Diff: -0.013, CILow: -0.06, CIHigh: 0.04, P: 0.6}, true},
	} {
		other := contender{fig: runFigures{run: run("LLM-Eval"), avgP: 0.341}, test: tc.test, adjP: tc.test.P}
		v := verdictOf([]contender{best, other}, nil)
		if len(v.Tests) != 1 {
			t.Fatalf("%s: tests %q", tc.name, v.Tests)
		}
		said := strings.Contains(v.Tests[0], "on the samples both runs scored, 0.330 against 0.343")
		if said != tc.want {
			t.Errorf("%s: %q: names the paired averages = %v, want %v", tc.name, v.Tests[0], said, tc.want)
		}
	}
}
