package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ClaimRun takes the run's lease for owner for ttl, marking it running.
// It fails (false) when another live worker holds the lease or the run is
// no longer queued or running. The lease is what lets several worker
// processes share one database without two of them judging the same run.
// Even the owner cannot take a live lease again: two executions of one job
// in one process (River can hand a job back while its first attempt is
// still winding down) must not judge the same run either. The lease's
// expiry is written, and a held one's compared, with the database's clock
// (dbclock.go), never this process's.
func (db *DB) ClaimRun(ctx context.Context, runID int64, owner string, ttl time.Duration) (bool, error) {
	var claimed bool
	err := db.retry(ctx, "claim run", func() error {
		res := db.Gorm.WithContext(ctx).Exec(
			`UPDATE runs SET lease_owner = ?, lease_until = `+dbLaterSQL(db.Dialect)+`, status = ?, started_at = COALESCE(started_at, ?), waiting_since = NULL
			 WHERE id = ? AND status IN (?, ?) AND (lease_owner = '' OR lease_owner = ? OR lease_until IS NULL OR lease_until < `+dbNowSQL(db.Dialect)+`)`,
			owner, leaseSeconds(ttl), RunRunning, db.Now(), runID, RunQueued, RunRunning, owner)
		if res.Error != nil {
			return res.Error
		}
		// A retry after a commit whose acknowledgement was lost finds the
		// run already ours (lease_owner = owner above).
		claimed = res.RowsAffected == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("claim run %d: %w", runID, err)
	}
	return claimed, nil
}

// RenewLease extends the lease to ttl from now by the database's clock;
// false means the run was cancelled or taken.
func (db *DB) RenewLease(ctx context.Context, runID int64, owner string, ttl time.Duration) (bool, error) {
	// Not retried here: the renewal loop tries again on its next tick, and
	// must notice quickly when the lease may have lapsed.
	res := db.Gorm.WithContext(ctx).Exec(`UPDATE runs SET lease_until = `+dbLaterSQL(db.Dialect)+` WHERE id = ? AND lease_owner = ? AND status = ?`,
		leaseSeconds(ttl), runID, owner, RunRunning)
	if res.Error != nil {
		return false, fmt.Errorf("renew lease of run %d: %w", runID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// HoldLease extends the lease, as RenewLease, of an execution that sends
// no new call but still waits for calls already sent: its run may have
// been paused (or paused and continued: queued again) meanwhile, and the
// lease keeps the next execution from claiming the run, and sending those
// calls' batches a second time, before their answers are stored. False
// means the lease is no longer owner's or the run has ended.
func (db *DB) HoldLease(ctx context.Context, runID int64, owner string, ttl time.Duration) (bool, error) {
	res := db.Gorm.WithContext(ctx).Exec(`UPDATE runs SET lease_until = `+dbLaterSQL(db.Dialect)+` WHERE id = ? AND lease_owner = ? AND status IN (?, ?, ?)`,
		leaseSeconds(ttl), runID, owner, RunQueued, RunRunning, RunPaused)
	if res.Error != nil {
		return false, fmt.Errorf("hold lease of run %d: %w", runID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// releaseGrace is how long after a release the sweeper leaves a run alone.
const releaseGrace = 10 * time.Second

// ReleaseLease gives the lease up so another worker can resume at once.
func (db *DB) ReleaseLease(ctx context.Context, runID int64, owner string) error {
	// The lease keeps a short expiry: any worker may claim the run at once
	// (no owner), while the sweeper waits that long before deciding the job
	// was orphaned, by which time River has recorded what the job did.
	return db.retry(ctx, "release lease", func() error {
		return db.Gorm.WithContext(ctx).Exec(`UPDATE runs SET lease_owner = '', lease_until = `+dbLaterSQL(db.Dialect)+`, waiting_since = NULL WHERE id = ? AND lease_owner = ?`,
			leaseSeconds(releaseGrace), runID, owner).Error
	})
}

// ReleaseLeaseWaiting gives the lease up, as ReleaseLease, for a run that
// waits for its judge until a time the judge named (a long Retry-After):
// the run shows as waiting for its judge with why until a worker claims it
// again (ClaimRun clears the wait).
func (db *DB) ReleaseLeaseWaiting(ctx context.Context, runID int64, owner string, since time.Time, why string) error {
	return db.retry(ctx, "release lease", func() error {
		return db.Gorm.WithContext(ctx).Exec(`UPDATE runs SET lease_owner = '', lease_until = `+dbLaterSQL(db.Dialect)+`, waiting_since = ?, waiting_error = ? WHERE id = ? AND lease_owner = ?`,
			leaseSeconds(releaseGrace), since.UTC(), why, runID, owner).Error
	})
}

// RunLease is a running run's lease, as the sweeper reads it.
type RunLease struct {
	RunID int64
	JobID *int64
	Owner string
	Until *time.Time
	// Lapsed is whether the lease had expired when it was read, by the
	// database's clock.
	Lapsed bool
}

// RunningLeases lists the leases of every running run (few: a run is
// running only while a worker judges it). The sweeper reads it every few
// seconds, idle or not, so it is one short fixed statement.
func (db *DB) RunningLeases(ctx context.Context) ([]RunLease, error) {
	q := hotSQL.get(db.Dialect, "running leases", 0, func() string {
		return "SELECT id, job_id, lease_owner, lease_until, CASE WHEN lease_until < " + dbNowSQL(db.Dialect) + " THEN 1 ELSE 0 END FROM runs WHERE status = ?"
	})
	rows, err := db.hotQuery(ctx, db.SQL, nil, q, RunRunning)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunLease
	for rows.Next() {
		var l RunLease
		var job sql.NullInt64
		var until sql.NullTime
		var lapsed int64
		if err := rows.Scan(&l.RunID, &job, &l.Owner, &until, &lapsed); err != nil {
			return nil, err
		}
		if job.Valid {
			l.JobID = &job.Int64
		}
		if until.Valid {
			l.Until = &until.Time
		}
		l.Lapsed = lapsed == 1
		out = append(out, l)
	}
	return out, rows.Err()
}

// RequeueJob makes the job of a running run whose lease lapsed available
// again. River's own rescuer waits hours (it cannot tell a dead worker from
// a slow one); our run leases can, so we rescue earlier. This is the one
// place the product writes River's table.
//
// A discarded job is requeued too: during a rolling deploy River's rescuer
// in an older worker discards a job of a kind it does not know once it
// has run for RescueAfter, even while a newer worker is judging its run.
// If that worker then stops, the run would be left running with no job
// for ever; it gets one more attempt instead (and is fetched only by a
// worker that knows its kind). The lapsed lease is what tells that the
// run still needs its job: a run that ended is not running.
//
// queue is where the job goes: the default queue for a job whose process
// died (a command-line run's private job is then resumed by the shared
// workers), or the private queue of the live process whose own execution
// let the lease lapse (it works that queue, and may be the only process).
func (db *DB) RequeueJob(ctx context.Context, jobID int64, queue string) (bool, error) {
	res := db.Gorm.WithContext(ctx).Exec(`UPDATE river_job SET state = 'available', queue = ?, finalized_at = NULL,
		max_attempts = CASE WHEN max_attempts <= attempt THEN attempt + 1 ELSE max_attempts END
		WHERE id = ? AND state IN ('running', 'discarded')`, queue, jobID)
	if res.Error != nil {
		return false, fmt.Errorf("requeue job %d: %w", jobID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// SetRunPlan records the number of batches the run will make and the
// current position, for progress.
func (db *DB) SetRunPlan(ctx context.Context, runID int64, batchesTotal, criterion, round int) error {
	name, cond, args := "set plan", "", []any{batchesTotal, criterion, round, runID}
	if owner := LeaseOwnerFrom(ctx); owner != "" {
		name, cond, args = "set plan fenced", " AND lease_owner = ?", append(args, owner)
	}
	q := hotSQL.get(db.Dialect, name, 0, func() string {
		return "UPDATE runs SET batches_total = ?, current_criterion = ?, current_round = ? WHERE id = ?" + cond
	})
	sctx := db.shortStatement(ctx)
	return db.retry(ctx, "set run plan", func() error {
		res, err := db.hotExec(sctx, db.answers(), nil, q, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return checkFence(ctx, db.Gorm.WithContext(ctx), runID)
		}
		return nil
	})
}

// RoundBatches returns the stored batches of one criterion and round. It
// runs before every round, which is new unless the run is resumed, so a
// short count comes first and the batches are read only when there are some.
func (db *DB) RoundBatches(ctx context.Context, runID int64, criterion, round int) ([]RunBatch, error) {
	q := hotSQL.get(db.Dialect, "round stored", 0, func() string {
		return `SELECT COUNT(*) FROM run_batches WHERE run_id = ? AND criterion_index = ? AND "round" = ?`
	})
	var bs []RunBatch
	sctx := db.shortStatement(ctx)
	err := db.retry(ctx, "read round batches", func() error {
		bs = nil
		var n int64
		if err := db.hotQueryRow(sctx, db.answers(), nil, q, runID, criterion, round).Scan(&n); err != nil || n == 0 {
			return err
		}
		return db.Gorm.WithContext(ctx).Where("run_id = ? AND criterion_index = ? AND round = ?", runID, criterion, round).
			Order("batch_index").Find(&bs).Error
	})
	return bs, err
}

// CreateRoundBatches stores a round's composition before any call is made,
// so a resumed run re-sends exactly the batches that have no answer. A
// fenced ctx (WithLeaseOwner) stores nothing unless its owner still holds
// the run's lease.
func (db *DB) CreateRoundBatches(ctx context.Context, runID int64, criterion, round int, rowIDs [][]int64) ([]RunBatch, error) {
	bs := make([]RunBatch, len(rowIDs))
	for i, ids := range rowIDs {
		bs[i] = RunBatch{RunID: runID, CriterionIndex: criterion, Round: round, BatchIndex: i, RowIDs: ids, Status: BatchPending, Problems: []string{}, Details: map[string]any{}}
	}
	var stored bool
	// The round's statements run without ctx's cancellation on SQLite
	// (shortStatement): a round of FED is a few small statements, each of
	// which would otherwise start a goroutine to watch ctx. The retries
	// still watch ctx, and the transaction commits or rolls back whole.
	sctx := db.shortStatement(ctx)
	err := db.retry(ctx, "store round batches", func() (err error) {
		for i := range bs {
			bs[i].ID = 0
		}
		stored, err = db.createRoundBatches(sctx, bs)
		return err
	})
	if err == nil && stored {
		// A retry after a commit whose acknowledgement was lost finds the
		// round stored: keep that composition.
		bs, err = db.RoundBatches(ctx, runID, criterion, round)
	}
	if err != nil {
		return nil, fmt.Errorf("store round %d batches: %w", round+1, err)
	}
	if !stored {
		db.analyzeFilled(ctx, "run_batches", len(bs))
	}
	return bs, nil
}

// roundBatchColumns are the columns a new batch is inserted with; the
// others start at their defaults (no answer yet: empty texts and 0, problems '[]',
// details '{}', done_at NULL), as the batch's zero values would write them.
const roundBatchColumns = 6

// createRoundBatches inserts one round's batches and sets their ids, in
// one transaction with fixed statements (a round of FED stored through
// GORM cost a tenth of the round's judge calls in CPU). It writes nothing
// and reports true when the round is stored already.
func (db *DB) createRoundBatches(ctx context.Context, bs []RunBatch) (stored bool, err error) {
	if len(bs) == 0 {
		return false, nil
	}
	h := db.answers()
	tx, err := db.beginAnswers(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil || stored {
			_ = tx.Rollback()
		}
	}()
	first := bs[0]
	if owner := LeaseOwnerFrom(ctx); owner != "" {
		g := runGuard{name: "fenced", cond: " AND lease_owner = ?", args: []any{owner}}
		ok, err := db.holds(ctx, tx, first.RunID, g)
		if err != nil {
			return false, err
		}
		if !ok {
			// Not a conflict code: the writer must stop.
			return false, fmt.Errorf("run %d: %w", first.RunID, ErrLeaseLost)
		}
	}
	q := hotSQL.get(db.Dialect, "round stored", 0, func() string {
		return `SELECT COUNT(*) FROM run_batches WHERE run_id = ? AND criterion_index = ? AND "round" = ?`
	})
	var n int64
	if err := db.hotQueryRow(ctx, h, tx, q, first.RunID, first.CriterionIndex, first.Round).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return true, nil
	}
	// In chunks: one statement per round overflowed the parameter limit
	// above 1,724 batches on SQLite.
	size := max(1, min(maxChunkRows, sqliteParamsPerStatement/roundBatchColumns))
	if db.Dialect == Postgres {
		size = maxChunkRows
	}
	for start := 0; start < len(bs); start += size {
		chunk := bs[start:min(start+size, len(bs))]
		q := hotSQL.get(db.Dialect, "insert round batches", len(chunk), func() string {
			return `INSERT INTO run_batches (run_id, criterion_index, "round", batch_index, row_ids, status) VALUES ` +
				valuesList(len(chunk), roundBatchColumns)
		})
		args := make([]any, 0, roundBatchColumns*len(chunk))
		for _, b := range chunk {
			args = append(args, b.RunID, b.CriterionIndex, b.Round, b.BatchIndex, jsonValue(b.RowIDs), b.Status)
		}
		if _, err := db.hotExec(ctx, h, tx, q, args...); err != nil {
			return false, err
		}
	}
	// The ids, by place: neither dialect promises the order of a
	// multi-row INSERT's RETURNING rows.
	q = hotSQL.get(db.Dialect, "round batch ids", 0, func() string {
		return `SELECT id, batch_index FROM run_batches WHERE run_id = ? AND criterion_index = ? AND "round" = ?`
	})
	rows, err := db.hotQuery(ctx, h, tx, q, first.RunID, first.CriterionIndex, first.Round)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var i int
		if err := rows.Scan(&id, &i); err != nil {
			return false, err
		}
		if i < 0 || i >= len(bs) {
			return false, fmt.Errorf("round stored with batch index %d of %d", i, len(bs))
		}
		bs[i].ID = id
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	if err := rows.Close(); err != nil {
		return false, err
	}
	for i := range bs {
		if bs[i].ID == 0 {
			return false, fmt.Errorf("batch %d of the round was not stored", i+1)
		}
	}
	return false, tx.Commit()
}

// BatchResult is everything one batch's judge exchange produced.
type BatchResult struct {
	Batch  RunBatch   // with Status, Request, Response... filled in
	Scores []RunScore // one per sample of the batch (Score nil when missing)
	// Cost of the batch in dollars; nil when the price is unknown.
	Cost *float64
	// ShortScores is how many of Scores were computed from fewer sampled
	// answers than asked (Run.ShortScores).
	ShortScores int
	// TooFewScores is how many of Scores are missing because too few of
	// their sampled answers could be read (Run.TooFewScores).
	TooFewScores int
	// Paid are the answer's paid calls with their identities, as the
	// answer cache gave them (judge.PaidCall): stored with the batch,
	// they tell a refused answer which of its calls the stored one
	// counted already (countRefused).
	Paid []PaidCall
}

// PaidCall is one paid call of an answer: its identity (judge.PaidCall.ID,
// "" when unknown), its tokens and its cost (nil when the price is
// unknown).
type PaidCall struct {
	ID                             string
	PromptTokens, CompletionTokens int
	Cost                           *float64
	// Replayed: the answer cache gave this call back as the paid call it
	// was (its unit's earlier execution paid for it), so an earlier count
	// of the unit (AddUnitSpend) may have counted it already.
	Replayed bool
}

// replays reports whether r has a call replayed from the answer cache.
func (r BatchResult) replays() bool {
	for _, c := range r.Paid {
		if c.Replayed {
			return true
		}
	}
	return false
}

// Spend is what r counts on its run when it is stored: its calls, tokens
// and cost, and its paid calls.
func (r BatchResult) Spend() UnitSpend {
	return UnitSpend{Calls: r.Batch.Calls, PromptTokens: r.Batch.PromptTokens, CompletionTokens: r.Batch.CompletionTokens, Cost: r.Cost, Paid: r.Paid}
}

// paidColumn is what run_batches.paid_calls stores for r: the identities
// of its paid calls, space-separated ("" when it has none known).
func (r BatchResult) paidColumn() string {
	var ids []string
	for _, c := range r.Paid {
		if c.ID != "" {
			ids = append(ids, c.ID)
		}
	}
	return strings.Join(ids, " ")
}

// SaveBatchResult stores a batch's answer, its scores and the run's
// counters in one transaction, as soon as the answer has arrived. When ctx
// names a lease owner (WithLeaseOwner), nothing is stored unless that owner
// still holds the run's lease: the write fails with ErrLeaseLost. When the
// batch has an answer already (another execution's), it fails with
// EConflict: the answer is not stored, but what it cost is counted on the
// run in the same transaction (countRefused). An answer stored or counted
// on a run that has ended (its holder's call still out when the run was
// cancelled: a cancel keeps the lease) changes the run's figures after its
// end, and the run's events say so (RunEventLateCount).
func (db *DB) SaveBatchResult(ctx context.Context, r BatchResult) error {
	return db.saveFenced(ctx, r, nil)
}

// saveFenced is SaveBatchResult; onLease, when not nil and ctx names a
// lease owner, is given the run's lease as the counters' update found it
// (see BatchSave.OnLease).
func (db *DB) saveFenced(ctx context.Context, r BatchResult, onLease func(LeaseState)) error {
	if db.Dialect == Postgres {
		return db.storeAnswerPG(ctx, r, LeaseOwnerFrom(ctx), onLease, nil)
	}
	b := r.Batch
	now := time.Now().UTC()
	b.DoneAt = &now
	missing, failed := r.counts()
	var g runGuard
	if owner := LeaseOwnerFrom(ctx); owner != "" {
		g = runGuard{name: "fenced", cond: " AND lease_owner = ?", args: []any{owner},
			err: fmt.Errorf("run %d: %w", b.RunID, ErrLeaseLost), owner: owner, onLease: onLease}
	}
	return db.retry(ctx, "store answer", func() error {
		return db.saveBatchResult(ctx, r, b, now, missing, failed, g)
	})
}

// SaveLateBatchResult stores an answer that arrived after its worker lost
// the run's lease, so the answer, already paid for, is not paid again by
// the run's new holder. It is accepted only where that is safe: the answer
// is complete (a failed batch is left for the new holder to try again),
// the run is still going (queued, running or paused, not finished or
// cancelled),
// and the batch still has no answer, checked in the same conditional
// write. When the new holder has answered the batch meanwhile, it fails
// with EConflict: nothing of it is stored, but what it cost is counted on
// the run in the same transaction (countRefused); when the run has ended,
// with ErrLeaseLost, and it is counted all the same, once, whether its
// batch was answered or is still pending (the run was stopped, failed or
// finished while the call was out: it was paid for), and the run's events
// say its figures changed after its end (RunEventLateCount).
func (db *DB) SaveLateBatchResult(ctx context.Context, r BatchResult) error {
	if r.Batch.Status != BatchDone {
		return Errorf(EInvalid, "batch %d: only a complete late answer is stored", r.Batch.ID)
	}
	b := r.Batch
	now := time.Now().UTC()
	missing, _ := r.counts()
	// The late writer holds no lease: this condition replaces the fence.
	g := runGuard{name: "going", cond: " AND status IN (?, ?, ?)", args: []any{RunQueued, RunRunning, RunPaused},
		err: fmt.Errorf("run %d has ended: %w", b.RunID, ErrLeaseLost), countEnded: true, owner: LeaseOwnerFrom(ctx)}
	return db.retry(ctx, "store late answer", func() error {
		return db.saveBatchResult(ctx, r, b, now, missing, 0, g)
	})
}

// runGuard is a condition the run's row must meet for an answer to be
// stored (the lease fence, or the late answer's condition); the zero
// value is no condition.
type runGuard struct {
	name string // names the condition in the statement cache
	cond string // appended to the run row's WHERE clause
	args []any
	err  error // what a run that fails the condition gives
	// owner is the lease owner of a fence; onLease, when set, is given
	// the lease as the counters' update found it.
	owner   string
	onLease func(LeaseState)
	// countEnded counts an answer refused because its batch was answered
	// when the run also fails the condition (a late answer to a run that
	// has ended): it was paid for, and no later write will count it.
	countEnded bool
	// batchFence puts the fence on owner in the batch's update instead
	// (cond is then empty): a refused answer writes nothing at all, so a
	// group's transaction can go on with its other answers.
	batchFence bool
}

// holds reports whether the run meets the guard, read inside tx.
func (db *DB) holds(ctx context.Context, tx *answerTx, runID int64, g runGuard) (bool, error) {
	if g.cond == "" {
		return true, nil
	}
	q := hotSQL.get(db.Dialect, "guard "+g.name, 0, func() string { return "SELECT COUNT(*) FROM runs WHERE id = ?" + g.cond })
	var n int64
	if err := db.hotQueryRow(ctx, db.answers(), tx, q, append([]any{runID}, g.args...)...).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// scoreChunk bounds the rows of one INSERT of scores: 8 parameters a row
// keeps a statement far under both dialects' parameter limits, and a
// batch's scores (its samples times the pass's criteria) fit in one.
const scoreChunk = 256

// saveBatchResult writes one answer in one transaction of three statements
// (the batch, its scores, the run's counters under the guard's condition),
// with fixed SQL through database/sql: this runs once per judge call, and
// GORM's reflection and the separate fence query used to be a large part
// of a call's CPU.
func (db *DB) saveBatchResult(ctx context.Context, r BatchResult, b RunBatch, now time.Time, missing, failed int, g runGuard) (err error) {
	tx, err := db.beginAnswers(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	r.Batch = b
	if g.countEnded {
		// A late answer to a run that has ended is not stored, but it was
		// paid for: it is counted (once), whether its batch is still
		// pending or was answered meanwhile, and the run's events say its
		// figures changed after its end.
		ok, err := db.holds(ctx, tx, b.RunID, g)
		if err != nil {
			return err
		}
		if !ok {
			if err := db.countEndedLate(ctx, tx, r, g.owner); err != nil {
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			return g.err
		}
	}
	stored, err := db.writeBatchResultCounts(ctx, tx, r, now, missing, failed, g)
	if err != nil {
		return err
	}
	if !stored {
		// Answered already; but a writer that lost the run must hear that
		// first: it stops, where a mere conflict goes on.
		ok, err := db.holds(ctx, tx, b.RunID, g)
		if err != nil {
			return err
		}
		if !ok && !g.countEnded {
			return g.err
		}
		// Refused, but paid for: counted here, in the transaction that
		// found the conflict, so no crash comes between the two.
		if err := db.countRefusedLate(ctx, tx, r, g.owner); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if !ok {
			return g.err
		}
		return Errorf(EConflict, "batch %d already has an answer", b.ID)
	}
	return tx.Commit()
}

// countEndedLate counts, in tx, late answer r to a run that has ended
// (its writer, owner, lost the run's lease): as spend on its batch when
// the batch is still pending, as a refused answer when it was answered.
func (db *DB) countEndedLate(ctx context.Context, tx *answerTx, r BatchResult, owner string) error {
	b := r.Batch
	q := hotSQL.get(db.Dialect, "late answer's batch", 0, func() string {
		return "SELECT status FROM run_batches WHERE id = ? AND run_id = ?" + forUpdate(db.Dialect)
	})
	var status string
	err := db.hotQueryRow(ctx, db.answers(), tx, q, b.ID, b.RunID).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("count the late answer of batch %d: %w", b.ID, err)
	}
	if status == BatchPending {
		return db.spendTx(ctx, tx, b.RunID, b.ID, r.Spend(), owner)
	}
	return db.countRefusedLate(ctx, tx, r, owner)
}

// countRefused counts on its run an answer refused because another
// execution answered its batch first: it was paid for all the same, so its
// calls, tokens and cost (when known) are added to the run's, in tx, the
// transaction that found the conflict. Not the calls the stored answer
// counted already: the answer cache gives an answer paid for but never
// counted back to the unit's next execution as the paid call it was, with
// the identity the call was given when the judge answered it
// (BatchResult.Paid, stored in paid_calls), so a call of r whose identity
// the stored answer has is that same call, counted once. Two calls the
// judge answered alike (a seeded judge answers the same request the same)
// have two identities and are both counted. A paid answer counts once.
//
// An answer stored before identities were kept (paid_calls NULL), or a
// replay of a cache entry that has none, is compared by content instead:
// not counted when the stored answer has the same response, repair
// response, calls and tokens.
func (db *DB) countRefused(ctx context.Context, tx *answerTx, r BatchResult) (UnitSpend, error) {
	b := r.Batch
	q := hotSQL.get(db.Dialect, "refused answer's batch", 0, func() string {
		return "SELECT paid_calls FROM run_batches WHERE id = ? AND run_id = ?"
	})
	var stored sql.NullString
	err := db.hotQueryRow(ctx, db.answers(), tx, q, b.ID, b.RunID).Scan(&stored)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return UnitSpend{}, fmt.Errorf("count the refused answer of batch %d: %w", b.ID, err)
	}
	unknown := !stored.Valid
	for _, c := range r.Paid {
		if c.ID == "" {
			unknown = true
		}
	}
	if unknown {
		return db.countRefusedByContent(ctx, tx, r)
	}
	counted := strings.Fields(stored.String)
	add, ids := r.Spend().without(counted)
	if add.Empty() {
		return UnitSpend{}, nil
	}
	if err := db.addRunSpendTx(ctx, tx, b.RunID, add); err != nil {
		return UnitSpend{}, fmt.Errorf("count the refused answer of batch %d: %w", b.ID, err)
	}
	// The calls now counted join those the batch counted: the same
	// refused answer written again (a retry) counts nothing more.
	if len(ids) > 0 {
		if err := db.setPaidCallsTx(ctx, tx, b.ID, strings.Join(append(counted, ids...), " ")); err != nil {
			return UnitSpend{}, fmt.Errorf("count the refused answer of batch %d: %w", b.ID, err)
		}
	}
	return add, nil
}

// countRefusedLate is countRefused by owner's write ("" for none), with
// the late count's event when what it counted landed on a run that has
// ended (noteLateCount).
func (db *DB) countRefusedLate(ctx context.Context, tx *answerTx, r BatchResult, owner string) error {
	add, err := db.countRefused(ctx, tx, r)
	if err != nil || add.Empty() {
		return err
	}
	return db.noteLateCount(ctx, tx, r.Batch.RunID, r.Batch.ID, owner, add)
}

// countRefusedByContent is countRefused for an answer whose calls cannot
// be told by identity: it is counted whole unless the batch's stored
// answer is this very answer (the same response, repair response, calls
// and tokens), which is then taken for its replay or its original.
func (db *DB) countRefusedByContent(ctx context.Context, tx *answerTx, r BatchResult) (UnitSpend, error) {
	b := r.Batch
	withCost := r.Cost != nil
	q := hotSQL.get(db.Dialect, "count refused answer "+strconv.FormatBool(withCost), 0, func() string {
		cost := ""
		if withCost {
			cost = ", cost_usd = " + addCostSQL
		}
		return `UPDATE runs SET calls = calls + ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?` + cost +
			` WHERE id = ? AND NOT EXISTS (SELECT 1 FROM run_batches WHERE id = ? AND run_id = ? AND response = ? AND repair_response = ?
 AND calls = ? AND prompt_tokens = ? AND completion_tokens = ?)`
	})
	args := []any{b.Calls, b.PromptTokens, b.CompletionTokens}
	if withCost {
		args = append(args, *r.Cost)
	}
	args = append(args, b.RunID, b.ID, b.RunID, b.Response, b.RepairResponse, b.Calls, b.PromptTokens, b.CompletionTokens)
	res, err := db.hotExec(ctx, db.answers(), tx, q, args...)
	if err != nil {
		return UnitSpend{}, fmt.Errorf("count the refused answer of batch %d: %w", b.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return UnitSpend{}, err
	}
	return r.Spend(), nil
}

// writeBatchResult writes one answer in tx with the counters it implies:
// false when its batch has an answer already (then nothing is written).
func (db *DB) writeBatchResult(ctx context.Context, tx *answerTx, r BatchResult, now time.Time, g runGuard) (bool, error) {
	missing, failed := r.counts()
	return db.writeBatchResultCounts(ctx, tx, r, now, missing, failed, g)
}

// counts are what an answer adds to its run's counters: its unreadable
// scores and whether the batch failed (0 or 1). Its retries are not
// among them: the runner counts each failed attempt as it happens
// (AddRunRetries), so that attempts of a unit that is never stored (a
// run paused for a rate limit, a crash) are counted too.
func (r BatchResult) counts() (missing, failed int) {
	for _, s := range r.Scores {
		if s.Score == nil {
			missing++
		}
	}
	if r.Batch.Status == BatchFailed {
		failed = 1
	}
	return missing, failed
}

// writeBatchResultCounts is writeBatchResult with the counters given; a
// run that fails g's condition gives g.err (and the caller rolls back).
func (db *DB) writeBatchResultCounts(ctx context.Context, tx *answerTx, r BatchResult, now time.Time, missing, failed int, g runGuard) (bool, error) {
	b := r.Batch
	// What the answer adds to the run: all of it, but for the paid calls
	// an earlier count of its pending batch counted already (AddUnitSpend:
	// its unit was left pending, or its late failure counted, and this
	// answer replays those calls from the answer cache). Only an answer
	// with a replayed call can have any, so only it reads them.
	add, paidColumn := r.Spend(), r.paidColumn()
	if r.replays() {
		q := hotSQL.get(db.Dialect, "answer's counted calls", 0, func() string {
			return "SELECT paid_calls FROM run_batches WHERE id = ? AND status = ?" + forUpdate(db.Dialect)
		})
		var prior sql.NullString
		err := db.hotQueryRow(ctx, db.answers(), tx, q, b.ID, BatchPending).Scan(&prior)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("save batch %d: %w", b.ID, err)
		}
		if counted := strings.Fields(prior.String); len(counted) > 0 {
			var ids []string
			add, ids = add.without(counted)
			for _, id := range ids {
				if !slices.Contains(counted, id) {
					counted = append(counted, id)
				}
			}
			paidColumn = strings.Join(counted, " ")
		}
	}
	q := hotSQL.get(db.Dialect, "save batch "+strconv.FormatBool(g.batchFence), 0, func() string {
		fence := ""
		if g.batchFence {
			fence = " AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND lease_owner = ?)"
		}
		return `UPDATE run_batches SET status = ?, request = ?, response = ?, repair_request = ?, repair_response = ?, problems = ?,
 prompt_tokens = ?, completion_tokens = ?, latency_ms = ?, attempts = ?, calls = ?, error = ?, error_kind = ?, done_at = ?, details = ?, paid_calls = ?
 WHERE id = ? AND status = ?` + fence
	})
	bargs := []any{b.Status, b.Request, b.Response, b.RepairRequest, b.RepairResponse, jsonValue(b.Problems),
		b.PromptTokens, b.CompletionTokens, b.LatencyMS, b.Attempts, b.Calls, b.Error, b.ErrorKind, now,
		jsonValue(detailsOrEmpty(b.Details)), paidColumn, b.ID, BatchPending}
	if g.batchFence {
		bargs = append(bargs, b.RunID, g.owner)
	}
	res, err := db.hotExec(ctx, db.answers(), tx, q, bargs...)
	if err != nil {
		return false, fmt.Errorf("save batch %d: %w", b.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n != 1 {
		return false, nil
	}
	for start := 0; start < len(r.Scores); start += scoreChunk {
		chunk := r.Scores[start:min(start+scoreChunk, len(r.Scores))]
		q := hotSQL.get(db.Dialect, "insert scores", len(chunk), func() string {
			return `INSERT INTO run_scores (run_id, batch_id, criterion_index, "round", row_id, label, score, analysis) VALUES ` + valuesList(len(chunk), 8)
		})
		args := make([]any, 0, 8*len(chunk))
		for _, s := range chunk {
			var score any
			if s.Score != nil {
				score = *s.Score
			}
			args = append(args, s.RunID, s.BatchID, s.CriterionIndex, s.Round, s.RowID, s.Label, score, s.Analysis)
		}
		if _, err := db.hotExec(ctx, db.answers(), tx, q, args...); err != nil {
			return false, fmt.Errorf("save scores of batch %d: %w", b.ID, err)
		}
	}
	withCost := add.Cost != nil
	lease := g.onLease != nil
	q = hotSQL.get(db.Dialect, "count answer "+g.name+strconv.FormatBool(withCost)+strconv.FormatBool(lease), 0, func() string {
		cost, ret := "", ""
		if withCost {
			cost = ", cost_usd = " + addCostSQL
		}
		if lease {
			ret = ", lease_until, " + dbNowSQL(db.Dialect)
		}
		// The run's status, holder and judge (simulated or not) come back
		// with the count, so that an answer stored after the run ended is
		// told (below), its cost worded as the run's counters word it,
		// without another statement for the answers of a run still going.
		return `UPDATE runs SET batches_done = batches_done + 1, batches_failed = batches_failed + ?, missing_scores = missing_scores + ?,
 short_scores = short_scores + ?, too_few_scores = too_few_scores + ?, calls = calls + ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?` + cost +
			" WHERE id = ?" + g.cond + " RETURNING status, lease_owner, simulated" + ret
	})
	args := []any{failed, missing, r.ShortScores, r.TooFewScores, add.Calls, add.PromptTokens, add.CompletionTokens}
	if withCost {
		args = append(args, *add.Cost)
	}
	args = append(append(args, b.RunID), g.args...)
	// With a lease wanted, the fence's read of the lease, from the update
	// itself.
	var st LeaseState
	if lease {
		st = LeaseState{Owner: g.owner, Began: time.Now()}
	}
	var holder string
	var simulated bool
	var until sql.NullTime
	var dbNow dbTime
	dest := []any{&st.Status, &holder, &simulated}
	if lease {
		dest = append(dest, &until, &dbNow)
	}
	err = db.hotQueryRow(ctx, db.answers(), tx, q, args...).Scan(dest...)
	switch {
	case errors.Is(err, sql.ErrNoRows) && (lease || g.cond != ""):
		return false, g.err
	case errors.Is(err, sql.ErrNoRows):
		return true, nil // the run was deleted: nothing left to count on
	case err != nil:
		return false, err
	}
	if lease {
		if until.Valid {
			u := until.Time
			st.Until = &u
		}
		st.Now = dbNow.t
		g.onLease(st)
	}
	// Stored after the run ended (its holder's call still out when it was
	// cancelled, or a write without a lease): the run's figures changed
	// after its end, and its events say so.
	l := lateCount{runID: b.RunID, batchID: b.ID, owner: g.owner, holds: g.owner != "" && holder == g.owner,
		status: st.Status, simulated: simulated, what: lateStored, add: add, at: now}
	if err := db.writeLateCount(ctx, tx, l); err != nil {
		return false, err
	}
	return true, nil
}

// BatchSave is one answer of a group stored together (SaveBatchResults),
// with the lease owner its write is fenced on ("" for none); or, when
// Cached is set, a judge answer for the workspace's answer cache instead
// (Result and Owner unused).
type BatchSave struct {
	Result BatchResult
	Owner  string
	Cached *CachedAnswer
	// OnLease, when set on an item with an Owner, is given the run's
	// lease as soon as the write has read it inside its transaction,
	// before the answer's rows are written: the runner's next call can
	// take it for its fence's read. It must not block. It may not be
	// called (the group failed first, or was written one by one).
	OnLease func(LeaseState)
}

// saveOne stores one item of a group on its own.
func (db *DB) saveOne(ctx context.Context, it BatchSave) error {
	if a := it.Cached; a != nil {
		// Stored as it was made (ResponseCache.Answer): with the run
		// that paid for it, which a fresh ResponseCache would leave out
		// (the answer then outlived its run's purge, and a run that
		// reuses no answers lost count of its own).
		// Retried as the batch results are: a busy database must not
		// drop an answer the judge was paid for.
		return db.retry(ctx, "store a judge answer in the answer cache", func() error {
			_, err := db.hotExec(ctx, db.answers(), nil, saveAnswerSQL(db.Dialect), a.args()...)
			return err
		})
	}
	return db.saveFenced(WithLeaseOwner(ctx, it.Owner), it.Result, it.OnLease)
}

// SaveBatchResults stores several answers in one transaction, each as
// SaveBatchResult would (the same rows, its own fence, its own conflict),
// and returns each one's error: an answer refused (its batch answered
// already, its writer's lease lost) is not stored, and the others are.
// SQLite writes one transaction at a time and most of a write's CPU is
// its commit, so answers that wait for the write lock together are
// committed together (the runner's group commit); a database error that
// is not about one answer stores them one by one instead.
func (db *DB) SaveBatchResults(ctx context.Context, items []BatchSave) []error {
	if db.Dialect == Postgres {
		return db.saveEachPG(ctx, items)
	}
	errs := make([]error, len(items))
	// The statements run without ctx's cancellation: an answer the judge
	// was paid for is stored even when its run is being stopped, and
	// SQLite's driver would otherwise start a goroutine to watch ctx for
	// every statement, which on a virtual machine costs more CPU than the
	// statement (thread wake-ups; BENCHMARKS.md, "Run speed, eighth
	// pass"). The retries between attempts still watch ctx.
	sctx := db.shortStatement(ctx)
	// One answer alone is written as SaveBatchResult writes it (its fence
	// is a condition of its counters' update, which also returns the
	// lease for OnLease). On SQLite, where the runner writes answers in
	// groups, one that wants its lease is a group of one: the group's
	// read of the lease, in a transaction that holds the write lock, is
	// as good a fence.
	if len(items) == 1 && (items[0].OnLease == nil || db.Dialect != SQLite) {
		errs[0] = db.saveOne(sctx, items[0])
		return errs
	}
	now := time.Now().UTC()
	err := db.retry(ctx, "store answers", func() error {
		clear(errs)
		return db.saveBatchGroup(sctx, items, now, errs)
	})
	switch {
	case err != nil && len(items) == 1:
		// A group of one (SQLite, for its lease read): one by one would
		// only retry the same write for as long again.
		errs[0] = err
	case err != nil:
		for i, it := range items {
			errs[i] = db.saveOne(sctx, it)
		}
	}
	return errs
}

// saveBatchGroup writes a group in one transaction. Each answer's guard
// is read first, inside the transaction (on SQLite it holds the write
// lock, so nothing changes between the check and the writes), and a
// conflict shows on its first write: a refused answer writes nothing.
func (db *DB) saveBatchGroup(ctx context.Context, items []BatchSave, now time.Time, errs []error) (err error) {
	tx, err := db.beginAnswers(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	for i, it := range items {
		if a := it.Cached; a != nil {
			if _, err := db.hotExec(ctx, db.answers(), tx, saveAnswerSQL(db.Dialect), a.args()...); err != nil {
				return err
			}
			continue
		}
		b := it.Result.Batch
		var g runGuard
		if it.Owner != "" {
			// The fence is a condition of the batch's update, and the
			// counters' update returns the lease (the write lock is held:
			// it cannot have changed in between) for the writer's next
			// call to take as its fence's read (BatchSave.OnLease).
			g = runGuard{batchFence: true, owner: it.Owner, onLease: it.OnLease}
		}
		stored, err := db.writeBatchResult(ctx, tx, it.Result, now, g)
		if err != nil {
			return err
		}
		if stored {
			continue
		}
		errs[i] = Errorf(EConflict, "batch %d already has an answer", b.ID)
		if it.Owner == "" {
			if err := db.countRefusedLate(ctx, tx, it.Result, ""); err != nil {
				return err
			}
			continue
		}
		// Refused: a lost lease, or an answer there already. The lease is
		// read to tell which, and handed on either way.
		st := LeaseState{Began: time.Now()}
		if err := scanLease(db.hotQueryRow(ctx, db.answers(), tx, leaseStateSQL(db.Dialect), b.RunID), b.RunID, &st); err != nil {
			if ErrorCode(err) == ENotFound {
				// A run deleted meanwhile: this answer is refused, as
				// from a lost lease; the group's others still commit.
				errs[i] = fmt.Errorf("run %d: %w", b.RunID, ErrLeaseLost)
				continue
			}
			return err
		}
		if it.OnLease != nil {
			it.OnLease(st)
		}
		if st.Owner != it.Owner {
			// Its writer stops and stores it as a late answer, which
			// counts it if it is refused again (SaveLateBatchResult).
			errs[i] = fmt.Errorf("run %d: %w", b.RunID, ErrLeaseLost)
			continue
		}
		if err := db.countRefusedLate(ctx, tx, it.Result, it.Owner); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// FinishRun records the run's final state and gives up its lease. A run the
// user cancelled stays cancelled.
func (db *DB) FinishRun(ctx context.Context, runID int64, status, errMsg string) error {
	return db.FinishRunNotify(ctx, runID, status, errMsg, nil)
}

// RunEnd is a run that has just been stored as finished, as the
// workspace's webhook is told of it.
type RunEnd struct {
	RunID, WorkspaceID int64
	Status             string // RunSucceeded, RunFinishedWithGaps or RunFailed
}

// FinishRunNotify is FinishRun that also calls notify, in the same
// transaction, when the run's workspace has a webhook that wants this end
// (notify queues its delivery: a crash can then lose neither without the
// other). An error from notify rolls the finish back. Nothing is called
// when the run was not running any more (cancelled, finished by another
// execution, or no longer this lease holder's).
func (db *DB) FinishRunNotify(ctx context.Context, runID int64, status, errMsg string, notify func(ctx context.Context, tx *sql.Tx, end RunEnd) error) error {
	now := time.Now().UTC()
	return db.retry(ctx, "finish run", func() error {
		return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			res := fenced(ctx, tx.Model(&Run{}).Where("id = ? AND status IN ?", runID, []string{RunQueued, RunRunning})).
				Updates(map[string]any{"status": status, "error": errMsg, "finished_at": now, "lease_owner": "", "lease_until": nil, "waiting_since": nil})
			if res.Error != nil || res.RowsAffected == 0 || notify == nil {
				return res.Error
			}
			var wsID int64
			if err := tx.Model(&Run{}).Where("id = ?", runID).Pluck("workspace_id", &wsID).Error; err != nil {
				return err
			}
			var wh Webhook
			err := tx.Where("workspace_id = ?", wsID).Limit(1).Find(&wh).Error
			if err != nil || wh.WorkspaceID == 0 || !wh.Wants(status) {
				return err
			}
			stx, err := SQLTx(tx)
			if err != nil {
				return err
			}
			if err := notify(ctx, stx, RunEnd{RunID: runID, WorkspaceID: wsID, Status: status}); err != nil {
				return fmt.Errorf("queue the webhook of run %d: %w", runID, err)
			}
			return nil
		})
	})
}

// CriterionScores returns, for one criterion, the stored scores of rounds
// from (counted from 0) on, by row id and round: scores[rowID][round] for
// round < rounds; nil entries are missing, and so are the rounds before
// from. BatchEval reads the last round's before each round to compose the
// next one (the runner keeps the earlier ones), so it is one fixed
// statement through database/sql that reads only the three columns used.
func (db *DB) CriterionScores(ctx context.Context, runID int64, criterion, from, rounds int) (map[int64][]*float64, error) {
	q := hotSQL.get(db.Dialect, "criterion scores", 0, func() string {
		return `SELECT row_id, "round", score FROM run_scores WHERE run_id = ? AND criterion_index = ? AND "round" >= ?`
	})
	rows, err := db.hotQuery(ctx, db.SQL, nil, q, runID, criterion, from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]*float64{}
	for rows.Next() {
		var rowID int64
		var round int
		var score sql.NullFloat64
		if err := rows.Scan(&rowID, &round, &score); err != nil {
			return nil, err
		}
		v := out[rowID]
		if v == nil {
			v = make([]*float64, rounds)
			out[rowID] = v
		}
		if round >= 0 && round < rounds && score.Valid {
			x := score.Float64
			v[round] = &x
		}
	}
	return out, rows.Err()
}

func detailsOrEmpty(d map[string]any) map[string]any {
	if d == nil {
		return map[string]any{}
	}
	return d
}

// addCostSQL adds a call's cost to a run's cost, which is NULL while no
// cost is known (unknown, never $0): the first priced call starts it. The
// answer store's statement (writeBatchResultCounts) adds the same way; PostgreSQL's
// single statement (answerSQLPG) says the same with a CASE, its cost being
// a parameter that may be NULL.
const addCostSQL = "COALESCE(cost_usd, 0) + ?"

// spendUpdates are the column updates that add calls, their tokens and,
// when known, their cost to a run's counters (a batch's: cost nil), for
// the counts made outside the answer store: a unit's paid calls left for
// the resume (AddUnitSpend) and a method's set-up call
// (SaveRunMethodSettings).
func spendUpdates(calls, promptTokens, completionTokens int, cost *float64) map[string]any {
	upd := map[string]any{
		"calls":             gorm.Expr("calls + ?", calls),
		"prompt_tokens":     gorm.Expr("prompt_tokens + ?", promptTokens),
		"completion_tokens": gorm.Expr("completion_tokens + ?", completionTokens),
	}
	if cost != nil {
		upd["cost_usd"] = gorm.Expr(addCostSQL, *cost)
	}
	return upd
}

// UpdateRunMethodSettings stores a run's method settings as they are now
// (what the run learned about the endpoint), without counting a call.
func (db *DB) UpdateRunMethodSettings(ctx context.Context, runID int64, ms any) error {
	return db.Gorm.WithContext(ctx).Model(&Run{}).Where("id = ?", runID).Update("method_settings", jsonValue(ms)).Error
}

// SaveRunMethodSettings stores generated method settings (G-Eval's steps)
// and counts the call that produced them. Counted on a run that has ended
// (the steps call was out when the run was cancelled: a cancel keeps the
// lease), the run's events say so (RunEventLateCount), in the same
// transaction.
func (db *DB) SaveRunMethodSettings(ctx context.Context, runID int64, ms any, promptTokens, completionTokens int, cost *float64) error {
	upd := spendUpdates(1, promptTokens, completionTokens, cost)
	upd["method_settings"] = jsonValue(ms)
	owner := LeaseOwnerFrom(ctx)
	return db.retry(ctx, "store method settings", func() error {
		return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			res := fenced(ctx, tx.Model(&Run{}).Where("id = ?", runID)).Updates(upd)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return checkFence(ctx, tx, runID)
			}
			var run struct {
				Status, LeaseOwner string
				Simulated          bool
			}
			if err := tx.Raw("SELECT status, lease_owner, simulated FROM runs WHERE id = ?", runID).Scan(&run).Error; err != nil {
				return err
			}
			l := lateCount{runID: runID, owner: owner, holds: owner != "" && run.LeaseOwner == owner, status: run.Status, simulated: run.Simulated,
				what: lateSteps, add: UnitSpend{Calls: 1, PromptTokens: promptTokens, CompletionTokens: completionTokens, Cost: cost}}
			if !l.ended() {
				return nil
			}
			l.at = time.Now().UTC().Truncate(time.Microsecond)
			return tx.Create(&RunEvent{RunID: runID, At: l.at, Kind: RunEventLateCount, Worker: owner, Message: l.message()}).Error
		})
	})
}
