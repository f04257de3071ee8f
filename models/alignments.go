package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// ErrHeldOutClaimLost is the cause of the refusal to launch or record
// held-out runs under a claim its owner no longer holds: its lease lapsed
// unrenewed (a stall longer than the lease) and another launch took it
// over, or it ended.
var ErrHeldOutClaimLost = errors.New("another launch of the held-out runs took over")

// HoldsHeldOutLaunch says whether owner still holds the claim on alignment
// id's launch (ClaimHeldOutLaunch): it was not taken over nor ended. A
// lease that lapsed with nobody taking it over is still held.
func (db *DB) HoldsHeldOutLaunch(ctx context.Context, id int64, owner string) (bool, error) {
	var n int64
	err := db.Gorm.WithContext(ctx).Raw(`SELECT COUNT(*) FROM heldout_launches WHERE alignment_id = ? AND owner = ? AND lease_until IS NOT NULL`, id, owner).Row().Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read the held-out launch of alignment %d: %w", id, err)
	}
	return n > 0, nil
}

// claimLost refuses owner's launch of alignment id's held-out runs.
func claimLost(id int64) error {
	return &Error{Code: EConflict, Err: ErrHeldOutClaimLost,
		Message: fmt.Sprintf("another launch of the held-out runs of alignment %d took over while this one was not heard from: its runs are not launched twice; the alignment's page shows the runs launched", id)}
}

// CheckHeldOutClaim refuses (EConflict, wrapping ErrHeldOutClaimLost)
// when owner no longer holds the claim on alignment id's launch.
func (db *DB) CheckHeldOutClaim(ctx context.Context, id int64, owner string) error {
	held, err := db.HoldsHeldOutLaunch(ctx, id, owner)
	if err == nil && !held {
		err = claimLost(id)
	}
	return err
}

// LaunchHeldOutRuns stores accepted alignment a's two held-out runs,
// before and after (queued, each job enqueued as CreateRun does), and
// records them with a.HeldOutDatasetID on a, in one transaction, only
// while owner holds the claim on the launch (ClaimHeldOutLaunch: not
// taken over after its lease lapsed, not ended) and the alignment's runs
// are still was, those its launch was claimed over (none for a first
// launch; a relaunch after runs were trashed finds theirs). Otherwise
// nothing is stored, so no run of a launch that lost its claim is ever
// worked or paid for, and none overwrites another's: EConflict wrapping
// ErrHeldOutClaimLost, or ErrHeldOutLaunched when the runs were recorded
// meanwhile. The check and the recording hold the alignment's row from
// the first statement on, so of two launches racing to record, one does.
// LaunchHeldOutCopy does the same with the copy of the held-out samples
// the runs judge, in the same transaction.
func (db *DB) LaunchHeldOutRuns(ctx context.Context, a *Alignment, owner string, was Alignment, before, after *Run,
	enqueue func(ctx context.Context, tx *sql.Tx, r *Run) (int64, error)) error {
	if err := checkHeldOutRuns(before, after); err != nil {
		return err
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return db.launchHeldOutRunsTx(ctx, tx, a, owner, was, before, after, enqueue)
	})
	if err != nil {
		before.ID, after.ID = 0, 0 // rolled back: no run was stored
		return err
	}
	a.BeforeRunID, a.AfterRunID = &before.ID, &after.ID
	return nil
}

// HeldOutCopy is the copy of an alignment's held-out samples that its
// held-out runs judge (LaunchHeldOutCopy): a dataset of their own, whose
// rows Fill hands to put as ImportDataset's fill does, and the experiment
// that groups the two runs.
type HeldOutCopy struct {
	Dataset    *Dataset
	Fill       func(put func(DatasetRow) error) error
	Experiment *Experiment
}

