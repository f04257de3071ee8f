package handlers

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// demoChoices are the seeded demo project's dataset, rubric and simulated judge.
type demoChoices struct {
	dataset models.Dataset
	rubric  models.Rubric
	judge   models.Judge
}

func (env *testEnv) demo() demoChoices {
	env.t.Helper()
	ctx := context.Background()
	ds, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
	if err != nil || len(ds) == 0 {
		env.t.Fatalf("demo datasets: %v (%d)", err, len(ds))
	}
	rs, err := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
	if err != nil || len(rs) == 0 {
		env.t.Fatalf("demo rubrics: %v (%d)", err, len(rs))
	}
	j, err := env.db.EnsureSimulatedJudge(ctx, env.ws.ID)
	if err != nil {
		env.t.Fatal(err)
	}
	return demoChoices{dataset: ds[0], rubric: rs[0], judge: j}
}

// launchForm is the launch form for the demo with the given changes.
func (d demoChoices) launchForm(rounds, batchSize string) url.Values {
	f := url.Values{
		"dataset": {strconv.FormatInt(d.dataset.ID, 10)}, "rubric": {strconv.FormatInt(d.rubric.ID, 10)},
		"judge": {strconv.FormatInt(d.judge.ID, 10)}, "criteria_of": {strconv.FormatInt(d.rubric.ID, 10)},
		"rounds": {rounds}, "batch_size": {batchSize}, "temperature": {"0.2"}, "top_p": {"0.9"}, "seed": {"1"},
		"procedure": {"two"}, "composition": {"heterogeneous"}, "sort_key": {"previous"}, "scoring": {"decimal"},
	}
	for i := range d.rubric.Criteria {
		f.Add("criteria", strconv.Itoa(i))
	}
	return f
}

// launch posts the form and returns the new run's id from the redirect.
func (env *testEnv) launch(form url.Values) int64 {
	env.t.Helper()
	rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), form)
	if rec.Code != http.StatusSeeOther {
		env.t.Fatalf("launch: status %d, want 303; body: %s", rec.Code, rec.Body.String())
	}
	loc := rec.Header().Get("Location")
	id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64)
	if err != nil {
		env.t.Fatalf("launch redirected to %q, want /runs/<id>", loc)
	}
	return id
}

