package handlers

import (
	"context"
	"encoding/base64"
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
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// rewordForm is the reworded-rubric form filled with the run's own wording.
func rewordForm(r evaluator.Rubric) url.Values {
	f := url.Values{"task": {r.Task}}
	for i, c := range r.Criteria {
		f.Set(fmt.Sprintf("description_%d", i), c.Description)
		f.Set(fmt.Sprintf("low_%d", i), c.Levels.Low)
		f.Set(fmt.Sprintf("middle_%d", i), c.Levels.Middle)
		f.Set(fmt.Sprintf("high_%d", i), c.Levels.High)
	}
	return f
}

// flashText reads the flash message a response sets.
func flashText(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	for _, ck := range rec.Result().Cookies() {
		if ck.Name != flashCookie {
			continue
		}
		_, enc, _ := strings.Cut(ck.Value, ":")
		b, err := base64.RawURLEncoding.DecodeString(enc)
		if err != nil {
			t.Fatalf("flash cookie %q: %v", ck.Value, err)
		}
		return string(b)
	}
	return ""
}

// redirectedRun reads the new run's id from a 303 to /runs/<id>.
func redirectedRun(t *testing.T, rec *httptest.ResponseRecorder) int64 {
	t.Helper()
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303; body: %s", rec.Code, rec.Body.String())
	}
	loc := rec.Header().Get("Location")
	id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64)
	if err != nil {
		t.Fatalf("redirected to %q, want /runs/<id>", loc)
	}
	return id
}

