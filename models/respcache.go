package models

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// cachedAnswer is a row of judge_response_cache.
type cachedAnswer struct {
	WorkspaceID int64  `gorm:"primaryKey;autoIncrement:false"`
	RequestHash string `gorm:"primaryKey"`
	Occurrence  int    `gorm:"primaryKey;autoIncrement:false"`
	Response    string
	CreatedAt   time.Time
	// RunID is the run that paid for the answer (nil before migration
	// 00044): a purge of the run deletes it (purgeBulk).
	RunID *int64
}

func (cachedAnswer) TableName() string { return "judge_response_cache" }

// ResponseCache is one workspace's judge answer cache (it implements
// judge.AnswerStore and judge.BatchLoader). Answers are only ever found by
// the workspace that paid for them. Its statements run once per judge
// call, so they are fixed SQL through database/sql (see hotsql.go).
type ResponseCache struct {
	db          *DB
	workspaceID int64
	// runID is the run whose calls store answers through this cache (0:
	// none); the answers are deleted with it when it is purged.
	runID int64
}

// ResponseCache returns the judge answer cache of a workspace.
func (db *DB) ResponseCache(workspaceID int64) *ResponseCache {
	return &ResponseCache{db: db, workspaceID: workspaceID}
}

// ForRun is the cache as the calls of run runID use it: answers are found
// as before (any of the workspace's runs may have paid for them), and
// those stored are the run's, deleted when the run is purged.
func (c *ResponseCache) ForRun(runID int64) *ResponseCache {
	return &ResponseCache{db: c.db, workspaceID: c.workspaceID, runID: runID}
}

// LoadAnswer returns the stored answer of the occurrence-th request with
// this hash, and false when there is none.
func (c *ResponseCache) LoadAnswer(ctx context.Context, requestHash string, occurrence int) ([]byte, bool, error) {
	q := hotSQL.get(c.db.Dialect, "load answer", 0, func() string {
		return "SELECT response FROM judge_response_cache WHERE workspace_id = ? AND request_hash = ? AND occurrence = ?"
	})
	var resp string
	err := c.db.hotQueryRow(ctx, c.db.SQL, nil, q, c.workspaceID, requestHash, occurrence).Scan(&resp)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return []byte(resp), true, nil
}

// answerLookupChunk bounds the hashes of one lookup query: far under both
// dialects' parameter limits, and more than a round's calls usually are.
const answerLookupChunk = 256

