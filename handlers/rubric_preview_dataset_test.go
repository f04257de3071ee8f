package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestRubricPreviewSaysItsDatasetAndSamples (forms46): the rubric
// editor's prompt preview takes the project's main dataset (or its oldest
// original) unless the person picks another in its Dataset select; each
// way of previewing (the page opened with a choice, the Preview button of
// a new or a stored rubric, the live preview) shows the dataset picked,
// and now says which rows and samples the prompt holds. In a project
// without datasets, the live preview said "Choose a dataset to preview
// the prompt." though there was none to choose: every way now says the
// project has no dataset and what to do.
func TestRubricPreviewSaysItsDatasetAndSamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		main := env.demoDataset()
		second := env.ratedDatasetOf("Second <set>", []float64{1, 2, 3})
		form := rubricFormValues("preview", "1", "5")
		live := func(dataset int64) func() *httptestRecorder {
			return func() *httptestRecorder {
				f := url.Values{}
				for k, v := range form {
					f[k] = v
				}
				f.Del("action")
				f.Set("rubric_id", fmt.Sprint(d.rubric.ID))
				f.Set("preview_dataset", fmt.Sprint(dataset))
				return env.postForm("/rubrics/preview", f)
			}
		}
		posted := func(path string, dataset int64) func() *httptestRecorder {
			return func() *httptestRecorder {
				f := url.Values{}
				for k, v := range form {
					f[k] = v
				}
				f.Set("preview_dataset", fmt.Sprint(dataset))
				return env.postForm(path, f)
			}
		}
		mainRows, err := env.db.ListDatasetRows(t.Context(), main.ID, 0, 1)
		if err != nil || len(mainRows) == 0 {
			t.Fatalf("main dataset rows: %v", err)
		}
		for _, tc := range []struct {
			name        string
			send        func() *httptestRecorder
			dataset     string
			samples     string
			notSelected string
		}{
			{"page, nothing chosen: the main dataset", func() *httptestRecorder { return env.get(fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID)) },
				main.Name, fmt.Sprintf("(rows 1 to 10: samples “%s” to", mainRows[0].ExternalID), ""},
			{"page opened with a choice", func() *httptestRecorder {
				return env.get(fmt.Sprintf("/rubrics/%d/edit?preview_dataset=%d", d.rubric.ID, second.ds.ID))
			}, "Second <set>", "(rows 1 to 3: samples “s000” to “s002”)", ""},
			{"Preview of a stored rubric", posted(fmt.Sprintf("/rubrics/%d", d.rubric.ID), second.ds.ID), "Second <set>", "(rows 1 to 3: samples “s000” to “s002”)", ""},
			{"Preview of a new rubric", posted(fmt.Sprintf("/projects/%d/rubrics", env.project.ID), second.ds.ID), "Second <set>", "(rows 1 to 3: samples “s000” to “s002”)", ""},
			{"live preview", live(second.ds.ID), "Second <set>", "(rows 1 to 3: samples “s000” to “s002”)", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := tc.send()
				body := rec.Body.String()
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d, want 200: %.500s", rec.Code, body)
				}
				if strings.Contains(body, "Second <set>") {
					t.Error("the dataset's name is shown unescaped")
				}
				name := regexp.MustCompile(`data-testid="preview-dataset-name">([^<]*)<`).FindStringSubmatch(body)
				if name == nil || html.UnescapeString(name[1]) != tc.dataset {
					t.Errorf("preview names dataset %v, want %q", name, tc.dataset)
				}
				samples := regexp.MustCompile(`data-testid="preview-samples">([^<]*)<`).FindStringSubmatch(body)
				if samples == nil || !strings.HasPrefix(html.UnescapeString(samples[1]), tc.samples) {
					t.Errorf("preview says samples %v, want %q", samples, tc.samples)
				}
				if tc.dataset == "Second <set>" && !strings.Contains(body, "sample 2") {
					t.Error("the prompt does not hold the chosen dataset's text")
				}
			})
		}

		// A project without datasets says so wherever the preview shows.
		empty := models.Project{WorkspaceID: env.ws.ID, Name: "Empty project"}
		must(t, env.db.CreateProject(t.Context(), &empty))
		stored := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: empty.ID, Name: "R", Task: d.rubric.Task, Criteria: d.rubric.Criteria}
		must(t, env.db.SaveRubric(t.Context(), &stored))
		noDataset := func(path string, f url.Values) func() *httptestRecorder {
			return func() *httptestRecorder {
				if f == nil {
					return env.get(path)
				}
				return env.postForm(path, f)
			}
		}
		liveForm := url.Values{}
		for k, v := range form {
			liveForm[k] = v
		}
		liveForm.Del("action")
		liveForm.Set("project_id", fmt.Sprint(empty.ID)) // as the editor's form sends it
		storedLive := url.Values{"rubric_id": {fmt.Sprint(stored.ID)}}
		for _, tc := range []struct {
			name string
			send func() *httptestRecorder
		}{
			{"new rubric page", noDataset(fmt.Sprintf("/projects/%d/rubrics/new", empty.ID), nil)},
			{"stored rubric page", noDataset(fmt.Sprintf("/rubrics/%d/edit", stored.ID), nil)},
			{"Preview button", noDataset(fmt.Sprintf("/projects/%d/rubrics", empty.ID), form)},
			{"live preview of a new rubric", noDataset("/rubrics/preview", liveForm)},
			{"live preview of a stored rubric", noDataset("/rubrics/preview", storedLive)},
		} {
			t.Run("no dataset, "+tc.name, func(t *testing.T) {
				rec := tc.send()
				body := rec.Body.String()
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d, want 200: %.500s", rec.Code, body)
				}
				if !strings.Contains(body, `data-testid="preview-problem">This project has no dataset yet, so there is no sample to preview the prompt on: upload a dataset`) {
					t.Errorf("the preview does not say the project has no dataset: %.3000s", body)
				}
			})
		}
	})
}
