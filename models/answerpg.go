package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// On PostgreSQL an answer is stored by one statement: its fence, the batch,
// its scores, the run's counters and the answer cache's copies are
// data-modifying parts of one WITH query, which runs as its own
// transaction. The transaction it replaces took seven round trips (BEGIN,
// the lease's read, four writes, COMMIT), and at concurrency 1 each round
// trip's wake-ups cost the worker more CPU than the database's work.
//
// The parts see one snapshot and all run, so each write is gated on the
// one before it: the fence locks the run's row (FOR UPDATE, as the
// transaction's read under the write did), the batch is written only when
// the fence found the run, and the scores and counters only when the
// batch was still waiting for its answer. The cache's copies are written
// whatever the fence says: the answer was paid for either way.

// answerSQLPG is the statement; fenced adds the lease owner's condition.
func answerSQLPG(fenced bool) string {
	name := "answer pg"
	if fenced {
		name += " fenced"
	}
	return hotSQL.get(Postgres, name, 0, func() string {
		cond := ""
		if fenced {
			cond = " WHERE f.lease_owner = ?"
		}
		return `WITH f AS (SELECT status, lease_until, lease_owner, simulated FROM runs WHERE id = ? FOR UPDATE),
 b AS (UPDATE run_batches SET status = ?, request = ?, response = ?, repair_request = ?, repair_response = ?, problems = ?,
 prompt_tokens = ?, completion_tokens = ?, latency_ms = ?, attempts = ?, calls = ?, error = ?, error_kind = ?, done_at = ?, details = ?, paid_calls = ?
 WHERE id = ? AND status = ? AND EXISTS (SELECT 1 FROM f` + cond + `) RETURNING id),
 s AS (INSERT INTO run_scores (run_id, batch_id, criterion_index, "round", row_id, label, score, analysis)
 SELECT ?, b.id, u.c, u.r, u.row_id, u.label, u.score, u.analysis FROM b,
 unnest(?::int[], ?::int[], ?::bigint[], ?::int[], ?::float8[], ?::text[]) AS u(c, r, row_id, label, score, analysis)),
 c AS (UPDATE runs SET batches_done = batches_done + 1, batches_failed = batches_failed + ?, missing_scores = missing_scores + ?,
 short_scores = short_scores + ?, too_few_scores = too_few_scores + ?, calls = calls + ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?,
 cost_usd = CASE WHEN ?::float8 IS NULL THEN cost_usd ELSE COALESCE(cost_usd, 0) + ?::float8 END
 WHERE id = ? AND EXISTS (SELECT 1 FROM b)),
 k AS (INSERT INTO judge_response_cache (workspace_id, request_hash, occurrence, response, created_at, run_id)
 SELECT * FROM unnest(?::bigint[], ?::text[], ?::int[], ?::text[], ?::timestamptz[], ?::bigint[])
 ON CONFLICT (workspace_id, request_hash, occurrence) DO NOTHING)
SELECT (SELECT COUNT(*) FROM f), (SELECT COUNT(*) FROM b), (SELECT status FROM f), (SELECT lease_until FROM f), (SELECT lease_owner FROM f), (SELECT simulated FROM f), clock_timestamp()`
	})
}

// cachedArgs are the answer cache's columns of answers, one array each.
func cachedArgs(answers []CachedAnswer) []any {
	ws := make([]int64, len(answers))
	hashes := make([]string, len(answers))
	occ := make([]int64, len(answers))
	texts := make([]string, len(answers))
	at := make([]time.Time, len(answers))
	runs := make([]*int64, len(answers))
	for i, a := range answers {
		ws[i], hashes[i], occ[i], texts[i], at[i], runs[i] = a.WorkspaceID, a.Hash, int64(a.Occurrence), string(a.Answer), a.At, a.run()
	}
	return []any{ws, hashes, occ, texts, at, runs}
}

