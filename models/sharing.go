package models

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ShareKind says what a share link opens.
type ShareKind string

// What a share link can open: one run's report, one experiment's table, or
// two runs compared sample by sample.
const (
	ShareRun        ShareKind = "run"
	ShareExperiment ShareKind = "experiment"
	ShareCompare    ShareKind = "compare"
)

// ShareLink is a read-only link to one report that opens without an
// account. Only the hash of its token is stored; the token is shown once.
type ShareLink struct {
	ID           int64
	WorkspaceID  int64
	Kind         ShareKind
	RunID        *int64
	OtherRunID   *int64
	ExperimentID *int64
	TokenHash    string `json:"-"`
	Label        string
	CreatedBy    *int64
	// CreatedByName is who made the link as shown at the time.
	CreatedByName string
	CreatedAt     time.Time
	// ExpiresAt is nil for a link that lasts until it is revoked.
	ExpiresAt    *time.Time
	RevokedAt    *time.Time
	LastOpenedAt *time.Time
}

// Active reports whether the link still opens its report at t.
func (l ShareLink) Active(t time.Time) bool {
	return l.RevokedAt == nil && (l.ExpiresAt == nil || t.Before(*l.ExpiresAt))
}

// Target names what the link opens, for lists and the audit log.
func (l ShareLink) Target() string {
	id := func(p *int64) string {
		if p == nil {
			return "?"
		}
		return strconv.FormatInt(*p, 10)
	}
	switch l.Kind {
	case ShareRun:
		return "run " + (id(l.RunID))
	case ShareExperiment:
		return "experiment " + (id(l.ExperimentID))
	case ShareCompare:
		return "comparison of runs " + (id(l.RunID)) + " and " + (id(l.OtherRunID))
	}
	return string(l.Kind)
}

// MaxShareLabel bounds a link's label: a note for the list, not a document
// (as long as the names people type, limits.go).
const MaxShareLabel = MaxNameLength

// NewShareLink is what a person asks for when making a link.
type NewShareLink struct {
	WorkspaceID  int64
	Kind         ShareKind
	RunID        int64 // run, compare
	OtherRunID   int64 // compare
	ExperimentID int64 // experiment
	Label        string
	// TTL is how long the link opens its report; 0 means until revoked.
	TTL           time.Duration
	CreatedBy     *int64
	CreatedByName string
}

// CreateShareLink checks that what is shared belongs to the workspace,
// stores the link and returns it with its token (the only time the token
// exists outside the browser of the person who made it). Given an audit
// (described with the link made), its entry is written in the same
// transaction.
func (db *DB) CreateShareLink(ctx context.Context, n NewShareLink, audit ...Audit[ShareLink]) (ShareLink, string, error) {
	n.Label = strings.TrimSpace(n.Label)
	if err := checkName("label", n.Label, MaxShareLabel); err != nil {
		return ShareLink{}, "", err
	}
	if n.TTL < 0 {
		return ShareLink{}, "", Errorf(EInvalid, "Choose an expiry in the future: the one given has already passed.")
	}
	l := ShareLink{WorkspaceID: n.WorkspaceID, Kind: n.Kind, Label: n.Label, CreatedBy: n.CreatedBy, CreatedByName: n.CreatedByName}
	switch n.Kind {
	case ShareRun, ShareCompare:
		if _, err := db.FindRun(ctx, n.WorkspaceID, n.RunID); err != nil {
			return ShareLink{}, "", err
		}
		l.RunID = &n.RunID
		if n.Kind == ShareCompare {
			if n.OtherRunID == n.RunID {
				return ShareLink{}, "", Errorf(EInvalid, "Choose two different runs to compare: both are run %d.", n.RunID)
			}
			if _, err := db.FindRun(ctx, n.WorkspaceID, n.OtherRunID); err != nil {
				return ShareLink{}, "", err
			}
			l.OtherRunID = &n.OtherRunID
		}
	case ShareExperiment:
		if _, err := db.FindExperiment(ctx, n.WorkspaceID, n.ExperimentID); err != nil {
			return ShareLink{}, "", err
		}
		l.ExperimentID = &n.ExperimentID
	default:
		return ShareLink{}, "", Errorf(EInvalid, "%q cannot be shared", n.Kind)
	}
	token, hash, err := NewLinkToken()
	if err != nil {
		return ShareLink{}, "", err
	}
	l.TokenHash = hash
	l.CreatedAt = time.Now().UTC()
	if n.TTL > 0 {
		exp := l.CreatedAt.Add(n.TTL)
		l.ExpiresAt = &exp
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&l).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, l)
	})
	if err != nil {
		return ShareLink{}, "", err
	}
	return l, token, nil
}

// errShareUnusable is the one answer to a token that opens nothing: the
// visitor learns neither whether it ever existed nor why it stopped.
var errShareUnusable = Errorf(ENotFound, "this share link does not open anything: it was revoked, it expired, or it never existed. Ask the person who sent it for a new one.")

// shareStampWait bounds how long opening a share link waits to record
// when it was opened: another write may hold the database (SQLite's one
// write lock, during a long import) or the link's row (PostgreSQL).
var shareStampWait = 2 * time.Second

