package models

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// Content holds the file of uploads stored whole (SavePendingUpload);
	// uploads stored in parts (SavePendingUploadFrom) leave it empty and
	// are read with OpenPendingUpload.
	Content []byte
	// SizeBytes is the file's size, kept so quotas need not read the files.
	SizeBytes int64
	// Scan is what the upload's streaming pass counted (SetUploadScan),
	// nil for an upload stored before it was kept (00040) or not scanned.
	Scan      *UploadScan `gorm:"serializer:json"`
	CreatedAt time.Time
}

// UploadScan is what one streaming pass over an upload counted, read the
// way it was read (NoHeader: a CSV file's first row as data). The mapping
// page shows the count; keeping it spares reading the whole file on each
// view of the page.
type UploadScan struct {
	NoHeader  bool     `json:"no_header"`
	Rows      int      `json:"rows"`
	Skipped   int      `json:"skipped"`
	Columns   []string `json:"columns"`
	Generated bool     `json:"generated"`
	// Encoding is how the whole file was read (dataimport.Encoding), ""
	// when not kept: a file that is ASCII for its first rows has it
	// decided further on than the mapping step reads again.
	Encoding string `json:"encoding,omitempty"`
}

// SetUploadScan keeps what the streaming pass over upload id counted.
func (db *DB) SetUploadScan(ctx context.Context, id int64, s UploadScan) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := db.Gorm.WithContext(ctx).Exec("UPDATE pending_uploads SET scan = ? WHERE id = ?", string(b), id).Error; err != nil {
		return fmt.Errorf("keep the scan of upload %d: %w", id, err)
	}
	return nil
}

// UploadTTL is how long an unfinished upload is kept: long enough to
// choose columns at leisure, short enough not to pile up.
const UploadTTL = 24 * time.Hour

// SavePendingUpload keeps an uploaded file and returns its token. quota,
// when above 0, bounds the bytes of the workspace's pending uploads, this
// one included; past it the upload is refused with a message.
func (db *DB) SavePendingUpload(ctx context.Context, u *PendingUpload, quota int64) error {
	u.SizeBytes = int64(len(u.Content))
	return db.savePendingUpload(ctx, u, quota, nil)
}

// uploadPartSize is the size of the parts an upload is stored in: large
// enough that a 150 MiB file is 150 statements, small enough that reading
// or writing one costs the server little memory.
const uploadPartSize = 1 << 20

// SavePendingUploadFrom keeps an upload of size bytes read from r, stored
// in parts so that neither writing nor reading it holds the whole file in
// memory. Quota as for SavePendingUpload. A reader that gives more or
// fewer than size bytes stores nothing.
//
// ctx stops the save between two parts, never inside a statement: the
// save then rolls back and reports ctx's error, or, once every part is
// stored, commits and reports success. A cancel that reached a statement
// (the commit) in flight made the client report an error while PostgreSQL
// went on to commit: the caller, told nothing was stored, left a stored
// upload behind (TestCancelledUploadSaveEndsOneWay).
func (db *DB) SavePendingUploadFrom(ctx context.Context, u *PendingUpload, r io.Reader, size, quota int64) error {
	u.Content = []byte{}
	u.SizeBytes = size
	stop := ctx
	return db.savePendingUpload(context.WithoutCancel(ctx), u, quota, func(tx *gorm.DB) error {
		buf := make([]byte, uploadPartSize)
		var total int64
		for seq := 0; ; seq++ {
			if err := stop.Err(); err != nil {
				return err
			}
			n, err := io.ReadFull(r, buf)
			if n > 0 {
				total += int64(n)
				if err := tx.Exec("INSERT INTO pending_upload_parts (upload_id, seq, data) VALUES (?, ?, ?)", u.ID, seq, buf[:n]).Error; err != nil {
					return fmt.Errorf("store upload part %d: %w", seq, err)
				}
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("read upload: %w", err)
			}
		}
		if total != size {
			return fmt.Errorf("upload of %d bytes gave %d", size, total)
		}
		return nil
	})
}

// OpenPendingUpload reads an upload's file, one stored part at a time.
func (db *DB) OpenPendingUpload(ctx context.Context, u PendingUpload) io.Reader {
	if len(u.Content) > 0 {
		return bytes.NewReader(u.Content)
	}
	return &partReader{db: db, ctx: ctx, id: u.ID}
}

