package models

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// NetworkGrant lets a workspace other than the default one reach the
// private-network and loopback addresses the operator's settings allow
// (BATCHEVAL_JUDGE_ALLOW_PRIVATE and the others): its judges on the LAN,
// its webhooks to the office chat server. Anyone signed in can make a
// workspace of their own, so without a grant a workspace's judges and
// webhooks reach public addresses only, whatever those settings say.
type NetworkGrant struct {
	WorkspaceID int64 `gorm:"primaryKey;autoIncrement:false"`
	// GrantedBy is who granted it, as the command line was told.
	GrantedBy string
	GrantedAt time.Time
}

// Audit actions of the operator's network grants (batcheval admin network).
const (
	AuditNetworkGranted = "private-network-granted"
	AuditNetworkRevoked = "private-network-revoked"
)

// GrantedWorkspace is a workspace with its grant, for the operator's list.
type GrantedWorkspace struct {
	Workspace Workspace
	Grant     NetworkGrant
}

// NotGrantedError is why a workspace may not reach the private and
// loopback addresses the operator allows: it is not the default workspace
// and the operator has not granted it. Its text says what to do.
type NotGrantedError struct {
	Slug string
}

func (e *NotGrantedError) Error() string {
	// Short, the command first: Test connection shows 300 characters of
	// its error, after its own words and the address.
	return fmt.Sprintf("private-network and loopback addresses need the operator's grant for this workspace (batcheval admin network grant %s); the default workspace has it", e.Slug)
}

// errDefaultAlwaysGranted refuses a grant or revocation of the default
// workspace, which always has the operator's settings.
var errDefaultAlwaysGranted = Errorf(EInvalid, "the default workspace always reaches what the server's settings allow (BATCHEVAL_JUDGE_ALLOW_PRIVATE, BATCHEVAL_WEBHOOK_ALLOW_PRIVATE and the loopback ones): "+
	"change those settings to change it")

// PrivateNetworkAllowed reports whether workspace wsID may reach the
// private-network and loopback addresses the operator's settings allow:
// nil for the default workspace and a granted one, a *NotGrantedError
// otherwise. It reads the primary database, never a replica, so that a
// revocation holds at once.
func (db *DB) PrivateNetworkAllowed(ctx context.Context, wsID int64) error {
	var row struct {
		Slug    string
		Granted bool
	}
	err := db.Gorm.WithContext(ctx).Table("workspaces").
		Select("workspaces.slug AS slug, network_grants.workspace_id IS NOT NULL AS granted").
		Joins("LEFT JOIN network_grants ON network_grants.workspace_id = workspaces.id").
		Where("workspaces.id = ?", wsID).Take(&row).Error
	if err != nil {
		return notFound(err, "workspace", wsID)
	}
	if row.Slug == DefaultWorkspaceSlug || row.Granted {
		return nil
	}
	return &NotGrantedError{Slug: row.Slug}
}

// NetworkPermit is PrivateNetworkAllowed for one workspace, as the judge
// package's dialer asks it (judge.Grant) every time it connects to a
// private or loopback address, and again before sending on a connection
// kept open.
//
// Only a real answer is a refusal: a workspace without the grant, or one
// that no longer exists. A read that failed (a dropped connection, a
// timeout) is a judge.GrantUnknownError, which the runner retries as an
// outage instead of failing the run as refused.
func (db *DB) NetworkPermit(wsID int64) func(context.Context) error {
	return func(ctx context.Context) error {
		err := db.PrivateNetworkAllowed(ctx, wsID)
		var ng *NotGrantedError
		if err == nil || errors.As(err, &ng) || ErrorCode(err) == ENotFound {
			return err
		}
		return &judge.GrantUnknownError{Err: err}
	}
}

// findWorkspaceByRef finds a workspace by its slug, or by its id when ref
// is a number no slug matches.
func findWorkspaceByRef(tx *gorm.DB, ref string) (Workspace, error) {
	ref = strings.TrimSpace(ref)
	var ws Workspace
	err := tx.Where("slug = ?", ref).Take(&ws).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		if id, perr := strconv.ParseInt(ref, 10, 64); perr == nil {
			err = tx.Where("id = ?", id).Take(&ws).Error
		}
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ws, Errorf(ENotFound, "no workspace has the slug or id %q: `batcheval admin network list` lists the workspaces", ref)
	}
	return ws, err
}

// SetNetworkGrant grants (grant true) or revokes the private network of
// the workspace whose slug (or id) is ref, and records it in the
// workspace's audit log, in one transaction. changed is false when the
// workspace already was so (nothing is written then).
func (db *DB) SetNetworkGrant(ctx context.Context, ref string, grant bool, actor string) (ws Workspace, changed bool, err error) {
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ws, err = findWorkspaceByRef(tx, ref)
		if err != nil {
			return err
		}
		if ws.Slug == DefaultWorkspaceSlug {
			return errDefaultAlwaysGranted
		}
		now := time.Now().UTC()
		var res *gorm.DB
		action, detail := AuditNetworkRevoked, "judges and webhooks of this workspace reach public addresses only again"
		if grant {
			res = tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&NetworkGrant{WorkspaceID: ws.ID, GrantedBy: clip(actor, 300), GrantedAt: now})
			action, detail = AuditNetworkGranted, "judges and webhooks of this workspace may reach the private-network and loopback addresses the server's settings allow"
		} else {
			res = tx.Where("workspace_id = ?", ws.ID).Delete(&NetworkGrant{})
		}
		if res.Error != nil {
			return res.Error
		}
		if changed = res.RowsAffected > 0; !changed {
			return nil
		}
		return tx.Create(&AuditEvent{WorkspaceID: ws.ID, Actor: clip(actor, 300), Action: action, Target: clip(ws.Name, 300), Detail: detail, CreatedAt: now}).Error
	})
	return ws, changed, err
}

// ListNetworkGrants lists every workspace, by id, each with its grant
// (Grant.WorkspaceID is 0 for none), for the operator's list.
func (db *DB) ListNetworkGrants(ctx context.Context) ([]GrantedWorkspace, error) {
	var wss []Workspace
	if err := db.Gorm.WithContext(ctx).Order("id").Find(&wss).Error; err != nil {
		return nil, err
	}
	var grants []NetworkGrant
	if err := db.Gorm.WithContext(ctx).Find(&grants).Error; err != nil {
		return nil, err
	}
	byWS := make(map[int64]NetworkGrant, len(grants))
	for _, g := range grants {
		byWS[g.WorkspaceID] = g
	}
	out := make([]GrantedWorkspace, 0, len(wss))
	for _, ws := range wss {
		out = append(out, GrantedWorkspace{Workspace: ws, Grant: byWS[ws.ID]})
	}
	return out, nil
}