// OpenShareLink finds the active link a token opens and records that it
// was opened. The record is bookkeeping for the link's owners: when it
// cannot be written within shareStampWait, the link opens all the same
// (its LastOpenedAt as it was), as the visitor's pages only read.
func (db *DB) OpenShareLink(ctx context.Context, token string) (ShareLink, error) {
	var l ShareLink
	now := time.Now().UTC()
	// Read on the readers: the write pool may all be taken by writers.
	err := db.Reader(ctx).Where("token_hash = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)",
		HashLinkToken(token), now).First(&l).Error
	if err != nil {
		return l, notFoundText(err, errShareUnusable.Message)
	}
	sctx, cancel := context.WithTimeout(ctx, shareStampWait)
	defer cancel()
	if err := db.Gorm.WithContext(sctx).Model(&ShareLink{}).Where("id = ?", l.ID).Update("last_opened_at", now).Error; err != nil {
		if ctx.Err() == nil && (sctx.Err() != nil || IsTransient(err)) {
			return l, nil // not recorded this time
		}
		return l, err
	}
	l.LastOpenedAt = &now
	return l, nil
}

// FindShareLinkByToken reads the link a token names whatever its state
// (revoked and expired ones included), for the page that says why a link
// opens nothing; it records nothing. Only what the holder of the token
// may learn is to be shown from it (see web.SharedLinkClosedView).
func (db *DB) FindShareLinkByToken(ctx context.Context, token string) (ShareLink, error) {
	var l ShareLink
	err := db.Reader(ctx).Where("token_hash = ?", HashLinkToken(token)).First(&l).Error
	return l, notFoundText(err, errShareUnusable.Message)
}

// ListShareLinks lists a workspace's links, newest first, revoked and
// expired ones included (they say who made them and when they stopped).
func (db *DB) ListShareLinks(ctx context.Context, wsID int64) ([]ShareLink, error) {
	var ls []ShareLink
	err := db.Reader(ctx).Where("workspace_id = ?", wsID).Order("id DESC").Find(&ls).Error
	return ls, err
}

// CountShareLinks counts a workspace's links, revoked and expired ones
// included.
func (db *DB) CountShareLinks(ctx context.Context, wsID int64) (int, error) {
	var n int64
	err := db.Reader(ctx).Model(&ShareLink{}).Where("workspace_id = ?", wsID).Count(&n).Error
	return int(n), err
}

// ShareLinkPage says which page of a workspace's links ListShareLinksPage
// reads.
type ShareLinkPage struct {
	// Limit is how many links the page holds at most.
	Limit int
	// Offset skips the Offset newest links: the share links page's
	// numbered pages, newest first.
	Offset int
	// Oldest reads the links with ids above After instead, oldest first:
	// the API's walk by cursor (Offset is not used).
	Oldest bool
	After  int64
}

// ListShareLinksPage is a page of ListShareLinks, read in the database
// (through share_links_workspace), as p says.
func (db *DB) ListShareLinksPage(ctx context.Context, wsID int64, p ShareLinkPage) ([]ShareLink, error) {
	var ls []ShareLink
	q := db.Reader(ctx).Where("workspace_id = ?", wsID)
	if p.Oldest {
		q = q.Where("id > ?", p.After).Order("id")
	} else {
		q = q.Order("id DESC").Offset(p.Offset)
	}
	err := q.Limit(p.Limit).Find(&ls).Error
	return ls, err
}

// FindShareLink reads one of the workspace's links, revoked and expired
// ones included.
func (db *DB) FindShareLink(ctx context.Context, wsID, id int64) (ShareLink, error) {
	var l ShareLink
	err := db.Gorm.WithContext(ctx).Where("workspace_id = ? AND id = ?", wsID, id).First(&l).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return l, Errorf(ENotFound, "share link %d does not exist (or is not in this workspace)", id)
	}
	return l, err
}

// liveShareLinks narrows q to the workspace's links that still open their
// report at now.
func liveShareLinks(q *gorm.DB, wsID int64, now time.Time) *gorm.DB {
	return q.Where("workspace_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", wsID, now)
}

// LiveShareLinksByMaker counts, per person who made them, the workspace's
// share links that still open their report (links of the local user, made
// by no account, are not counted).
func (db *DB) LiveShareLinksByMaker(ctx context.Context, wsID int64) (map[int64]int, error) {
	var rows []struct {
		CreatedBy int64
		N         int
	}
	err := liveShareLinks(db.Reader(ctx).Model(&ShareLink{}), wsID, time.Now().UTC()).Where("created_by IS NOT NULL").
		Select("created_by, COUNT(*) AS n").Group("created_by").Scan(&rows).Error
	out := make(map[int64]int, len(rows))
	for _, r := range rows {
		out[r.CreatedBy] = r.N
	}
	return out, err
}

// RevokeShareLink stops a link of the workspace at once. Given an audit
// (described with the link), its entry is written in the same
// transaction.
func (db *DB) RevokeShareLink(ctx context.Context, wsID, id int64, audit ...Audit[ShareLink]) (ShareLink, error) {
	var l ShareLink
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&ShareLink{}).Where("workspace_id = ? AND id = ? AND revoked_at IS NULL", wsID, id).
			Update("revoked_at", time.Now().UTC())
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return Errorf(ENotFound, "share link %d does not exist (or is not in this workspace) or was already revoked", id)
		}
		if err := tx.First(&l, id).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, l)
	})
	if err != nil {
		return ShareLink{}, err
	}
	return l, nil
}
