package models

import (
	"context"
	"fmt"
	"time"
)

// The JSON API's requests are limited per token by a generic cell rate
// algorithm (GCRA) kept in the database (api_rate_limits, migration
// 00069), by the database's clock: server processes sharing the database
// share the limit, whatever their own clocks say. A limit of L a minute
// gives each request a share of a minute, T = 60 s / L, and keeps one
// time per token and bucket, the theoretical arrival time (TAT): a
// request is let through when TAT is no more than a minute less T ahead
// of now, and moves TAT on by T (from now, if TAT is past). So a token
// that was quiet may send L requests at once, and then one every T: its
// allowance comes back steadily, not all at once at the turn of a minute.
// The fixed per-minute counts this replaced let 2L through in a second
// across the turn (L at 12:00:59, L more at 12:01:00); here the second
// burst gets what one second gave back, L/60.
//
// Each request is one statement, an upsert that reads the clock, decides
// and moves TAT: on PostgreSQL the row is locked by the upsert, so
// requests of one token at the same moment, in any process, are decided
// one after the other on the TAT the one before left.

// Rate buckets: every API request of a token, and its launches.
const (
	RateRequests = "requests"
	RateLaunches = "launches"
)

// RateWindow is the time a limit is stated over: L requests a minute.
const RateWindow = time.Minute

// RateDecision is what the limit says of one request.
type RateDecision struct {
	// Allowed: the request is let through (and counted).
	Allowed bool
	// Remaining is how many more requests would be let through now.
	Remaining int
	// Reset is how long until the whole limit is available again.
	Reset time.Duration
	// RetryAfter, for a request refused, is how long until one is let
	// through again.
	RetryAfter time.Duration
}

// rateLimitSQL is the statement of TakeAPIRate. Its parameters: the time
// (µs since 1970, NULL for the database's clock), the token, the bucket,
// then T and the tolerance (60 s − T) twice, all in µs.
func rateLimitSQL(d Dialect) string {
	return hotSQL.get(d, "api rate limit", 0, func() string {
		greatest := "GREATEST"
		if d == SQLite {
			greatest = "MAX"
		}
		ahead := greatest + "(api_rate_limits.tat_us, excluded.seen_us)"
		return `INSERT INTO api_rate_limits (token_id, bucket, tat_us, seen_us, allowed)
 SELECT ?, ?, clock.n + ?, clock.n, 1 FROM (SELECT COALESCE(CAST(? AS BIGINT), ` + dbNowMSSQL(d) + ` * 1000) AS n) AS clock WHERE true
 ON CONFLICT (token_id, bucket) DO UPDATE SET
 tat_us = CASE WHEN ` + ahead + ` - excluded.seen_us <= ? THEN ` + ahead + ` + ? ELSE api_rate_limits.tat_us END,
 allowed = CASE WHEN ` + ahead + ` - excluded.seen_us <= ? THEN 1 ELSE 0 END,
 seen_us = excluded.seen_us
 RETURNING tat_us, seen_us, allowed`
	})
}

// TakeAPIRate decides one request of the token in bucket under a limit of
// limit requests a minute (limit ≥ 1), and counts it when it is let
// through, in one statement. at is the request's time; the zero time
// reads the database's clock (tests give one).
func (db *DB) TakeAPIRate(ctx context.Context, tokenID int64, bucket string, limit int, at time.Time) (RateDecision, error) {
	if limit < 1 {
		return RateDecision{}, fmt.Errorf("rate limit %d: must be at least 1", limit)
	}
	window := RateWindow.Microseconds()
	share := max(window/int64(limit), 1)
	tolerance := window - share
	var now any
	if !at.IsZero() {
		now = at.UnixMicro()
	}
	var tat, seen int64
	var allowed int
	err := db.hotQueryRow(ctx, db.SQL, nil, rateLimitSQL(db.Dialect), tokenID, bucket, share, now, tolerance, share, tolerance).Scan(&tat, &seen, &allowed)
	if err != nil {
		return RateDecision{}, fmt.Errorf("count API request: %w", err)
	}
	ahead := tat - seen // how far TAT is ahead of now, this request counted
	out := RateDecision{Allowed: allowed == 1, Reset: time.Duration(max(ahead, 0)) * time.Microsecond}
	if room := tolerance - ahead; room >= 0 {
		out.Remaining = int(room/share) + 1
	}
	if !out.Allowed {
		out.RetryAfter = time.Duration(ahead-tolerance) * time.Microsecond
	}
	return out, nil
}