func TestRunLifecycleOnSimulatedJudge(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		// A cell that a spreadsheet would run as a formula.
		// And one that a browser would run as a script.
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		formula, script := "=1+2 is not a reply", `<script>alert("owned")</script> fine, thanks`
		rows[0].Data["response"] = formula
		rows[1].Data["response"] = script
		// The run page's excerpt is the first field with text, the
		// conversation: the script opens it too, to be escaped there.
		rows[1].Data["context"] = script + "\n" + rows[1].Data["context"]
		for i := range rows {
			if err := env.db.Gorm.Save(&rows[i]).Error; err != nil {
				t.Fatal(err)
			}
		}

		runID := env.launch(d.launchForm("2", "10"))
		run := env.waitRun(runID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run status %s (%s), want succeeded", run.Status, run.Error)
		}
		rep, err := report.Build(ctx, env.db, env.ws.ID, runID)
		if err != nil {
			t.Fatal(err)
		}
		sample := rep.Criteria[0].Samples[1] // the one with the script
		scores, err := env.db.ListRowScores(ctx, runID, sample.RowID)
		if err != nil {
			t.Fatal(err)
		}
		if len(scores) != 4 {
			t.Fatalf("sample has %d scores, want 2 criteria × 2 rounds", len(scores))
		}
		batch, err := env.db.FindBatch(ctx, runID, scores[0].BatchID)
		if err != nil {
			t.Fatal(err)
		}
		var mate int64
		for _, id := range batch.RowIDs {
			if id != sample.RowID {
				mate = id
			}
		}
		runPath := fmt.Sprintf("/runs/%d", runID)
		samplePath := fmt.Sprintf("%s/samples/%d", runPath, sample.RowID)
		pearson := strconv.FormatFloat(rep.Criteria[0].Pearson.Coef, 'f', 3, 64)

		pages := []struct {
			name, path string
			want       []string
		}{
			{"run page", runPath, []string{"&lt;script&gt;alert", env.project.Name, "simulated judge", "No language model read these samples", "<svg",
				`href="` + runPath + `/samples/`, "Pearson r", "Spearman ρ", "Kendall τ-b", pearson,
				templ.EscapeString(rep.Criteria[0].Reading), "Average batch bias", "export.csv", templ.EscapeString("Intervals: " + rep.Criteria[0].IntervalLabel() + ".")}},
			{"run page sorted by difference", runPath + "?criterion=1&sort=diff&dir=desc", []string{"|Difference| ▼", "Coherent"}},
			{"run page, only unreadable", runPath + "?only=missing", []string{"0 of 30 samples"}},
			{"run page filtered", runPath + "?q=" + url.QueryEscape(sample.ExternalID), []string{"1 of 30 samples", sample.ExternalID}},
			{"runs list", "/runs", []string{d.rubric.Name + " on " + d.dataset.Name, "succeeded"}},
			{"sample page", samplePath, []string{"&lt;script&gt;alert", templ.EscapeString(scores[0].Analysis), templ.EscapeString(scores[1].Analysis),
				fmt.Sprintf(`href="%s/samples/%d"`, runPath, mate), fmt.Sprintf(`href="%s/batches/%d"`, runPath, batch.ID)}},
			{"batch page", fmt.Sprintf("%s/batches/%d", runPath, batch.ID), []string{templ.EscapeString(batch.Response), "Sample1", "simulated judge"}},
		}
		for _, p := range pages {
			rec := env.get(p.path)
			if rec.Code != http.StatusOK {
				t.Errorf("%s: status %d, want 200", p.name, rec.Code)
				continue
			}
			body := rec.Body.String()
			for _, w := range p.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s: page lacks %q", p.name, w)
				}
			}
			if strings.Contains(body, "<script>alert") {
				t.Errorf("%s: a dataset cell reached the page unescaped", p.name)
			}
		}

		// CSV: a header and one line per sample, with per-round columns,
		// and the formula-like cell defused.
		rec := env.get(runPath + "/export.csv")
		if got := rec.Header().Get("Content-Disposition"); !strings.HasPrefix(got, "attachment;") {
			t.Errorf("CSV Content-Disposition = %q, want an attachment", got)
		}
		lines, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil {
			t.Fatalf("CSV does not parse: %v", err)
		}
		if got, want := len(lines), 1+d.dataset.RowCount; got != want {
			t.Errorf("CSV has %d lines, want %d", got, want)
		}
		header := strings.Join(lines[0], "|")
		for _, col := range []string{"Engaging round 1", "Engaging round 2", "Coherent round 2"} {
			if !strings.Contains(header, col) {
				t.Errorf("CSV header %q lacks %q", header, col)
			}
		}
		defused := 0
		for _, line := range lines[1:] {
			for _, cell := range line {
				if strings.HasPrefix(cell, "=") {
					t.Errorf("CSV cell %q starts with =", cell)
				}
				if cell == "'"+formula {
					defused++
				}
			}
		}
		if defused != 1 {
			t.Errorf("CSV has %d defused formula cells, want 1", defused)
		}

		// JSON: parses, with statistics per criterion.
		rec = env.get(runPath + "/export.json")
		var exp struct {
			Report struct {
				Criteria []struct {
					Name    string
					Pearson struct {
						Coef *float64
						N    int
					}
					Rounds []json.RawMessage
				}
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &exp); err != nil {
			t.Fatalf("JSON export does not parse: %v", err)
		}
		if got := len(exp.Report.Criteria); got != 2 {
			t.Fatalf("JSON has %d criteria, want 2", got)
		}
		for _, c := range exp.Report.Criteria {
			if c.Pearson.Coef == nil || c.Pearson.N != d.dataset.RowCount || len(c.Rounds) != 2 {
				t.Errorf("JSON criterion %s: pearson %v over %d, %d rounds; want a coefficient over %d and 2 rounds",
					c.Name, c.Pearson.Coef, c.Pearson.N, len(c.Rounds), d.dataset.RowCount)
			}
		}
	})
}

