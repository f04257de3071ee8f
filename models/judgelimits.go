package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// JudgeLimits are the limits of one judge (one API key, one endpoint)
// that every worker sharing the database keeps together. Zero means no
// limit.
type JudgeLimits struct {
	JudgeID           int64 `gorm:"primaryKey;autoIncrement:false"`
	RequestsPerMinute int
	TokensPerMinute   int
	// MaxConcurrency bounds the calls in flight across every worker.
	MaxConcurrency int
	// SlowMS: an answer slower than this many milliseconds halves the
	// allowed concurrency, as a 429 does; 0 turns that off.
	SlowMS int64
	// AdaptiveLimit is the concurrency allowed now (1..MaxConcurrency).
	AdaptiveLimit int
	Successes     int
	LastCutMS     int64
	RequestMilli  int64
	TokenMilli    int64
	RefilledMS    int64
	Version       int64
}

// TableName pins the table name.
func (JudgeLimits) TableName() string { return "judge_limits" }

// Any reports whether at least one limit is set.
func (l JudgeLimits) Any() bool {
	return l.RequestsPerMinute > 0 || l.TokensPerMinute > 0 || l.MaxConcurrency > 0
}

// MaxJudgeConcurrency bounds the shared concurrency a judge may be given
// (one slot row each).
const MaxJudgeConcurrency = 1024

// ErrSlowWithoutShared is why a slow threshold alone is refused.
const ErrSlowWithoutShared = "a slow threshold lowers the calls at once of all runs together (a slow answer halves it), so it needs that limit: " +
	"set “Calls at once, all runs together” too, or leave the slow threshold empty"

// CheckJudgeLimits refuses negative, absurd or ineffective limits.
func CheckJudgeLimits(l JudgeLimits) error {
	// Each limit by the judge form's label, with what to write (it was
	// "judge limits cannot be negative (0 means no limit)", whichever).
	for _, f := range []struct {
		label string
		value int64
		none  string
	}{
		{"Calls at once, all runs together", int64(l.MaxConcurrency), "write 0 or leave it empty for no limit"},
		{"Requests per minute", int64(l.RequestsPerMinute), "write 0 or leave it empty for no limit"},
		{"Tokens per minute", int64(l.TokensPerMinute), "write 0 or leave it empty for no limit"},
		{"Slow above", l.SlowMS, "leave it empty (or 0) to turn it off"},
	} {
		if f.value < 0 {
			return Errorf(EInvalid, "“%s” cannot be negative: give a positive number, or %s.", f.label, f.none)
		}
	}
	switch {
	case l.MaxConcurrency > MaxJudgeConcurrency:
		return Errorf(EInvalid, "the shared concurrency limit is %d; the most is %d", l.MaxConcurrency, MaxJudgeConcurrency)
	case l.SlowMS > 0 && l.MaxConcurrency == 0:
		// A slow answer halves the shared concurrency: with none there is
		// nothing to halve, and the threshold alone was stored as no
		// limits at all (Any), dropped without a word.
		return Errorf(EInvalid, ErrSlowWithoutShared)
	}
	return nil
}

// FindJudgeLimits returns a judge's limits; zero limits when none are set.
func (db *DB) FindJudgeLimits(ctx context.Context, judgeID int64) (JudgeLimits, error) {
	var l JudgeLimits
	err := db.Gorm.WithContext(ctx).Where("judge_id = ?", judgeID).Limit(1).Find(&l).Error
	if err != nil {
		return JudgeLimits{}, err
	}
	l.JudgeID = judgeID
	return l, nil
}

// SetJudgeLimits stores a judge's limits. The adaptive concurrency starts
// again from the maximum, the buckets from full, and one slot row exists
// for each call allowed in flight. The judge's updated_at moves with them,
// so that its revision (Judge.Revision) names its limits too.
func (db *DB) SetJudgeLimits(ctx context.Context, l JudgeLimits) error {
	if err := CheckJudgeLimits(l); err != nil {
		return err
	}
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&Judge{}).Where("id = ?", l.JudgeID).UpdateColumn("updated_at", time.Now().UTC()).Error; err != nil {
			return err
		}
		return setJudgeLimitsTx(tx, l)
	})
}

