package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestAnnotatorMeanIsTheHumanRatingRecomputed: a criterion with three
// annotator columns and no human column (a dataset of the annotators'
// ratings, no averaged column) is compared with the annotators' mean per
// sample, where it was compared with nothing (n 0, every sample missing).
// On the first 40 FED dialogues, three annotators' Coherent ratings on 0
// to 2 (some empty, a few samples rated by none) are averaged here, and
// the JSON export's human ratings, Pearson's n, missing and coefficient
// are recomputed from them and the exported judge scores; the export, the
// run page and a sample's page name the mean as the human column.
func TestAnnotatorMeanIsTheHumanRatingRecomputed(t *testing.T) {
	const n = 40
	fed := readFED(t, n)
	cols := []string{"Coherent_a", "Coherent_b", "Coherent_c"}
	nan := math.NaN()
	ratings := make([][]float64, n)
	for i, r := range fed {
		h := r.Scores["Coherent"]
		a := math.Round(h)
		b := math.Min(2, math.Round(h+0.3*float64(i%3-1)))
		c := math.Max(0, math.Round(h-0.4))
		switch {
		case i%7 == 2:
			b = nan
		case i%9 == 4:
			a, c = nan, nan
		case i%11 == 6:
			a, b, c = nan, nan, nan // nobody rated it: missing, never 0
		}
		ratings[i] = []float64{a, b, c}
	}
	// The annotators' mean per sample, by hand.
	want := map[string]*float64{}
	unrated := 0
	for i, r := range fed {
		var sum float64
		k := 0
		for _, v := range ratings[i] {
			if !math.IsNaN(v) {
				sum += v
				k++
			}
		}
		if k == 0 {
			want[r.ID] = nil
			unrated++
			continue
		}
		m := sum / float64(k)
		want[r.ID] = &m
	}
	const mean = "mean of Coherent_a, Coherent_b, Coherent_c"
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, n)
		for i, r := range fed {
			rt := map[string]*float64{}
			for k, col := range cols {
				if v := ratings[i][k]; !math.IsNaN(v) {
					rt[col] = &v
				} else {
					rt[col] = nil
				}
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "context": r.Context}, Ratings: rt}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED annotators only", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: cols}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		d := env.demo()
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 2, 10
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "FED annotators' mean",
			Method: models.MethodBatchEval, Settings: s, JudgeSnapshot: d.judge.Snapshot(), Simulated: true,
			RubricSnapshot: evaluator.Rubric{Task: "Rate the dialogues.", Criteria: []evaluator.Criterion{{Name: "Coherent", Description: "Is it coherent?",
				Lo: 0, Hi: 2, AnnotatorColumns: cols}}}}
		must(t, env.runner.Launch(ctx, &run))
		run = env.waitRun(run.ID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", run.Status, run.Error)
		}
		rec := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d", rec.Code)
		}
		var ex struct {
			Report struct {
				Provenance struct {
					HumanColumns []struct {
						HumanColumn *string `json:"human_column"`
					} `json:"human_columns"`
				} `json:"provenance"`
				Criteria []struct {
					HumanColumn     *string `json:"human_column"`
					HumanColumnNote string  `json:"human_column_note"`
					Pearson         struct {
						Coef    *float64 `json:"coef"`
						N       int      `json:"n"`
						Missing int      `json:"missing"`
					} `json:"pearson"`
					Samples []struct {
						ID    string   `json:"id"`
						Final *float64 `json:"final"`
						Human *float64 `json:"human"`
					} `json:"samples"`
				} `json:"criteria"`
			} `json:"report"`
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &ex))
		cr := ex.Report.Criteria[0]
		if cr.HumanColumn == nil || *cr.HumanColumn != mean {
			t.Errorf("human_column %v, want %q", exportedText(cr.HumanColumn), mean)
		}
		if !strings.Contains(cr.HumanColumnNote, "mean of its readable ratings in Coherent_a, Coherent_b, Coherent_c") {
			t.Errorf("human_column_note %q does not say the rating is the annotators' mean", cr.HumanColumnNote)
		}
		if hc := ex.Report.Provenance.HumanColumns; len(hc) != 1 || hc[0].HumanColumn == nil || *hc[0].HumanColumn != mean {
			t.Errorf("provenance human_columns %+v, want %q", hc, mean)
		}
		if len(cr.Samples) != n {
			t.Fatalf("%d samples exported, want %d", len(cr.Samples), n)
		}
		var xs, ys []float64
		for _, s := range cr.Samples {
			w := want[s.ID]
			switch {
			case w == nil && s.Human != nil:
				t.Errorf("sample %s: human %v, want missing (no annotator rated it)", s.ID, *s.Human)
			case w != nil && (s.Human == nil || math.Abs(*s.Human-*w) > 1e-9):
				t.Errorf("sample %s: human %v, want the annotators' mean %v", s.ID, exportedOrNil(s.Human), *w)
			}
			if w != nil && s.Final != nil {
				xs, ys = append(xs, *s.Final), append(ys, *w)
			}
		}
		r := handPearson(xs, ys)
		t.Logf("pearson: exported %v over %d (missing %d); recomputed %v over %d (%d unrated)", exportedOrNil(cr.Pearson.Coef), cr.Pearson.N, cr.Pearson.Missing, r, len(xs), unrated)
		if cr.Pearson.N != len(xs) || cr.Pearson.N == 0 || cr.Pearson.Missing != n-len(xs) || cr.Pearson.Missing < unrated {
			t.Errorf("pearson over %d, missing %d; want over %d, missing %d", cr.Pearson.N, cr.Pearson.Missing, len(xs), n-len(xs))
		}
		if cr.Pearson.Coef == nil || math.Abs(*cr.Pearson.Coef-r) > 1e-3 {
			t.Errorf("pearson %v, recomputed %v", exportedOrNil(cr.Pearson.Coef), r)
		}

		page := env.get(fmt.Sprintf("/runs/%d", run.ID))
		if page.Code != http.StatusOK {
			t.Fatalf("run page: %d", page.Code)
		}
		body := page.Body.String()
		if strings.Contains(body, `data-testid="no-human-help"`) {
			t.Error("the run page says no sample has a human rating")
		}
		if !strings.Contains(body, "Coherent="+mean) {
			t.Errorf("the run page does not name %q as the human column", mean)
		}
		// A sample its annotators rated with a mean that is no single
		// annotator's rating: its page shows that mean as the human rating.
		got, err := env.db.ListDatasetRows(ctx, ds.ID, 0, n)
		must(t, err)
		var rowID int64
		var w float64
		for _, r := range got {
			if v := want[r.ExternalID]; v != nil && *v != math.Round(*v) {
				rowID, w = r.ID, *v
				break
			}
		}
		if rowID == 0 {
			t.Fatal("no sample with a fractional mean")
		}
		sp := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, rowID))
		if sp.Code != http.StatusOK {
			t.Fatalf("sample page: %d", sp.Code)
		}
		if shown := `data-testid="human">` + web.Decimal(w, 2) + "<"; !strings.Contains(sp.Body.String(), shown) {
			t.Errorf("sample page does not show the annotators' mean %v (%s)", w, shown)
		}
	})
}

// handPearson is Pearson's r by its definition.
func handPearson(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx, syy float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func exportedText(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