// LoadAnswers returns the stored answers of keys, in one query per
// answerLookupChunk distinct hashes; a key without an answer is absent.
func (c *ResponseCache) LoadAnswers(ctx context.Context, keys []judge.AnswerKey) (map[judge.AnswerKey][]byte, error) {
	out := make(map[judge.AnswerKey][]byte, len(keys))
	want := make(map[judge.AnswerKey]bool, len(keys))
	var hashes []string
	var occs []int
	for _, k := range keys {
		if want[k] {
			continue
		}
		want[k] = true
		if !slices.Contains(hashes, k.Hash) {
			hashes = append(hashes, k.Hash)
		}
		if !slices.Contains(occs, k.Occurrence) {
			occs = append(occs, k.Occurrence)
		}
	}
	for start := 0; start < len(hashes); start += answerLookupChunk {
		chunk := hashes[start:min(start+answerLookupChunk, len(hashes))]
		// Shaped by both lists; as many rows as pairs of them, so that
		// a round's lookups (a few hashes, one occurrence) stay prepared.
		q := hotSQL.getShape(c.db.Dialect, "load answers", len(chunk)<<16|len(occs), len(chunk)*len(occs), func() string {
			return "SELECT request_hash, occurrence, response FROM judge_response_cache WHERE workspace_id = ? AND request_hash IN (" +
				strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + ") AND occurrence IN (" +
				strings.TrimSuffix(strings.Repeat("?, ", len(occs)), ", ") + ")"
		})
		args := make([]any, 0, 1+len(chunk)+len(occs))
		args = append(args, c.workspaceID)
		for _, h := range chunk {
			args = append(args, h)
		}
		for _, o := range occs {
			args = append(args, o)
		}
		if err := c.scanAnswers(ctx, q, args, want, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanAnswers runs a lookup and keeps the answers of the wanted keys (the
// query matches every pair of its hashes and occurrences).
func (c *ResponseCache) scanAnswers(ctx context.Context, q string, args []any, want map[judge.AnswerKey]bool, out map[judge.AnswerKey][]byte) error {
	rows, err := c.db.hotQuery(c.db.shortStatement(ctx), c.db.SQL, nil, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k judge.AnswerKey
		var resp string
		if err := rows.Scan(&k.Hash, &k.Occurrence, &resp); err != nil {
			return err
		}
		if want[k] {
			out[k] = []byte(resp)
		}
	}
	return rows.Err()
}

// SaveAnswer stores an answer; when one is already stored under the same
// hash and occurrence (two runs raced), the first stays.
func (c *ResponseCache) SaveAnswer(ctx context.Context, requestHash string, occurrence int, answer []byte) error {
	a := c.Answer(requestHash, occurrence, answer)
	_, err := c.db.hotExec(ctx, c.db.answers(), nil, saveAnswerSQL(c.db.Dialect), a.args()...)
	return err
}

// CachedAnswer is an answer to store in a workspace's cache, as SaveAnswer
// stores it: on its own, or in a group of answers (DB.SaveBatchResults).
type CachedAnswer struct {
	WorkspaceID int64
	Hash        string
	Occurrence  int
	Answer      []byte
	At          time.Time
	// RunID is the run that paid for the answer, 0 for none.
	RunID int64
}

// Answer is the answer SaveAnswer would store now.
func (c *ResponseCache) Answer(requestHash string, occurrence int, answer []byte) CachedAnswer {
	return CachedAnswer{WorkspaceID: c.workspaceID, Hash: requestHash, Occurrence: occurrence, Answer: answer, At: time.Now().UTC(), RunID: c.runID}
}

func (a *CachedAnswer) args() []any {
	return []any{a.WorkspaceID, a.Hash, a.Occurrence, string(a.Answer), a.At, a.run()}
}

// run is the answer's run_id: NULL for none.
func (a *CachedAnswer) run() *int64 {
	if a.RunID == 0 {
		return nil
	}
	return &a.RunID
}

// saveAnswerSQL stores a CachedAnswer; when one is already stored under
// the same hash and occurrence (two runs raced), the first stays.
func saveAnswerSQL(d Dialect) string {
	return hotSQL.get(d, "save answer", 0, func() string {
		return `INSERT INTO judge_response_cache (workspace_id, request_hash, occurrence, response, created_at, run_id) VALUES (?, ?, ?, ?, ?, ?)
 ON CONFLICT (workspace_id, request_hash, occurrence) DO NOTHING`
	})
}

// AddCachedCall counts one call of a run answered from the cache, with
// the tokens its answer cost when it was paid for: with them, a run
// answered from the cache still tells what it would have cost without.
// Counted on a run that has ended (a call still out at a cancel, answered
// by another run's request), the run's events say so (RunEventLateCount);
// the count reads the run's status back, so a run still going pays no
// statement more for it.
func (db *DB) AddCachedCall(ctx context.Context, runID int64, promptTokens, completionTokens int) error {
	q := hotSQL.get(db.Dialect, "cached call", 0, func() string {
		return `UPDATE runs SET cached_calls = cached_calls + 1, cached_prompt_tokens = cached_prompt_tokens + ?,
 cached_completion_tokens = cached_completion_tokens + ? WHERE id = ?` + lateReturning
	})
	// One try, as before it told a late count: the callers drop a count
	// the database refused (it only understates the cached calls).
	return db.countOnRun(ctx, "", runID, q, []any{promptTokens, completionTokens, runID},
		lateCount{what: lateCached, add: UnitSpend{Calls: 1, PromptTokens: promptTokens, CompletionTokens: completionTokens}})
}
