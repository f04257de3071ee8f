package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/batcheval/batcheval/evaluator"
)

// RubricVersion is one kept state of a rubric: what the judge was told
// (task, fields, criteria with their level descriptions and labelled
// examples). Versions are numbered from 1 per rubric and never change.
type RubricVersion struct {
	ID       int64
	RubricID int64
	Version  int
	Task     string
	Fields   []evaluator.Field     `gorm:"serializer:json"`
	Criteria []evaluator.Criterion `gorm:"serializer:json"`
	// Note says where the version came from: "created", "edited",
	// "accepted from alignment 3".
	Note      string
	CreatedAt time.Time
}

// Evaluator returns the version as the engine's rubric.
func (v RubricVersion) Evaluator() evaluator.Rubric {
	return evaluator.Rubric{Task: v.Task, Fields: v.Fields, Criteria: v.Criteria}
}

// Version notes for the ordinary ways a version is made.
const (
	VersionNoteCreated = "created"
	VersionNoteEdited  = "edited"
)

// storeRubric creates or updates r and keeps its versions: a new rubric is
// version 1; an update that changes the task, fields or criteria makes the
// next version (a change of name alone does not). note says why. r.Version
// is set to the current version.
func (db *DB) storeRubric(ctx context.Context, r *Rubric, note string, expect Expectation) error {
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return storeRubricTx(tx, r, note, expect) })
}

// storeRubricTx is storeRubric inside the caller's transaction. An update
// with an expectation writes only when the stored rubric, read under its
// row lock in this transaction, meets it (EChanged otherwise).
func storeRubricTx(tx *gorm.DB, r *Rubric, note string, expect Expectation) error {
	now := time.Now().UTC()
	if r.ID == 0 {
		r.Version = 1
		if err := tx.Create(r).Error; err != nil {
			return fmt.Errorf("create rubric: %w", err)
		}
		if note == "" {
			note = VersionNoteCreated
		}
		return insertRubricVersion(tx, r, note, now)
	}
	var cur Rubric
	// Locked until the transaction ends (PostgreSQL; SQLite's immediate
	// transaction already holds the whole database), so no other save
	// comes between the check of the expectation and the update.
	err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("workspace_id = ? AND id = ?", r.WorkspaceID, r.ID).Scopes(live).First(&cur).Error
	if err != nil {
		return notFound(err, "rubric", r.ID)
	}
	if !expect.met(cur.Revision()) {
		return changedError("rubric", r.ID)
	}
	if err := checkKeptName("rubric name", r.Name, cur.Name, MaxNameLength); err != nil {
		return err
	}
	changed := jsonValue(cur.Evaluator()) != jsonValue(r.Evaluator())
	upd := map[string]any{"name": r.Name, "task": r.Task, "fields": jsonValue(r.Fields), "criteria": jsonValue(r.Criteria), "updated_at": now}
	if changed {
		// Counted in the database, so two edits at once cannot both
		// become the same version (the second one waits for the row).
		upd["version"] = gorm.Expr("version + 1")
	}
	res := tx.Model(&Rubric{}).Where("workspace_id = ? AND id = ?", r.WorkspaceID, r.ID).Scopes(live).Updates(upd)
	if res.Error != nil {
		return fmt.Errorf("update rubric %d: %w", r.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return Errorf(ENotFound, "rubric %d does not exist", r.ID)
	}
	if err := tx.Model(&Rubric{}).Where("id = ?", r.ID).Pluck("version", &r.Version).Error; err != nil {
		return fmt.Errorf("read rubric %d version: %w", r.ID, err)
	}
	if !changed {
		return nil
	}
	if note == "" {
		note = VersionNoteEdited
	}
	return insertRubricVersion(tx, r, note, now)
}

func insertRubricVersion(tx *gorm.DB, r *Rubric, note string, at time.Time) error {
	v := RubricVersion{RubricID: r.ID, Version: r.Version, Task: r.Task, Fields: r.Fields, Criteria: r.Criteria, Note: note, CreatedAt: at}
	if err := tx.Create(&v).Error; err != nil {
		if isUniqueViolation(err) {
			return Errorf(EConflict, "the rubric was changed by someone else at the same time: reload it and save again")
		}
		return fmt.Errorf("keep rubric %d version %d: %w", r.ID, r.Version, err)
	}
	return nil
}

// SaveRubricVersion saves r like SaveRubric, noting why the version was
// made (e.g. "accepted from alignment 3").
func (db *DB) SaveRubricVersion(ctx context.Context, r *Rubric, note string) error {
	if err := checkRubric(r); err != nil {
		return err
	}
	return db.storeRubric(ctx, r, note, nil)
}

// ListRubricVersions lists a rubric's versions, newest first.
func (db *DB) ListRubricVersions(ctx context.Context, wsID, rubricID int64) ([]RubricVersion, error) {
	if _, err := db.FindRubric(ctx, wsID, rubricID); err != nil {
		return nil, err
	}
	var vs []RubricVersion
	err := db.Reader(ctx).Where("rubric_id = ?", rubricID).Order("version DESC").Find(&vs).Error
	return vs, err
}

// FindRubricVersion finds one version of a rubric in the workspace.
func (db *DB) FindRubricVersion(ctx context.Context, wsID, rubricID int64, version int) (RubricVersion, error) {
	if _, err := db.FindRubric(ctx, wsID, rubricID); err != nil {
		return RubricVersion{}, err
	}
	var v RubricVersion
	err := db.Reader(ctx).Where("rubric_id = ? AND version = ?", rubricID, version).First(&v).Error
	return v, notFoundText(err, fmt.Sprintf("rubric %d has no version %d", rubricID, version))
}

// ListRubricRuns lists the live runs launched with a rubric, newest first,
// each with the version it used (RubricVersion).
func (db *DB) ListRubricRuns(ctx context.Context, wsID, rubricID int64) ([]Run, error) {
	var rs []Run
	err := db.Reader(ctx).Where("workspace_id = ? AND rubric_id = ?", wsID, rubricID).Scopes(live).Order("id DESC").Find(&rs).Error
	return rs, err
}