// storeAnswerPG stores answer r as SaveBatchResult does, fenced on owner
// ("" for none), and the cached answers with it, in one statement. The
// cached answers are stored even when the answer is refused (its lease
// lost, its batch answered already); when the statement fails, neither is.
// An answer stored on a run that has ended (the statement returns the
// run's status) has its late count's event written next, in a statement
// of its own (writeLateCountOnce).
func (db *DB) storeAnswerPG(ctx context.Context, r BatchResult, owner string, onLease func(LeaseState), cached []CachedAnswer) error {
	b := r.Batch
	now := time.Now().UTC()
	missing, failed := r.counts()
	crit := make([]int64, len(r.Scores))
	round := make([]int64, len(r.Scores))
	rowIDs := make([]int64, len(r.Scores))
	labels := make([]int64, len(r.Scores))
	scores := make([]*float64, len(r.Scores))
	analyses := make([]string, len(r.Scores))
	for i, s := range r.Scores {
		crit[i], round[i], rowIDs[i], labels[i], scores[i], analyses[i] = int64(s.CriterionIndex), int64(s.Round), s.RowID, int64(s.Label), s.Score, s.Analysis
	}
	var cost any
	if r.Cost != nil {
		cost = *r.Cost
	}
	args := make([]any, 0, 48)
	args = append(args, b.RunID, b.Status, b.Request, b.Response, b.RepairRequest, b.RepairResponse, jsonValue(b.Problems),
		b.PromptTokens, b.CompletionTokens, b.LatencyMS, b.Attempts, b.Calls, b.Error, b.ErrorKind, now,
		jsonValue(detailsOrEmpty(b.Details)), r.paidColumn(), b.ID, BatchPending)
	if owner != "" {
		args = append(args, owner)
	}
	args = append(args, b.RunID, crit, round, rowIDs, labels, scores, analyses,
		failed, missing, r.ShortScores, r.TooFewScores, b.Calls, b.PromptTokens, b.CompletionTokens, cost, cost, b.RunID)
	args = append(args, cachedArgs(cached)...)
	if r.replays() {
		// It may replay paid calls an earlier count of its pending batch
		// counted already (AddUnitSpend): the transaction reads them
		// (writeBatchResultCounts). Rare: only a unit cut short replays.
		return db.storeReplayPG(ctx, r, owner, onLease, cached)
	}
	q := answerSQLPG(owner != "")
	var late *lateCount
	err := db.retry(ctx, "store answer", func() error {
		late = nil
		st := LeaseState{Began: time.Now()}
		var found, stored int64
		var status, holder sql.NullString
		var until sql.NullTime
		var simulated sql.NullBool
		var dbNow dbTime
		if err := db.hotQueryRow(ctx, db.SQL, nil, q, args...).Scan(&found, &stored, &status, &until, &holder, &simulated, &dbNow); err != nil {
			return fmt.Errorf("store the answer of batch %d: %w", b.ID, err)
		}
		if found == 0 {
			// The run is gone: to a fenced writer, as a lost lease.
			if owner != "" {
				return fmt.Errorf("run %d: %w", b.RunID, ErrLeaseLost)
			}
			return Errorf(EConflict, "batch %d already has an answer", b.ID)
		}
		if onLease != nil && owner != "" {
			// Refused answers hand the lease on too: a writer that lost
			// it learns so from the lease it is given.
			st.Owner, st.Status = holder.String, status.String
			if until.Valid {
				u := until.Time
				st.Until = &u
			}
			st.Now = dbNow.t
			onLease(st)
		}
		switch {
		case owner != "" && holder.String != owner:
			return fmt.Errorf("run %d: %w", b.RunID, ErrLeaseLost)
		case stored == 0:
			// Refused: its batch has an answer. It is counted by a
			// transaction that finds the conflict again and counts it
			// in the same breath (countRefused): this statement read the
			// batch as of its start, possibly before the answer that
			// beat it, and cannot tell which of this one's calls that
			// answer counted already (a replay of them). Nothing is lost if the process dies in between:
			// nothing of this answer was stored or counted yet.
			var g runGuard
			if owner != "" {
				g = runGuard{name: "fenced", cond: " AND lease_owner = ?", args: []any{owner},
					err: fmt.Errorf("run %d: %w", b.RunID, ErrLeaseLost), owner: owner}
			}
			return db.saveBatchResult(ctx, r, b, now, missing, failed, g)
		}
		if (Run{Status: status.String}).Finished() {
			// Stored after the run ended (its holder's call still out
			// when it was cancelled, or a write without a lease).
			late = &lateCount{runID: b.RunID, batchID: b.ID, owner: owner, holds: owner != "" && holder.String == owner,
				status: status.String, simulated: simulated.Bool, what: lateStored, add: r.Spend(), at: now.Truncate(time.Microsecond)}
		}
		return nil
	})
	if err != nil || late == nil {
		return err
	}
	// Its event, in a write of its own: only an answer stored on a run
	// that has ended pays for it, not the answers of a run still going.
	// A crash in between loses the event (not the answer, nor its count);
	// a retry of a write whose commit was not acknowledged finds its
	// event there and writes no other.
	if err := db.writeLateCountOnce(ctx, *late); err != nil {
		return fmt.Errorf("the answer of batch %d is stored, but not the event saying it came after its run ended: %w", b.ID, err)
	}
	return nil
}

// saveEachPG is SaveBatchResults on PostgreSQL: each answer in a statement
// of its own (each has its own fence and conflict, so nothing is gained by
// a transaction around them), the group's cached answers with the first.
func (db *DB) saveEachPG(ctx context.Context, items []BatchSave) []error {
	errs := make([]error, len(items))
	var cached []CachedAnswer
	var cachedAt []int
	for i, it := range items {
		if it.Cached != nil {
			cached = append(cached, *it.Cached)
			cachedAt = append(cachedAt, i)
		}
	}
	for i, it := range items {
		if it.Cached != nil {
			continue
		}
		err := db.storeAnswerPG(ctx, it.Result, it.Owner, it.OnLease, cached)
		errs[i] = err
		if cached != nil && (err == nil || ErrorCode(err) == EConflict || errors.Is(err, ErrLeaseLost)) {
			cached = nil // stored with this answer
		}
	}
	for k, i := range cachedAt {
		if cached == nil {
			break
		}
		errs[i] = db.saveOne(ctx, BatchSave{Cached: &cached[k]})
	}
	return errs
}

// storeReplayPG is storeAnswerPG for an answer with a replayed paid call,
// as a transaction: the cached answers first (paid for, kept whatever
// happens to the answer), then the answer as SaveBatchResult's
// transaction stores it.
func (db *DB) storeReplayPG(ctx context.Context, r BatchResult, owner string, onLease func(LeaseState), cached []CachedAnswer) error {
	for _, a := range cached {
		if _, err := db.hotExec(ctx, db.SQL, nil, saveAnswerSQL(db.Dialect), a.args()...); err != nil {
			return fmt.Errorf("store a judge answer in the answer cache: %w", err)
		}
	}
	b := r.Batch
	now := time.Now().UTC()
	missing, failed := r.counts()
	var g runGuard
	if owner != "" {
		g = runGuard{name: "fenced", cond: " AND lease_owner = ?", args: []any{owner},
			err: fmt.Errorf("run %d: %w", b.RunID, ErrLeaseLost), owner: owner, onLease: onLease}
	}
	return db.retry(ctx, "store answer", func() error {
		return db.saveBatchResult(ctx, r, b, now, missing, failed, g)
	})
}
