package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batcheval/batcheval/internal/money"
)

// RunEventLateCount: a judge call sent before the run ended came back
// (answered or failed) after it ended, and what it was paid for was added
// to the run's calls, tokens and cost then (its answer and scores too,
// when the run stored it: its holder's call still out when it was
// cancelled): a report downloaded before that moment shows less. So does
// every other count that lands after the end: G-Eval's steps call, a call
// answered from the answer cache, a probe of the breaker, a failed
// attempt (retries). One event per count.
const RunEventLateCount = "late_count"

// UnitSpend is what calls of one unit paid for whose answer is not stored
// by the run: a unit left pending (its answer comes with the resume), or a
// late answer or failure that its run no longer takes. Calls, tokens and
// cost are the totals; Paid names the calls among them that have an
// identity (judge.PaidCall), so that a call counted once already (by an
// earlier count of the unit, or by the answer stored for its batch) is not
// counted again.
type UnitSpend struct {
	Calls, PromptTokens, CompletionTokens int
	Cost                                  *float64 // nil when the price is unknown
	Paid                                  []PaidCall
}

// Empty reports whether s counts nothing.
func (s UnitSpend) Empty() bool {
	return s.Calls == 0 && s.PromptTokens == 0 && s.CompletionTokens == 0
}

// SpendOf is the spend of paid calls, each priced already (PaidCall.Cost):
// one call each.
func SpendOf(paid []PaidCall) UnitSpend {
	s := UnitSpend{Calls: len(paid), Paid: paid}
	for _, c := range paid {
		s.PromptTokens += c.PromptTokens
		s.CompletionTokens += c.CompletionTokens
		if c.Cost != nil {
			v := *c.Cost
			if s.Cost != nil {
				v += *s.Cost
			}
			s.Cost = &v
		}
	}
	return s
}

// without is s less the calls whose identities are in counted, and the
// identities it still counts.
func (s UnitSpend) without(counted []string) (UnitSpend, []string) {
	out := s
	var ids []string
	for _, c := range s.Paid {
		if c.ID == "" || !slices.Contains(counted, c.ID) {
			if c.ID != "" {
				ids = append(ids, c.ID)
			}
			continue
		}
		out.Calls, out.PromptTokens, out.CompletionTokens = out.Calls-1, out.PromptTokens-c.PromptTokens, out.CompletionTokens-c.CompletionTokens
		if out.Cost != nil && c.Cost != nil {
			left := *out.Cost - *c.Cost
			out.Cost = &left
		}
	}
	out.Calls, out.PromptTokens, out.CompletionTokens = max(out.Calls, 0), max(out.PromptTokens, 0), max(out.CompletionTokens, 0)
	if out.Cost != nil && *out.Cost < 0 {
		zero := 0.0
		out.Cost = &zero
	}
	return out, ids
}

