package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
)

// demoDataset returns the seeded demo project's dataset.
func (env *testEnv) demoDataset() models.Dataset {
	env.t.Helper()
	ds, err := env.db.ListDatasets(context.Background(), env.ws.ID, env.project.ID)
	if err != nil || len(ds) == 0 {
		env.t.Fatalf("demo dataset: %v (found %d)", err, len(ds))
	}
	return ds[len(ds)-1]
}

// countDatasets counts the demo project's datasets.
func (env *testEnv) countDatasets() int {
	env.t.Helper()
	ds, err := env.db.ListDatasets(context.Background(), env.ws.ID, env.project.ID)
	if err != nil {
		env.t.Fatal(err)
	}
	return len(ds)
}

// bodyLacks returns the wanted strings the body does not contain.
func bodyLacks(body string, want ...string) []string {
	var missing []string
	for _, w := range want {
		if !strings.Contains(body, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

func TestProjectsList(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		rec := env.get("/")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET / = %d, want 200", rec.Code)
		}
		want := []string{demo.ProjectName, fmt.Sprintf(`href="/projects/%d"`, env.project.ID), `action="/projects"`}
		if missing := bodyLacks(rec.Body.String(), want...); len(missing) > 0 {
			t.Errorf("GET / lacks %q", missing)
		}
	})
}

func TestCreateProject(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name       string
			form       url.Values
			wantStatus int
			wantText   string // on the page the request leads to
		}{
			// The form's messages are sentences that say what to do, as the
			// other forms' ("Give the dataset a name."); the empty name's
			// was "a project needs a name".
			{"empty name", url.Values{"name": {"  "}, "description": {"kept text"}}, http.StatusUnprocessableEntity,
				`<div class="field-error" id="project-name-error" data-testid="field-error-project-name"><p class="small">Give the project a name, then press Create project again.</p></div>`},
			{"name on two lines", url.Values{"name": {"two\nlines"}}, http.StatusUnprocessableEntity,
				`<div class="field-error" id="project-name-error" data-testid="field-error-project-name"><p class="small">The project name holds a line break, and it is one line (shown in lists and headings): write it on one line.</p></div>`},
			{"description too long", url.Values{"name": {"long"}, "description": {strings.Repeat("d", models.MaxDescriptionLength+1)}}, http.StatusUnprocessableEntity,
				fmt.Sprintf(`<div class="field-error" id="project-description-error" data-testid="field-error-project-description"><p class="small">The project description is %d characters long; the limit is %d.</p></div>`, models.MaxDescriptionLength+1, models.MaxDescriptionLength)},
			{"named", url.Values{"name": {"Summaries <b>2025</b>"}, "description": {"news summaries"}}, http.StatusSeeOther, "Summaries &lt;b&gt;2025&lt;/b&gt;"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.postForm("/projects", tt.form)
				if rec.Code != tt.wantStatus {
					t.Fatalf("POST /projects = %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
				}
				body := rec.Body.String()
				if rec.Code == http.StatusSeeOther {
					body = env.get(rec.Header().Get("Location")).Body.String()
				}
				if !strings.Contains(body, tt.wantText) {
					t.Errorf("page lacks %q:\n%s", tt.wantText, body)
				}
			})
		}
	})
}

// TestRenameProjectFormSentences: the project's rename form answers a
// refused name as the New project form does, in sentences that say what
// to do (one wording, nameFormText), and keeps the name as it was. On the
// old code its messages were the model's lower-case clauses ("the project
// needs a name").
func TestRenameProjectFormSentences(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		before, err := env.db.FindProject(ctx, env.ws.ID, env.project.ID)
		must(t, err)
		long := strings.Repeat("n", models.MaxNameLength+1)
		tests := []struct {
			name    string
			newName string
			want    string // the form's message, whole
			// createWant is what the New project form says of the same
			// name, with its own button: the two forms word it alike.
			createWant string
		}{
			{"empty name", "  ", "Give the project a name, then press Rename again.",
				"Give the project a name, then press Create project again."},
			{"name on two lines", "two\nlines", "The project name holds a line break, and it is one line (shown in lists and headings): write it on one line.", ""},
			{"name too long", long, fmt.Sprintf("The project name is %d characters long; the limit is %d.", models.MaxNameLength+1, models.MaxNameLength), ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.postForm(fmt.Sprintf("/projects/%d/rename", env.project.ID), url.Values{"name": {tt.newName}, "was": {before.Name}})
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("rename = %d, want 422: %.300s", rec.Code, rec.Body)
				}
				// Beside the field, tied to it.
				checkFieldTied(t, rec.Body.String(), "rename-name", tt.want)
				createWant := tt.createWant
				if createWant == "" {
					createWant = tt.want
				}
				create := env.postForm("/projects", url.Values{"name": {tt.newName}})
				if !strings.Contains(create.Body.String(), `data-testid="field-error-project-name"><p class="small">`+createWant+`</p>`) {
					t.Errorf("the New project form does not say %q of the same name", createWant)
				}
			})
		}
		after, err := env.db.FindProject(ctx, env.ws.ID, env.project.ID)
		must(t, err)
		if after.Name != before.Name {
			t.Errorf("a refused rename changed the name %q to %q", before.Name, after.Name)
		}
	})
}

func TestProjectPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ds := env.demoDataset()
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, Name: "first try", Method: models.MethodBatchEval, Simulated: true}
		if err := env.db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name       string
			path       string
			wantStatus int
			want       []string
		}{
			{"demo project", fmt.Sprintf("/projects/%d", env.project.ID), http.StatusOK, []string{
				"Demo dialogues", "Engaging and coherent",
				fmt.Sprintf(`href="/datasets/%d"`, ds.ID),
				fmt.Sprintf(`href="/runs/%d"`, run.ID), "first try", `data-testid="simulated-badge"`, models.RunQueued,
				fmt.Sprintf(`href="/projects/%d/datasets/new"`, env.project.ID),
				fmt.Sprintf(`href="/projects/%d/rubrics/new"`, env.project.ID),
				fmt.Sprintf(`href="/projects/%d/runs/new"`, env.project.ID),
			}},
			{"unknown project", "/projects/999999", http.StatusNotFound, []string{"does not exist"}},
			{"not an id", "/projects/abc", http.StatusNotFound, []string{"not a valid id"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.get(tt.path)
				if rec.Code != tt.wantStatus {
					t.Fatalf("GET %s = %d, want %d", tt.path, rec.Code, tt.wantStatus)
				}
				if missing := bodyLacks(rec.Body.String(), tt.want...); len(missing) > 0 {
					t.Errorf("GET %s lacks %q", tt.path, missing)
				}
			})
		}
	})
}

// TestProjectPageEmptyLists: an empty list on a project page says what is
// true for the reader. Filtered to archived objects it says there are none
// archived (the project has datasets, rubrics and runs); a viewer is not
// told to upload or write anything, nor sent to the rubric form, which
// answers them 403.
func TestProjectPageEmptyLists(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		empty := models.Project{WorkspaceID: env.ws.ID, Name: "Empty"}
		if err := env.db.CreateProject(context.Background(), &empty); err != nil {
			t.Fatal(err)
		}
		demoPage := fmt.Sprintf("/projects/%d", env.project.ID)
		emptyPage := fmt.Sprintf("/projects/%d", empty.ID)
		viewer := env.sessionCookie(env.createUser(env.ws.ID, "vi@a.test", models.RoleViewer))
		editor := env.sessionCookie(env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor))
		cases := []struct {
			name, path string
			who        *http.Cookie
			want, not  []string
		}{
			{"archived filter, nothing archived", demoPage + "?show=archived", editor,
				[]string{"No archived datasets.", "No archived rubrics.", "No archived runs."},
				[]string{"No datasets yet", "No rubrics yet", "No runs yet"}},
			{"editor, empty project", emptyPage, editor,
				[]string{`No datasets yet: <a href="/projects/`, `data-testid="empty-datasets-upload">upload a CSV`, "start from a template</a>", "No runs yet."}, nil},
			{"viewer, empty project", emptyPage, viewer,
				[]string{"No datasets yet: editors of this workspace upload them.", "No rubrics yet: editors of this workspace write them.", "No runs yet."},
				[]string{"/rubrics/new", "upload a CSV"}},
			{"viewer, archived filter", demoPage + "?show=archived", viewer,
				[]string{"No archived datasets.", "No archived rubrics.", "No archived runs."},
				[]string{"/rubrics/new", "No datasets yet"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.send(http.MethodGet, tc.path, nil, "", tc.who)
				body := rec.Body.String()
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d", rec.Code)
				}
				for _, w := range tc.want {
					if !strings.Contains(body, w) {
						t.Errorf("page lacks %q", w)
					}
				}
				for _, n := range tc.not {
					if strings.Contains(body, n) {
						t.Errorf("page says %q", n)
					}
				}
			})
		}
	})
}

// TestProjectsAddressOpensTheList: /projects typed as an address (a GET)
// leads to the list of projects, the home page, keeping the list's
// choice; it was the "this address is a button's" page (405), the New
// project form's address.
func TestProjectsAddressOpensTheList(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			path, wantLocation string
		}{
			{"/projects", "/"},
			{"/projects?show=archived", "/?show=archived"},
		}
		for _, tt := range tests {
			t.Run(tt.path, func(t *testing.T) {
				rec := env.get(tt.path)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("GET %s = %d, want %d: %s", tt.path, rec.Code, http.StatusSeeOther, rec.Body)
				}
				if got := rec.Header().Get("Location"); got != tt.wantLocation {
					t.Fatalf("GET %s goes to %q, want %q", tt.path, got, tt.wantLocation)
				}
				page := env.get(tt.wantLocation)
				if page.Code != http.StatusOK {
					t.Fatalf("GET %s = %d", tt.wantLocation, page.Code)
				}
				if body := page.Body.String(); tt.wantLocation == "/" && !strings.Contains(body, `data-testid="projects"`) {
					t.Errorf("%s does not list the projects:\n%s", tt.wantLocation, body)
				}
			})
		}
	})
}