// setJudgeLimitsIfChanged stores l in tx unless the judge's stored limits
// are the same (storing them would restart its adaptive concurrency).
func setJudgeLimitsIfChanged(tx *gorm.DB, l JudgeLimits) error {
	var old JudgeLimits
	if err := tx.Where("judge_id = ?", l.JudgeID).Limit(1).Find(&old).Error; err != nil {
		return err
	}
	if old.MaxConcurrency == l.MaxConcurrency && old.RequestsPerMinute == l.RequestsPerMinute &&
		old.TokensPerMinute == l.TokensPerMinute && old.SlowMS == l.SlowMS {
		return nil
	}
	return setJudgeLimitsTx(tx, l)
}

// setJudgeLimitsTx is SetJudgeLimits in a transaction, leaving updated_at.
func setJudgeLimitsTx(tx *gorm.DB, l JudgeLimits) error {
	row := JudgeLimits{JudgeID: l.JudgeID, RequestsPerMinute: l.RequestsPerMinute, TokensPerMinute: l.TokensPerMinute,
		MaxConcurrency: l.MaxConcurrency, SlowMS: l.SlowMS, AdaptiveLimit: l.MaxConcurrency,
		RequestMilli: bucketCapacity(l.RequestsPerMinute), TokenMilli: bucketCapacity(l.TokensPerMinute)}
	if err := tx.Where("judge_id = ?", l.JudgeID).Delete(&JudgeLimits{}).Error; err != nil {
		return err
	}
	if !l.Any() {
		return tx.Exec("DELETE FROM judge_slots WHERE judge_id = ?", l.JudgeID).Error
	}
	if err := tx.Create(&row).Error; err != nil {
		return err
	}
	// The buckets are full as of now by the database's clock, the one
	// TakeJudgeBudget refills them by.
	if err := tx.Exec("UPDATE judge_limits SET refilled_ms = "+dbNowMSSQL(Dialect(tx.Dialector.Name()))+" WHERE judge_id = ?", l.JudgeID).Error; err != nil {
		return err
	}
	// Slots above the limit go once free; held ones end with their call.
	if err := tx.Exec("DELETE FROM judge_slots WHERE judge_id = ? AND slot >= ? AND holder = ''", l.JudgeID, l.MaxConcurrency).Error; err != nil {
		return err
	}
	for s := 0; s < l.MaxConcurrency; s++ {
		if err := tx.Exec("INSERT INTO judge_slots (judge_id, slot, holder, expires_ms) VALUES (?, ?, '', 0) ON CONFLICT (judge_id, slot) DO NOTHING",
			l.JudgeID, s).Error; err != nil {
			return err
		}
	}
	return nil
}

// bucketCapacity is the most a bucket of perMinute holds, in thousandths:
// one second's worth (at least one unit), so that no minute sees much more
// than perMinute, whichever worker sends.
func bucketCapacity(perMinute int) int64 {
	if perMinute <= 0 {
		return 0
	}
	return max(int64(perMinute)*1000/60, 1000)
}

// Judge slots, buckets and cuts keep their times by the database's clock
// (dbNowMSSQL), never a worker's, as run leases do (dbclock.go): a worker
// whose clock ran ahead saw the slots other workers hold as expired and
// took them, so the judge had more calls in flight than its shared limit;
// one whose clock ran behind wrote leases that had already lapsed for the
// others. The buckets refilled by whichever clock read them last.