// AddUnitSpend counts on the run what a unit's calls paid for when its
// answer is not stored by the run: a unit cut short and left pending for
// the resume, or a late answer or failure its run no longer takes. The
// calls, their tokens and, when known, their cost are added to the run's
// counters, and to the batch's while it is pending (a batch with calls
// counted tells the resume that its answers were paid for already).
//
// Spend is a fact about money spent, not about who holds the run: it is
// counted whether or not ctx's lease owner still holds it, and after the
// run has ended. It is counted once: the identities of the calls counted
// are kept with the batch (paid_calls), and a call counted already, here
// or by the answer stored for the batch, is not counted again (a retry,
// or the successor's answer replaying the same paid call). When it lands
// on a run that has ended, whoever counts it (its holder too: a cancel
// keeps the lease), the run's events say so (RunEventLateCount), in the
// same transaction.
func (db *DB) AddUnitSpend(ctx context.Context, runID, batchID int64, s UnitSpend) error {
	if s.Empty() {
		return nil
	}
	owner := LeaseOwnerFrom(ctx)
	return db.retry(ctx, "count calls", func() (err error) {
		tx, err := db.beginAnswers(ctx)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = tx.Rollback()
			}
		}()
		if err := db.spendTx(ctx, tx, runID, batchID, s, owner); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// forUpdate locks a row read in a transaction that writes it next on
// PostgreSQL (SQLite's transaction holds the write lock already).
func forUpdate(d Dialect) string {
	if d == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// addRunSpendTx adds add's calls and tokens to run runID's counters in
// tx, and its cost when known: a cost that is not known leaves the run's
// as it is (NULL while no priced call was counted; unknown is never $0).
// Every count of calls paid for outside an answer (AddUnitSpend, a refused
// answer) adds to the run through it.
func (db *DB) addRunSpendTx(ctx context.Context, tx *answerTx, runID int64, add UnitSpend) error {
	withCost := add.Cost != nil
	q := hotSQL.get(db.Dialect, "spend on run "+strconv.FormatBool(withCost), 0, func() string {
		c := ""
		if withCost {
			c = ", cost_usd = " + addCostSQL
		}
		return `UPDATE runs SET calls = calls + ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?` + c + ` WHERE id = ?`
	})
	args := []any{add.Calls, add.PromptTokens, add.CompletionTokens}
	if withCost {
		args = append(args, *add.Cost)
	}
	_, err := db.hotExec(ctx, db.answers(), tx, q, append(args, runID)...)
	return err
}

// setPaidCallsTx stores, in tx, the identities of the paid calls counted
// for batch batchID (its paid_calls column, space-separated), so that none
// is counted again.
func (db *DB) setPaidCallsTx(ctx context.Context, tx *answerTx, batchID int64, column string) error {
	q := hotSQL.get(db.Dialect, "spend on answered batch", 0, func() string {
		return `UPDATE run_batches SET paid_calls = ? WHERE id = ?`
	})
	_, err := db.hotExec(ctx, db.answers(), tx, q, column, batchID)
	return err
}

// spendTx is AddUnitSpend in tx.
func (db *DB) spendTx(ctx context.Context, tx *answerTx, runID, batchID int64, s UnitSpend, owner string) error {
	q := hotSQL.get(db.Dialect, "spend's batch", 0, func() string {
		return "SELECT status, paid_calls FROM run_batches WHERE id = ? AND run_id = ?" + forUpdate(db.Dialect)
	})
	var status string
	var paid sql.NullString
	err := db.hotQueryRow(ctx, db.answers(), tx, q, batchID, runID).Scan(&status, &paid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // the run was deleted: nothing left to count on
	}
	if err != nil {
		return fmt.Errorf("count the calls of batch %d: %w", batchID, err)
	}
	counted := strings.Fields(paid.String)
	add, ids := s.without(counted)
	if add.Empty() {
		return nil
	}
	if err := db.addRunSpendTx(ctx, tx, runID, add); err != nil {
		return fmt.Errorf("count the calls of batch %d: %w", batchID, err)
	}
	column := strings.Join(append(counted, ids...), " ")
	if status == BatchPending {
		// A batch has no cost column: its cost follows from its tokens.
		q = hotSQL.get(db.Dialect, "spend on pending batch", 0, func() string {
			return `UPDATE run_batches SET calls = calls + ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, paid_calls = ? WHERE id = ?`
		})
		_, err = db.hotExec(ctx, db.answers(), tx, q, add.Calls, add.PromptTokens, add.CompletionTokens, column, batchID)
	} else {
		// Answered: its figures are its answer's; only the calls now
		// counted are noted, so they are never counted twice.
		err = db.setPaidCallsTx(ctx, tx, batchID, column)
	}
	if err != nil {
		return fmt.Errorf("count the calls of batch %d: %w", batchID, err)
	}
	return db.noteLateCount(ctx, tx, runID, batchID, owner, add)
}

// noteLateCount records on the run, in tx, that add was counted after the
// run ended, when it has ended (cancelled, failed or finished): the run's
// figures changed after its end, and a report downloaded before shows
// less. Whoever counted it: owner is the counting worker ("" for none),
// the run's holder too (a cancel keeps the lease, and the holder's calls
// still out come back and are counted after the run ended, as anyone's).
// It reads the run's status; the answer store, whose count reads it back
// already, calls writeLateCount.
func (db *DB) noteLateCount(ctx context.Context, tx *answerTx, runID, batchID int64, owner string, add UnitSpend) error {
	q := hotSQL.get(db.Dialect, "late count's run", 0, func() string {
		return "SELECT status, lease_owner, simulated FROM runs WHERE id = ?"
	})
	var status, holder string
	var simulated bool
	if err := db.hotQueryRow(ctx, db.answers(), tx, q, runID).Scan(&status, &holder, &simulated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return fmt.Errorf("read run %d: %w", runID, err)
	}
	return db.writeLateCount(ctx, tx, lateCount{runID: runID, batchID: batchID, owner: owner, holds: owner != "" && holder == owner,
		status: status, simulated: simulated, add: add})
}

// lateWhat is what a late count counted on its run.
type lateWhat int

const (
	// latePaid: paid calls of a unit whose answer the run did not store
	// (left pending, refused, or come back after the run ended).
	latePaid lateWhat = iota
	// lateStored: an answer stored on the run, its scores with it.
	lateStored
	// lateSteps: the call that wrote G-Eval's evaluation steps (a
	// method's once-per-pass set-up call, SaveRunMethodSettings).
	lateSteps
	// lateCached: a call answered from the answer cache (AddCachedCall):
	// the run's cached calls and the tokens they cost when first paid for.
	lateCached
	// lateProbe: a probe of the breaker (AddRunProbe).
	lateProbe
	// lateRetry: failed judge attempts worth trying again (AddRunRetries).
	lateRetry
)

// lateCount is what a count on a run that may have ended added, and who
// counted it.
type lateCount struct {
	runID, batchID int64  // batchID 0: a count of no batch
	owner          string // the counting worker, "" for none
	holds          bool   // owner holds the run's lease (a cancel keeps it)
	status         string // the run's status as the count found it
	// simulated: the run's judge is the built-in simulated judge, which
	// has no price (its cost reads as the run's counters say it).
	simulated bool
	what      lateWhat
	add       UnitSpend // for lateRetry, Calls is the attempts counted
	at        time.Time // when; zero for now
	// place names the batch as the run's batches list does (batchPlace);
	// "" words it by its id.
	place string
}

// batchPlace names batch id as the run's pages number it ("batch 2 of
// round 3, criterion Overall"), from 1 as the batches list shows them,
// not by its database id, which no page shows beside it; "" when the
// batch is not found.
func (db *DB) batchPlace(ctx context.Context, h *sql.DB, tx *answerTx, id int64) string {
	q := hotSQL.get(db.Dialect, "late count's batch", 0, func() string {
		return "SELECT b.criterion_index, b.round, b.batch_index, r.rubric_snapshot FROM run_batches b JOIN runs r ON r.id = b.run_id WHERE b.id = ?"
	})
	var ci, round, index int
	var rubric string
	if err := db.hotQueryRow(ctx, h, tx, q, id).Scan(&ci, &round, &index, &rubric); err != nil {
		return ""
	}
	criterion := fmt.Sprintf("criterion %d", ci+1)
	var r struct{ Criteria []struct{ Name string } }
	if json.Unmarshal([]byte(rubric), &r) == nil && ci < len(r.Criteria) && r.Criteria[ci].Name != "" {
		criterion = "criterion " + strconv.Quote(r.Criteria[ci].Name)
	}
	return fmt.Sprintf("batch %d of round %d, %s", index+1, round+1, criterion)
}

// ended reports whether the count landed on a run that had ended: it
// needs an event.
func (l lateCount) ended() bool { return (Run{Status: l.status}).Finished() }

// writeLateCount writes l's event on its run in tx when the run had ended
// (RunEventLateCount); a run still going (queued, running, paused) gets
// none.
func (db *DB) writeLateCount(ctx context.Context, tx *answerTx, l lateCount) error {
	if !l.ended() {
		return nil
	}
	if l.at.IsZero() {
		l.at = time.Now().UTC()
	}
	if l.batchID != 0 && l.place == "" {
		l.place = db.batchPlace(ctx, db.answers(), tx, l.batchID)
	}
	q := hotSQL.get(db.Dialect, "late count event", 0, func() string {
		return `INSERT INTO run_events (run_id, at, kind, worker, message) VALUES (?, ?, ?, ?, ?)`
	})
	if _, err := db.hotExec(ctx, db.answers(), tx, q, l.runID, l.at, RunEventLateCount, l.owner, l.message()); err != nil {
		return fmt.Errorf("record the late count on run %d: %w", l.runID, err)
	}
	return nil
}

// writeLateCountOnce is writeLateCount outside a transaction, for a count
// a single statement made (an answer on PostgreSQL, a cached call, a
// probe, a retry): the event is written unless the same event (its run,
// time and words) is there already, so a retry of a write whose commit was
// not acknowledged writes no other. l.at must be set, to a time the
// database keeps as it is (microseconds). A crash between the count and
// its event loses the event (not the count).
func (db *DB) writeLateCountOnce(ctx context.Context, l lateCount) error {
	q := hotSQL.get(db.Dialect, "late count event once", 0, func() string {
		return `INSERT INTO run_events (run_id, at, kind, worker, message) SELECT ?, ?, ?, ?, ?
 WHERE NOT EXISTS (SELECT 1 FROM run_events WHERE run_id = ? AND kind = ? AND at = ? AND message = ?)`
	})
	if l.batchID != 0 && l.place == "" {
		l.place = db.batchPlace(ctx, db.SQL, nil, l.batchID)
	}
	msg := l.message()
	return db.retry(ctx, "record the late count", func() error {
		_, err := db.hotExec(ctx, db.SQL, nil, q, l.runID, l.at, RunEventLateCount, l.owner, msg, l.runID, RunEventLateCount, l.at, msg)
		return err
	})
}

// message words a late count for the run's events.
func (l lateCount) message() string {
	worker := ""
	if l.owner != "" {
		w := l.owner
		if i := strings.LastIndexByte(w, '/'); i > 0 {
			w = w[:i]
		}
		worker = " of worker " + w
	}
	at := l.at.Format("2006-01-02 15:04:05 UTC")
	batch := ""
	switch {
	case l.place != "":
		batch = " (" + l.place + ")"
	case l.batchID != 0:
		batch = fmt.Sprintf(" (batch %d)", l.batchID)
	}
	var who, came string
	switch l.what {
	case lateSteps:
		who, came = "The call writing G-Eval's evaluation steps"+worker, "came back"
	case lateCached:
		who, came = "A judge call"+worker, "was answered from the answer cache"
	case lateProbe:
		who, came = "A probe of the judge"+worker+" (a tiny request sent while the run waited for its judge to answer again)", "came back"
	case lateRetry:
		who, came = "A judge attempt"+worker, "failed with an error worth trying again"
	default:
		who, came = "A judge call"+worker, "came back"
	}
	when := fmt.Sprintf("%s, sent before the run ended, %s at %s, after the run ended%s.", who, came, at, batch)
	if l.holds {
		// The holder's call was still out when the run was stopped under
		// it: say how it ended.
		when = fmt.Sprintf("%s that was still out when the run %s %s at %s%s.", who, endWords(l.status), came, at, batch)
	}
	var what string
	switch l.what {
	case lateStored:
		what = "Its answer was stored, with its scores, and added to the run's figures: " + SpendWords(l.add, l.simulated)
	case lateCached:
		what = fmt.Sprintf("It was added to the run's calls answered from the answer cache, which cost nothing: %s, which used %d prompt and %d completion tokens when first paid for",
			callsWords(l.add.Calls, "call"), l.add.PromptTokens, l.add.CompletionTokens)
	case lateProbe:
		what = fmt.Sprintf("It was added to the run's probes: %s, %d prompt and %d completion tokens, %s",
			callsWords(l.add.Calls, "probe"), l.add.PromptTokens, l.add.CompletionTokens, costWords(l.add.Cost, l.simulated))
	case lateRetry:
		what = "It was added to the run's retries: " + callsWords(l.add.Calls, "failed attempt")
	default:
		what = "It was paid for, so it was added to the run's figures: " + SpendWords(l.add, l.simulated)
	}
	return when + " " + what + ". Reports and exports downloaded before then do not include it."
}

// endWords says how a run with status ended, after "the run".
func endWords(status string) string {
	switch status {
	case RunCancelled:
		return "was cancelled"
	case RunFailed:
		return "failed"
	case RunSucceeded, RunFinishedWithGaps:
		return "finished"
	}
	return "ended"
}

// SpendWords says what a spend added: "1 call, 120 prompt and 20
// completion tokens, $0.00016". Its cost reads as the run's counters say
// it: as money is shown everywhere (money.Text); "$0 (simulated judge)"
// for the built-in simulated judge, which has no price; unknown when the
// judge's price is (never a $0 that would read as free).
func SpendWords(s UnitSpend, simulated bool) string {
	return fmt.Sprintf("%s, %d prompt and %d completion tokens, %s", callsWords(s.Calls, "call"), s.PromptTokens, s.CompletionTokens, costWords(s.Cost, simulated))
}

// costWords is a cost as SpendWords says it.
func costWords(cost *float64, simulated bool) string {
	switch {
	case simulated:
		return SimulatedCostText
	case cost == nil:
		return "cost unknown (the judge has no price)"
	}
	return money.Text(*cost)
}

// SimulatedCostText is the cost of calls to the built-in simulated judge,
// as a run's counters and its events say it: it has no price, and its $0
// is said to be the simulated judge's, not a free judge's.
const SimulatedCostText = "$0 (simulated judge)"

// callsWords is "1 call", "3 calls" (one's plural adds an s).
func callsWords(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}

// lateReturning ends an UPDATE of a run's counters made by one statement
// outside an answer (a cached call, a probe, retries): what the count
// reads back to tell, without another statement, whether it landed on a
// run that has ended (countOnRun).
const lateReturning = " RETURNING status, lease_owner, simulated"

// countOnRun runs q, an UPDATE of run runID's counters that ends with
// lateReturning, through transient errors when what names the count (""
// for one try), and when the run had ended (cancelled, failed or
// finished) writes the event that says what l counted
// (RunEventLateCount), once: the run's figures changed after its end. A
// run still going gets no event and costs no statement more. The
// counting worker is ctx's lease owner.
func (db *DB) countOnRun(ctx context.Context, what string, runID int64, q string, args []any, l lateCount) error {
	var holder string
	count := func() error {
		return db.hotQueryRow(ctx, db.SQL, nil, q, args...).Scan(&l.status, &holder, &l.simulated)
	}
	var err error
	if what == "" {
		err = count()
	} else {
		err = db.retry(ctx, what, count)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil // the run was deleted: nothing left to count on
	}
	if err != nil {
		return err
	}
	if !l.ended() {
		return nil
	}
	l.runID, l.owner = runID, LeaseOwnerFrom(ctx)
	l.holds = l.owner != "" && holder == l.owner
	l.at = time.Now().UTC().Truncate(time.Microsecond)
	if l.what == lateProbe && !l.simulated {
		// A probe's cost is not among the run's: priced at the run's
		// prices, as its counters price its probes (Run.ProbeCostUSD).
		r, err := db.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		l.add.Cost = r.JudgeSnapshot.Cost(l.add.PromptTokens, l.add.CompletionTokens)
	}
	return db.writeLateCountOnce(ctx, l)
}
