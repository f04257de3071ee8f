package models

import (
	"context"
	"database/sql"
	"fmt"

	"gorm.io/gorm"
)

// SeededProject is a project stored whole by CreateSeededProject: the
// project (with its SeedKey), its dataset and rows, its rubric, and
// optionally its first run. The ids are filled in when it is stored.
type SeededProject struct {
	Project Project
	Dataset Dataset
	Rows    []DatasetRow
	Rubric  Rubric
	// Judge is the workspace's simulated judge, found or created.
	Judge Judge
	// FirstRun, when set, makes the project's first run from what was
	// stored (its ids are set); the run is stored and Enqueue queues its
	// job, both in the same transaction.
	FirstRun func(s *SeededProject) (Run, error)
	Enqueue  func(ctx context.Context, tx *sql.Tx, r *Run) (int64, error)
	// Run is the first run once stored.
	Run *Run
}

// CreateSeededProject stores a seeded project in one transaction: the
// project first (its SeedKey's unique index decides which of several
// processes starting together seeds it; the others get EConflict), the
// workspace's simulated judge, the dataset, the rubric and the first run
// with its job. A failure or a crash anywhere stores none of it, so the
// next start seeds the project whole rather than finding a part of it.
func (db *DB) CreateSeededProject(ctx context.Context, s *SeededProject) error {
	if s.Project.SeedKey == nil {
		return Errorf(EInvalid, "a seeded project needs a seed key")
	}
	if err := checkDataset(&s.Dataset); err != nil {
		return err
	}
	if len(s.Rows) == 0 {
		return Errorf(EInvalid, "the dataset has no rows")
	}
	if err := checkRubric(&s.Rubric); err != nil {
		return err
	}
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := createProjectTx(tx, &s.Project); err != nil {
			return err
		}
		j, err := ensureSimulatedJudgeTx(tx, s.Project.WorkspaceID)
		if err != nil {
			return fmt.Errorf("seed the simulated judge: %w", err)
		}
		s.Judge = j
		s.Dataset.WorkspaceID, s.Dataset.ProjectID, s.Dataset.RowCount = s.Project.WorkspaceID, s.Project.ID, len(s.Rows)
		if err := createDatasetTx(tx, &s.Dataset, s.Rows); err != nil {
			return err
		}
		s.Rubric.WorkspaceID, s.Rubric.ProjectID = s.Project.WorkspaceID, s.Project.ID
		if err := storeRubricTx(tx, &s.Rubric, "", nil); err != nil {
			return err
		}
		if s.FirstRun == nil {
			return nil
		}
		run, err := s.FirstRun(s)
		if err != nil {
			return err
		}
		if err := checkLength("run name", run.Name, MaxComposedNameLength); err != nil {
			return err
		}
		// Not held to the workspace's run limit: the demo's run is on the
		// simulated judge and costs nothing, and a demo seeded again (after
		// a purge) must not stop the server from starting.
		if err := db.createRunTx(ctx, tx, &run, s.Enqueue, 0); err != nil {
			return err
		}
		s.Run = &run
		return nil
	})
}
