package demo

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dataimport"
)

// ProjectName names the seeded demo project.
const ProjectName = "Demo: dialogue responses"

// ImportRows turns a parsed table into rows for storage.
func ImportRows(t *dataimport.Table, m dataimport.Mapping) ([]models.DatasetRow, error) {
	rows, err := t.Apply(m)
	if err != nil {
		return nil, err
	}
	return DatasetRows(rows), nil
}

// DatasetRows are mapped rows as a dataset stores them.
func DatasetRows(rows []dataimport.Row) []models.DatasetRow {
	out := make([]models.DatasetRow, len(rows))
	for i, r := range rows {
		out[i] = models.DatasetRow{Position: r.Position, ExternalID: r.ExternalID, Data: r.Data, Ratings: r.Ratings}
	}
	return out
}

// Seed creates the demo project (dataset, rubric, simulated judge) in the
// workspace unless a project of that name exists, without a first run. It
// returns the project.
func Seed(ctx context.Context, db *models.DB, ws models.Workspace) (models.Project, error) {
	p, _, err := SeedProject(ctx, db, ws, nil)
	return p, err
}

// FirstRunName names the run seeded with the demo project.
const FirstRunName = "Demo run (simulated judge)"

// Launcher prepares and queues runs (runner.Runner does).
type Launcher interface {
	// PrepareRun fills in what a run's method implies before it is stored.
	PrepareRun(run *models.Run) error
	// Enqueue queues a stored run's job in tx, the transaction storing it.
	Enqueue(ctx context.Context, tx *sql.Tx, run *models.Run) (int64, error)
}

// SeedKey marks the seeded demo project (models.Project.SeedKey).
const SeedKey = "demo"

// SeedProject is Seed that also says whether it created the project now
// (false when it existed), and, given a Launcher, queues the demo's first
// run with it: BatchEval with its default settings on the demo dataset and
// rubric, judged by the built-in simulated judge (so it costs nothing and
// is marked simulated on every page). The real runner judges it like any
// run, in a few seconds, so a fresh installation opens on a finished
// result.
//
// Everything is stored in one transaction (models.DB.CreateSeededProject):
// a failure or crash midway leaves no part of the demo, and the next start
// seeds it whole. It is safe when several processes start on a fresh
// database together: the project is created first, under SeedKey's unique
// index, and only the process whose creation won stores the rest; the
// others return the winner's project.
//
// The demo is seeded once per workspace: an archived or trashed demo
// project is not seeded again (it used to come back, as a second one,
// after being archived); one purged from the trash is.
func SeedProject(ctx context.Context, db *models.DB, ws models.Workspace, l Launcher) (models.Project, bool, error) {
	p, err := db.FindSeededProject(ctx, ws.ID, SeedKey)
	if models.ErrorCode(err) != models.ENotFound {
		return p, false, err
	}
	s, err := demoProject(ws, l)
	if err != nil {
		return p, false, err
	}
	err = db.CreateSeededProject(ctx, s)
	if models.ErrorCode(err) == models.EConflict {
		// Another process created it between the look and the creation.
		p, err = db.FindSeededProject(ctx, ws.ID, SeedKey)
		return p, false, err
	}
	if err != nil {
		return models.Project{}, false, err
	}
	return s.Project, true, nil
}

// demoProject is the demo as it is stored: the project, the embedded
// dataset and rubric, and, with a Launcher, the first run.
func demoProject(ws models.Workspace, l Launcher) (*models.SeededProject, error) {
	key := SeedKey
	rub, err := Rubric()
	if err != nil {
		return nil, err
	}
	t, err := dataimport.Parse(bytes.NewReader(Dataset()), dataimport.JSONL, dataimport.Options{})
	if err != nil {
		return nil, fmt.Errorf("demo dataset: %w", err)
	}
	m := dataimport.Mapping{IDColumn: "id", Fields: rub.Fields, RatingColumns: []string{"engaging", "coherent", "overall"}}
	rows, err := ImportRows(t, m)
	if err != nil {
		return nil, fmt.Errorf("demo dataset: %w", err)
	}
	s := &models.SeededProject{
		Project: models.Project{WorkspaceID: ws.ID, Name: ProjectName, SeedKey: &key,
			Description: "Thirty made-up dialogue responses with made-up human ratings, to try the whole flow offline with the simulated judge."},
		Dataset: models.Dataset{Name: "Demo dialogues", SourceFilename: DatasetFilename,
			Format: string(t.Format), IDColumn: "id", Columns: t.Columns, Fields: m.Fields, RatingColumns: m.RatingColumns},
		Rows:   rows,
		Rubric: models.Rubric{Name: "Engaging and coherent", Task: rub.Task, Fields: nil, Criteria: rub.Criteria},
	}
	if l != nil {
		s.FirstRun = func(s *models.SeededProject) (models.Run, error) { return firstRun(s, l) }
		s.Enqueue = l.Enqueue
	}
	return s, nil
}

// firstRun is the demo's first run on what was just stored.
func firstRun(s *models.SeededProject, l Launcher) (models.Run, error) {
	d, r, j := s.Dataset, s.Rubric, s.Judge
	snap := r.Evaluator()
	if len(snap.Fields) == 0 {
		snap.Fields = d.Fields
	}
	run := models.Run{WorkspaceID: d.WorkspaceID, ProjectID: d.ProjectID, DatasetID: d.ID, RubricID: &r.ID, RubricVersion: &r.Version, JudgeID: &j.ID,
		Name: FirstRunName, Method: models.MethodBatchEval, Settings: evaluator.DefaultSettings(),
		RubricSnapshot: snap, JudgeSnapshot: j.Snapshot(), Simulated: true}
	if err := l.PrepareRun(&run); err != nil {
		return run, fmt.Errorf("demo run: %w", err)
	}
	return run, nil
}