func TestLaunchRunRejectsInvalidForms(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		// A rubric with an empty range cannot be saved through the rubric
		// pages; it is written directly to prove the launch checks again.
		bad := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Upside down", Task: "Judge the reply.", Fields: []evaluator.Field{},
			Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 5, Hi: 1}}}
		if err := env.db.Gorm.Create(&bad).Error; err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name   string
			change func(f url.Values)
			want   string
		}{
			{"batch size 0", func(f url.Values) { f.Set("batch_size", "0") }, "batch size must be between 1 and 100, got 0"},
			{"rounds not a number", func(f url.Values) { f.Set("rounds", "many") }, `Rounds: “many” is not a whole number.`},
			{"unknown procedure", func(f url.Values) { f.Set("procedure", "four") }, `unknown procedure "four"`},
			{"no criterion", func(f url.Values) { f.Del("criteria") }, "Choose at least one criterion."},
			{"hi below lo", func(f url.Values) {
				f.Set("rubric", strconv.FormatInt(bad.ID, 10))
				f.Set("criteria_of", strconv.FormatInt(bad.ID, 10))
				f["criteria"] = []string{"0"}
			}, "the range [5, 1] is empty"},
			{"dataset of no project", func(f url.Values) { f.Set("dataset", "999999") }, "The chosen dataset does not exist in this project."},
		}
		for _, tc := range cases {
			f := d.launchForm("2", "10")
			tc.change(f)
			rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), f)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d, want 422", tc.name, rec.Code)
			}
			if body := rec.Body.String(); !strings.Contains(body, templ.EscapeString(tc.want)) {
				t.Errorf("%s: form does not say %q", tc.name, tc.want)
			}
		}
		runs, err := env.db.ListRuns(ctx, env.ws.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 0 {
			t.Errorf("invalid launches created %d runs, want 0", len(runs))
		}
	})
}

func TestLaunchFormAndEstimate(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		unpriced := models.Judge{WorkspaceID: env.ws.ID, Name: "No prices", BaseURL: "http://127.0.0.1:1/v1", Model: "mystery-model"}
		in, out := 2.5, 10.0
		priced := models.Judge{WorkspaceID: env.ws.ID, Name: "Priced", BaseURL: "http://127.0.0.1:1/v1", Model: "priced-model",
			PriceInputPerMTok: &in, PriceOutputPerMTok: &out}
		for _, j := range []*models.Judge{&unpriced, &priced} {
			if err := env.db.SaveJudge(ctx, j); err != nil {
				t.Fatal(err)
			}
		}
		estimate := func(j models.Judge, rounds, size string) string {
			f := d.launchForm(rounds, size)
			f.Set("judge", strconv.FormatInt(j.ID, 10))
			f.Set("project_id", strconv.FormatInt(env.project.ID, 10))
			rec := env.postForm("/runs/estimate", f)
			if rec.Code != http.StatusOK {
				t.Errorf("estimate: status %d", rec.Code)
			}
			return rec.Body.String()
		}
		cases := []struct {
			name          string
			body          string
			want, notWant []string
		}{
			{"simulated judge", estimate(d.judge, "5", "10"),
				// 2 criteria × 5 rounds × 3 batches of 10.
				[]string{`data-testid="estimate-calls">30<`, "$0 (simulated judge)", "repair calls"}, []string{"unknown"}},
			{"judge without prices", estimate(unpriced, "2", "10"),
				[]string{`data-testid="estimate-cost">unknown<`, `data-testid="estimate-calls">12<`}, []string{"$0"}},
			{"judge with prices", estimate(priced, "1", "30"),
				[]string{`data-testid="estimate-cost">$0.`, `data-testid="estimate-calls">2<`}, []string{">unknown<"}},
			{"invalid settings", estimate(d.judge, "2", "0"),
				[]string{"No estimate until the settings are valid"}, []string{"estimate-calls"}},
			{"form page", env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String(),
				[]string{`name="rounds" min="1" max="50" value="5"`, `name="batch_size" min="1" max="100" value="10"`,
					`value="heterogeneous" selected`, `name="criteria" value="1" checked`, "(simulated, no language model)",
					`data-preview-url="/runs/estimate"`, `data-testid="estimate-calls">30<`}, nil},
		}
		for _, tc := range cases {
			for _, w := range tc.want {
				if !strings.Contains(tc.body, w) {
					t.Errorf("%s: lacks %q", tc.name, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(tc.body, w) {
					t.Errorf("%s: should not contain %q", tc.name, w)
				}
			}
		}
	})
}

func TestCancelRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		// 50 rounds of one-sample batches: far too long to finish first.
		runID := env.launch(d.launchForm("50", "1"))
		runPath := fmt.Sprintf("/runs/%d", runID)
		if body := env.get(runPath).Body.String(); !strings.Contains(body, `data-testid="cancel"`) {
			t.Errorf("an active run's page has no cancel button")
		}
		steps := []struct {
			name      string
			wantFlash string
		}{
			{"cancel the running run", "ok:"},
			{"cancel it again", "error:"},
		}
		for _, s := range steps {
			rec := env.postForm(runPath+"/cancel", nil)
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != runPath {
				t.Errorf("%s: status %d to %q, want 303 to %s", s.name, rec.Code, rec.Header().Get("Location"), runPath)
			}
			if got := rec.Header().Get("Set-Cookie"); !strings.Contains(got, s.wantFlash) {
				t.Errorf("%s: flash cookie %q, want kind %s", s.name, got, s.wantFlash)
			}
		}
		run, err := env.db.GetRun(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != models.RunCancelled {
			t.Errorf("status %s after cancel, want cancelled", run.Status)
		}
		body := env.get(runPath).Body.String()
		if !strings.Contains(body, "This run was cancelled") {
			t.Errorf("run page does not say the run was cancelled")
		}
		if strings.Contains(body, `data-testid="cancel"`) {
			t.Errorf("a cancelled run still offers to cancel")
		}
	})
}

func TestRunEventsStreamProgress(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		done := env.launch(d.launchForm("2", "10"))
		env.waitRun(done, 60*time.Second)
		long := env.launch(d.launchForm("50", "1"))
		t.Cleanup(func() { _, _ = env.runner.Cancel(context.Background(), env.ws.ID, long) })
		srv := httptest.NewServer(env.e)
		defer srv.Close()

		cases := []struct {
			name         string
			runID        int64
			wantTotal    int // -1: any
			wantFinished bool
		}{
			{"finished run", done, 12, true},
			{"long run", long, -1, false},
		}
		for _, tc := range cases {
			ev := firstProgressEvent(t, srv.URL+fmt.Sprintf("/runs/%d/events", tc.runID))
			total, ok := ev["batches_total"].(float64)
			if !ok {
				t.Errorf("%s: event %v has no batches_total", tc.name, ev)
				continue
			}
			if tc.wantTotal >= 0 && int(total) != tc.wantTotal {
				t.Errorf("%s: batches_total = %v, want %d", tc.name, total, tc.wantTotal)
			}
			if got := ev["finished"]; got != tc.wantFinished {
				t.Errorf("%s: finished = %v, want %v", tc.name, got, tc.wantFinished)
			}
			for _, key := range []string{"criterion", "round", "batches_done", "percent", "failed", "missing", "calls", "tokens", "cost", "elapsed", "eta", "status"} {
				if _, ok := ev[key]; !ok {
					t.Errorf("%s: event lacks %q", tc.name, key)
				}
			}
		}
	})
}

// firstProgressEvent opens the stream, reads one progress event and hangs up.
func firstProgressEvent(t *testing.T, url string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", got)
	}
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			event = name
			continue
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			if event != "progress" {
				t.Errorf("data of event %q, want progress", event)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("event data %q: %v", data, err)
			}
			return m // the deferred cancel hangs up
		}
	}
	t.Fatalf("stream ended without a progress event: %v", sc.Err())
	return nil
}

// topicDataset copies the demo dataset with a topic column (three topics)
// and two annotators' ratings of engagingness, whose mean is the
// "engaging" rating the rubric maps.
func (env *testEnv) topicDataset() models.Dataset {
	env.t.Helper()
	return env.topicDatasetOf("Dialogues by topic", []string{"hobbies", "travel", "food"})
}

// topicDatasetOf is topicDataset with the topics given, row i taking
// topics[i%len(topics)].
func (env *testEnv) topicDatasetOf(name string, topics []string) models.Dataset {
	env.t.Helper()
	return env.topicCopyOf(env.demo().dataset, name, topics)
}

