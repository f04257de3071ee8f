package demo

import (
	"bytes"
	"context"
	"fmt"

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
	ps, err := db.ListProjects(ctx, ws.ID)
	if err != nil {
		return models.Project{}, err
	}
	for _, p := range ps {
		if p.Name == ProjectName {
			return p, nil
		}
	}
	if _, err := db.EnsureSimulatedJudge(ctx, ws.ID); err != nil {
		return models.Project{}, fmt.Errorf("seed simulated judge: %w", err)
	}
	rub, err := Rubric()
	if err != nil {
		return models.Project{}, err
	}
	p := models.Project{WorkspaceID: ws.ID, Name: ProjectName,
		Description: "Thirty made-up dialogue responses with made-up human ratings, to try the whole flow offline with the simulated judge."}
	if err := db.CreateProject(ctx, &p); err != nil {
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
