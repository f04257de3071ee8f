package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// PendingUpload is an uploaded file waiting for its column mapping.
type PendingUpload struct {
	ID          int64
	WorkspaceID int64
	Token       string
	Filename    string
	Format      string
	Content     []byte
	// SizeBytes is len(Content), kept so quotas need not read the files.
	SizeBytes int64
	CreatedAt time.Time
}

// UploadTTL is how long an unfinished upload is kept: long enough to
// choose columns at leisure, short enough not to pile up.
const UploadTTL = 24 * time.Hour

// SavePendingUpload keeps an uploaded file and returns its token. quota,
// when above 0, bounds the bytes of the workspace's pending uploads, this
// one included; past it the upload is refused with a message.
func (db *DB) SavePendingUpload(ctx context.Context, u *PendingUpload, quota int64) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	u.Token = hex.EncodeToString(b[:])
	u.SizeBytes = int64(len(u.Content))
	if _, err := db.PurgeExpiredUploads(ctx, time.Now()); err != nil {
		return err
	}
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if quota > 0 {
			if err := lockWorkspace(tx, db.Dialect, u.WorkspaceID); err != nil {
				return err
			}
			var used int64
			if err := tx.Model(&PendingUpload{}).Where("workspace_id = ?", u.WorkspaceID).
				Select("COALESCE(SUM(size_bytes), 0)").Scan(&used).Error; err != nil {
				return fmt.Errorf("sum pending uploads: %w", err)
			}
			if used+u.SizeBytes > quota {
				return Errorf(EConflict, "this workspace already holds %s of uploads waiting for their columns to be chosen; with this file it would pass its quota of %s. "+
					"Finish importing those uploads, or wait for them to expire (after %s), then upload again",
					mibText(used), mibText(quota), UploadTTL)
			}
		}
		return tx.Create(u).Error
	})
}

// PurgeExpiredUploads deletes the uploads older than UploadTTL at now and
// returns how many went.
func (db *DB) PurgeExpiredUploads(ctx context.Context, now time.Time) (int64, error) {
	res := db.Gorm.WithContext(ctx).Where("created_at < ?", now.UTC().Add(-UploadTTL)).Delete(&PendingUpload{})
	if res.Error != nil {
		return 0, fmt.Errorf("purge expired uploads: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// FindPendingUpload finds an upload by token in the workspace; an expired
// one is not found, even before the sweeper has deleted it.
func (db *DB) FindPendingUpload(ctx context.Context, wsID int64, token string) (PendingUpload, error) {
	var u PendingUpload
	err := db.Gorm.WithContext(ctx).Where("workspace_id = ? AND token = ? AND created_at >= ?", wsID, token, time.Now().UTC().Add(-UploadTTL)).First(&u).Error
	if err != nil {
		return u, notFoundText(err, "that upload has expired or does not exist: upload the file again")
	}
	return u, nil
}

// DeletePendingUpload removes an upload once imported.
func (db *DB) DeletePendingUpload(ctx context.Context, id int64) error {
	return db.Gorm.WithContext(ctx).Delete(&PendingUpload{}, id).Error
}

// lockWorkspace serialises quota checks of one workspace until the
// transaction ends. SQLite transactions take the write lock up front, so
// only PostgreSQL needs the row lock.
func lockWorkspace(tx *gorm.DB, d Dialect, wsID int64) error {
	if d != Postgres {
		return nil
	}
	if err := tx.Exec("SELECT id FROM workspaces WHERE id = ? FOR UPDATE", wsID).Error; err != nil {
		return fmt.Errorf("lock workspace %d: %w", wsID, err)
	}
	return nil
}

// mibText writes a byte count in MiB, as the settings are given.
func mibText(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
