package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestOneLineNamesRefuseLineBreaks: names (projects, datasets, rubrics,
// judges and their settings, runs, experiments, share labels, token names,
// people's and workspaces' names) are shown on one line, but only labels
// and criterion names refused line breaks: "a\nb" was stored through the
// API and the forms. Each is now refused with 422 naming the field, on both
// databases; names made from stored names that hold a line break from
// before (a run named after its dataset) are written on one line instead
// of being refused.
func TestOneLineNamesRefuseLineBreaks(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		pid := env.project.ID

		// Forms, in local mode (before any account exists).
		for _, tc := range []struct{ name, target, field, want string }{
			{"project", "/projects", "name", "The project name holds a line break"}, // the New project form's, a sentence (polish48)
			// The rename form's, a sentence as the New project form's (polish49).
			{"rename", fmt.Sprintf("/projects/%d/rename", pid), "name", "The project name holds a line break"},
			{"first account", "/setup", "name", "The name holds a line break"}, // beside the field, a sentence (forms45)
		} {
			for _, value := range []string{"two\nlines", "cr\rline", "sep\u2028line"} {
				form := url.Values{tc.field: {value}}
				if tc.name == "first account" {
					form.Set("email", "first@a.test")
					form.Set("password", "a long enough password")
				}
				rec := env.postForm(tc.target, form)
				body := html.UnescapeString(rec.Body.String())
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) {
					t.Errorf("form %s, %q: %d, want 422 saying %q\n%.300s", tc.name, value, rec.Code, tc.want, body)
				}
			}
		}
		if has, err := env.db.HasUsers(ctx); err != nil || has {
			t.Fatalf("an account was made from a refused setup form (%v)", err)
		}

		// A dataset stored with a line break in its name before they were
		// refused, and a rubric and judge to launch on it.
		datasets, err := env.db.ListDatasets(ctx, env.ws.ID, pid)
		if err != nil || len(datasets) == 0 {
			t.Fatalf("demo datasets: %v", err)
		}
		old := datasets[0]
		if err := env.db.Gorm.Model(&models.Dataset{}).Where("id = ?", old.ID).Update("name", "Old\n  dialogues").Error; err != nil {
			t.Fatal(err)
		}
		rubrics, err := env.db.ListRubrics(ctx, env.ws.ID, pid)
		if err != nil || len(rubrics) == 0 {
			t.Fatalf("demo rubrics: %v", err)
		}
		// Its pages still show it (as one line: HTML folds the break).
		if rec := env.get(fmt.Sprintf("/datasets/%d", old.ID)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Old\n  dialogues") {
			t.Errorf("the dataset page with a stored line break: %d", rec.Code)
		}

		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@n.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		owner := env.createUser(env.ws.ID, "owner@n.test", models.RoleOwner)
		_, ownerTok := env.apiToken(env.ws.ID, owner.ID)
		// Forms of an account.
		for _, tc := range []struct{ name, target, want string }{
			{"API token", "/tokens", "the token name holds a line break"},
			{"workspace", "/workspaces", "the workspace name holds a line break"},
		} {
			rec := env.send(http.MethodPost, tc.target, url.Values{"name": {"two\nlines"}}, "", env.sessionCookie(editor))
			body := html.UnescapeString(rec.Body.String())
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) {
				t.Errorf("form %s: %d, want 422 saying %q\n%.300s", tc.name, rec.Code, tc.want, body)
			}
		}
		judges := decode[Page[APIJudge]](t, a.get("/api/v1/judges", tok), http.StatusOK)
		var sim APIJudge
		for _, j := range judges.Items {
			if j.Simulated {
				sim = j
			}
		}
		launch := map[string]any{"dataset_id": old.ID, "rubric_id": rubrics[0].ID, "judge_id": sim.ID,
			"settings": map[string]any{"rounds": 1, "batch_size": 10}}
		run := decode[APIRun](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", pid), tok, launch), http.StatusCreated)
		if want := rubrics[0].Name + " on Old dialogues"; run.Name != want {
			t.Errorf("a run named after a dataset with a stored line break is named %q, want %q", run.Name, want)
		}

		with := func(m map[string]any, k string, v any) map[string]any {
			out := map[string]any{}
			for key, val := range m {
				out[key] = val
			}
			out[k] = v
			return out
		}
		criteria := []map[string]any{{"name": "Good", "description": "is it good", "lo": 1, "hi": 5}}
		for _, tc := range []struct {
			name, target, token string
			body                any
			want                string
		}{
			{"project name", "/api/v1/projects", tok, map[string]any{"name": "a\nb"}, "the project name holds a line break"},
			{"rubric name", fmt.Sprintf("/api/v1/projects/%d/rubrics", pid), tok,
				map[string]any{"name": "r\r\nx", "task": "a reply", "criteria": criteria}, "the rubric name holds a line break"},
			{"judge name", "/api/v1/judges", ownerTok, map[string]any{"name": "j\nk", "base_url": "http://127.0.0.1:9/v1", "model": "m"}, "the judge name holds a line break"},
			{"judge model", "/api/v1/judges", ownerTok, map[string]any{"name": "j", "base_url": "http://127.0.0.1:9/v1", "model": "m\nn"}, "the model name holds a line break"},
			{"run name", fmt.Sprintf("/api/v1/projects/%d/runs", pid), tok, with(launch, "name", "run\none"), "the run name holds a line break"},
			{"experiment name", fmt.Sprintf("/api/v1/projects/%d/experiments", pid), tok,
				map[string]any{"dataset_id": old.ID, "rubric_id": rubrics[0].ID, "judge_id": sim.ID, "name": "exp\u2029x"}, "the experiment name holds a line break"},
			{"share label", "/api/v1/shares", tok, map[string]any{"kind": "run", "run_id": run.ID, "label": "for\nBob"}, "the label holds a line break"},
		} {
			rec := a.json(http.MethodPost, tc.target, tc.token, tc.body)
			var answer APIError
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(answer.Error.Message, tc.want) {
				t.Errorf("API %s: %d %.300s, want 422 saying %s", tc.name, rec.Code, rec.Body, tc.want)
			}
		}
		// Multi-line text stays multi-line.
		rec := a.json(http.MethodPost, "/api/v1/projects", tok, map[string]any{"name": "One line", "description": "first\nsecond"})
		if rec.Code != http.StatusCreated {
			t.Errorf("a description of two lines: %d %.300s, want 201", rec.Code, rec.Body)
		}
		// A dataset name through the API.
		up := decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", pid), tok, "rows.csv", ratedCSV(3)), http.StatusCreated)
		rec = a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/datasets", pid), tok, map[string]any{
			"upload_token": up.Token, "name": "two\nlines", "mapping": map[string]any{"id_column": "id", "fields": []map[string]string{{"column": "response", "label": "Reply"}}}})
		var answer APIError
		_ = json.Unmarshal(rec.Body.Bytes(), &answer)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(answer.Error.Message, "the dataset name holds a line break") {
			t.Errorf("API dataset name: %d %.300s, want 422 naming the dataset name", rec.Code, rec.Body)
		}
	})
}
