package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator/align"
)

// Alignment statuses.
const (
	// AlignmentDrafted: a draft waits for the person to edit and accept it.
	AlignmentDrafted = "drafted"
	// AlignmentAccepted: the draft became a rubric version and the
	// held-out runs were launched.
	AlignmentAccepted = "accepted"
)

// Alignment is one attempt to bring a rubric criterion closer to the human
// ratings: the split of a finished run's dataset into calibration and
// held-out samples, the draft made from the calibration disagreements, and,
// once accepted, the new rubric version and the two held-out runs (the old
// version and the new one) that measure the change.
type Alignment struct {
	ID             int64
	WorkspaceID    int64
	ProjectID      int64
	RubricID       int64
	SourceRunID    int64
	CriterionIndex int
	Seed           int64
	// CalibrationRowIDs and HeldOutRowIDs are dataset row ids of the
	// source run's dataset, sorted.
	CalibrationRowIDs []int64 `gorm:"serializer:int64s"`
	HeldOutRowIDs     []int64 `gorm:"serializer:int64s"`
	// BaseVersion is the rubric version the source run used (the
	// rubric's version at drafting time for runs from before versions).
	BaseVersion int
	Draft       align.Draft `gorm:"serializer:json"`
	// DraftSource says who drafted: "template" or the judge's name.
	DraftSource      string
	Status           string
	NewVersion       *int
	HeldOutDatasetID *int64
	BeforeRunID      *int64
	AfterRunID       *int64
	CreatedAt        time.Time
	AcceptedAt       *time.Time
}

// CreateAlignment stores a new drafted alignment.
func (db *DB) CreateAlignment(ctx context.Context, a *Alignment) error {
	a.Status = AlignmentDrafted
	a.CreatedAt = time.Now().UTC()
	if err := db.Gorm.WithContext(ctx).Create(a).Error; err != nil {
		return fmt.Errorf("create alignment: %w", err)
	}
	return nil
}

// FindAlignment finds an alignment in the workspace whose rubric is live.
func (db *DB) FindAlignment(ctx context.Context, wsID, id int64) (Alignment, error) {
	var a Alignment
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).First(&a).Error
	if err != nil {
		return a, notFound(err, "alignment", id)
	}
	if _, err := db.FindRubric(ctx, wsID, a.RubricID); err != nil {
		return a, Errorf(ENotFound, "alignment %d does not exist", id)
	}
	return a, nil
}

// ListRubricAlignments lists a rubric's alignments, newest first.
func (db *DB) ListRubricAlignments(ctx context.Context, wsID, rubricID int64) ([]Alignment, error) {
	var as []Alignment
	err := db.Reader(ctx).Where("workspace_id = ? AND rubric_id = ?", wsID, rubricID).Order("id DESC").Find(&as).Error
	return as, err
}

// UpdateAlignmentDraft stores an edited draft of an alignment not yet
// accepted.
func (db *DB) UpdateAlignmentDraft(ctx context.Context, a *Alignment) error {
	res := db.Gorm.WithContext(ctx).Model(&Alignment{}).Where("workspace_id = ? AND id = ? AND status = ?", a.WorkspaceID, a.ID, AlignmentDrafted).
		Update("draft", jsonValue(a.Draft))
	if res.Error != nil {
		return fmt.Errorf("update alignment %d: %w", a.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return Errorf(EConflict, "alignment %d was already accepted: start a new one to change the rubric again", a.ID)
	}
	return nil
}

// AcceptAlignment turns the alignment's draft (a.Draft, as edited) into a
// new version of rubric r (r holds the content to store: the draft applied
// to its criterion), in one transaction: an alignment is accepted once, and
// never leaves a version without the record of where it came from. expect
// is the rubric's revision the draft's page was opened on (nil: any): when
// the rubric was saved since, nothing is written and the error's code is
// EChanged, as for the rubric editor.
func (db *DB) AcceptAlignment(ctx context.Context, a *Alignment, r *Rubric, expect Expectation) error {
	if err := checkRubric(r); err != nil {
		return err
	}
	now := time.Now().UTC()
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Alignment{}).Where("workspace_id = ? AND id = ? AND status = ?", a.WorkspaceID, a.ID, AlignmentDrafted).
			Updates(map[string]any{"status": AlignmentAccepted, "draft": jsonValue(a.Draft), "accepted_at": now})
		if res.Error != nil {
			return fmt.Errorf("accept alignment %d: %w", a.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			return Errorf(EConflict, "alignment %d was already accepted: start a new one to change the rubric again", a.ID)
		}
		if err := storeRubricTx(tx, r, fmt.Sprintf("accepted from alignment %d", a.ID), expect); err != nil {
			return err
		}
		return tx.Model(&Alignment{}).Where("id = ?", a.ID).Update("new_version", r.Version).Error
	})
	if err != nil {
		return err
	}
	v := r.Version
	a.Status, a.NewVersion, a.AcceptedAt = AlignmentAccepted, &v, &now
	return nil
}

// SetAlignmentRuns records the held-out dataset and the before and after
// runs of an accepted alignment.
func (db *DB) SetAlignmentRuns(ctx context.Context, a *Alignment) error {
	return db.Gorm.WithContext(ctx).Model(&Alignment{}).Where("workspace_id = ? AND id = ?", a.WorkspaceID, a.ID).
		Updates(map[string]any{"held_out_dataset_id": a.HeldOutDatasetID, "before_run_id": a.BeforeRunID, "after_run_id": a.AfterRunID}).Error
}