// topicCopyOf is topicDatasetOf copying the dataset demo: a test that
// makes several copies names the demo's once, as env.demo() may name one
// of the copies after the first.
func (env *testEnv) topicCopyOf(demo models.Dataset, name string, topics []string) models.Dataset {
	env.t.Helper()
	ctx := context.Background()
	rows, err := env.db.ListDatasetRows(ctx, demo.ID, 0, 0)
	if err != nil {
		env.t.Fatal(err)
	}
	copies := make([]models.DatasetRow, len(rows))
	for i, r := range rows {
		data := map[string]string{"topic": topics[i%len(topics)]}
		for k, v := range r.Data {
			data[k] = v
		}
		ratings := map[string]*float64{}
		for k, v := range r.Ratings {
			ratings[k] = v
		}
		if h := r.Ratings["engaging"]; h != nil {
			// One annotator a little above, one a little below, the mean kept.
			d := float64(i%3-1) * 0.5
			a, b := *h+d, *h-d
			ratings["engaging@r1"], ratings["engaging@r2"] = &a, &b
		}
		copies[i] = models.DatasetRow{Position: r.Position, ExternalID: r.ExternalID, Data: data, Ratings: ratings}
	}
	ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: name, SourceFilename: "topics.jsonl", Format: demo.Format,
		IDColumn: demo.IDColumn, Columns: append([]string{"topic"}, demo.Columns...), Fields: demo.Fields, RatingColumns: demo.RatingColumns}
	if err := env.db.CreateDataset(ctx, &ds, copies); err != nil {
		env.t.Fatal(err)
	}
	return ds
}

// A sample whose group value is empty or only whitespace belongs to no
// group: the run page and the JSON export leave it out of the correlation
// within groups and count it as without a group, where the empty value was
// once a group of its own (the only one used on a small dataset).
func TestRunPageGroupLeavesOutEmptyValues(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ds := env.topicDatasetOf("Dialogues, some without a topic", []string{"", "travel", " "})
		run := env.startRun(ds, "Empty topics", models.MethodBatchEval, func(r *models.Run) { r.Settings.BatchSize = 3 })
		if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s), want succeeded", got.Status, got.Error)
		}
		rep, err := report.BuildWith(ctx, env.db, env.ws.ID, run.ID, report.Options{GroupColumn: "topic"})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		topic := map[string]string{}
		for _, r := range rows {
			topic[r.ExternalID] = r.Data["topic"]
		}
		eng := rep.Criteria[0]
		without := 0
		for _, s := range eng.Samples {
			if s.Final != nil && s.Human != nil && strings.TrimSpace(topic[s.ExternalID]) == "" {
				without++
			}
		}
		if without == 0 {
			t.Fatal("no sample without a topic has both scores: the test shows nothing")
		}
		g := eng.Grouped[stats.MethodPearson]
		if g.Groups > 1 || g.Groups+g.Skipped != 1 || g.Ungrouped != without {
			t.Errorf("grouped = %+v, want the one topic \"travel\" (used or skipped) and %d samples without a group", g, without)
		}
		body := env.get(fmt.Sprintf("/runs/%d?group=topic", run.ID)).Body.String()
		for _, w := range []string{fmt.Sprintf(`data-testid="grouped-groups">%d<`, g.Groups), fmt.Sprintf(`data-testid="grouped-ungrouped">%d<`, without), "Samples without a group"} {
			if !strings.Contains(body, w) {
				t.Errorf("run page lacks %q", w)
			}
		}
	})
}

