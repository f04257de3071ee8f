package handlers

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestOversizedFieldsRefused: a 9 MiB project name gets a 413 naming the
// field and the limit, a name just over the length limit a 422 naming the
// field, its length and the limit; nothing is stored, and the refusal does
// not send the megabytes back.
func TestOversizedFieldsRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		before, _ := env.db.ListProjects(t.Context(), env.ws.ID)
		for _, tc := range []struct {
			name       string
			form       url.Values
			wantStatus int
			want       []string
		}{
			{"9 MiB name", url.Values{"name": {strings.Repeat("n", 9<<20)}}, http.StatusRequestEntityTooLarge,
				[]string{`The field “name” is too long`, "1 MiB", "nothing was saved"}},
			{"9 MiB description after the name", url.Values{"name": {"ok"}, "description": {strings.Repeat("d", 9<<20)}}, http.StatusRequestEntityTooLarge,
				[]string{`The field “description” is too long`}},
			{"name over the limit", url.Values{"name": {strings.Repeat("é", 201)}}, http.StatusUnprocessableEntity,
				[]string{"The project name is 201 characters long; the limit is 200."}},
			{"description over the limit", url.Values{"name": {"ok"}, "description": {strings.Repeat("d", 5001)}}, http.StatusUnprocessableEntity,
				[]string{"The project description is 5001 characters long; the limit is 5000."}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// Keep the field order: the overflowing field is named from it.
				var body strings.Builder
				for _, k := range []string{"name", "description"} {
					if v, ok := tc.form[k]; ok {
						if body.Len() > 0 {
							body.WriteByte('&')
						}
						body.WriteString(k + "=" + url.QueryEscape(v[0]))
					}
				}
				rec := env.do(http.MethodPost, "/projects", strings.NewReader(body.String()), "application/x-www-form-urlencoded")
				if rec.Code != tc.wantStatus {
					t.Fatalf("status %d, want %d: %.300s", rec.Code, tc.wantStatus, rec.Body)
				}
				if missing := bodyLacks(rec.Body.String(), tc.want...); len(missing) > 0 {
					t.Errorf("the refusal lacks %q: %.2000s", missing, rec.Body)
				}
				if rec.Body.Len() > 64<<10 {
					t.Errorf("the refusal is %d bytes: the field was sent back", rec.Body.Len())
				}
			})
		}
		after, _ := env.db.ListProjects(t.Context(), env.ws.ID)
		if len(after) != len(before) {
			t.Errorf("projects %d -> %d: something was stored", len(before), len(after))
		}
	})
}

// TestUploadNameNeverReachesLocation: the dataset name of an upload goes
// into the mapping page's address; an oversized one is refused on the
// upload page, with no Location header and no pending upload kept.
func TestUploadNameNeverReachesLocation(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		rec := env.upload("ok.csv", goodCSV, strings.Repeat("x", 3<<20))
		if rec.Code != http.StatusUnprocessableEntity || rec.Header().Get("Location") != "" {
			t.Fatalf("status %d, Location %.80q; want 422 and no Location", rec.Code, rec.Header().Get("Location"))
		}
		if missing := bodyLacks(rec.Body.String(), "the dataset name is 3145728 characters long; the limit is 2000"); len(missing) > 0 {
			t.Errorf("the refusal lacks %q", missing)
		}
		if rec.Body.Len() > 64<<10 {
			t.Errorf("the refusal is %d bytes: the name was sent back", rec.Body.Len())
		}
		var n int64
		env.db.Gorm.Raw("SELECT COUNT(*) FROM pending_uploads").Scan(&n)
		if n != 0 {
			t.Errorf("%d pending uploads kept", n)
		}
		// A file of many distinct keys is refused at upload.
		var many strings.Builder
		for i := range 1000 {
			fmt.Fprintf(&many, "{\"id\":%d,\"k%d\":\"v\"}\n", i, i)
		}
		rec = env.upload("keys.jsonl", many.String(), "")
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "more than 500 different columns") {
			t.Errorf("a file of 1000 columns = %d", rec.Code)
		}
	})
}

// TestMappingPageStaysSmall: a 2.3 MB upload of long cells makes a mapping
// page of a bounded size that says it previews only the first rows, cut.
func TestMappingPageStaysSmall(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var file bytes.Buffer
		cols := 30
		for c := range cols {
			if c > 0 {
				file.WriteByte(',')
			}
			fmt.Fprintf(&file, "column_%d", c)
		}
		file.WriteByte('\n')
		cell := strings.Repeat("w", 2000)
		for r := 0; file.Len() < 2300000; r++ {
			for c := range cols {
				if c > 0 {
					file.WriteByte(',')
				}
				fmt.Fprintf(&file, "%d%s", r, cell)
			}
			file.WriteByte('\n')
		}
		token := env.uploadToken("long.csv", file.String())
		rec := env.get(env.mapPath() + "?token=" + token)
		if rec.Code != http.StatusOK {
			t.Fatalf("mapping page = %d", rec.Code)
		}
		if rec.Body.Len() > 200<<10 {
			t.Errorf("the mapping page of a %d-byte upload is %d bytes", file.Len(), rec.Body.Len())
		}
		if missing := bodyLacks(rec.Body.String(), "The first 10 of", "cut at 80 characters"); len(missing) > 0 {
			t.Errorf("the mapping page lacks %q", missing)
		}
	})
}