// AcquireJudgeSlot leases one of the judge's free slots (below its current
// adaptive limit) to holder for lease, by the database's clock. It reports
// false when none is free. Every worker acquires through this one
// conditional UPDATE, so two never hold one slot.
func (db *DB) AcquireJudgeSlot(ctx context.Context, judgeID int64, holder string, lease time.Duration) (bool, error) {
	now := dbNowMSSQL(db.Dialect)
	res := db.Gorm.WithContext(ctx).Exec(`UPDATE judge_slots SET holder = ?, expires_ms = `+now+` + ?
WHERE judge_id = ? AND (holder = '' OR expires_ms < `+now+`) AND slot = (
  SELECT s.slot FROM judge_slots s JOIN judge_limits l ON l.judge_id = s.judge_id
  WHERE s.judge_id = ? AND s.slot < l.adaptive_limit AND (s.holder = '' OR s.expires_ms < `+now+`)
  ORDER BY s.slot LIMIT 1)`, holder, lease.Milliseconds(), judgeID, judgeID)
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == 1, nil
}

// RenewJudgeSlots extends the leases of the slots holders hold to lease
// from now, by the database's clock.
func (db *DB) RenewJudgeSlots(ctx context.Context, judgeID int64, holders []string, lease time.Duration) error {
	if len(holders) == 0 {
		return nil
	}
	return db.Gorm.WithContext(ctx).Exec("UPDATE judge_slots SET expires_ms = "+dbNowMSSQL(db.Dialect)+" + ? WHERE judge_id = ? AND holder IN ?",
		lease.Milliseconds(), judgeID, holders).Error
}

// ReleaseJudgeSlot frees the slot holder holds, if it still does.
func (db *DB) ReleaseJudgeSlot(ctx context.Context, judgeID int64, holder string) error {
	return db.Gorm.WithContext(ctx).Exec("UPDATE judge_slots SET holder = '', expires_ms = 0 WHERE judge_id = ? AND holder = ?", judgeID, holder).Error
}

// JudgeSlotsHeld counts the judge's slots leased and not expired, by the
// database's clock.
func (db *DB) JudgeSlotsHeld(ctx context.Context, judgeID int64) (int, error) {
	var n int64
	err := db.Gorm.WithContext(ctx).Table("judge_slots").Where("judge_id = ? AND holder <> '' AND expires_ms >= "+dbNowMSSQL(db.Dialect), judgeID).Count(&n).Error
	return int(n), err
}

// errBucketRace: another worker changed the buckets between our read and
// our write; read again.
var errBucketRace = errors.New("judge limits changed concurrently")

// TakeJudgeBudget takes one request and tokens tokens from the judge's
// per-minute buckets, refilled up to now by the database's clock. When
// they hold too little it takes nothing and returns how long to wait
// before trying again. The buckets are read, refilled and written back
// with a conditional UPDATE on their version, so concurrent workers never
// both spend the same budget.
func (db *DB) TakeJudgeBudget(ctx context.Context, judgeID int64, tokens int) (time.Duration, error) {
	for range 50 {
		wait, err := db.takeJudgeBudget(ctx, judgeID, tokens)
		if !errors.Is(err, errBucketRace) {
			return wait, err
		}
	}
	return 10 * time.Millisecond, nil
}

// judgeLimitsNow is a judge's limits read with the database's clock.
type judgeLimitsNow struct {
	JudgeLimits `gorm:"embedded"`
	DBNowMS     int64
}