func TestRunVariants(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		parent := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		if parent.Status != models.RunSucceeded {
			t.Fatalf("parent run %s (%s)", parent.Status, parent.Error)
		}
		base := fmt.Sprintf("/runs/%d", parent.ID)

		page := env.get(base + "/variants")
		if page.Code != http.StatusOK {
			t.Fatalf("variants page: status %d", page.Code)
		}
		for _, w := range []string{
			`name="seed" value="2"`, `name="delete_percent" value="5"`, `name="replace_percent" value="5"`,
			"synonyms.txt", "never replaced", templ.EscapeString(parent.RubricSnapshot.Task), templ.EscapeString(parent.RubricSnapshot.Criteria[0].Levels.High),
			`action="` + base + `/reseed"`, `action="` + base + `/noise"`, `action="` + base + `/reword"`,
		} {
			if !strings.Contains(page.Body.String(), w) {
				t.Errorf("variants page lacks %q", w)
			}
		}

		// Invalid forms re-render with a message and leave nothing behind.
		emptied := rewordForm(parent.RubricSnapshot)
		emptied.Set("task", "  ")
		invalid := []struct {
			name, path string
			form       url.Values
			want       string
		}{
			{"same seed", "/reseed", url.Values{"seed": {"1"}}, "choose a seed other than the run's own (1)"},
			{"seed not a number", "/reseed", url.Values{"seed": {"x"}}, `Seed: “x” is not a whole number.`},
			{"no noise", "/noise", url.Values{"delete_percent": {"0"}, "replace_percent": {"0"}, "seed": {"1"}}, "with both at 0%"},
			{"too much noise", "/noise", url.Values{"delete_percent": {"80"}, "replace_percent": {"5"}, "seed": {"1"}}, `Words deleted: 80 is out of range; use a percentage from 0 to 50.`},
			{"task emptied", "/reword", emptied, "task description is empty"},
			{"nothing reworded", "/reword", rewordForm(parent.RubricSnapshot), "Nothing was reworded"},
		}
		for _, tc := range invalid {
			rec := env.postForm(base+tc.path, tc.form)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d, want 422", tc.name, rec.Code)
			}
			if !strings.Contains(rec.Body.String(), templ.EscapeString(tc.want)) {
				t.Errorf("%s: the page does not say %q", tc.name, tc.want)
			}
		}
		if runs, _ := env.db.ListRuns(ctx, env.ws.ID, 0); len(runs) != 1 {
			t.Errorf("invalid variant forms left %d runs, want the parent only", len(runs))
		}
		if es, _ := env.db.ListExperiments(ctx, env.ws.ID, env.project.ID); len(es) != 0 {
			t.Errorf("invalid variant forms created %d experiments, want 0", len(es))
		}
		if ds, _ := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID); len(ds) != 1 {
			t.Errorf("invalid variant forms left %d datasets, want 1", len(ds))
		}

		// Reseed.
		child := env.waitRun(redirectedRun(t, env.postForm(base+"/reseed", url.Values{"seed": {"5"}})), 60*time.Second)
		if child.Variant != runner.VariantReseed || child.ParentRunID == nil || *child.ParentRunID != parent.ID || child.Settings.Seed != 5 {
			t.Errorf("reseed run: variant %q, parent %v, seed %d; want reseed of %d with seed 5", child.Variant, child.ParentRunID, child.Settings.Seed, parent.ID)
		}
		if child.Status != models.RunSucceeded {
			t.Errorf("reseed run %s (%s), want succeeded", child.Status, child.Error)
		}

		// Noise.
		rec := env.postForm(base+"/noise", url.Values{"delete_percent": {"10"}, "replace_percent": {"10"}, "seed": {"3"}})
		noisy := env.waitRun(redirectedRun(t, rec), 60*time.Second)
		if noisy.Variant != runner.VariantNoise || noisy.ParentRunID == nil || *noisy.ParentRunID != parent.ID {
			t.Errorf("noise run: variant %q, parent %v; want noise of %d", noisy.Variant, noisy.ParentRunID, parent.ID)
		}
		if noisy.Status != models.RunSucceeded {
			t.Errorf("noise run %s (%s), want succeeded", noisy.Status, noisy.Error)
		}
		if msg := flashText(t, rec); !strings.Contains(msg, "were deleted") || !strings.Contains(msg, "replaced by a synonym") {
			t.Errorf("noise flash = %q, want the counts of deleted and replaced words", msg)
		}
		ds, err := env.db.FindDataset(ctx, env.ws.ID, noisy.DatasetID)
		if err != nil {
			t.Fatal(err)
		}
		if ds.ID == d.dataset.ID || ds.ParentDatasetID == nil || *ds.ParentDatasetID != d.dataset.ID {
			t.Errorf("noise dataset %d has parent %v, want a new dataset copied from %d", ds.ID, ds.ParentDatasetID, d.dataset.ID)
		}
		oldRows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		newRows, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(newRows) != len(oldRows) {
			t.Fatalf("noisy copy has %d rows, want %d", len(newRows), len(oldRows))
		}
		differ := 0
		for i := range oldRows {
			if oldRows[i].Data["response"] != newRows[i].Data["response"] || oldRows[i].Data["context"] != newRows[i].Data["context"] {
				differ++
			}
		}
		if differ == 0 {
			t.Errorf("no text of the noisy copy differs from the original")
		}

		// Reworded, with markup in the task that pages must escape.
		task := "Rate the assistant's <b>next reply</b> given the conversation."
		f := rewordForm(parent.RubricSnapshot)
		f.Set("task", task)
		f.Set("low_0", "Flat; nothing to answer to.")
		reworded := env.waitRun(redirectedRun(t, env.postForm(base+"/reword", f)), 60*time.Second)
		if reworded.Variant != runner.VariantReworded || reworded.ParentRunID == nil || *reworded.ParentRunID != parent.ID {
			t.Errorf("reworded run: variant %q, parent %v; want reworded of %d", reworded.Variant, reworded.ParentRunID, parent.ID)
		}
		if reworded.RubricSnapshot.Task != task || reworded.RubricSnapshot.Criteria[0].Levels.Low != "Flat; nothing to answer to." {
			t.Errorf("reworded rubric = %+v, want the new wording", reworded.RubricSnapshot)
		}
		for i, c := range reworded.RubricSnapshot.Criteria {
			o := parent.RubricSnapshot.Criteria[i]
			if c.Name != o.Name || c.Lo != o.Lo || c.Hi != o.Hi || c.HumanColumn != o.HumanColumn {
				t.Errorf("criterion %d = %s [%g, %g] %s, want %s [%g, %g] %s kept", i, c.Name, c.Lo, c.Hi, c.HumanColumn, o.Name, o.Lo, o.Hi, o.HumanColumn)
			}
		}
		if reworded.Status != models.RunSucceeded {
			t.Errorf("reworded run %s (%s), want succeeded", reworded.Status, reworded.Error)
		}
		body := env.get(fmt.Sprintf("/runs/%d/variants", reworded.ID)).Body.String()
		if strings.Contains(body, "<b>next reply</b>") || !strings.Contains(body, templ.EscapeString(task)) {
			t.Errorf("the variants page does not escape the rubric's task")
		}

		// The parent's page lists what was derived from it.
		body = env.get(base + "/variants").Body.String()
		for _, id := range []int64{child.ID, noisy.ID, reworded.ID} {
			if !strings.Contains(body, fmt.Sprintf(`href="/runs/%d"`, id)) {
				t.Errorf("variants page does not link derived run %d", id)
			}
		}
	})
}

func TestRunVariantsNeedAFinishedRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		// A queued run no worker will take: stored without a job.
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, RubricID: &d.rubric.ID,
			JudgeID: &d.judge.ID, Name: "waiting", Method: models.MethodBatchEval, Settings: evaluator.DefaultSettings(),
			RubricSnapshot: d.rubric.Evaluator(), JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
		if err := env.db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		base := fmt.Sprintf("/runs/%d", run.ID)
		if body := env.get(base + "/variants").Body.String(); !strings.Contains(body, `data-testid="not-finished"`) {
			t.Errorf("the page does not say the run has not finished")
		}
		rec := env.postForm(base+"/reseed", url.Values{"seed": {"9"}})
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "is still queued") {
			t.Errorf("reseed of a queued run: status %d, want 422 saying it is still queued", rec.Code)
		}
		if derived, _ := env.db.ListDerivedRuns(ctx, env.ws.ID, run.ID); len(derived) != 0 {
			t.Errorf("a queued run got %d variants, want 0", len(derived))
		}
		if rec := env.get("/runs/999999/variants"); rec.Code != http.StatusNotFound {
			t.Errorf("variants of a missing run: status %d, want 404", rec.Code)
		}
	})
}
