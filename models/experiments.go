package models

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// CreateExperiment stores an experiment (a group of runs to compare), with
// the Idempotency-Key of its launch when ctx carries one (WithLaunchKey).
func (db *DB) CreateExperiment(ctx context.Context, e *Experiment) error {
	if strings.TrimSpace(e.Name) == "" {
		return NameNeeded(KindExperiment)
	}
	if err := checkName("experiment name", e.Name, MaxComposedNameLength); err != nil {
		return err
	}
	k, ok := launchKeyOf(ctx, LaunchKeyExperiment)
	if !ok {
		return db.Gorm.WithContext(ctx).Create(e).Error
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(e).Error; err != nil {
			return err
		}
		k.ExperimentID = &e.ID
		return recordLaunchKey(tx, k)
	})
	if err != nil {
		e.ID = 0 // rolled back: no experiment was made
	}
	return err
}

// FindExperiment finds an experiment in the workspace.
func (db *DB) FindExperiment(ctx context.Context, wsID, id int64) (Experiment, error) {
	var e Experiment
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).First(&e).Error
	return e, notFound(err, "experiment", id)
}

// ListExperiments lists a project's experiments, newest first (active
// ones unless the options say otherwise).
func (db *DB) ListExperiments(ctx context.Context, wsID, projectID int64, opts ...ListOption) ([]Experiment, error) {
	var es []Experiment
	err := db.Reader(ctx).Where("workspace_id = ? AND project_id = ?", wsID, projectID).Scopes(listScope(opts)).Order("id DESC").Find(&es).Error
	return es, err
}

// ExperimentName is an experiment as a list of choices names it.
type ExperimentName struct {
	ID         int64
	Name       string
	ArchivedAt *time.Time
}

// ListExperimentNames returns the id, name and archive date of a
// workspace's experiments that s and opts keep, newest first, whatever
// their project: what the share links' page offers and names its links by.
func (db *DB) ListExperimentNames(ctx context.Context, wsID int64, s NameSearch, opts ...ListOption) ([]ExperimentName, error) {
	out := []ExperimentName{}
	if s.IDs != nil && len(s.IDs) == 0 {
		return out, nil
	}
	q := db.Reader(ctx).Model(&Experiment{}).Where("workspace_id = ?", wsID).Scopes(listScope(opts)).Select("id", "name", "archived_at")
	if err := s.where(q, KindExperiment).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("list the names of workspace %d's experiments: %w", wsID, err)
	}
	return out, nil
}

// ListExperimentRuns lists the runs of an experiment in launch order,
// archived ones included (they are still part of it), trashed ones not.
func (db *DB) ListExperimentRuns(ctx context.Context, wsID, experimentID int64) ([]Run, error) {
	var rs []Run
	err := db.Reader(ctx).Where("workspace_id = ? AND experiment_id = ?", wsID, experimentID).Scopes(live).Order("id").Find(&rs).Error
	return rs, err
}

// ListDerivedRuns lists the runs derived from a run (reseeds, robustness),
// archived ones included, trashed ones not.
func (db *DB) ListDerivedRuns(ctx context.Context, wsID, parentRunID int64) ([]Run, error) {
	var rs []Run
	err := db.Reader(ctx).Where("workspace_id = ? AND parent_run_id = ?", wsID, parentRunID).Scopes(live).Order("id").Find(&rs).Error
	return rs, err
}

// SetRunExperiment puts a run into an experiment.
func (db *DB) SetRunExperiment(ctx context.Context, wsID, runID, experimentID int64) error {
	res := db.Gorm.WithContext(ctx).Model(&Run{}).Where("workspace_id = ? AND id = ?", wsID, runID).Scopes(live).Update("experiment_id", experimentID)
	if res.Error != nil {
		return fmt.Errorf("add run %d to experiment %d: %w", runID, experimentID, res.Error)
	}
	if res.RowsAffected == 0 {
		return Errorf(ENotFound, "run %d does not exist", runID)
	}
	return nil
}
