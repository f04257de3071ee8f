package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// How a membership ended (WorkspaceRemoval.How).
const (
	// RemovalRemoved: an owner took the member out.
	RemovalRemoved = "removed"
	// RemovalLeft: the member took themselves out.
	RemovalLeft = "left"
	// RemovalReleased: the operator released the account's address, which
	// takes it out of every workspace (ReleaseAddress).
	RemovalReleased = "released"
)

// WorkspaceRemoval records the end of a membership: written in the
// transaction that ends it, whichever way it ends, keyed by the account
// (not its address, which may change since). It is ignored while the
// account is a member of the workspace again (RemovalFrom).
type WorkspaceRemoval struct {
	ID          int64
	WorkspaceID int64
	UserID      int64
	// RemovedByUserID is the account that removed them (nil when not
	// known, or that account is gone); RemovedBy names the remover as
	// shown then ("" when not known).
	RemovedByUserID *int64
	RemovedBy       string
	How             string
	CreatedAt       time.Time
}

// recordRemoval writes, in tx, the end of userID's membership of wsID by
// the remover byID (label as shown; nil and "" when not known): "left"
// when they removed themselves.
func recordRemoval(tx *gorm.DB, wsID, userID int64, byID *int64, by, how string, now time.Time) error {
	if how == RemovalRemoved && byID != nil && *byID == userID {
		how = RemovalLeft
	}
	r := WorkspaceRemoval{WorkspaceID: wsID, UserID: userID, RemovedByUserID: byID, RemovedBy: by, How: how, CreatedAt: now}
	if err := tx.Create(&r).Error; err != nil {
		return fmt.Errorf("record the removal of user %d from workspace %d: %w", userID, wsID, err)
	}
	return nil
}

// Removal is a person's removal from a workspace as its record
// (WorkspaceRemoval) keeps it: the workspace, and who removed them (the
// remover as shown then, "" when not known; Self when they removed
// themselves).
type Removal struct {
	WorkspaceID int64
	Workspace   string
	By          string
	Self        bool
}

// removalKinds are the kinds of object a page address names by id whose
// row says which workspace it belongs to (the table of each).
var removalKinds = map[string]string{
	"projects": "projects", "datasets": "datasets", "runs": "runs",
	"rubrics": "rubrics", "experiments": "experiments", "alignments": "alignments",
}

// RemovedFromWorkspaceOf tells whether object id of kind ("datasets",
// "runs", ...) belongs to a workspace the account userID was removed from
// and is not a member of again: the page or form of it a former member
// opens is then answered with the removal, not "not found". false when
// there is no such object, when the account is a member of its workspace,
// or when no removal of the account from it is recorded (never a member:
// nothing about the workspace is said to a stranger). Only the workspace's
// name and the remover are read, nothing of the object's.
func (db *DB) RemovedFromWorkspaceOf(ctx context.Context, kind string, id, userID int64) (Removal, bool, error) {
	table, ok := removalKinds[kind]
	if !ok || id <= 0 {
		return Removal{}, false, nil
	}
	var wss []int64
	if err := db.Reader(ctx).Table(table).Where("id = ?", id).Limit(1).Pluck("workspace_id", &wss).Error; err != nil {
		return Removal{}, false, fmt.Errorf("read the workspace of %s %d: %w", kind, id, err)
	}
	if len(wss) == 0 {
		return Removal{}, false, nil
	}
	rm, err := db.RemovalFrom(ctx, wss[0], userID)
	return rm, rm.WorkspaceID != 0, err
}

// RemovalFrom is the latest recorded removal of the account userID from
// workspace wsID while it is not a member of it (the zero Removal when
// none, or when it is a member again): who removed them, for the notice
// of a removal.
func (db *DB) RemovalFrom(ctx context.Context, wsID, userID int64) (Removal, error) {
	var rs []WorkspaceRemoval
	err := db.Reader(ctx).Where("workspace_id = ? AND user_id = ?", wsID, userID).
		Where("NOT EXISTS (SELECT 1 FROM memberships m WHERE m.workspace_id = workspace_removals.workspace_id AND m.user_id = workspace_removals.user_id)").
		Order("id DESC").Limit(1).Find(&rs).Error
	if err != nil {
		return Removal{}, fmt.Errorf("read the removal of user %d from workspace %d: %w", userID, wsID, err)
	}
	if len(rs) == 0 {
		return Removal{}, nil
	}
	name, err := db.WorkspaceName(ctx, wsID)
	if err != nil {
		return Removal{}, err
	}
	rm := Removal{WorkspaceID: wsID, Workspace: name, By: rs[0].RemovedBy}
	if rs[0].How == RemovalLeft {
		rm.By, rm.Self = "", true
	}
	return rm, nil
}
