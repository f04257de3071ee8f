package handlers

import (
	"context"
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
	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// draftFormValues is the draft form as the page fills it, with the high
// end reworded.
func draftFormValues(d align.Draft, high string) url.Values {
	f := url.Values{"low": {d.Levels.Low}, "middle": {d.Levels.Middle}, "high": {high}}
	for _, ex := range d.Examples {
		f.Add("example_id", ex.SampleID)
		f.Add("example_score", strconv.FormatFloat(ex.Score, 'f', -1, 64))
		f.Add("example_reason", ex.Reason)
	}
	// An empty row, as the page offers one to add an example.
	f.Add("example_id", "")
	f.Add("example_score", "")
	f.Add("example_reason", "")
	return f
}

// TestAlignmentOnSimulatedJudge walks the whole alignment: a finished run
// records its rubric version; its dataset is split (seeded, stated), a
// draft is made from calibration disagreements; an example from the
// held-out part is refused; the edited draft is accepted as version 2 with
// its examples in the judge's prompt; the old and new versions judge the
// held-out part; the page shows before and after with the difference and
// its interval, as computed from the two runs.
func TestAlignmentOnSimulatedJudge(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		src := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		if src.Status != models.RunSucceeded {
			t.Fatalf("source run %s (%s)", src.Status, src.Error)
		}
		if src.RubricVersion == nil || *src.RubricVersion != 1 {
			t.Fatalf("source run records rubric version %v, want 1", src.RubricVersion)
		}
		base := fmt.Sprintf("/runs/%d/align", src.ID)
		if rec := env.get(fmt.Sprintf("/runs/%d", src.ID)); !strings.Contains(rec.Body.String(), `href="`+base+`"`) {
			t.Error("the run page does not link to its alignment page")
		}
		start := env.get(base)
		if start.Code != http.StatusOK || !strings.Contains(start.Body.String(), `data-testid="align-form"`) || !strings.Contains(start.Body.String(), "deterministic template") {
			t.Fatalf("start page: status %d\n%s", start.Code, start.Body.String())
		}

		invalid := []struct {
			name string
			form url.Values
			want string
		}{
			{"share too large", url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"95"}}, "a percentage from 10 to 90"},
			{"seed not a number", url.Values{"criterion": {"0"}, "seed": {"x"}, "held_out_percent": {"50"}}, `Seed: “x” is not a whole number.`},
			{"no such criterion", url.Values{"criterion": {"7"}, "seed": {"3"}, "held_out_percent": {"50"}}, "choose one of the run's criteria"},
			{"held-out part too small", url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"20"}}, "at least 10 are needed"},
		}
		for _, tc := range invalid {
			rec := env.postForm(base, tc.form)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), templ.EscapeString(tc.want)) {
				t.Errorf("%s: status %d, want 422 saying %q", tc.name, rec.Code, tc.want)
			}
		}
		if as, _ := env.db.ListRubricAlignments(ctx, env.ws.ID, d.rubric.ID); len(as) != 0 {
			t.Fatalf("invalid forms left %d alignments", len(as))
		}

		rec := env.postForm(base, url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"50"}})
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/alignments/") {
			t.Fatalf("start: status %d, location %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
		}
		aID, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
		a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.CalibrationRowIDs) != 15 || len(a.HeldOutRowIDs) != 15 || a.Seed != 3 || a.BaseVersion != 1 {
			t.Fatalf("split: %d calibration, %d held out, seed %d, base version %d; want 15, 15, 3, 1",
				len(a.CalibrationRowIDs), len(a.HeldOutRowIDs), a.Seed, a.BaseVersion)
		}
		wantCal, wantHeld := align.Split(append(append([]int64{}, a.CalibrationRowIDs...), a.HeldOutRowIDs...), 3, 0.5)
		if fmt.Sprint(wantCal) != fmt.Sprint(a.CalibrationRowIDs) || fmt.Sprint(wantHeld) != fmt.Sprint(a.HeldOutRowIDs) {
			t.Error("the stored split is not the seeded split of the dataset")
		}
		rows, err := env.db.FindDatasetRows(ctx, src.DatasetID, append(append([]int64{}, a.CalibrationRowIDs...), a.HeldOutRowIDs...))
		if err != nil {
			t.Fatal(err)
		}
		held := idSet(a.HeldOutRowIDs)
		heldExternal := map[string]bool{}
		for id, row := range rows {
			if held[id] {
				heldExternal[row.ExternalID] = true
			}
		}
		if len(a.Draft.Examples) != align.DraftExamples || !strings.HasPrefix(a.DraftSource, "template") {
			t.Fatalf("draft: %d examples by %q, want %d by the template", len(a.Draft.Examples), a.DraftSource, align.DraftExamples)
		}
		for _, ex := range a.Draft.Examples {
			if heldExternal[ex.SampleID] {
				t.Errorf("the draft took example %s from the held-out part", ex.SampleID)
			}
		}

		page := env.get(fmt.Sprintf("/alignments/%d", aID)).Body.String()
		if missing := bodyLacks(page, "Split with seed <strong>3</strong>", "<strong>15</strong> calibration samples", "<strong>15</strong> held-out samples",
			`data-testid="draft-form"`, `name="example_id" aria-label="Example 1 sample id" value="`+a.Draft.Examples[0].SampleID+`"`); len(missing) > 0 {
			t.Errorf("alignment page lacks %q", missing)
		}

		// An example from the held-out part is refused and nothing changes.
		var heldOne string
		for id := range heldExternal {
			heldOne = id
			break
		}
		sneaky := draftFormValues(a.Draft, "Only a lively, specific response.")
		sneaky.Set("example_id", heldOne) // replaces the first example
		rec = env.postForm(fmt.Sprintf("/alignments/%d/accept", aID), sneaky)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), templ.EscapeString(fmt.Sprintf(`sample "%s", which is in the held-out part`, heldOne))) {
			t.Fatalf("held-out example: status %d, want 422 with the reason\n%s", rec.Code, rec.Body.String())
		}
		if r, _ := env.db.FindRubric(ctx, env.ws.ID, d.rubric.ID); r.Version != 1 {
			t.Fatalf("a refused draft made rubric version %d", r.Version)
		}
		if a2, _ := env.db.FindAlignment(ctx, env.ws.ID, aID); a2.Status != models.AlignmentDrafted || a2.BeforeRunID != nil {
			t.Fatalf("a refused draft changed the alignment: %+v", a2)
		}

		newHigh := "Lively and specific, and it moves the conversation on."
		rec = env.postForm(fmt.Sprintf("/alignments/%d/accept", aID), draftFormValues(a.Draft, newHigh))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("accept: status %d\n%s", rec.Code, rec.Body.String())
		}
		rub, err := env.db.FindRubric(ctx, env.ws.ID, d.rubric.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rub.Version != 2 || rub.Criteria[0].Levels.High != newHigh || len(rub.Criteria[0].Examples) != align.DraftExamples {
			t.Fatalf("rubric after accept: version %d, high %q, %d examples", rub.Version, rub.Criteria[0].Levels.High, len(rub.Criteria[0].Examples))
		}
		if ex := rub.Criteria[0].Examples[0]; len(ex.Fields) != 2 || ex.Fields[1].Value != rows[rowIDOf(rows, ex.SampleID)].Data["response"] {
			t.Errorf("example fields are not the dataset's own: %+v", ex.Fields)
		}
		a, _ = env.db.FindAlignment(ctx, env.ws.ID, aID)
		if a.Status != models.AlignmentAccepted || a.NewVersion == nil || *a.NewVersion != 2 || a.BeforeRunID == nil || a.AfterRunID == nil {
			t.Fatalf("alignment after accept: %+v", a)
		}
		before := env.waitRun(*a.BeforeRunID, 60*time.Second)
		after := env.waitRun(*a.AfterRunID, 60*time.Second)
		for _, tc := range []struct {
			run     models.Run
			version int
			high    string
			ex      int
		}{{before, 1, src.RubricSnapshot.Criteria[0].Levels.High, 0}, {after, 2, newHigh, align.DraftExamples}} {
			r := tc.run
			if r.Status != models.RunSucceeded || r.RubricVersion == nil || *r.RubricVersion != tc.version || r.DatasetID != *a.HeldOutDatasetID {
				t.Fatalf("held-out run %d: %s (%s), version %v, dataset %d", r.ID, r.Status, r.Error, r.RubricVersion, r.DatasetID)
			}
			c := r.RubricSnapshot.Criteria
			if len(c) != 1 || c[0].Levels.High != tc.high || len(c[0].Examples) != tc.ex || r.Settings != src.Settings || r.Method != src.Method {
				t.Errorf("held-out run %d: criteria %+v, settings %+v", r.ID, c, r.Settings)
			}
			// The examples reach the judge: they are in the prompt sent.
			batches, err := env.db.ListBatches(ctx, r.ID)
			if err != nil || len(batches) == 0 {
				t.Fatal(err)
			}
			if got := strings.Contains(batches[0].Request, "# Scored examples"); got != (tc.ex > 0) {
				t.Errorf("run %d (version %d): examples in the prompt = %v", r.ID, tc.version, got)
			}
		}
		// The run page states the version and the examples among what produced it.
		if rp := env.get(fmt.Sprintf("/runs/%d", after.ID)).Body.String(); !strings.Contains(rp, `<dd data-testid="provenance-rubric">version 2, 3 labelled examples in the prompts</dd>`) {
			t.Error("the after run's provenance does not state rubric version 2 and its examples")
		}
		heldDS, err := env.db.FindDataset(ctx, env.ws.ID, *a.HeldOutDatasetID)
		if err != nil || heldDS.RowCount != 15 {
			t.Fatalf("held-out dataset: %+v, %v", heldDS, err)
		}

		// The page's figures are the paired comparison of the two runs.
		rb, _ := report.Build(ctx, env.db, env.ws.ID, before.ID)
		ra, _ := report.Build(ctx, env.db, env.ws.ID, after.ID)
		var bs, as, hs []*float64
		for i, s := range rb.Criteria[0].Samples {
			bs, as, hs = append(bs, s.Final), append(as, ra.Criteria[0].Samples[i].Final), append(hs, s.Human)
		}
		want := align.Compare(stats.MethodPearson, bs, as, hs, 3)
		t.Logf("held-out Pearson: before %.3f, after %.3f, diff %.3f [%.3f, %.3f]", want.Before(), want.After(), want.Diff, want.CILow, want.CIHigh)
		if want.N != 15 {
			t.Fatalf("comparison on %d samples, want 15", want.N)
		}
		page = env.get(fmt.Sprintf("/alignments/%d", aID)).Body.String()
		if missing := bodyLacks(page, `data-testid="comparison"`, "Before (v1)", "After (v2)",
			`<td data-testid="difference">`+web.AlignDiffText(want.Diff)+`</td>`, web.AlignIntervalText(want.CILow, want.CIHigh)); len(missing) > 0 {
			t.Errorf("before/after lacks %q\n%s", missing, page)
		}

		// Accepting twice is refused.
		if rec := env.postForm(fmt.Sprintf("/alignments/%d/accept", aID), draftFormValues(a.Draft, "again")); rec.Code != http.StatusUnprocessableEntity ||
			!strings.Contains(rec.Body.String(), "already accepted") {
			t.Errorf("second accept: status %d", rec.Code)
		}

		// Held-out runs that are gone can be launched again, once.
		if err := env.db.Gorm.Model(&models.Alignment{}).Where("id = ?", aID).
			Updates(map[string]any{"before_run_id": nil, "after_run_id": nil}).Error; err != nil {
			t.Fatal(err)
		}
		if p := env.get(fmt.Sprintf("/alignments/%d", aID)).Body.String(); !strings.Contains(p, fmt.Sprintf(`action="/alignments/%d/heldout"`, aID)) {
			t.Error("the page does not offer to launch the lost held-out runs")
		}
		if rec := env.postForm(fmt.Sprintf("/alignments/%d/heldout", aID), url.Values{}); rec.Code != http.StatusSeeOther {
			t.Fatalf("relaunch: status %d\n%s", rec.Code, rec.Body.String())
		}
		again, _ := env.db.FindAlignment(ctx, env.ws.ID, aID)
		if again.BeforeRunID == nil || again.AfterRunID == nil || *again.AfterRunID == after.ID {
			t.Fatalf("relaunch did not record new runs: %+v", again)
		}
		if r2 := env.waitRun(*again.AfterRunID, 60*time.Second); r2.RubricVersion == nil || *r2.RubricVersion != 2 || len(r2.RubricSnapshot.Criteria[0].Examples) != align.DraftExamples {
			t.Errorf("relaunched after run: version %v, criteria %+v", r2.RubricVersion, r2.RubricSnapshot.Criteria)
		}
		env.waitRun(*again.BeforeRunID, 60*time.Second)
		if rec := env.postForm(fmt.Sprintf("/alignments/%d/heldout", aID), url.Values{}); rec.Code != http.StatusConflict {
			t.Errorf("second relaunch: status %d, want 409", rec.Code)
		}

		// The rubric lists its versions and its runs with theirs; old versions stay readable.
		versions := env.get(fmt.Sprintf("/rubrics/%d/versions", d.rubric.ID)).Body.String()
		if missing := bodyLacks(versions, "version 2</a> <span data-testid=\"current-mark\">(current)</span>", "accepted from alignment "+strconv.FormatInt(aID, 10),
			fmt.Sprintf(`href="/runs/%d"`, src.ID), fmt.Sprintf(`href="/runs/%d"`, after.ID), `<td data-testid="run-version">version 2</td>`,
			`<td data-testid="run-version">version 1</td>`, fmt.Sprintf(`href="/alignments/%d"`, aID)); len(missing) > 0 {
			t.Errorf("versions page lacks %q\n%s", missing, versions)
		}
		v1 := env.get(fmt.Sprintf("/rubrics/%d/versions/1", d.rubric.ID))
		if v1.Code != http.StatusOK || !strings.Contains(v1.Body.String(), templ.EscapeString(src.RubricSnapshot.Criteria[0].Levels.High)) ||
			strings.Contains(v1.Body.String(), "version-examples") {
			t.Errorf("version 1 page: status %d, or it shows the new text", v1.Code)
		}
		if v2 := env.get(fmt.Sprintf("/rubrics/%d/versions/2", d.rubric.ID)).Body.String(); !strings.Contains(v2, `data-testid="version-examples"`) {
			t.Error("version 2 page does not show its examples")
		}
		if rec := env.get(fmt.Sprintf("/rubrics/%d/versions/9", d.rubric.ID)); rec.Code != http.StatusNotFound {
			t.Errorf("missing version: status %d, want 404", rec.Code)
		}
	})
}