func TestRunPageExtras(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ds := env.topicDataset()
		run := env.startRun(ds, "Topics <run>", models.MethodBatchEval, func(r *models.Run) { r.Settings.BatchSize = 5 })
		if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s), want succeeded", got.Status, got.Error)
		}
		reseed, err := env.runner.LaunchReseed(ctx, env.ws.ID, run.ID, 42)
		if err != nil {
			t.Fatal(err)
		}
		env.waitRun(reseed.ID, 60*time.Second)
		rep, err := report.BuildWith(ctx, env.db, env.ws.ID, run.ID, report.Options{GroupColumn: "topic"})
		if err != nil {
			t.Fatal(err)
		}
		eng := rep.Criteria[0]
		if eng.Ceiling == nil {
			t.Fatalf("no human ceiling although the rows carry engaging@r1 and engaging@r2")
		}
		reseedRep, err := report.Build(ctx, env.db, env.ws.ID, reseed.ID)
		if err != nil {
			t.Fatal(err)
		}
		delta := averagePearson(reseedRep) - averagePearson(rep)
		runPath := fmt.Sprintf("/runs/%d", run.ID)
		all := eng.Scored + eng.Missing
		unreadable := fmt.Sprintf("%d of %d answered round scores (", eng.Missing, all)
		grouped := "Computed inside each topic and averaged, as SummEval"
		pages := []struct {
			name, path    string
			want, notWant []string
		}{
			{"grouped by topic", runPath + "?group=topic", []string{
				`data-testid="method-label">BatchEval<`, `href="` + runPath + `/variants"`, unreadable, "could not be read from the judge",
				grouped, fmt.Sprintf(`data-testid="grouped-groups">%d<`, eng.Grouped["pearson"].Groups), `<option value="topic" selected>`,
				`data-testid="ceiling"`, templ.EscapeString(eng.Ceiling.Reading), "Krippendorff",
				fmt.Sprintf(`data-testid="ceiling-loo">%.3f<`, eng.Ceiling.LeaveOneOut),
				`data-testid="positions"`, "Mean signed error",
				`data-testid="derived-row"`, "reseed: " + web.SignedCoef(delta, 3), `data-testid="repeatability"`,
				fmt.Sprintf(`<option value="%d">`, reseed.ID), "Topics &lt;run&gt;"}, []string{"Topics <run>"}},
			{"dataset without a group column", runPath, []string{`<option value="-" selected>`, unreadable}, []string{grouped}},
			{"unknown column falls back", runPath + "?group=nope", nil, []string{grouped}},
			{"reseed page links its parent", fmt.Sprintf("/runs/%d", reseed.ID), []string{`data-testid="variant"`,
				`href="` + runPath + `" data-testid="parent-link"`, "Experiment"}, []string{`data-testid="derived"`}},
		}
		for _, p := range pages {
			rec := env.get(p.path)
			if rec.Code != http.StatusOK {
				t.Errorf("%s: status %d", p.name, rec.Code)
				continue
			}
			body := rec.Body.String()
			for _, w := range p.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s: page lacks %q", p.name, w)
				}
			}
			for _, w := range p.notWant {
				if strings.Contains(body, w) {
					t.Errorf("%s: page should not contain %q", p.name, w)
				}
			}
		}
		// Batches of 5: positions 1 to 5 on each of the two criteria.
		page := env.get(runPath).Body.String()
		if got := strings.Count(page, `data-testid="position-row"`); got != 10 {
			t.Errorf("position table has %d rows, want 2 criteria × 5 positions", got)
		}
		// Each position says over how many rated samples its errors are.
		if got := strings.Count(page, `data-testid="position-rated"`); got != 10 || !strings.Contains(page, ">With a human rating</th>") {
			t.Errorf("position table has %d counts of rated samples, want 10 under a heading that says what they are", got)
		}
	})
}

func TestSampleWiseBatchPages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ds := env.demo().dataset
		cases := []struct {
			method        string
			change        func(*models.Run)
			want, notWant []string
		}{
			{models.MethodGEval, nil, []string{`data-testid="probabilities"`, "log-probabilities", `data-testid="prob-row"`, "G-Eval"}, []string{`data-testid="ratings"`}},
			{models.MethodGEval, func(r *models.Run) {
				r.MethodSettings = evaluator.DefaultMethodSettings()
				r.MethodSettings.UseLogprobs, r.MethodSettings.Samples = false, 4
			}, []string{`data-testid="probabilities"`, "4 sampled answers"}, nil},
			{models.MethodCloserLook, func(r *models.Run) {
				r.MethodSettings = evaluator.DefaultMethodSettings()
				r.MethodSettings.Samples = 3
			}, []string{`data-testid="ratings"`, "Sampled ratings", "CloserLook"}, []string{`data-testid="probabilities"`}},
		}
		for _, tc := range cases {
			run := env.startRun(ds, tc.method, tc.method, tc.change)
			if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("%s: run %s (%s)", tc.method, got.Status, got.Error)
			}
			batches, err := env.db.ListBatches(ctx, run.ID)
			if err != nil || len(batches) == 0 {
				t.Fatalf("%s: %d batches, %v", tc.method, len(batches), err)
			}
			body := env.get(fmt.Sprintf("/runs/%d/batches/%d", run.ID, batches[0].ID)).Body.String()
			body += env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s: pages lack %q", tc.method, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(body, w) {
					t.Errorf("%s: pages should not contain %q", tc.method, w)
				}
			}
			if strings.Contains(body, `data-testid="positions"`) {
				t.Errorf("%s: a sample-wise run shows the position table", tc.method)
			}
		}
	})
}
