package handlers

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/batcheval/batcheval/evaluator/perturb"
	"github.com/batcheval/batcheval/models"
)

// TestComposedNamesFitTheirLimit: the names the product composes from
// stored names ("<rubric> on <dataset>", "All methods on <dataset>",
// "Around run N: <run>", a noisy copy's and a held-out part's dataset
// name, a numbered upload name, a rubric named after its file) were
// refused as over the limit when the name they start from was near its
// own, though nobody typed them: the launch failed with "the run name is
// 2212 characters long". Each is now cut to its limit, on a character
// boundary with an ellipsis, keeping the words that say what it is.
func TestComposedNamesFitTheirLimit(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		// A dataset name and a rubric name at their limits, of two-byte
		// characters: the limits count characters.
		longDataset := "D" + strings.Repeat("é", models.MaxComposedNameLength-1)
		longRubric := "R" + strings.Repeat("ü", models.MaxNameLength-1)
		if err := env.db.Gorm.Model(&models.Dataset{}).Where("id = ?", d.dataset.ID).Update("name", longDataset).Error; err != nil {
			t.Fatal(err)
		}
		if err := env.db.Gorm.Model(&models.Rubric{}).Where("id = ?", d.rubric.ID).Update("name", longRubric).Error; err != nil {
			t.Fatal(err)
		}
		// fits checks a composed name: within limit, cut with the
		// ellipsis, and starting and ending as wanted.
		fits := func(what, name string, limit int, prefix, suffix string) {
			t.Helper()
			if n := utf8.RuneCountInString(name); n > limit {
				t.Errorf("%s is %d characters long, over the limit of %d", what, n, limit)
			}
			if !utf8.ValidString(name) || !strings.Contains(name, models.Ellipsis) {
				t.Errorf("%s is not cut on a character boundary with an ellipsis: %.80q…%.80q", what, name, name[max(0, len(name)-80):])
			}
			if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
				t.Errorf("%s = %.120q…%.120q, want it to start %q and end %q", what, name, name[max(0, len(name)-120):], prefix, suffix)
			}
		}

		// In the browser, before any account exists (local mode).
		// An upload whose file name is over the limit, uploaded twice: the
		// mapping step suggests it shortened, then numbered.
		file := "F" + strings.Repeat("ä", models.MaxComposedNameLength+50)
		nameField := regexp.MustCompile(`id="dataset-name" name="name" value="([^"]*)"`)
		for i, suffix := range []string{"", " (2)"} {
			token := env.uploadToken(file+".csv", goodCSV)
			page := env.get(env.mapPath() + "?token=" + token).Body.String()
			m := nameField.FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("upload %d: the mapping step shows no dataset name", i+1)
			}
			suggested := html.UnescapeString(m[1])
			fits(fmt.Sprintf("upload %d's suggested name", i+1), suggested, models.MaxComposedNameLength, "F", suffix)
			form := url.Values{"token": {token}, "name": {suggested}, "id_column": {"id"}, "show_1": {"1"}, "label_1": {"Question"}}
			if rec := env.postForm(env.mapPath(), form); rec.Code != http.StatusSeeOther {
				t.Fatalf("upload %d: importing with the suggested name: %d %.400s", i+1, rec.Code, rec.Body)
			}
		}

		// A rubric file whose name is over the rubric name limit.
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("rubric_file", "G"+strings.Repeat("ß", models.MaxNameLength)+".yaml")
		fw.Write([]byte("task: a reply\ncriteria:\n  - {name: Good, description: is it good, lo: 1, hi: 5}\n"))
		mw.Close()
		if rec := env.do(http.MethodPost, fmt.Sprintf("/projects/%d/rubrics/import", env.project.ID), &body, mw.FormDataContentType()); rec.Code != http.StatusSeeOther {
			t.Fatalf("import of a rubric file with a long name: %d %.400s", rec.Code, rec.Body)
		}
		var imported models.Rubric
		if err := env.db.Gorm.Where("project_id = ? AND name LIKE ?", env.project.ID, "G%").First(&imported).Error; err != nil {
			t.Fatal(err)
		}
		fits("an imported rubric", imported.Name, models.MaxNameLength, "G", "")

		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@composed.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		launch := map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID,
			"settings": map[string]any{"rounds": 1, "batch_size": 10}}
		runs := fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID)
		run := decode[APIRun](t, a.json(http.MethodPost, runs, tok, launch), http.StatusCreated)
		fits("a run named after its rubric and dataset", run.Name, models.MaxComposedNameLength, longRubric+" on D", "")
		launch["method"] = "geval"
		geval := decode[APIRun](t, a.json(http.MethodPost, runs, tok, launch), http.StatusCreated)
		fits("a G-Eval run named after its rubric and dataset", geval.Name, models.MaxComposedNameLength, longRubric+" on D", " (G-Eval)")
		delete(launch, "method")
		e := decode[APIExperiment](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/experiments", env.project.ID), tok, launch), http.StatusCreated)
		fits("an experiment of all methods", e.Name, models.MaxComposedNameLength, "All methods on D", "")
		// A name typed over the limit is still refused.
		launch["name"] = strings.Repeat("x", models.MaxComposedNameLength+1)
		if rec := a.json(http.MethodPost, runs, tok, launch); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "the limit is 2000") {
			t.Errorf("a typed run name over the limit: %d %.300s, want 422", rec.Code, rec.Body)
		}

		// Variants of a run whose name is at the limit, on the long dataset.
		parent := env.startRun(d.dataset, "P"+strings.Repeat("ö", models.MaxComposedNameLength-1), "batcheval", nil)
		child, _, err := env.runner.LaunchNoise(ctx, env.ws.ID, parent.ID, 3, perturb.Options{DeleteRate: 0.05, ReplaceRate: 0.05})
		if err != nil {
			t.Fatalf("noise variant of a run with a long name: %v", err)
		}
		exp, err := env.db.FindExperiment(ctx, env.ws.ID, *child.ExperimentID)
		if err != nil {
			t.Fatal(err)
		}
		fits("the experiment around a run", exp.Name, models.MaxComposedNameLength, fmt.Sprintf("Around run %d: P", parent.ID), "")
		noisy, err := env.db.FindDataset(ctx, env.ws.ID, child.DatasetID)
		if err != nil {
			t.Fatal(err)
		}
		fits("a noisy copy", noisy.Name, models.MaxComposedNameLength, "D", " (noisy copy, 5% deleted, 5% replaced, seed 3)")

		// The held-out part of an alignment.
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		al := models.Alignment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, RubricID: d.rubric.ID, SourceRunID: parent.ID, Seed: 4, BaseVersion: 1}
		for i, r := range rows {
			if i < 10 {
				al.HeldOutRowIDs = append(al.HeldOutRowIDs, r.ID)
			} else {
				al.CalibrationRowIDs = append(al.CalibrationRowIDs, r.ID)
			}
		}
		if err := env.db.CreateAlignment(ctx, &al); err != nil {
			t.Fatal(err)
		}
		if err := env.db.ClaimHeldOutLaunch(ctx, al, "names", time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.runner.LaunchHeldOut(ctx, env.ws.ID, &al, parent.RubricSnapshot.Criteria[0], nil, "names"); err != nil {
			t.Fatalf("held-out runs of a dataset with a long name: %v", err)
		}
		if err := env.db.EndHeldOutLaunch(ctx, al.ID, "names", ""); err != nil {
			t.Fatal(err)
		}
		held, err := env.db.FindDataset(ctx, env.ws.ID, *al.HeldOutDatasetID)
		if err != nil {
			t.Fatal(err)
		}
		fits("a held-out part", held.Name, models.MaxComposedNameLength, "D", fmt.Sprintf(" (held-out part of alignment %d: 10 samples, seed 4)", al.ID))

	})
}