func rowIDOf(rows map[int64]models.DatasetRow, external string) int64 {
	for id, r := range rows {
		if r.ExternalID == external {
			return id
		}
	}
	return 0
}

// TestRealJudgeDraftsItself: a judge that is a real model is asked to
// draft (the request lists the cases), its answer is read robustly, and an
// answer that cannot be used falls back to the template, saying why.
func TestRealJudgeDraftsItself(t *testing.T) {
	answers := map[string]string{
		"good":       "Sure.\n```json\n{\"high\": \"Specific and inviting: it asks or adds something.\", \"examples\": [{\"case\": \"Case2\", \"reason\": \"plain but fine\"}], \"notes\": \"Tightened the top.\"}\n```",
		"unreadable": "I think the rubric is fine as it is.",
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		asked = append(asked, req.Messages[len(req.Messages)-1].Content)
		text, ok := answers[req.Model]
		if !ok {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
	}))
	defer srv.Close()
	crit := evaluator.Criterion{Name: "Engaging", Lo: 1, Hi: 3, Levels: evaluator.Levels{Low: "dull", Middle: "plain", High: "lively"}}
	worst := align.Disagreements([]align.Item{
		{RowID: 1, SampleID: "d1", Judge: 3, Human: 1, Fields: []evaluator.Text{{Label: "Response", Value: "Wow!!! Great!!!"}}},
		{RowID: 2, SampleID: "d2", Judge: 1.2, Human: 2.5, Fields: []evaluator.Text{{Label: "Response", Value: "Try a slower bow."}}},
	})
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := env.localCtx()
		tests := []struct {
			model, wantSource, wantHigh, wantNote string
			wantIDs                               []string
		}{
			{"good", "Real judge good", "Specific and inviting: it asks or adds something.", "Tightened the top.", []string{"d2"}},
			{"unreadable", "template", "lively", "the answer holds no JSON object", []string{"d1", "d2"}},
			{"down", "template", "lively", "could not be used", []string{"d1", "d2"}},
		}
		for _, tc := range tests {
			t.Run(tc.model, func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Real judge " + tc.model, BaseURL: srv.URL + "/v1", Model: tc.model,
					Temperature: 0, TopP: 1, MaxConcurrency: 1, TimeoutSeconds: 5}
				if err := env.db.SaveJudge(ctx, &j); err != nil {
					t.Fatal(err)
				}
				asked = nil
				run := models.Run{WorkspaceID: env.ws.ID, JudgeID: &j.ID, RubricSnapshot: evaluator.Rubric{Task: "a reply", Criteria: []evaluator.Criterion{crit}}}
				d, source := env.h.draftAlignment(ctx, run, crit, worst)
				if len(asked) == 0 || !strings.Contains(asked[0], "Case1 (judge 3, people 1):\nResponse: Wow!!! Great!!!") {
					t.Fatalf("the judge was not asked with the cases: %q", asked)
				}
				var ids []string
				for _, ex := range d.Examples {
					ids = append(ids, ex.SampleID)
				}
				if source != tc.wantSource || d.Levels.High != tc.wantHigh && !strings.HasPrefix(d.Levels.High, tc.wantHigh+". ") ||
					!strings.Contains(d.Notes, tc.wantNote) || fmt.Sprint(ids) != fmt.Sprint(tc.wantIDs) {
					t.Errorf("draft by %q: high %q, notes %q, examples %v", source, d.Levels.High, d.Notes, ids)
				}
			})
		}
	})
}

