package handlers

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestShareChoicesShowTheirIDFirst: the new-link lists named a run
// "<name> (run 7)"; a long name pushed "(run 7)" out of the closed list at
// 1280 px, and runs often share a name, so which run was chosen could not
// be seen. Each option now reads "run 7 · <name>", the name cut with an
// ellipsis, and its title holds the whole name.
func TestShareChoicesShowTheirIDFirst(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	d := env.ratedDataset("Long names", 3)
	long := "A very long run name <b>that</b> " + strings.Repeat("goes on and on ", 20)
	var runs []models.Run
	for _, name := range []string{long, "Short"} {
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name, Method: models.MethodBatchEval,
			Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
				Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
		must(t, env.db.CreateRun(ctx, &run, nil))
		runs = append(runs, run)
	}
	exp := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Experiment " + long}
	must(t, env.db.CreateExperiment(ctx, &exp))

	body := env.get("/shares").Body.String()
	option := func(selectID string, id int64) (text, title string) {
		t.Helper()
		sel := regexp.MustCompile(`(?s)<select id="` + selectID + `".*?</select>`).FindString(body)
		m := regexp.MustCompile(fmt.Sprintf(`<option value="%d"[^>]*?(?: title="([^"]*)")?>([^<]*)</option>`, id)).FindStringSubmatch(sel)
		if m == nil {
			t.Fatalf("%s offers no option %d: %.500s", selectID, id, sel)
		}
		return html.UnescapeString(m[2]), html.UnescapeString(m[1])
	}
	for _, tc := range []struct {
		selectID string
		id       int64
		prefix   string
		name     string
	}{
		{"share-run", runs[0].ID, fmt.Sprintf("run %d · ", runs[0].ID), long},
		{"share-a", runs[0].ID, fmt.Sprintf("run %d · ", runs[0].ID), long},
		{"share-b", runs[1].ID, fmt.Sprintf("run %d · ", runs[1].ID), "Short"},
		{"share-exp", exp.ID, fmt.Sprintf("experiment %d · ", exp.ID), exp.Name},
	} {
		text, title := option(tc.selectID, tc.id)
		if !strings.HasPrefix(text, tc.prefix) {
			t.Errorf("%s: option %q does not start with %q", tc.selectID, text, tc.prefix)
			continue
		}
		name := strings.TrimPrefix(text, tc.prefix)
		if n := utf8.RuneCountInString(name); n > 60 {
			t.Errorf("%s: the option shows %d characters of the name, want at most 60", tc.selectID, n)
		}
		if len(tc.name) > 60 && !strings.HasSuffix(name, models.Ellipsis) {
			t.Errorf("%s: a cut name %q does not end with an ellipsis", tc.selectID, name)
		}
		if !strings.HasPrefix(tc.name, strings.TrimSuffix(name, models.Ellipsis)) {
			t.Errorf("%s: option shows %q, not the start of %q", tc.selectID, name, tc.name)
		}
		if title != tc.name {
			t.Errorf("%s: the option's title is %q, want the whole name", tc.selectID, title)
		}
	}
	if strings.Contains(body, "<b>that</b>") {
		t.Errorf("a run's name is written unescaped")
	}
}
