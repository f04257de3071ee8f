package demo

import (
	"bytes"
	"context"
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
	out := make([]models.DatasetRow, len(rows))
	for i, r := range rows {
		out[i] = models.DatasetRow{Position: r.Position, ExternalID: r.ExternalID, Data: r.Data, Ratings: r.Ratings}
	}
	return out, nil
}

// Seed creates the demo project (dataset, rubric, simulated judge) in the
// workspace unless a project of that name exists. It returns the project.
func Seed(ctx context.Context, db *models.DB, ws models.Workspace) (models.Project, error) {
	p, _, err := SeedProject(ctx, db, ws)
	return p, err
}

// FirstRunName names the run seeded with the demo project.
const FirstRunName = "Demo run (simulated judge)"

// Launcher stores and queues a run (runner.Runner does).
type Launcher interface {
	Launch(ctx context.Context, run *models.Run) error
}

// LaunchFirstRun queues the demo's first run: BatchEval with its default
// settings on the demo dataset and rubric, judged by the built-in simulated
// judge (so it costs nothing and is marked simulated on every page). The
// real runner judges it like any run, in a few seconds, so a fresh
// installation opens on a finished result. Call it once, when SeedProject
// has just created the project.
func LaunchFirstRun(ctx context.Context, db *models.DB, ws models.Workspace, p models.Project, l Launcher) (models.Run, error) {
	ds, err := db.ListDatasets(ctx, ws.ID, p.ID)
	if err != nil || len(ds) == 0 {
		return models.Run{}, fmt.Errorf("demo run: the demo dataset is missing (%v)", err)
	}
	rs, err := db.ListRubrics(ctx, ws.ID, p.ID)
	if err != nil || len(rs) == 0 {
		return models.Run{}, fmt.Errorf("demo run: the demo rubric is missing (%v)", err)
	}
	j, err := db.EnsureSimulatedJudge(ctx, ws.ID)
	if err != nil {
		return models.Run{}, fmt.Errorf("demo run: %w", err)
	}
	d, r := ds[len(ds)-1], rs[len(rs)-1] // the seeded ones: the oldest
	snap := r.Evaluator()
	if len(snap.Fields) == 0 {
		snap.Fields = d.Fields
	}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: d.ID, RubricID: &r.ID, RubricVersion: &r.Version, JudgeID: &j.ID,
		Name: FirstRunName, Method: models.MethodBatchEval, Settings: evaluator.DefaultSettings(),
		RubricSnapshot: snap, JudgeSnapshot: j.Snapshot(), Simulated: true}
	if err := l.Launch(ctx, &run); err != nil {
		return run, fmt.Errorf("demo run: %w", err)
	}
	return run, nil
}

// SeedKey marks the seeded demo project (models.Project.SeedKey).
const SeedKey = "demo"

// SeedProject is Seed that also says whether it created the project now
// (false when it existed). It is safe when several processes start on a
// fresh database together: the project is created first, under SeedKey's
// unique index, and only the process whose creation won goes on to add
// the simulated judge, the dataset and the rubric; the others return the
// winner's project.
//
// The demo is seeded once per workspace: an archived or trashed demo
// project is not seeded again (it used to come back, as a second one,
// after being archived); one purged from the trash is.
func SeedProject(ctx context.Context, db *models.DB, ws models.Workspace) (models.Project, bool, error) {
	p, err := db.FindSeededProject(ctx, ws.ID, SeedKey)
	if models.ErrorCode(err) != models.ENotFound {
		return p, false, err
	}
	p, err = seedProject(ctx, db, ws)
	if models.ErrorCode(err) == models.EConflict {
		// Another process created it between the look and the creation.
		p, err = db.FindSeededProject(ctx, ws.ID, SeedKey)
		return p, false, err
	}
	return p, err == nil, err
}

func seedProject(ctx context.Context, db *models.DB, ws models.Workspace) (models.Project, error) {
	key := SeedKey
	p := models.Project{WorkspaceID: ws.ID, Name: ProjectName, SeedKey: &key,
		Description: "Thirty made-up dialogue responses with made-up human ratings, to try the whole flow offline with the simulated judge."}
	// First: the project's unique key decides which process seeds.
	if err := db.CreateProject(ctx, &p); err != nil {
		return p, err
	}
	if _, err := db.EnsureSimulatedJudge(ctx, ws.ID); err != nil {
		return p, fmt.Errorf("seed simulated judge: %w", err)
	}
	rub, err := Rubric()
	if err != nil {
		return p, err
	}
	t, err := dataimport.Parse(bytes.NewReader(Dataset()), dataimport.JSONL, dataimport.Options{})
	if err != nil {
		return p, fmt.Errorf("demo dataset: %w", err)
	}
	m := dataimport.Mapping{IDColumn: "id", Fields: rub.Fields, RatingColumns: []string{"engaging", "coherent", "overall"}}
	rows, err := ImportRows(t, m)
	if err != nil {
		return p, fmt.Errorf("demo dataset: %w", err)
	}
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "Demo dialogues", SourceFilename: DatasetFilename,
		Format: string(t.Format), IDColumn: "id", Columns: t.Columns, Fields: m.Fields, RatingColumns: m.RatingColumns}
	if err := db.CreateDataset(ctx, &ds, rows); err != nil {
		return p, err
	}
	r := models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "Engaging and coherent", Task: rub.Task, Fields: nil, Criteria: rub.Criteria}
	if err := db.SaveRubric(ctx, &r); err != nil {
		return p, err
	}
	return p, nil
}
