package models

import (
	"context"
	"fmt"
)

// Removal is a person's removal from a workspace as its audit log recorded
// it: the workspace, and who removed them (the actor as shown then, "" when
// not recorded; Self when they removed themselves).
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
// "runs", ...) belongs to a workspace the account userID (address email)
// was removed from and is not a member of again: the page or form of it a
// former member opens is then answered with the removal, not "not found".
// false when there is no such object, when the account is a member of its
// workspace, or when the log records no removal of that address there
// (never a member: nothing about the workspace is said to a stranger).
// Only the workspace's name and the remover are read, nothing of the
// object's.
func (db *DB) RemovedFromWorkspaceOf(ctx context.Context, kind string, id, userID int64, email string) (Removal, bool, error) {
	table, ok := removalKinds[kind]
	if !ok || id <= 0 {
		return Removal{}, false, nil
	}
	r := db.Reader(ctx)
	var wss []int64
	if err := r.Table(table).Where("id = ?", id).Limit(1).Pluck("workspace_id", &wss).Error; err != nil {
		return Removal{}, false, fmt.Errorf("read the workspace of %s %d: %w", kind, id, err)
	}
	if len(wss) == 0 {
		return Removal{}, false, nil
	}
	var member int64
	if err := r.Table("memberships").Where("workspace_id = ? AND user_id = ?", wss[0], userID).Count(&member).Error; err != nil {
		return Removal{}, false, fmt.Errorf("read a membership of workspace %d: %w", wss[0], err)
	}
	if member > 0 {
		return Removal{}, false, nil
	}
	rm, err := db.RemovalFrom(ctx, wss[0], userID, email)
	return rm, rm.WorkspaceID != 0, err
}

// RemovalFrom is the latest removal of the account userID (address email)
// from workspace wsID that its log records (the zero Removal when none):
// who removed them, for the notice of a removal found otherwise (the
// session's workspace no longer the account's).
func (db *DB) RemovalFrom(ctx context.Context, wsID, userID int64, email string) (Removal, error) {
	var evs []AuditEvent
	err := db.Reader(ctx).Where("workspace_id = ? AND action = ? AND target = ?", wsID, AuditMemberRemoved, email).
		Order("id DESC").Limit(1).Find(&evs).Error
	if err != nil {
		return Removal{}, fmt.Errorf("read the removal from workspace %d: %w", wsID, err)
	}
	if len(evs) == 0 {
		return Removal{}, nil
	}
	name, err := db.WorkspaceName(ctx, wsID)
	if err != nil {
		return Removal{}, err
	}
	rm := Removal{WorkspaceID: wsID, Workspace: name, By: evs[0].Actor}
	if evs[0].ActorUserID != nil && *evs[0].ActorUserID == userID {
		rm.By, rm.Self = "", true
	}
	return rm, nil
}
