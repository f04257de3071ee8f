package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestShareExperimentsAndLinksAreBounded: the share links page offered
// every experiment of the workspace in its experiment form and listed
// every link in its table (2,000 experiments and 2,000 links: a page that
// grew without end). The form offers the newest shareExperimentChoices, a
// search finds an older one by name (in any case, without its accents) or
// id, one preselected from its page stays offered; the table shows
// shareLinksPerPage links a page, says which of how many, and pages on.
func TestShareExperimentsAndLinksAreBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Many experiments", 3)
		newExp := func(name string) models.Experiment {
			e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name}
			must(t, env.db.CreateExperiment(ctx, &e))
			return e
		}
		oldest := newExp("Évaluation <i>d'équipe</i>")
		for i := range shareExperimentChoices + 5 {
			newExp(fmt.Sprintf("Experiment %02d", i))
		}
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Shared run", Method: models.MethodBatchEval,
			Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
				Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
		must(t, env.db.CreateRun(ctx, &run, nil))
		// The oldest link opens the oldest experiment; the newer ones the run.
		if _, _, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareExperiment, ExperimentID: oldest.ID, Label: "first"}); err != nil {
			t.Fatal(err)
		}
		const links = shareLinksPerPage + 5
		for i := 1; i < links; i++ {
			if _, _, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID, Label: fmt.Sprintf("link %d", i)}); err != nil {
				t.Fatal(err)
			}
		}

		expForm := regexp.MustCompile(`(?s)data-testid="share-experiment-form".*?</form>`)
		options := regexp.MustCompile(`<option value="(\d+)"( selected)?`)
		view := func(path string) (body string, offered map[int64]bool, selected int64) {
			t.Helper()
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			body = rec.Body.String()
			offered = map[int64]bool{}
			for _, m := range options.FindAllStringSubmatch(expForm.FindString(body), -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				offered[id] = true
				if m[2] != "" {
					selected = id
				}
			}
			return body, offered, selected
		}

		for _, tc := range []struct {
			name, path string
			offered    bool // the oldest experiment is offered
			selected   bool
			scope      string
		}{
			{"the newest", "/shares", false, false, "The list offers the 50 newest experiments."},
			{"found by name, any case, no accents", "/shares?eq=" + url.QueryEscape("EVALUATION <I>D'EQUIPE"), true, false, "whose name or id matches"},
			{"found by id", "/shares?eq=" + url.QueryEscape(fmt.Sprintf("experiment %d", oldest.ID)), true, false, "whose name or id matches"},
			{"preselected from its page", fmt.Sprintf("/shares?kind=experiment&experiment=%d", oldest.ID), true, true, "The list offers the 50 newest experiments."},
			{"nothing matches", "/shares?eq=nothing", false, false, "No experiment's name or id matches “nothing”."},
		} {
			body, offered, selected := view(tc.path)
			if n := len(offered); n > shareExperimentChoices+1 {
				t.Errorf("%s: %d experiments offered, want at most %d", tc.name, n, shareExperimentChoices+1)
			}
			if offered[oldest.ID] != tc.offered {
				t.Errorf("%s: the oldest experiment offered %v, want %v", tc.name, offered[oldest.ID], tc.offered)
			}
			if (selected == oldest.ID) != tc.selected {
				t.Errorf("%s: experiment %d selected", tc.name, selected)
			}
			if !strings.Contains(body, tc.scope) {
				t.Errorf("%s: the page does not say %q", tc.name, tc.scope)
			}
			if strings.Contains(body, "<i>d'équipe</i>") || strings.Contains(body, "<I>D'EQUIPE") {
				t.Errorf("%s: a name or the search is written unescaped", tc.name)
			}
		}
		if _, offered, _ := view("/shares"); len(offered) != shareExperimentChoices {
			t.Errorf("the newest: %d experiments offered, want %d", len(offered), shareExperimentChoices)
		}

		rows := regexp.MustCompile(`data-testid="share-link-row"`)
		for _, tc := range []struct {
			name, path string
			rows       int
			count      string
			first      bool // the row of the oldest link is there
			prev, next string
		}{
			{"first page", "/shares?q=run", shareLinksPerPage, "Showing 1–50 of 55 links, newest first.", false, "", "/shares?page=2&amp;q=run"},
			{"second page", "/shares?page=2&q=run", 5, "Showing 51–55 of 55 links, newest first.", true, "/shares?q=run", ""},
			{"past the last", "/shares?page=99", 5, "Showing 51–55 of 55 links, newest first.", true, "/shares", ""},
		} {
			body, _, _ := view(tc.path)
			if n := len(rows.FindAllString(body, -1)); n != tc.rows {
				t.Errorf("%s: %d links shown, want %d", tc.name, n, tc.rows)
			}
			if !strings.Contains(body, tc.count) {
				t.Errorf("%s: the page does not say %q", tc.name, tc.count)
			}
			oldestRow := fmt.Sprintf("Experiment Évaluation &lt;i&gt;d&#39;équipe&lt;/i&gt; (experiment %d)", oldest.ID)
			if strings.Contains(body, oldestRow) != tc.first {
				t.Errorf("%s: the oldest link's row (%q) shown %v, want %v", tc.name, oldestRow, !tc.first, tc.first)
			}
			for _, l := range []struct{ rel, href string }{{"prev", tc.prev}, {"next", tc.next}} {
				re := regexp.MustCompile(`<a href="([^"]*)" rel="` + l.rel + `"`)
				m := re.FindStringSubmatch(regexp.MustCompile(`(?s)data-testid="share-links-pager".*?</nav>`).FindString(body))
				switch {
				case l.href == "" && m != nil:
					t.Errorf("%s: a %s link to %s", tc.name, l.rel, m[1])
				case l.href != "" && (m == nil || m[1] != l.href):
					t.Errorf("%s: %s link %v, want %s", tc.name, l.rel, m, l.href)
				}
			}
		}
	})
}

// TestRevokeKeepsThePageOfLinks: revoking a link on the second page of
// links went back to the first, away from the links being looked through.
// A revoke form of a later page sends that page, and the answer goes back
// to it.
func TestRevokeKeepsThePageOfLinks(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	d := env.ratedDataset("Revoked", 3)
	run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Shared run", Method: models.MethodBatchEval,
		Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
			Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
	must(t, env.db.CreateRun(ctx, &run, nil))
	var oldest models.ShareLink
	for i := range shareLinksPerPage + 1 {
		l, _, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			oldest = l
		}
	}
	body := env.get("/shares?page=2").Body.String()
	form := regexp.MustCompile(fmt.Sprintf(`(?s)<form method="post" action="/shares/%d/revoke".*?</form>`, oldest.ID)).FindString(body)
	if !strings.Contains(form, `<input type="hidden" name="page" value="2">`) {
		t.Errorf("the revoke form of page 2 does not send its page: %q", form)
	}
	rec := env.postForm(fmt.Sprintf("/shares/%d/revoke", oldest.ID), url.Values{"page": {"2"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/shares?page=2" {
		t.Errorf("revoking on page 2: %d to %q, want 303 to /shares?page=2", rec.Code, rec.Header().Get("Location"))
	}
	if rec := env.postForm(fmt.Sprintf("/shares/%d/revoke", oldest.ID+1), url.Values{"page": {"/evil"}}); rec.Header().Get("Location") != "/shares" {
		t.Errorf("a page that is no number goes to %q, want /shares", rec.Header().Get("Location"))
	}
}
