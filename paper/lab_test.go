package paper

import (
	"context"
	"github.com/batcheval/batcheval/internal/shareddata"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dataimport"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/runner"
)

// runDeadline bounds one run: the longest here (CloserLook with n = 20 on
// 125 dialogues) takes seconds; a minute means something is stuck.
const runDeadline = 2 * time.Minute

// sharedDataset returns the path of a shared data set, skipping when the
// data sets are not checked out beside the repository.
func sharedDataset(tb testing.TB, name string) string {
	tb.Helper()
	p, ok := shareddata.Path(name)
	if !ok {
		tb.Skipf("shared data set %s not found (expected at %s): the paper reproductions need it", name, p)
	}
	return p
}

// fedRubric judges a whole FED dialogue on Overall, on the paper's [1, 3].
func fedRubric() evaluator.Rubric {
	return evaluator.Rubric{
		Task:   `a whole conversation between a user and a chatbot (the "System" turns)`,
		Fields: []evaluator.Field{{Column: "context", Label: "Conversation"}},
		Criteria: []evaluator.Criterion{{
			Name:        "Overall",
			Description: "Overall impression of the system as a conversation partner.",
			Lo:          1, Hi: 3,
			Levels:      evaluator.Levels{Low: "a poor partner", Middle: "a fair partner with lapses", High: "an excellent partner"},
			HumanColumn: "scores.Overall",
		}},
	}
}

// topicalChatRubric judges one Topical-Chat response on Overall, on the
// paper's [1, 5].
func topicalChatRubric() evaluator.Rubric {
	return evaluator.Rubric{
		Task: "a conversation history between two speakers and a candidate next turn for Speaker A",
		Fields: []evaluator.Field{
			{Column: "context", Label: "Conversation history"},
			{Column: "response", Label: "Response"},
		},
		Criteria: []evaluator.Criterion{{
			Name:        "Overall",
			Description: "Overall quality of the response as the next turn of this conversation.",
			Lo:          1, Hi: 5,
			Levels:      evaluator.Levels{Low: "a poor response", Middle: "an acceptable response", High: "an excellent response"},
			HumanColumn: "scores.overall",
		}},
	}
}

// lab is a migrated SQLite database with a project and a working runner.
type lab struct {
	tb      testing.TB
	db      *models.DB
	ws      models.Workspace
	project models.Project
	runner  *runner.Runner
}

// newLab opens a fresh database and starts a runner on it. simulatedURL is
// the simulated judge's base URL, for runs that use it ("" for none).
func newLab(tb testing.TB, simulatedURL string) *lab {
	tb.Helper()
	ctx := context.Background()
	db := dbtest.Open(tb, models.SQLite, func(ctx context.Context, db *models.DB) error { return runner.Migrate(ctx, db, nil) })
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "Paper reproductions"}
	if err := db.CreateProject(ctx, &p); err != nil {
		tb.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		DB: db, Log: slog.New(slog.DiscardHandler), Work: true, MaxRuns: 2, SimulatedURL: simulatedURL,
		Getenv: func(string) string { return "" },
		// Why 20ms: SQLite has no LISTEN/NOTIFY, and a launched run should
		// not wait a second to start.
		PollInterval: 20 * time.Millisecond,
		JudgeTuning:  runner.JudgeTuning{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond},
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	})
	return &lab{tb: tb, db: db, ws: ws, project: p, runner: r}
}

// importDataset imports a shared JSONL data set with the rubric's fields
// and human columns, as `batcheval run` does, and returns it with its rows.
func (l *lab) importDataset(path string, rub evaluator.Rubric) (models.Dataset, []models.DatasetRow) {
	l.tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		l.tb.Fatal(err)
	}
	defer f.Close()
	table, err := dataimport.Parse(f, dataimport.JSONL, dataimport.Options{})
	if err != nil {
		l.tb.Fatalf("%s: %v", path, err)
	}
	m := dataimport.Mapping{IDColumn: "id", Fields: rub.Fields}
	for _, c := range rub.Criteria {
		m.RatingColumns = append(m.RatingColumns, c.HumanColumn)
	}
	rows, err := demo.ImportRows(table, m)
	if err != nil {
		l.tb.Fatalf("%s: %v", path, err)
	}
	ds := models.Dataset{WorkspaceID: l.ws.ID, ProjectID: l.project.ID, Name: filepath.Base(path), SourceFilename: filepath.Base(path),
		Format: string(table.Format), IDColumn: "id", Columns: table.Columns, Fields: rub.Fields, RatingColumns: m.RatingColumns}
	ctx := context.Background()
	if err := l.db.CreateDataset(ctx, &ds, rows); err != nil {
		l.tb.Fatal(err)
	}
	stored, err := l.db.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		l.tb.Fatal(err)
	}
	return ds, stored
}

// launch stores and enqueues the run, waits for it to end and returns its
// final record; a run that does not succeed fails the test.
func (l *lab) launch(run models.Run) models.Run {
	l.tb.Helper()
	ctx := context.Background()
	run.WorkspaceID, run.ProjectID = l.ws.ID, l.project.ID
	if err := l.runner.Launch(ctx, &run); err != nil {
		l.tb.Fatalf("launch %s: %v", run.Name, err)
	}
	deadline := time.Now().Add(runDeadline)
	for {
		got, err := l.db.FindRun(ctx, l.ws.ID, run.ID)
		if err != nil {
			l.tb.Fatal(err)
		}
		if got.Finished() {
			if !got.Completed() {
				l.tb.Fatalf("run %q %s: %s", run.Name, got.Status, got.Error)
			}
			return got
		}
		if time.Now().After(deadline) {
			l.tb.Fatalf("run %q still %s after %s (%d/%d batches)", run.Name, got.Status, runDeadline, got.BatchesDone, got.BatchesTotal)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
