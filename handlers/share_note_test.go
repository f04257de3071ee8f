package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestShareNoteRefusalSaysNote: the forms call a link's label its "Note
// (optional)", but a note over the limit was refused as "the label is 201
// characters long", a field the page does not have. The refusal names the
// note, says the limit and what to do, and stores no link; the API, whose
// field is "label", keeps its word.
func TestShareNoteRefusalSaysNote(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	d := env.ratedDataset("Noted", 3)
	run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Noted run", Method: models.MethodBatchEval,
		Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
			Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
	must(t, env.db.CreateRun(ctx, &run, nil))
	for _, tc := range []struct {
		name, note string
		want       []string
	}{
		{"too long", strings.Repeat("é", models.MaxShareLabel+1), []string{"The note is 201 characters long", "at most 200", "shorten it"}},
		{"two lines", "for the\nmanager", []string{"the note holds a line break", "write it on one line"}},
	} {
		rec := env.postForm("/shares", url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}, "label": {tc.note}})
		body := rec.Body.String()
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", tc.name, rec.Code)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the refusal does not say %q", tc.name, w)
			}
		}
		if strings.Contains(body, "the label") {
			t.Errorf("%s: the refusal names a label, which the form calls a note", tc.name)
		}
	}
	if links, _ := env.db.ListShareLinks(ctx, env.ws.ID); len(links) != 0 {
		t.Errorf("%d links stored from refused notes", len(links))
	}
	// The API names its own field.
	rec := env.do(http.MethodPost, "/api/v1/shares", strings.NewReader(`{"kind":"run","run_id":`+strconv.FormatInt(run.ID, 10)+`,"label":"`+strings.Repeat("x", 201)+`"}`), "application/json")
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "the label is 201 characters long") {
		t.Errorf("the API's refusal of a long label: %d %s", rec.Code, rec.Body)
	}
}