// partReader reads the parts of an upload in order, through the read pool:
// an import reads its upload while its own transaction holds SQLite's write
// lock, and the job workers' writes queued behind that lock hold the
// writers' connections, so a part read through them waited up to the busy
// timeout (10 s) each.
type partReader struct {
	db   *DB
	ctx  context.Context
	id   int64
	seq  int
	part []byte
	done bool
}

func (p *partReader) Read(b []byte) (int, error) {
	for len(p.part) == 0 {
		if p.done {
			return 0, io.EOF
		}
		var row struct{ Data []byte }
		res := p.db.Reader(p.ctx).Raw("SELECT data FROM pending_upload_parts WHERE upload_id = ? AND seq = ?", p.id, p.seq).Scan(&row)
		if res.Error != nil {
			return 0, fmt.Errorf("read upload part %d: %w", p.seq, res.Error)
		}
		if res.RowsAffected == 0 {
			p.done = true
			continue
		}
		p.part = row.Data
		p.seq++
	}
	n := copy(b, p.part)
	p.part = p.part[n:]
	return n, nil
}

func (db *DB) savePendingUpload(ctx context.Context, u *PendingUpload, quota int64, after func(tx *gorm.DB) error) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	u.Token = hex.EncodeToString(b[:])
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
				return quotaRefusal(used, u.SizeBytes, quota)
			}
		}
		if err := tx.Create(u).Error; err != nil {
			return err
		}
		if after != nil {
			return after(tx)
		}
		return nil
	})
}

// UploadQuotaError is an upload refused because the workspace's uploads
// waiting for their mapping would pass its quota
// (BATCHEVAL_UPLOAD_QUOTA_MB). It is the Err of an EConflict *Error, whose
// message says what the quota is and what to do.
type UploadQuotaError struct {
	Used  int64 // bytes of the workspace's uploads already waiting
	Size  int64 // bytes of the refused upload
	Quota int64 // the quota, in bytes
}

func (e *UploadQuotaError) Error() string { return "upload quota exceeded" }

// Alone reports an upload larger than the quota by itself, which no
// finished or expired upload makes room for.
func (e *UploadQuotaError) Alone() bool { return e.Size > e.Quota }

// quotaRefusal words a refusal by the upload quota for the person.
func quotaRefusal(used, size, quota int64) error {
	qe := &UploadQuotaError{Used: used, Size: size, Quota: quota}
	msg := fmt.Sprintf("this workspace already holds %s of uploads waiting for their columns to be chosen; with this file it would pass its quota of %s. "+
		"Finish importing those uploads, or wait for them to expire (after %s), then upload again",
		mibText(used), mibText(quota), UploadTTL)
	if qe.Alone() {
		msg = fmt.Sprintf("this file is %s, more than this workspace's quota of %s for uploads waiting for their columns to be chosen: "+
			"split it into smaller files, or ask the operator to raise BATCHEVAL_UPLOAD_QUOTA_MB", mibText(size), mibText(quota))
	}
	return &Error{Code: EConflict, Message: msg, Err: qe}
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
	err := db.Reader(ctx).Where("workspace_id = ? AND token = ? AND created_at >= ?", wsID, token, time.Now().UTC().Add(-UploadTTL)).First(&u).Error
	if err != nil {
		return u, notFoundText(err, "that upload has expired or does not exist: upload the file again")
	}
	return u, nil
}

// DeletePendingUpload removes an upload once imported.
func (db *DB) DeletePendingUpload(ctx context.Context, id int64) error {
	return db.Gorm.WithContext(ctx).Delete(&PendingUpload{}, id).Error
}

// DropRefusedUpload deletes an upload whose save may or may not have
// committed (its context was cancelled while it was being stored). It
// matches the upload by its workspace, file name and size as well as its
// id: an id handed out by a save that was rolled back can be handed out
// again, on SQLite, to another upload.
func (db *DB) DropRefusedUpload(ctx context.Context, u PendingUpload) error {
	return db.Gorm.WithContext(ctx).Where("id = ? AND workspace_id = ? AND filename = ? AND size_bytes = ?",
		u.ID, u.WorkspaceID, u.Filename, u.SizeBytes).Delete(&PendingUpload{}).Error
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