// TestRubricEditorKeepsExamples: the editor's form has no place for
// labelled examples; saving it must keep them (and make a new version only
// when something it shows changed).
func TestRubricEditorKeepsExamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		r := d.rubric
		r.Criteria[0].Examples = []evaluator.Example{{SampleID: "demo-01", Score: 3, Fields: []evaluator.Text{{Label: "Response", Value: "x"}}}}
		if err := env.db.SaveRubric(ctx, &r); err != nil {
			t.Fatal(err)
		}
		page := env.get(fmt.Sprintf("/rubrics/%d/edit", r.ID))
		if !strings.Contains(page.Body.String(), fmt.Sprintf(`href="/rubrics/%d/versions"`, r.ID)) || !strings.Contains(page.Body.String(), "Version 2") {
			t.Errorf("the rubric page does not link to its versions")
		}
		form := url.Values{"project_id": {strconv.FormatInt(r.ProjectID, 10)}, "rubric_id": {strconv.FormatInt(r.ID, 10)}, "action": {"save"},
			"name": {r.Name}, "task": {r.Task + " Be fair."}}
		for i, c := range r.Criteria {
			p := fmt.Sprintf("criteria[%d].", i)
			form.Set(p+"name", c.Name)
			form.Set(p+"description", c.Description)
			form.Set(p+"lo", formatNumber(c.Lo))
			form.Set(p+"hi", formatNumber(c.Hi))
			form.Set(p+"low", c.Levels.Low)
			form.Set(p+"middle", c.Levels.Middle)
			form.Set(p+"high", c.Levels.High)
			form.Set(p+"human", c.HumanColumn)
			for _, a := range c.AnnotatorColumns {
				form.Add(p+"annotators", a)
			}
		}
		if rec := env.postForm(fmt.Sprintf("/rubrics/%d", r.ID), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("save: status %d\n%s", rec.Code, rec.Body.String())
		}
		got, err := env.db.FindRubric(ctx, env.ws.ID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 3 || !strings.HasSuffix(got.Task, "Be fair.") || len(got.Criteria[0].Examples) != 1 || got.Criteria[0].Examples[0].SampleID != "demo-01" {
			t.Errorf("after an edit: version %d, task %q, examples %+v", got.Version, got.Task, got.Criteria[0].Examples)
		}
	})
}