func (db *DB) takeJudgeBudget(ctx context.Context, judgeID int64, tokens int) (time.Duration, error) {
	var ln judgeLimitsNow
	err := db.Gorm.WithContext(ctx).Table("judge_limits").Select("*, "+dbNowMSSQL(db.Dialect)+" AS db_now_ms").
		Where("judge_id = ?", judgeID).Limit(1).Scan(&ln).Error
	if err != nil {
		return 0, err
	}
	l, nowMS := ln.JudgeLimits, ln.DBNowMS
	if l.RequestsPerMinute <= 0 && l.TokensPerMinute <= 0 {
		return 0, nil
	}
	elapsed := max(nowMS-l.RefilledMS, 0)
	refill := func(have int64, perMinute int) int64 {
		if perMinute <= 0 {
			return 0
		}
		// perMinute units a minute = perMinute thousandths a millisecond / 60.
		return min(have+elapsed*int64(perMinute)/60, bucketCapacity(perMinute))
	}
	req, tok := refill(l.RequestMilli, l.RequestsPerMinute), refill(l.TokenMilli, l.TokensPerMinute)
	needTok := int64(tokens) * 1000
	var wait time.Duration
	if l.RequestsPerMinute > 0 && req < 1000 {
		wait = max(wait, time.Duration((1000-req)*60/int64(l.RequestsPerMinute))*time.Millisecond)
	}
	if l.TokensPerMinute > 0 {
		// A call bigger than the whole bucket goes when the bucket is full
		// (and leaves it in debt), or it would never go.
		enough := min(needTok, bucketCapacity(l.TokensPerMinute))
		if tok < enough {
			wait = max(wait, time.Duration((enough-tok)*60/int64(l.TokensPerMinute))*time.Millisecond)
		}
	}
	if wait > 0 {
		return max(wait, time.Millisecond), nil
	}
	if l.RequestsPerMinute > 0 {
		req -= 1000
	}
	if l.TokensPerMinute > 0 {
		tok -= needTok
	}
	res := db.Gorm.WithContext(ctx).Exec(`UPDATE judge_limits SET request_milli = ?, token_milli = ?, refilled_ms = ?, version = version + 1
WHERE judge_id = ? AND version = ?`, req, tok, max(nowMS, l.RefilledMS), judgeID, l.Version)
	if res.Error != nil {
		return 0, res.Error
	}
	if res.RowsAffected != 1 {
		return 0, errBucketRace
	}
	return 0, nil
}

// ChargeJudgeTokens corrects the token bucket once a call's real token
// count is known (delta = real - estimated; negative gives back).
func (db *DB) ChargeJudgeTokens(ctx context.Context, judgeID int64, delta int) error {
	if delta == 0 {
		return nil
	}
	return db.Gorm.WithContext(ctx).Exec(`UPDATE judge_limits SET token_milli = token_milli - ?, version = version + 1
WHERE judge_id = ? AND tokens_per_minute > 0`, int64(delta)*1000, judgeID).Error
}

// judgeCutPause is the least time between two cuts of a judge's adaptive
// concurrency: the 429s of calls sent together are one signal, not many.
const judgeCutPause = time.Second

// CutJudgeConcurrency halves the judge's adaptive concurrency (at least 1),
// unless it was cut less than a second ago by the database's clock.
func (db *DB) CutJudgeConcurrency(ctx context.Context, judgeID int64) error {
	now := dbNowMSSQL(db.Dialect)
	return db.Gorm.WithContext(ctx).Exec(`UPDATE judge_limits SET
  adaptive_limit = CASE WHEN adaptive_limit / 2 < 1 THEN 1 ELSE adaptive_limit / 2 END,
  successes = 0, last_cut_ms = `+now+`
WHERE judge_id = ? AND max_concurrency > 0 AND last_cut_ms <= `+now+` - ?`, judgeID, judgeCutPause.Milliseconds()).Error
}

// GrowJudgeConcurrency counts a success; after as many successes in a row
// as the current limit, the limit grows by one (up to the maximum).
func (db *DB) GrowJudgeConcurrency(ctx context.Context, judgeID int64) error {
	return db.Gorm.WithContext(ctx).Exec(`UPDATE judge_limits SET
  adaptive_limit = CASE WHEN successes + 1 >= adaptive_limit AND adaptive_limit < max_concurrency THEN adaptive_limit + 1 ELSE adaptive_limit END,
  successes = CASE WHEN successes + 1 >= adaptive_limit THEN 0 ELSE successes + 1 END
WHERE judge_id = ? AND max_concurrency > 0`, judgeID).Error
}

// String describes the limits for logs.
func (l JudgeLimits) String() string {
	return fmt.Sprintf("rpm=%d tpm=%d concurrency=%d/%d", l.RequestsPerMinute, l.TokensPerMinute, l.AdaptiveLimit, l.MaxConcurrency)
}
