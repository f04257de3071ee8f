package models

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// SampleOutcome is what the review queue reads of one stored sample result
// to order the queue: the final score, the human rating, their difference
// and the round scores. No dataset text: the queue reads the text of the
// one sample it shows.
type SampleOutcome struct {
	RowID   int64
	Final   *float64
	Human   *float64
	AbsDiff *float64
	// Rounds are the round scores, nil where unreadable.
	Rounds []*float64
}

// ListRunSampleOutcomes returns a finished run's stored sample results on
// one criterion in dataset order (their rank by position, the order of the
// report that stored them), with the round scores decoded; rounds is the
// run's number of rounds (every stored result has that many). It reads
// through the read pool, one query, streaming the rows.
func (db *DB) ListRunSampleOutcomes(ctx context.Context, runID int64, criterion, rounds int) ([]SampleOutcome, error) {
	fail := func(err error) ([]SampleOutcome, error) {
		return nil, fmt.Errorf("read the stored results of run %d, criterion %d: %w", runID, criterion, err)
	}
	rows, err := db.Reader(ctx).Raw("SELECT row_id, final, human, abs_diff, rounds FROM run_sample_results "+
		"WHERE run_id = ? AND criterion_index = ? ORDER BY rank_position", runID, criterion).Rows()
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	var out []SampleOutcome
	// Values and round slices live in slabs rather than one allocation
	// each: a 100,000-sample criterion of two rounds is 500,000 of them.
	var vals []float64
	var ptrs []*float64
	opt := func(v float64) *float64 {
		if len(vals) == cap(vals) {
			vals = make([]float64, 0, 4096)
		}
		vals = append(vals, v)
		return &vals[len(vals)-1]
	}
	optNull := func(v sql.NullFloat64) *float64 {
		if !v.Valid {
			return nil
		}
		return opt(v.Float64)
	}
	for rows.Next() {
		var s SampleOutcome
		var final, human, diff sql.NullFloat64
		var enc string
		if err := rows.Scan(&s.RowID, &final, &human, &diff, &enc); err != nil {
			return fail(err)
		}
		s.Final, s.Human, s.AbsDiff = optNull(final), optNull(human), optNull(diff)
		if len(ptrs)+rounds > cap(ptrs) {
			ptrs = make([]*float64, 0, max(4096, rounds))
		}
		ptrs = ptrs[:len(ptrs)+rounds]
		s.Rounds = ptrs[len(ptrs)-rounds : len(ptrs) : len(ptrs)]
		if err := decodeStoredRounds(enc, s.Rounds, opt); err != nil {
			return fail(fmt.Errorf("row %d: %w", s.RowID, err))
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return out, nil
}

// decodeStoredRounds reads round scores as the report package stores them
// (run_sample_results.rounds: comma-separated, each the shortest form that
// reads back the same float64, empty for an unreadable round) into dst,
// whose length is the number of rounds.
func decodeStoredRounds(enc string, dst []*float64, opt func(float64) *float64) error {
	if len(dst) == 0 {
		return nil
	}
	for i := range dst {
		part, rest, found := strings.Cut(enc, ",")
		if found == (i == len(dst)-1) {
			return fmt.Errorf("stored rounds %q: want %d", enc, len(dst))
		}
		enc = rest
		if part == "" {
			dst[i] = nil
			continue
		}
		v, err := strconv.ParseFloat(part, 64)
		if err != nil {
			return fmt.Errorf("stored rounds: %w", err)
		}
		dst[i] = opt(v)
	}
	return nil
}