// TestAlignmentOnTooFewRatedSamples: a run with fewer rated samples than
// the held-out part needs is told so, not advised to hold out a larger
// share, which could never be enough. QA: a run of 3 rated samples read
// "Use a larger dataset or a larger held-out share".
func TestAlignmentOnTooFewRatedSamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		token := env.uploadToken("qa.csv", goodCSV)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Quiz"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		var dsID int64
		if _, err := fmt.Sscanf(rec.Header().Get("Location"), "/datasets/%d", &dsID); err != nil {
			t.Fatalf("import went to %q", rec.Header().Get("Location"))
		}
		r := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Quiz", Task: "An answer to a quiz question.",
			Criteria: []evaluator.Criterion{{Name: "Correct", Description: "Is the answer right?", Lo: 1, Hi: 5, HumanColumn: "quality"}}}
		if err := env.db.SaveRubric(ctx, &r); err != nil {
			t.Fatal(err)
		}
		d := env.demo()
		d.dataset.ID, d.rubric = dsID, r
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rec = env.postForm(fmt.Sprintf("/runs/%d/align", run.ID), url.Values{"criterion": {"0"}, "seed": {"1"}, "held_out_percent": {"90"}})
		body := rec.Body.String()
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "This run has 2 samples with a human rating on Correct; the held-out part alone needs at least 10, whatever its share.") {
			t.Errorf("status %d; want 422 saying the run has too few rated samples", rec.Code)
		}
		if strings.Contains(body, "larger held-out share") {
			t.Errorf("advises a larger held-out share, which cannot help")
		}
	})
}