// LaunchHeldOutCopy is LaunchHeldOutRuns with the copy of the held-out
// samples the runs judge: the copy's dataset and rows (written a chunk at
// a time, as ImportDataset writes them), its experiment, both runs (their
// dataset and experiment set to the copy's) and their record on a are
// stored in one transaction, under the same checks. A launch that lost
// its claim, or whose runs another launch recorded meanwhile, stores
// nothing at all: before, its copy and experiment were stored first, in
// transactions of their own, and stayed behind unused when the record was
// refused. On failure the ids of cp's dataset and experiment and of both
// runs are 0.
func (db *DB) LaunchHeldOutCopy(ctx context.Context, a *Alignment, owner string, was Alignment, cp HeldOutCopy, before, after *Run,
	enqueue func(ctx context.Context, tx *sql.Tx, r *Run) (int64, error)) error {
	if err := checkHeldOutRuns(before, after); err != nil {
		return err
	}
	e := cp.Experiment
	if strings.TrimSpace(e.Name) == "" {
		return NameNeeded(KindExperiment)
	}
	if err := checkName("experiment name", e.Name, MaxComposedNameLength); err != nil {
		return err
	}
	heldOut := a.HeldOutDatasetID
	err := db.importDataset(ctx, cp.Dataset, cp.Fill, func(tx *gorm.DB) error {
		e.DatasetID = cp.Dataset.ID
		if err := tx.Create(e).Error; err != nil {
			return fmt.Errorf("create the experiment of alignment %d's held-out runs: %w", a.ID, err)
		}
		for _, r := range []*Run{before, after} {
			r.DatasetID, r.ExperimentID = cp.Dataset.ID, &e.ID
		}
		id := cp.Dataset.ID
		a.HeldOutDatasetID = &id
		return db.launchHeldOutRunsTx(ctx, tx, a, owner, was, before, after, enqueue)
	})
	if err != nil {
		// Rolled back: nothing was stored.
		before.ID, after.ID, cp.Dataset.ID, e.ID = 0, 0, 0, 0
		a.HeldOutDatasetID = heldOut
		return err
	}
	a.BeforeRunID, a.AfterRunID = &before.ID, &after.ID
	return nil
}

// checkHeldOutRuns refuses held-out runs that cannot be stored, before
// anything is written.
func checkHeldOutRuns(before, after *Run) error {
	for _, r := range []*Run{before, after} {
		if err := checkName("run name", r.Name, MaxComposedNameLength); err != nil {
			return err
		}
		if err := checkGEvalSteps(r.MethodSettings.GEvalSteps); err != nil {
			return err
		}
	}
	return nil
}

// launchHeldOutRunsTx is LaunchHeldOutRuns's writes, in tx.
func (db *DB) launchHeldOutRunsTx(ctx context.Context, tx *gorm.DB, a *Alignment, owner string, was Alignment, before, after *Run,
	enqueue func(ctx context.Context, tx *sql.Tx, r *Run) (int64, error)) error {
	same := func(col string, v *int64) (string, []any) {
		if v == nil {
			return col + " IS NULL", nil
		}
		return col + " = ?", []any{*v}
	}
	bq, bargs := same("before_run_id", was.BeforeRunID)
	aq, aargs := same("after_run_id", was.AfterRunID)
	args := append([]any{a.HeldOutDatasetID, a.WorkspaceID, a.ID}, bargs...)
	args = append(append(args, aargs...), owner)
	res := tx.Exec(`UPDATE alignments SET held_out_dataset_id = ? WHERE workspace_id = ? AND id = ? AND `+bq+` AND `+aq+`
		AND EXISTS (SELECT 1 FROM heldout_launches l WHERE l.alignment_id = alignments.id AND l.owner = ? AND l.lease_until IS NOT NULL)`, args...)
	if res.Error != nil {
		return fmt.Errorf("record the held-out runs of alignment %d: %w", a.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		var now Alignment
		if err := tx.Select("before_run_id", "after_run_id").Where("workspace_id = ? AND id = ?", a.WorkspaceID, a.ID).First(&now).Error; err != nil {
			return notFound(err, "alignment", a.ID)
		}
		if !sameID(now.BeforeRunID, was.BeforeRunID) || !sameID(now.AfterRunID, was.AfterRunID) {
			return &Error{Code: EConflict, Err: ErrHeldOutLaunched,
				Message: fmt.Sprintf("the held-out runs of alignment %d were launched meanwhile (runs %s and %s): they are not launched twice", a.ID, idText(now.BeforeRunID), idText(now.AfterRunID))}
		}
		return claimLost(a.ID)
	}
	for _, r := range []*Run{before, after} {
		if err := db.createRunTx(ctx, tx, r, enqueue, db.MaxActiveRunsPerWorkspace); err != nil {
			return err
		}
	}
	return tx.Model(&Alignment{}).Where("id = ?", a.ID).Updates(map[string]any{"before_run_id": before.ID, "after_run_id": after.ID}).Error
}
