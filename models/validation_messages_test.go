package models_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestEmptyFieldMessagesSayWhatToDo: the refusals of an empty name (and
// of a judge's empty base URL or model, a review's criterion, a comparison
// of a run with itself), which the API's error JSON, `batcheval run` and
// the forms show as the model words them, are sentences that name the
// field and say what to do, in the forms' words ("Give the project a
// name"). They were clauses that said only what was wrong ("a project
// needs a name", "a judge needs a base URL and a model name" whichever
// of the two was empty). Nothing is stored. On SQLite and PostgreSQL.
func TestEmptyFieldMessagesSayWhatToDo(t *testing.T) {
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
		row := []models.DatasetRow{{ExternalID: "a", Data: map[string]string{"text": "hi"}, Ratings: map[string]*float64{}}}
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"text"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		if err := db.CreateDataset(ctx, &ds, row); err != nil {
			t.Fatal(err)
		}
		run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, Name: "r"}
		if err := db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		crit := []evaluator.Criterion{{Name: "Q", Description: "d", Lo: 1, Hi: 5}}
		score := 3.0
		for _, tc := range []struct {
			name string
			save func() error
			want string
		}{
			{"project", func() error { return db.CreateProject(ctx, &models.Project{WorkspaceID: ws.ID, Name: "  "}) },
				"Give the project a name: its name is empty."},
			{"dataset", func() error {
				return db.CreateDataset(ctx, &models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: " ", Columns: []string{"text"}}, row)
			}, "Give the dataset a name: its name is empty."},
			{"rubric", func() error {
				return db.SaveRubric(ctx, &models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Task: "t", Criteria: crit})
			}, "Give the rubric a name: its name is empty."},
			{"judge name", func() error {
				return db.SaveJudge(ctx, &models.Judge{WorkspaceID: ws.ID, BaseURL: "http://127.0.0.1:9/v1", Model: "m"})
			}, "Give the judge a name: its name is empty."},
			{"judge base URL", func() error {
				return db.SaveJudge(ctx, &models.Judge{WorkspaceID: ws.ID, Name: "j", Model: "m"})
			}, "Give the judge a base URL (e.g. https://api.openai.com/v1): its base URL is empty."},
			{"judge model", func() error {
				return db.SaveJudge(ctx, &models.Judge{WorkspaceID: ws.ID, Name: "j", BaseURL: "http://127.0.0.1:9/v1", Model: " "})
			}, "Give the judge a model name (for Azure, the deployment name): its model is empty."},
			{"experiment", func() error {
				return db.CreateExperiment(ctx, &models.Experiment{WorkspaceID: ws.ID, ProjectID: p.ID, Name: ""})
			}, "Give the experiment a name: its name is empty."},
			{"rename", func() error { _, err := db.Rename(ctx, ws.ID, models.KindProject, p.ID, " "); return err },
				"Give the project a name: its name is empty."},
			{"review criterion", func() error {
				return models.ReviewRating{Reviewer: "Ann", Lo: 1, Hi: 5, Score: &score}.Validate()
			}, "Name the criterion the review is for: its criterion is empty."},
			{"comparison of a run with itself", func() error {
				_, _, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: ws.ID, Kind: models.ShareCompare, RunID: run.ID, OtherRunID: run.ID, Label: "l"})
				return err
			}, fmt.Sprintf("Choose two different runs to compare: both are run %d.", run.ID)},
			{"share link expired at once", func() error {
				_, _, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: ws.ID, Kind: models.ShareRun, RunID: run.ID, Label: "l", TTL: -time.Hour})
				return err
			}, "Choose an expiry in the future: the one given has already passed."},
			{"API token expired at once", func() error {
				_, _, err := db.CreateExpiringAPIToken(ctx, ws.ID, 1, "ci", -time.Hour)
				return err
			}, "Choose an expiry in the future: the one given has already passed."},
			// Each limit by the judge form's label (it was "judge limits
			// cannot be negative (0 means no limit)", whichever).
			{"negative requests per minute", func() error { return models.CheckJudgeLimits(models.JudgeLimits{RequestsPerMinute: -1}) },
				"“Requests per minute” cannot be negative: give a positive number, or write 0 or leave it empty for no limit."},
			{"negative slow threshold", func() error { return models.CheckJudgeLimits(models.JudgeLimits{MaxConcurrency: 4, SlowMS: -500}) },
				"“Slow above” cannot be negative: give a positive number, or leave it empty (or 0) to turn it off."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.save()
				if models.ErrorCode(err) != models.EInvalid {
					t.Fatalf("saved or refused otherwise: %v", err)
				}
				msg := models.ErrorMessage(err)
				if msg != tc.want {
					t.Errorf("message %q\n          want %q", msg, tc.want)
				}
				// A sentence: a capital first, a full stop last, and a
				// colon between the thing to do and the field it names.
				first := []rune(strings.TrimLeft(msg, "“\""))[0]
				if !unicode.IsUpper(first) || !strings.HasSuffix(msg, ".") || !strings.Contains(msg, ": ") {
					t.Errorf("message %q is not a sentence saying what to do, then what is wrong", msg)
				}
			})
		}
		ps, err := db.ListProjects(ctx, ws.ID, models.WithArchived())
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Name != "p" {
			t.Errorf("projects after the refusals: %+v, want only %q, unrenamed", ps, "p")
		}
	})
}
