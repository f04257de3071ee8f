package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// cachedAnswer is a row of judge_response_cache.
type cachedAnswer struct {
	WorkspaceID int64  `gorm:"primaryKey;autoIncrement:false"`
	RequestHash string `gorm:"primaryKey"`
	Occurrence  int    `gorm:"primaryKey;autoIncrement:false"`
	Response    string
	CreatedAt   time.Time
}

func (cachedAnswer) TableName() string { return "judge_response_cache" }

// ResponseCache is one workspace's judge answer cache (it implements
// judge.AnswerStore). Answers are only ever found by the workspace that
// paid for them.
type ResponseCache struct {
	db          *DB
	workspaceID int64
}

// ResponseCache returns the judge answer cache of a workspace.
func (db *DB) ResponseCache(workspaceID int64) *ResponseCache {
	return &ResponseCache{db: db, workspaceID: workspaceID}
}

// LoadAnswer returns the stored answer of the occurrence-th request with
// this hash, and false when there is none.
func (c *ResponseCache) LoadAnswer(ctx context.Context, requestHash string, occurrence int) ([]byte, bool, error) {
	var row cachedAnswer
	err := c.db.Gorm.WithContext(ctx).
		Where("workspace_id = ? AND request_hash = ? AND occurrence = ?", c.workspaceID, requestHash, occurrence).
		Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return []byte(row.Response), true, nil
}

// SaveAnswer stores an answer; when one is already stored under the same
// hash and occurrence (two runs raced), the first stays.
func (c *ResponseCache) SaveAnswer(ctx context.Context, requestHash string, occurrence int, answer []byte) error {
	row := cachedAnswer{WorkspaceID: c.workspaceID, RequestHash: requestHash, Occurrence: occurrence,
		Response: string(answer), CreatedAt: time.Now().UTC()}
	return c.db.Gorm.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error
}

// AddCachedCall counts one call of a run answered from the cache.
func (db *DB) AddCachedCall(ctx context.Context, runID int64) error {
	return db.Gorm.WithContext(ctx).Model(&Run{}).Where("id = ?", runID).
		UpdateColumn("cached_calls", gorm.Expr("cached_calls + 1")).Error
}
