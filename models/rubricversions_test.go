package models_test

import (
	"context"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

func TestRubricEditsAreKeptAsVersions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "p"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		r := models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "r", Task: "a reply",
			Criteria: []evaluator.Criterion{{Name: "Helpful", Lo: 1, Hi: 5, Levels: evaluator.Levels{Low: "useless"}}}}
		if err := db.SaveRubric(ctx, &r); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name        string
			edit        func(r *models.Rubric)
			note        string
			wantVersion int
		}{
			{"rename only keeps the version", func(r *models.Rubric) { r.Name = "renamed" }, "", 1},
			{"new level text is version 2", func(r *models.Rubric) { r.Criteria[0].Levels.Low = "no help at all" }, "", 2},
			{"examples are version 3", func(r *models.Rubric) {
				r.Criteria[0].Examples = []evaluator.Example{{SampleID: "s4", Fields: []evaluator.Text{{Label: "Reply", Value: "hi"}}, Score: 2}}
			}, "accepted from alignment 1", 3},
			{"saving the same content again keeps version 3", func(r *models.Rubric) {}, "", 3},
		}
		for _, s := range steps {
			s.edit(&r)
			if err := db.SaveRubricVersion(ctx, &r, s.note); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			got, err := db.FindRubric(ctx, ws.ID, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != s.wantVersion || r.Version != s.wantVersion {
				t.Errorf("%s: stored version %d, returned %d, want %d", s.name, got.Version, r.Version, s.wantVersion)
			}
		}
		vs, err := db.ListRubricVersions(ctx, ws.ID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 3 || vs[0].Version != 3 || vs[2].Version != 1 {
			t.Fatalf("versions = %+v, want 3, 2, 1", vs)
		}
		want := []struct {
			low      string
			examples int
			note     string
		}{{"no help at all", 1, "accepted from alignment 1"}, {"no help at all", 0, models.VersionNoteEdited}, {"useless", 0, models.VersionNoteCreated}}
		for i, w := range want {
			c := vs[i].Criteria[0]
			if c.Levels.Low != w.low || len(c.Examples) != w.examples || vs[i].Note != w.note {
				t.Errorf("version %d = low %q, %d examples, note %q; want %q, %d, %q", vs[i].Version, c.Levels.Low, len(c.Examples), vs[i].Note, w.low, w.examples, w.note)
			}
		}
		old, err := db.FindRubricVersion(ctx, ws.ID, r.ID, 1)
		if err != nil || old.Criteria[0].Levels.Low != "useless" {
			t.Errorf("version 1 = %+v, %v; want the original level text", old, err)
		}
		if _, err := db.FindRubricVersion(ctx, ws.ID, r.ID, 9); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("version 9: err %v, want not found", err)
		}
	})
}
