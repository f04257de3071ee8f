package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestConditionalSaveChecksAndWritesAtomically: two writers read the same
// revision of a rubric (a judge) and save conditionally on it. The first
// is held between its check and its write; the second, sent meanwhile,
// must wait for it and then find the object changed (EChanged), never
// check the old state too and let both saves through, the later one
// overwriting the earlier. A check outside the saving transaction, or
// one that does not lock the row, lets both through.
func TestConditionalSaveChecksAndWritesAtomically(t *testing.T) {
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
			Criteria: []evaluator.Criterion{{Name: "Helpful", Lo: 1, Hi: 5}}}
		if err := db.SaveRubric(ctx, &r); err != nil {
			t.Fatal(err)
		}
		j := models.Judge{WorkspaceID: ws.ID, Name: "j", BaseURL: "https://judge.example/v1", Model: "m"}
		if err := db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			kind     string
			revision func() string
			save     func(name string, expect models.Expectation) error
			name     func() string
		}{
			{"rubric", func() string {
				got, err := db.FindRubric(ctx, ws.ID, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				return got.Revision()
			}, func(name string, expect models.Expectation) error {
				edit := r
				edit.Name = name
				return db.SaveRubricIf(ctx, &edit, expect)
			}, func() string {
				got, _ := db.FindRubric(ctx, ws.ID, r.ID)
				return got.Name
			}},
			{"judge", func() string {
				got, err := db.FindJudge(ctx, ws.ID, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				return got.Revision()
			}, func(name string, expect models.Expectation) error {
				edit := j
				edit.Name = name
				return db.SaveJudgeIf(ctx, &edit, expect)
			}, func() string {
				got, _ := db.FindJudge(ctx, ws.ID, j.ID)
				return got.Name
			}},
		} {
			read := tc.revision()
			checked, release := make(chan struct{}), make(chan struct{})
			firstDone := make(chan error, 1)
			go func() {
				firstDone <- tc.save("first", func(rev string) bool {
					close(checked)
					<-release // held between the check and the write
					return rev == read
				})
			}()
			<-checked
			secondDone := make(chan error, 1)
			go func() { secondDone <- tc.save("second", func(rev string) bool { return rev == read }) }()
			select {
			case err := <-secondDone:
				// Finished while the first was held: it checked the old
				// state and wrote; the first will now write over it.
				close(release)
				t.Errorf("%s: the second save ended (%v) while the first was between its check and its write", tc.kind, err)
				<-firstDone
				continue
			case <-time.After(300 * time.Millisecond):
			}
			close(release)
			if err := <-firstDone; err != nil {
				t.Fatalf("%s: first save: %v", tc.kind, err)
			}
			if err := <-secondDone; models.ErrorCode(err) != models.EChanged {
				t.Errorf("%s: the second save, expecting the revision both read, = %v, want %s", tc.kind, err, models.EChanged)
			}
			if got := tc.name(); got != "first" {
				t.Errorf("%s: stored name %q, want the first save's", tc.kind, got)
			}
			if now := tc.revision(); now == read {
				t.Errorf("%s: a save kept the revision %s", tc.kind, now)
			}
			// No expectation saves as before; an unmet one writes nothing.
			if err := tc.save("unconditional", nil); err != nil {
				t.Errorf("%s: save without an expectation: %v", tc.kind, err)
			}
			if err := tc.save("stale", func(rev string) bool { return rev == read }); models.ErrorCode(err) != models.EChanged || tc.name() != "unconditional" {
				t.Errorf("%s: a stale save = %v, name now %q", tc.kind, err, tc.name())
			}
		}
	})
}
