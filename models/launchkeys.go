package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// LaunchKeyTTL is how long an Idempotency-Key of an API launch is kept: a
// day covers a script's retries (and a night's batch job re-run in the
// morning) without keeping every key for ever.
const LaunchKeyTTL = 24 * time.Hour

// What a launch key launches.
const (
	LaunchKeyRun        = "run"
	LaunchKeyExperiment = "experiment"
)

// LaunchKey is an Idempotency-Key an API launch was sent with, kept with
// what it launched: a retry with the same key answers that run or
// experiment instead of launching again.
type LaunchKey struct {
	ID          int64
	WorkspaceID int64
	// Principal is who sent it ("token:ID", "user:ID", "local"): keys of
	// different callers never meet.
	Principal      string
	IdempotencyKey string
	// BodyHash identifies the request (its method, path and body), so the
	// same key with another request is told apart.
	BodyHash     string
	RunID        *int64
	ExperimentID *int64
	CreatedAt    time.Time
	ExpiresAt    time.Time
	// Launches is LaunchKeyRun or LaunchKeyExperiment: which creation
	// records the key (an experiment's own runs do not). Not stored.
	Launches string `gorm:"-"`
	// SentBodyHash is the hash of the body exactly as sent, when BodyHash
	// is of its canonical form: keys stored before bodies were compared
	// as JSON hold this one. Not stored.
	SentBodyHash string `gorm:"-"`
}

// ErrLaunchKeyTaken is the error of a launch whose Idempotency-Key another
// launch recorded first (a retry racing the original): nothing was
// launched, and FindLaunchKey now finds what the other one launched.
var ErrLaunchKeyTaken = errors.New("the idempotency key was used by another launch")

type launchKeyCtx struct{}

// WithLaunchKey returns ctx carrying k: CreateRun (for LaunchKeyRun) or
// CreateExperiment (for LaunchKeyExperiment) records it, with what they
// create, in the same transaction.
func WithLaunchKey(ctx context.Context, k LaunchKey) context.Context {
	return context.WithValue(ctx, launchKeyCtx{}, k)
}

// launchKeyOf returns the key ctx carries for creations of kind launches.
func launchKeyOf(ctx context.Context, launches string) (LaunchKey, bool) {
	k, ok := ctx.Value(launchKeyCtx{}).(LaunchKey)
	return k, ok && k.Launches == launches
}

// FindLaunchKey finds a caller's unexpired key; ENotFound when there is none.
// It reads the primary, so a key a racing launch just committed is seen.
func (db *DB) FindLaunchKey(ctx context.Context, wsID int64, principal, key string) (LaunchKey, error) {
	var k LaunchKey
	err := db.Gorm.WithContext(ctx).Where("workspace_id = ? AND principal = ? AND idempotency_key = ? AND expires_at > ?",
		wsID, principal, key, time.Now().UTC()).First(&k).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return k, Errorf(ENotFound, "no launch has the idempotency key %q", key)
	}
	return k, err
}

// recordLaunchKey stores k, within the transaction tx that creates what it
// launched (runID or experimentID set by the caller). Expired keys of the
// workspace go first, so an expired key can be used again.
func recordLaunchKey(tx *gorm.DB, k LaunchKey) error {
	now := time.Now().UTC()
	if err := tx.Where("workspace_id = ? AND expires_at <= ?", k.WorkspaceID, now).Delete(&LaunchKey{}).Error; err != nil {
		return fmt.Errorf("forget expired launch keys: %w", err)
	}
	k.ID, k.CreatedAt, k.ExpiresAt = 0, now, now.Add(LaunchKeyTTL)
	if err := tx.Create(&k).Error; err != nil {
		if isUniqueViolation(err) {
			return &Error{Code: EConflict, Message: ErrLaunchKeyTaken.Error(), Err: ErrLaunchKeyTaken}
		}
		return fmt.Errorf("record launch key: %w", err)
	}
	return nil
}
