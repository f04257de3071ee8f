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
)

// TestShareFormOffersBoundedRuns: the share links page offered every run of
// the workspace in its forms' lists (2,000 runs, 2,000 options in each of
// three lists). It offers the newest shareRunChoices, finds an older run by
// its name or id, keeps one preselected from the run's own page, and still
// makes a link to a run beyond them.
func TestShareFormOffersBoundedRuns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Many runs", 3)
		create := func(name string) models.Run {
			run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name, Method: models.MethodBatchEval,
				Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
					Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
			if err := env.db.CreateRun(ctx, &run, nil); err != nil {
				t.Fatal(err)
			}
			return run
		}
		oldest := create("The oldest <b>run</b>")
		sure := create("100% sure")
		accented := create("Évaluation à part")
		for i := range shareRunChoices + 5 {
			create(fmt.Sprintf("Run %02d", i))
		}
		option := func(id int64) string { return fmt.Sprintf(`<option value="%d"`, id) }
		runForm := regexp.MustCompile(`(?s)data-testid="share-run-form".*?</form>`)
		options := regexp.MustCompile(`<option value="(\d+)"( selected)?`)
		offered := func(path string) (form string, ids map[int64]bool, selected int64) {
			t.Helper()
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			form = runForm.FindString(rec.Body.String())
			ids = map[int64]bool{}
			for _, m := range options.FindAllStringSubmatch(form, -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				ids[id] = true
				if m[2] != "" {
					selected = id
				}
			}
			return form, ids, selected
		}

		for _, tc := range []struct {
			name, path string
			want, not  []int64
			selected   int64
		}{
			{"the newest", "/shares", nil, []int64{oldest.ID, sure.ID}, 0},
			{"found by name, any case", "/shares?q=" + url.QueryEscape("OLDEST <b>"), []int64{oldest.ID}, []int64{sure.ID}, 0},
			{"found by id", "/shares?q=" + strconv.FormatInt(oldest.ID, 10), []int64{oldest.ID}, nil, 0},
			// The lists name a run "run 1 · The oldest...", the links list
			// "The oldest <b>run</b> (run 1)": the id as written there finds
			// it too.
			{"found by id as the lists write it", "/shares?q=" + url.QueryEscape(fmt.Sprintf(" Run %d ", oldest.ID)), []int64{oldest.ID}, nil, 0},
			{"found by id as the lists write it, in brackets", "/shares?q=" + url.QueryEscape(fmt.Sprintf("(run %d)", oldest.ID)), []int64{oldest.ID}, nil, 0},
			{"found by a whole choice pasted", "/shares?q=" + url.QueryEscape(fmt.Sprintf("run %d · The oldest <b>run</b>", oldest.ID)), []int64{oldest.ID}, nil, 0},
			{"a wildcard is a character", "/shares?q=" + url.QueryEscape("%"), []int64{sure.ID}, []int64{oldest.ID}, 0},
			{"found by a name beyond ASCII, as typed", "/shares?q=" + url.QueryEscape("Évaluation"), []int64{accented.ID}, []int64{oldest.ID}, 0},
			{"found by a name beyond ASCII, in any case and without its accents", "/shares?q=" + url.QueryEscape("EVALUATION A"), []int64{accented.ID}, []int64{oldest.ID}, 0},
			{"preselected from its page", fmt.Sprintf("/shares?kind=run&run=%d", oldest.ID), []int64{oldest.ID}, nil, oldest.ID},
		} {
			form, ids, selected := offered(tc.path)
			if form == "" {
				t.Errorf("%s: no run form", tc.name)
				continue
			}
			if len(ids) > shareRunChoices+1 {
				t.Errorf("%s: the run form offers %d runs, want at most %d (and a preselected one)", tc.name, len(ids), shareRunChoices+1)
			}
			for _, id := range tc.want {
				if !ids[id] {
					t.Errorf("%s: run %d is not offered", tc.name, id)
				}
			}
			for _, id := range tc.not {
				if ids[id] {
					t.Errorf("%s: run %d is offered", tc.name, id)
				}
			}
			if selected != tc.selected {
				t.Errorf("%s: run %d is selected, want %d", tc.name, selected, tc.selected)
			}
		}
		if _, ids, _ := offered("/shares"); len(ids) != shareRunChoices {
			t.Errorf("the newest: %d runs offered, want %d", len(ids), shareRunChoices)
		}
		page := env.get("/shares").Body.String()
		if !strings.Contains(page, `data-testid="share-run-search"`) || strings.Contains(page, option(oldest.ID)) {
			t.Errorf("the page offers no search for the runs beyond the newest, or still lists the oldest run")
		}
		if body := env.get("/shares?q=" + url.QueryEscape("<b>")).Body.String(); strings.Contains(body, "<b>run</b>") {
			t.Errorf("a run's name or the search is written unescaped")
		}

		// The run beyond the newest gets a link.
		rec := env.postForm("/shares", url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(oldest.ID, 10)}, "expires": {"7d"}})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="share-url"`) {
			t.Fatalf("sharing the oldest run: %d %.300s", rec.Code, rec.Body)
		}
		links, err := env.db.ListShareLinks(ctx, env.ws.ID)
		if err != nil || len(links) != 1 || links[0].RunID == nil || *links[0].RunID != oldest.ID {
			t.Fatalf("links after sharing run %d: %+v (%v)", oldest.ID, links, err)
		}
		if !strings.Contains(env.get("/shares").Body.String(), fmt.Sprintf("Run The oldest &lt;b&gt;run&lt;/b&gt; (run %d)", oldest.ID)) {
			t.Errorf("the link list does not name the oldest run")
		}
	})
}
