package handlers

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestShareCompareFormStartsOnTwoRuns: the comparison form's two lists
// started on the same run (the newest, or the run whose "Share…" opened
// the page), so pressing "Share this comparison" as the form opened was
// refused with "a comparison needs two different runs". The second list
// starts on another run, unless one is asked for.
func TestShareCompareFormStartsOnTwoRuns(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	d := env.ratedDataset("Two runs", 3)
	var ids []int64
	for i := range 3 {
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: fmt.Sprintf("Run %d", i), Method: models.MethodBatchEval,
			Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
				Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
		if err := env.db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	form := regexp.MustCompile(`(?s)data-testid="share-compare-form".*?</form>`)
	// starts is the run a list opens on: the selected option, else the first.
	starts := func(body, id string) string {
		sel := regexp.MustCompile(`(?s)<select id="` + id + `"[^>]*>(.*?)</select>`).FindStringSubmatch(body)
		if sel == nil {
			return ""
		}
		if m := regexp.MustCompile(`<option value="(\d+)" selected`).FindStringSubmatch(sel[1]); m != nil {
			return m[1]
		}
		if m := regexp.MustCompile(`<option value="(\d+)"`).FindStringSubmatch(sel[1]); m != nil {
			return m[1]
		}
		return ""
	}
	for _, tc := range []struct {
		name, path   string
		first, other int64
	}{
		{"the page as it opens", "/shares", ids[2], ids[1]},
		{"from a run's Share…", fmt.Sprintf("/shares?kind=run&run=%d", ids[0]), ids[0], ids[2]},
		{"a second run asked for", fmt.Sprintf("/shares?kind=compare&run=%d&other=%d", ids[1], ids[0]), ids[1], ids[0]},
	} {
		f := form.FindString(env.get(tc.path).Body.String())
		if f == "" {
			t.Errorf("%s: no comparison form", tc.name)
			continue
		}
		a, b := starts(f, "share-a"), starts(f, "share-b")
		if a != fmt.Sprint(tc.first) || b != fmt.Sprint(tc.other) {
			t.Errorf("%s: the comparison form starts on runs %s and %s, want %d and %d", tc.name, a, b, tc.first, tc.other)
		}
	}
}
