package models

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Webhook is a workspace's optional notification of finished and failed
// runs: a JSON POST that Slack's incoming webhooks (and anything reading
// {"text": ...}) understand.
type Webhook struct {
	WorkspaceID int64 `gorm:"primaryKey;autoIncrement:false"`
	// URL is the address messages are posted to. It is often a secret
	// itself (a chat's incoming-webhook address lets anyone post there),
	// so it is stored sealed as judge keys are (StoredURL) whenever the
	// server has a secret key; FindWebhook opens it.
	URL string `gorm:"-"`
	// StoredURL is the address as stored: sealed, or plaintext when the
	// server had no secret key (SealStoredKeys seals it once one exists).
	StoredURL string `gorm:"column:url" json:"-"`
	// URLProblem says why a sealed address could not be opened (another
	// secret key); URL is then empty and nothing is delivered.
	URLProblem string `gorm:"-"`
	// BaseURL is the dashboard's address as people reach it; the message
	// links to the run under it. Empty sends the run's path alone.
	BaseURL    string
	OnFinished bool
	OnFailed   bool
	UpdatedAt  time.Time
	// LastStatus is the outcome of the last delivery ("200 OK", or why it
	// failed), shown to owners so a broken hook is noticed.
	LastStatus string
	LastSentAt *time.Time
}

// Wants reports whether the webhook is told of a run that ended with
// status: a failed run when OnFailed, any other end when OnFinished.
func (w Webhook) Wants(status string) bool {
	if status == RunFailed {
		return w.OnFailed
	}
	return w.OnFinished
}

// WebhookSite is what the audit log says of a webhook address: its scheme
// and host, the rest elided ("https://hooks.slack.com/…"), since the path
// of a chat's incoming-webhook address is the secret that lets anyone post.
func WebhookSite(addr string) string {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return "an address"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// maxWebhookURL bounds the stored addresses (a URL, not a document).
const maxWebhookURL = 2000

// Validate checks the addresses: absolute http(s) URLs without user
// information (a password in a URL would be shown on the settings page).
func (w *Webhook) Validate() error {
	w.URL, w.BaseURL = strings.TrimSpace(w.URL), strings.TrimRight(strings.TrimSpace(w.BaseURL), "/")
	if err := checkHTTPURL(w.URL, "webhook URL"); err != nil {
		return err
	}
	if w.BaseURL != "" {
		if err := checkHTTPURL(w.BaseURL, "dashboard address"); err != nil {
			return err
		}
	}
	if !w.OnFinished && !w.OnFailed {
		return Errorf(EInvalid, "choose at least one event (run finished, run failed), or remove the webhook")
	}
	return nil
}

func checkHTTPURL(s, what string) error {
	if len(s) > maxWebhookURL {
		return Errorf(EInvalid, "the %s is too long (at most %d characters)", what, maxWebhookURL)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Errorf(EInvalid, "the %s must be an absolute http:// or https:// address", what)
	}
	if u.User != nil {
		return Errorf(EInvalid, "the %s must not hold a user name or password", what)
	}
	return nil
}

// FindWebhook returns the workspace's webhook; ENotFound when none is set.
func (db *DB) FindWebhook(ctx context.Context, wsID int64) (Webhook, error) {
	var w Webhook
	err := db.Reader(ctx).Where("workspace_id = ?", wsID).First(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return w, Errorf(ENotFound, "this workspace has no webhook")
	}
	db.openWebhookURL(&w)
	return w, err
}

// openWebhookURL fills w.URL from the stored address.
func (db *DB) openWebhookURL(w *Webhook) {
	if !IsSealed(w.StoredURL) {
		w.URL = w.StoredURL
		return
	}
	sealer, err := db.Secrets.Sealer(false)
	switch {
	case err == errNoSecretKey:
		w.URL, w.URLProblem = "", "the stored webhook address is encrypted and this server has no secret key: "+
			"configure the key it was encrypted with (BATCHEVAL_SECRET_KEY or BATCHEVAL_SECRET_KEY_FILE), or enter the address again"
		return
	case err == nil:
		w.URL, err = sealer.openFor(w.StoredURL, webhookAAD)
	}
	if err != nil {
		w.URL, w.URLProblem = "", "the stored webhook address cannot be read: "+ErrorMessage(err)+
			" (it was encrypted with another secret key: configure that key, or enter the address again)"
	}
}

// sealWebhookURL sets w.StoredURL from w.URL: sealed when the server has
// a secret key (one is made in local mode, as for judge keys), plaintext
// when it has none, so that a webhook works on every server.
func (db *DB) sealWebhookURL(w *Webhook) error {
	sealer, err := db.Secrets.Sealer(true)
	if err == errNoSecretKey {
		w.StoredURL = w.URL
		return nil
	} else if err != nil {
		return err
	}
	w.StoredURL, err = sealer.sealFor(w.URL, webhookAAD)
	return err
}

// SaveWebhook sets (or replaces) the workspace's webhook.
func (db *DB) SaveWebhook(ctx context.Context, w Webhook) (Webhook, error) {
	return db.SaveWebhookIf(ctx, w, nil)
}

// SaveWebhookIf is SaveWebhook for a writer who read the webhook at a
// revision (Webhook.Revision, or NoWebhookRevision when there was none):
// when expect is not met (another save or a removal came since), nothing
// is written and the error's code is EChanged. A nil expect saves over
// any state. Given an audit (described with the webhook saved), its entry
// is written in the same transaction.
func (db *DB) SaveWebhookIf(ctx context.Context, w Webhook, expect Expectation, audit ...Audit[Webhook]) (Webhook, error) {
	if err := w.Validate(); err != nil {
		return w, err
	}
	// New settings have no delivery yet: the last outcome is forgotten.
	w.LastStatus, w.LastSentAt, w.URLProblem = "", nil, ""
	if err := db.sealWebhookURL(&w); err != nil {
		return w, fmt.Errorf("encrypt the webhook address: %w", err)
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if expect != nil {
			// The workspace's row stays locked until the save commits
			// (PostgreSQL; SQLite's immediate transaction holds the whole
			// database), so no other save or removal comes between the
			// check and the write, a first webhook included (no webhook
			// row to lock yet).
			if err := lockWorkspace(tx, db.Dialect, w.WorkspaceID); err != nil {
				return err
			}
			var cur []Webhook
			if err := tx.Where("workspace_id = ?", w.WorkspaceID).Limit(1).Find(&cur).Error; err != nil {
				return fmt.Errorf("read the webhook of workspace %d: %w", w.WorkspaceID, err)
			}
			revision := NoWebhookRevision
			if len(cur) > 0 {
				revision = cur[0].Revision()
			}
			if !expect.met(revision) {
				return &Error{Code: EChanged, Message: "the webhook was changed since you read it (another owner saved or removed it); nothing was saved"}
			}
		}
		w.UpdatedAt = time.Now().UTC()
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "workspace_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"url", "base_url", "on_finished", "on_failed", "updated_at", "last_status", "last_sent_at"}),
		}).Create(&w).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, w)
	})
	return w, err
}