// TestNonUploadBodiesAreBounded: a multipart post to a route that is not an
// upload is cut at the form limit too, naming the field.
func TestNonUploadBodiesAreBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("name", strings.Repeat("z", 2<<20))
		mw.Close()
		rec := env.do(http.MethodPost, "/projects", &body, mw.FormDataContentType())
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "“name”") {
			t.Errorf("multipart 2 MiB name = %d: %.300s", rec.Code, rec.Body)
		}
	})
}

// TestLaunchRefusedAtRunLimit: with the workspace at its limit of runs at
// once, a launch and a launch of all methods are refused on the form with
// the reason, and nothing is created.
func TestLaunchRefusedAtRunLimit(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		env.db.MaxActiveRunsPerWorkspace = 1
		// A queued run with no job: it stays queued.
		blocker := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, Name: "blocker", Method: "batcheval"}
		if err := env.db.CreateRun(ctx, &blocker, nil); err != nil {
			t.Fatal(err)
		}
		before, _ := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		for _, path := range []string{fmt.Sprintf("/projects/%d/runs", env.project.ID), fmt.Sprintf("/projects/%d/experiments", env.project.ID)} {
			rec := env.postForm(path, d.launchForm("2", "5"))
			if rec.Code != http.StatusConflict {
				t.Errorf("POST %s = %d, want 409", path, rec.Code)
			}
			if missing := bodyLacks(rec.Body.String(), "Not launched", "BATCHEVAL_MAX_RUNS_PER_WORKSPACE"); len(missing) > 0 {
				t.Errorf("POST %s: the form lacks %q", path, missing)
			}
		}
		after, _ := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		if len(after) != len(before) {
			t.Errorf("runs %d -> %d", len(before), len(after))
		}
		if es, _ := env.db.ListExperiments(ctx, env.ws.ID, env.project.ID); len(es) != 0 {
			t.Errorf("%d experiments created", len(es))
		}
	})
}

// TestUploadRoutesSkipTheFormLimit: both ways of uploading a dataset (the
// browser's step and the API's) take files past the 1 MiB form limit, as
// the routes are registered; every other route keeps it. (QA: the API's
// upload, POST /api/v1/projects/:id/uploads, refused a 1.5 MiB CSV with
// 413 "the form is larger than 1 MiB": the limit matched a path suffix that
// was not the upload's.)
func TestUploadRoutesSkipTheFormLimit(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var b strings.Builder
		b.WriteString("id,response,rating\n")
		for i := 0; b.Len() < 3<<19; i++ {
			fmt.Fprintf(&b, "s%d,%s,%d\n", i, strings.Repeat("a reply that goes on ", 10), 1+i%5)
		}
		file := func() (*bytes.Buffer, string) {
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, _ := mw.CreateFormFile("file", "big.csv")
			_, _ = fw.Write([]byte(b.String()))
			_ = mw.Close()
			return &buf, mw.FormDataContentType()
		}
		registered := map[string]bool{}
		for _, r := range env.h.routes() {
			registered[r.Method+" "+r.Path] = true
		}
		for _, tc := range []struct {
			route, target string
			want          int
		}{
			{"/api/v1/projects/:id/uploads", fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), http.StatusCreated},
			{"/projects/:id/datasets/upload", fmt.Sprintf("/projects/%d/datasets/upload", env.project.ID), 0},
		} {
			if !registered[http.MethodPost+" "+tc.route] || !uploadRoute(tc.route) {
				t.Errorf("POST %s: registered %v, exempt from the form limit %v", tc.route, registered[http.MethodPost+" "+tc.route], uploadRoute(tc.route))
			}
			body, ctype := file()
			rec := env.do(http.MethodPost, tc.target, body, ctype)
			if rec.Code == http.StatusRequestEntityTooLarge || (tc.want != 0 && rec.Code != tc.want) {
				t.Errorf("POST %s with a %d-byte file = %d: %.300s", tc.target, b.Len(), rec.Code, rec.Body)
			}
		}
		for _, route := range []string{"/api/v1/projects/:id", "/api/v1/projects/:id/datasets", "/projects/:id/datasets/map", "/api/v1/datasets/:id"} {
			if uploadRoute(route) {
				t.Errorf("%s is exempt from the 1 MiB limit", route)
			}
		}
	})
}

