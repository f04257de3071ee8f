package models

import (
	"context"
	"time"
)

// The JSON API's requests are counted per token in fixed windows of one
// minute (api_rate_windows, migration 00067), by the database's clock:
// server processes sharing the database share the count, whatever their
// own clocks say. A fixed window lets a token send up to twice its limit
// across the turn of a minute; the limit is against loops, not exact
// accounting.

// Rate buckets: every API request of a token, and its launches.
const (
	RateRequests = "requests"
	RateLaunches = "launches"
)

// RateCount is a token's count in the current window of a bucket.
type RateCount struct {
	// Hits is the token's requests in this minute, this one included.
	Hits int
	// Reset is how long until the window ends (and the count restarts).
	Reset time.Duration
}

// CountAPIRequest adds one to the token's count of bucket in the current
// minute and answers the new count, in one statement (an upsert), so that
// requests at the same moment, in any process, each see a different
// count. A token's first request of a minute deletes its older windows.
func (db *DB) CountAPIRequest(ctx context.Context, tokenID int64, bucket string) (RateCount, error) {
	var nowMS int64
	if err := db.Gorm.WithContext(ctx).Raw("SELECT " + dbNowMSSQL(db.Dialect)).Scan(&nowMS).Error; err != nil {
		return RateCount{}, err
	}
	minute := nowMS / 60000
	reset := time.Duration((minute+1)*60000-nowMS) * time.Millisecond
	var hits int
	err := db.Gorm.WithContext(ctx).Raw(`INSERT INTO api_rate_windows (token_id, bucket, minute, hits) VALUES (?, ?, ?, 1)
		ON CONFLICT (token_id, bucket, minute) DO UPDATE SET hits = api_rate_windows.hits + 1
		RETURNING hits`, tokenID, bucket, minute).Scan(&hits).Error
	if err != nil {
		return RateCount{}, err
	}
	if hits == 1 {
		if err := db.Gorm.WithContext(ctx).Exec("DELETE FROM api_rate_windows WHERE token_id = ? AND bucket = ? AND minute < ?",
			tokenID, bucket, minute).Error; err != nil {
			return RateCount{}, err
		}
	}
	return RateCount{Hits: hits, Reset: reset}, nil
}