// DeleteWebhook removes the workspace's webhook (no error when none).
func (db *DB) DeleteWebhook(ctx context.Context, wsID int64) error {
	return db.DeleteWebhookIf(ctx, wsID, nil)
}

// DeleteWebhookIf is DeleteWebhook for an owner who read the webhook at a
// revision (Webhook.Revision): when another save came since, nothing is
// removed and the error's code is EChanged, as SaveWebhookIf does. A
// webhook already removed is no error (what was asked for is done). A nil
// expect removes any webhook. Given an audit, its entry is written in the
// same transaction.
func (db *DB) DeleteWebhookIf(ctx context.Context, wsID int64, expect Expectation, audit ...Audit[struct{}]) error {
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if expect != nil {
			// As in SaveWebhookIf: no save comes between the check and
			// the removal.
			if err := lockWorkspace(tx, db.Dialect, wsID); err != nil {
				return err
			}
			var cur []Webhook
			if err := tx.Where("workspace_id = ?", wsID).Limit(1).Find(&cur).Error; err != nil {
				return fmt.Errorf("read the webhook of workspace %d: %w", wsID, err)
			}
			if len(cur) == 0 {
				return nil
			}
			if !expect.met(cur[0].Revision()) {
				return &Error{Code: EChanged, Message: "the webhook was changed since you read it (another owner saved it); nothing was removed"}
			}
		}
		if err := tx.Where("workspace_id = ?", wsID).Delete(&Webhook{}).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, struct{}{})
	})
}

// RecordWebhookDelivery keeps the outcome of the last delivery. A delivery
// is no change of settings: updated_at, and so the webhook's revision,
// stays (UpdateColumns; GORM's Updates would move it, and every finished
// run would then refuse an owner's open settings form).
func (db *DB) RecordWebhookDelivery(ctx context.Context, wsID int64, status string) error {
	now := time.Now().UTC()
	return db.Gorm.WithContext(ctx).Model(&Webhook{}).Where("workspace_id = ?", wsID).
		UpdateColumns(map[string]any{"last_status": clip(status, 300), "last_sent_at": now}).Error
}

// AuditWebhookChanged is the audit action of setting or removing a
// workspace's webhook (it says where run outcomes are sent).
const AuditWebhookChanged = "webhook-changed"