// TestVariantsRefusedAtRunLimit: with the workspace at its limit of runs
// at once, "Make a noisy copy and run on it" was refused with a bare
// "Conflict" page after it had stored the noisy copy of the dataset and
// an experiment around the run: each try left another copy in the project.
// Every variant is now refused on the variants form with the reason,
// leaving no dataset, experiment or run behind.
func TestVariantsRefusedAtRunLimit(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		parent := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		if parent.Status != models.RunSucceeded {
			t.Fatalf("parent run %s (%s)", parent.Status, parent.Error)
		}
		env.db.MaxActiveRunsPerWorkspace = 1
		// A queued run with no job: it stays queued.
		blocker := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, Name: "blocker", Method: "batcheval"}
		must(t, env.db.CreateRun(ctx, &blocker, nil))
		datasets, _ := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		runs, _ := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		reword := rewordForm(parent.RubricSnapshot)
		reword.Set("task", "Judge the assistant's next reply in the light of the conversation.")
		base := fmt.Sprintf("/runs/%d", parent.ID)
		for _, tt := range []struct {
			name, path string
			form       url.Values
		}{
			{"noise", "/noise", url.Values{"delete_percent": {"5"}, "replace_percent": {"5"}, "seed": {"1"}}},
			{"reseed", "/reseed", url.Values{"seed": {"2"}}},
			{"reword", "/reword", reword},
		} {
			rec := env.postForm(base+tt.path, tt.form)
			if rec.Code != http.StatusConflict {
				t.Errorf("%s: %d, want 409", tt.name, rec.Code)
			}
			if missing := bodyLacks(rec.Body.String(), "BATCHEVAL_MAX_RUNS_PER_WORKSPACE", `action="`+base+tt.path+`"`); len(missing) > 0 {
				t.Errorf("%s: the variants form lacks %q", tt.name, missing)
			}
		}
		if after, _ := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID); len(after) != len(datasets) {
			t.Errorf("refused variants left datasets: %d -> %d", len(datasets), len(after))
		}
		if after, _ := env.db.ListRuns(ctx, env.ws.ID, env.project.ID); len(after) != len(runs) {
			t.Errorf("refused variants left runs: %d -> %d", len(runs), len(after))
		}
		if es, _ := env.db.ListExperiments(ctx, env.ws.ID, env.project.ID); len(es) != 0 {
			t.Errorf("refused variants left %d experiments", len(es))
		}
	})
}

// TestHeldOutRunsRefusedAtRunLimit: with the workspace at its limit of
// runs at once, accepting an alignment's draft says on its page that the
// held-out runs could not be launched and offers "Launch the held-out
// runs"; that button answered a bare "Conflict" page, away from the
// alignment. It now comes back to the alignment's page with the reason.
func TestHeldOutRunsRefusedAtRunLimit(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		src := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		if src.Status != models.RunSucceeded {
			t.Fatalf("source run %s (%s)", src.Status, src.Error)
		}
		rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"50"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("start: %d", rec.Code)
		}
		page := rec.Header().Get("Location")
		var aID int64
		if _, err := fmt.Sscanf(page, "/alignments/%d", &aID); err != nil {
			t.Fatalf("start went to %q", page)
		}
		a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
		must(t, err)
		env.db.MaxActiveRunsPerWorkspace = 1
		blocker := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, Name: "blocker", Method: "batcheval"}
		must(t, env.db.CreateRun(ctx, &blocker, nil))

		rec = env.postForm(page+"/accept", draftFormValues(a.Draft, "Lively and specific."))
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page {
			t.Fatalf("accept at the limit: %d to %q, want back to %s", rec.Code, rec.Header().Get("Location"), page)
		}
		if msg := flashText(t, rec); !strings.Contains(msg, "BATCHEVAL_MAX_RUNS_PER_WORKSPACE") {
			t.Errorf("accept at the limit says %q, want the limit named", msg)
		}
		rec = env.postForm(page+"/heldout", url.Values{})
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page {
			t.Fatalf("launch the held-out runs at the limit: %d to %q, want back to %s\n%s", rec.Code, rec.Header().Get("Location"), page, rec.Body.String())
		}
		if msg := flashText(t, rec); !strings.Contains(msg, "held-out runs could not be launched") || !strings.Contains(msg, "BATCHEVAL_MAX_RUNS_PER_WORKSPACE") {
			t.Errorf("launch the held-out runs at the limit says %q, want why, with the limit named", msg)
		}
		if a, _ := env.db.FindAlignment(ctx, env.ws.ID, aID); a.BeforeRunID != nil || a.AfterRunID != nil {
			t.Errorf("refused held-out runs recorded: %v %v", a.BeforeRunID, a.AfterRunID)
		}
	})
}
