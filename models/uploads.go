package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// PendingUpload is an uploaded file waiting for its column mapping.
type PendingUpload struct {
	ID          int64
	WorkspaceID int64
	Token       string
	Filename    string
	Format      string
	Content     []byte
	CreatedAt   time.Time
}

// uploadTTL is how long an unfinished upload is kept: long enough to
// choose columns at leisure, short enough not to pile up.
const uploadTTL = 24 * time.Hour

// SavePendingUpload keeps an uploaded file and returns its token.
func (db *DB) SavePendingUpload(ctx context.Context, u *PendingUpload) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	u.Token = hex.EncodeToString(b[:])
	// Expired uploads are cleared opportunistically, no sweeper needed.
	db.Gorm.WithContext(ctx).Where("created_at < ?", time.Now().UTC().Add(-uploadTTL)).Delete(&PendingUpload{})
	return db.Gorm.WithContext(ctx).Create(u).Error
}

// FindPendingUpload finds an upload by token in the workspace.
func (db *DB) FindPendingUpload(ctx context.Context, wsID int64, token string) (PendingUpload, error) {
	var u PendingUpload
	err := db.Gorm.WithContext(ctx).Where("workspace_id = ? AND token = ?", wsID, token).First(&u).Error
	if err != nil {
		return u, notFoundText(err, "that upload has expired or does not exist: upload the file again")
	}
	return u, nil
}

// DeletePendingUpload removes an upload once imported.
func (db *DB) DeletePendingUpload(ctx context.Context, id int64) error {
	return db.Gorm.WithContext(ctx).Delete(&PendingUpload{}, id).Error
}
