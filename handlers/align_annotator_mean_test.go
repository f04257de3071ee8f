package handlers

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAlignSaysWhichCriteriaCanBeAligned: a criterion with annotator
// columns and no human column is aligned with its annotators' mean, as
// the run's report compares it (it was refused: "alignment needs one human
// rating column"); only a criterion with neither is refused, and the
// start form names the mean a criterion's human rating is.
func TestAlignSaysWhichCriteriaCanBeAligned(t *testing.T) {
	rubricID := int64(1)
	mean := evaluator.Criterion{Name: "Coherent", Lo: 0, Hi: 2, AnnotatorColumns: []string{"a", "b"}}
	none := evaluator.Criterion{Name: "Fluent", Lo: 0, Hi: 2}
	human := evaluator.Criterion{Name: "Engaging", Lo: 0, Hi: 2, HumanColumn: "Engaging"}
	run := func(cs ...evaluator.Criterion) models.Run {
		return models.Run{ID: 7, Status: models.RunSucceeded, RubricID: &rubricID, RubricSnapshot: evaluator.Rubric{Criteria: cs}}
	}
	for _, tc := range []struct {
		name string
		run  models.Run
		want string // "" for no problem
	}{
		{"annotators' mean only", run(mean), ""},
		{"no ratings at all", run(none), "Run 7 has no human ratings"},
		{"mean beside a human column", run(mean, human), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := alignProblem(tc.run)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("problem %q, want %q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		c            evaluator.Criterion
		note, meanOf string
	}{
		{mean, "", "mean of a, b"},
		{none, " (no human ratings)", ""},
		{human, "", ""},
	} {
		if got := alignNoHumanNote(tc.c); got != tc.note {
			t.Errorf("%s: note %q, want %q", tc.c.Name, got, tc.note)
		}
		if got := meanOf(tc.c); got != tc.meanOf {
			t.Errorf("%s: mean of %q, want %q", tc.c.Name, got, tc.meanOf)
		}
	}
}

// TestAlignOverAnnotatorMean: the first 60 FED dialogues with three
// annotators' Coherent ratings on 0 to 2 (some left empty, some samples
// rated by none) and no human column. The alignment learns from the
// annotators' mean as the run page computes it: recomputed here by hand,
// the largest calibration disagreements (judge − mean, a sample none rated
// left out, never counted as 0) and the draft's examples (the mean,
// labelled as the annotators' average); the page names the mean. Once
// accepted, the held-out runs are measured against the same mean: the
// before/after Pearson, Spearman and Kendall and their n are recomputed
// from the runs' stored rounds and the hand-made means. Before, the start
// was refused ("alignment learns from one human rating column").
func TestAlignOverAnnotatorMean(t *testing.T) {
	const n = 60
	fed := readFED(t, n)
	cols := []string{"Coherent_a", "Coherent_b", "Coherent_c"}
	const meanName = "mean of Coherent_a, Coherent_b, Coherent_c"
	nan := math.NaN()
	ratings := make([][]float64, n)
	mean := map[string]float64{} // absent: no annotator rated the sample
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
			a, b, c = nan, nan, nan
		}
		ratings[i] = []float64{a, b, c}
		var sum float64
		k := 0
		for _, v := range ratings[i] {
			if !math.IsNaN(v) {
				sum, k = sum+v, k+1
			}
		}
		if k > 0 {
			mean[r.ID] = sum / float64(k)
		}
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, n)
		for i, r := range fed {
			rt := map[string]*float64{}
			data := map[string]string{"id": r.ID, "context": r.Context}
			for k, col := range cols {
				rt[col], data[col] = nil, ""
				if v := ratings[i][k]; !math.IsNaN(v) {
					rt[col], data[col] = &v, strconv.FormatFloat(v, 'g', -1, 64)
				}
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: data, Ratings: rt}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED annotators only", Format: "jsonl", IDColumn: "id",
			Columns: append([]string{"id", "context"}, cols...), Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: cols}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		rub := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED annotators", Task: "Rate the dialogues.",
			Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}},
			Criteria: []evaluator.Criterion{{Name: "Coherent", Description: "Is the dialogue coherent?", Lo: 0, Hi: 2, AnnotatorColumns: cols,
				Levels: evaluator.Levels{Low: "incoherent", Middle: "partly coherent", High: "coherent"}}}}
		must(t, env.db.SaveRubric(ctx, &rub))
		judge := env.demo().judge
		form := url.Values{"dataset": {strconv.FormatInt(ds.ID, 10)}, "rubric": {strconv.FormatInt(rub.ID, 10)},
			"judge": {strconv.FormatInt(judge.ID, 10)}, "criteria_of": {strconv.FormatInt(rub.ID, 10)}, "criteria": {"0"},
			"rounds": {"2"}, "batch_size": {"10"}, "temperature": {"0.2"}, "top_p": {"0.9"}, "seed": {"1"}, "method": {"batcheval"},
			"procedure": {"two"}, "composition": {"heterogeneous"}, "sort_key": {"previous"}, "scoring": {"decimal"}}
		src := env.waitRun(env.launch(form), 60*time.Second)
		if src.Status != models.RunSucceeded {
			t.Fatalf("source run %s (%s)", src.Status, src.Error)
		}
		if cr := src.RubricSnapshot.Criteria[0]; cr.HumanColumn != "" || len(cr.AnnotatorColumns) != 3 {
			t.Fatalf("the run's criterion reads human column %q and annotators %v", cr.HumanColumn, cr.AnnotatorColumns)
		}
		startPage := html.UnescapeString(env.get(fmt.Sprintf("/runs/%d/align", src.ID)).Body.String())
		if !strings.Contains(startPage, "Split and draft") || !strings.Contains(startPage, "(human rating: "+meanName+")") {
			t.Errorf("the start page does not offer the annotators' mean:\n%s", pageText(startPage))
		}
		if runPage := env.get(fmt.Sprintf("/runs/%d", src.ID)).Body.String(); !strings.Contains(runPage, `data-testid="align-link"`) {
			t.Error("the run page does not offer to align the judge")
		}
		rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {"5"}, "held_out_percent": {"50"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("start: status %d\n%s", rec.Code, pageText(rec.Body.String()))
		}
		aID, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
		a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
		must(t, err)
		stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		must(t, err)
		ext := map[int64]string{}
		for _, r := range stored {
			ext[r.ID] = r.ExternalID
		}
		finals := storedFinals(t, env, src.ID, 0)

		// The disagreements, by hand: judge − annotators' mean, largest first.
		type cas struct {
			id                string
			judge, human, gap float64
		}
		var cases []cas
		for _, id := range a.CalibrationRowIDs {
			x := ext[id]
			f, okf := finals[x]
			m, okm := mean[x]
			if okf && okm {
				cases = append(cases, cas{x, f, m, f - m})
			}
		}
		slices.SortStableFunc(cases, func(p, q cas) int { return cmp.Compare(math.Abs(q.gap), math.Abs(p.gap)) })
		page := env.get(fmt.Sprintf("/alignments/%d", aID)).Body.String()
		if !strings.Contains(page, "Humans ("+meanName+")") || !strings.Contains(page, `data-testid="align-human-note"`) {
			t.Errorf("the alignment page does not name the annotators' mean as the human rating")
		}
		section := page[strings.Index(page, `data-testid="disagreements"`):]
		section = section[:strings.Index(section, "</table>")]
		trs := regexp.MustCompile(`(?s)<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>`).FindAllStringSubmatch(section, -1)
		if len(trs) != 8 {
			t.Fatalf("%d disagreements shown, want 8", len(trs))
		}
		for k, m := range trs {
			var w *cas
			for i := range cases {
				if cases[i].id == m[1] {
					w = &cases[i]
				}
			}
			if w == nil {
				_, rated := mean[m[1]]
				t.Errorf("disagreement %d is sample %s, not a rated calibration sample (rated by an annotator: %v)", k+1, m[1], rated)
				continue
			}
			if math.Abs(math.Abs(w.gap)-math.Abs(cases[k].gap)) > 1e-9 {
				t.Errorf("disagreement %d is sample %s (gap %.4f), recomputed %s (gap %.4f)", k+1, m[1], w.gap, cases[k].id, cases[k].gap)
			}
			shown(t, fmt.Sprintf("disagreement %d (%s) judge", k+1, w.id), m[2], w.judge, 2)
			shown(t, fmt.Sprintf("disagreement %d (%s) annotators' mean", k+1, w.id), m[3], w.human, 2)
			shown(t, fmt.Sprintf("disagreement %d (%s) judge − mean", k+1, w.id), m[4], w.gap, 2)
		}
		g3 := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
		for k, ex := range a.Draft.Examples {
			w := cases[k]
			if ex.SampleID != w.id || math.Abs(ex.Score-math.Round(w.human*1e4)/1e4) > 1e-9 {
				t.Errorf("example %d: sample %s scored %v, recomputed %s with the annotators' mean %v", k+1, ex.SampleID, ex.Score, w.id, w.human)
			}
			want := "The annotators rated this " + g3(w.human) + " on average (" + meanName + "); the judge had scored it " + g3(w.judge) + "."
			if ex.Reason != want {
				t.Errorf("example %d: reason %q, want %q", k+1, ex.Reason, want)
			}
		}

		rec = env.postForm(fmt.Sprintf("/alignments/%d/accept", aID), draftFormValues(a.Draft, "Coherent throughout."))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("accept: status %d\n%s", rec.Code, pageText(rec.Body.String()))
		}
		a, err = env.db.FindAlignment(ctx, env.ws.ID, aID)
		must(t, err)
		before := env.waitRun(*a.BeforeRunID, 60*time.Second)
		after := env.waitRun(*a.AfterRunID, 60*time.Second)
		if before.Status != models.RunSucceeded || after.Status != models.RunSucceeded {
			t.Fatalf("held-out runs %s and %s", before.Status, after.Status)
		}
		bf, af := storedFinals(t, env, before.ID, 0), storedFinals(t, env, after.ID, 0)
		var xb, xa, ys []float64
		unrated := 0
		for _, id := range a.HeldOutRowIDs {
			x := ext[id]
			m, okm := mean[x]
			if !okm {
				unrated++
				continue
			}
			b, okb := bf[x]
			f, oka := af[x]
			if okb && oka {
				xb, xa, ys = append(xb, b), append(xa, f), append(ys, m)
			}
		}
		if unrated == 0 || len(ys) < 10 {
			t.Fatalf("held out: %d rated samples scored by both runs, %d rated by none; the test needs both kinds", len(ys), unrated)
		}
		spearman := func(x, y []float64) float64 { return textbookPearson(averageRanks(x), averageRanks(y)) }
		body := env.get(fmt.Sprintf("/alignments/%d", aID)).Body.String()
		if !strings.Contains(body, "Correlation with the humans ("+meanName+")") {
			t.Error("the before/after table does not name the annotators' mean")
		}
		text := pageText(body)
		for _, m := range []struct {
			name string
			coef func(x, y []float64) float64
		}{{"Pearson r", textbookPearson}, {"Spearman ρ", spearman}, {"Kendall τ-b", textbookTauB}} {
			rb, ra := m.coef(xb, ys), m.coef(xa, ys)
			row := regexp.MustCompile(regexp.QuoteMeta(m.name) + ` (\S+) (\S+) (\S+) \S+ to \S+ .*? (\d+) `).FindStringSubmatch(text)
			if row == nil {
				t.Errorf("no %s row in the before/after table:\n%s", m.name, text)
				continue
			}
			shown(t, m.name+" before", row[1], rb, 3)
			shown(t, m.name+" after", row[2], ra, 3)
			shown(t, m.name+" after − before", row[3], ra-rb, 3)
			if row[4] != strconv.Itoa(len(ys)) {
				t.Errorf("%s: %s samples, recomputed %d (the %d held-out samples none rated left out)", m.name, row[4], len(ys), unrated)
			}
		}
		// The held-out runs' exports name the same human rating.
		ex := env.get(fmt.Sprintf("/runs/%d/export.json", before.ID)).Body.String()
		if !strings.Contains(ex, `"human_column": "`+meanName+`"`) {
			i := strings.Index(ex, `"human_column"`)
			t.Errorf("the before run's export does not name %q as its human column: %.200s", meanName, ex[max(i, 0):])
		}

		// A reviewer rates every fourth sample in the browser and the run
		// reads the annotators and the reviewer together: a sample's
		// human rating is the mean of its readable annotator ratings and
		// the reviewer's. A new alignment's held-out runs are measured
		// against that, carried in the copy's own column (there is no
		// human column to carry it in; the launch failed).
		both := map[string]float64{}
		for i, r := range stored {
			sum, k := 0.0, 0
			for _, v := range ratings[slices.IndexFunc(fed, func(f fedRecord) bool { return f.ID == r.ExternalID })] {
				if !math.IsNaN(v) {
					sum, k = sum+v, k+1
				}
			}
			if i%4 == 0 {
				v := float64(i % 3)
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: ds.ID, RowID: r.ID, Criterion: "Coherent",
					Reviewer: "Ann", RunID: &src.ID, Lo: 0, Hi: 2, Score: &v})
				must(t, err)
				sum, k = sum+v, k+1
			}
			if k > 0 {
				both[r.ExternalID] = sum / float64(k)
			}
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", src.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("choose both: %d", rec.Code)
		}
		src = env.waitRun(src.ID, 60*time.Second)
		a2 := alignAccepted(t, env, src, 6)
		for _, id := range []int64{*a2.BeforeRunID, *a2.AfterRunID} {
			var exp struct {
				Report struct {
					Criteria []struct {
						HumanColumn *string `json:"human_column"`
						Samples     []struct {
							ID    string   `json:"id"`
							Human *float64 `json:"human"`
						} `json:"samples"`
					} `json:"criteria"`
				} `json:"report"`
			}
			must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", id)).Body.Bytes(), &exp))
			cr := exp.Report.Criteria[0]
			if cr.HumanColumn == nil || *cr.HumanColumn != "Coherent" {
				t.Errorf("held-out run %d: human column %v, want the copy's column Coherent", id, exportedText(cr.HumanColumn))
			}
			if len(cr.Samples) != len(a2.HeldOutRowIDs) {
				t.Fatalf("held-out run %d: %d samples, want %d", id, len(cr.Samples), len(a2.HeldOutRowIDs))
			}
			for _, smp := range cr.Samples {
				w, ok := both[smp.ID]
				switch {
				case !ok && smp.Human != nil:
					t.Errorf("held-out run %d, sample %s: human %v, want none (nobody rated it)", id, smp.ID, *smp.Human)
				case ok && (smp.Human == nil || math.Abs(*smp.Human-w) > 1e-9):
					t.Errorf("held-out run %d, sample %s: human %v, want the annotators' and the reviewer's mean %v", id, smp.ID, exportedOrNil(smp.Human), w)
				}
			}
		}
	})
}
