package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"math"
	"time"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// statsVersion is part of every input hash: bump it when the way the
// stored figures are computed changes, and every stored copy is computed
// again on its next use. stats-2: intervals by size (stats.AnalyticAbove)
// and their method stored. stats-3: exact Spearman and Kendall p-values
// on few pairs (stats.ExactPermutationMax), the system level's above all.
// stats-4: the samples' differences take human ratings within the
// criterion's range as given (humanOnJudgeScale), no longer stretched
// from their lowest and highest values. stats-5: correlation intervals on
// fewer than stats.SmallSampleBelow pairs by the small-sample rule
// (stats.IntervalSmallSample). stats-6: the same rule for the system
// level's rank coefficients: no interval below stats.RankBootstrapMin
// systems. stats-7: the system level's Pearson interval is Fisher's over
// the systems' means (stats.IntervalSystemFisherZ), none below 4 systems.
// stats-8: the system level's Spearman interval is Fisher's over the
// systems' means too (Bonett–Wright's error), Kendall's the bootstrap over
// the means (stats.IntervalSystemBootstrap); the two-stage bootstrap and
// its normal second stage in large runs are gone. stats-9: a system-level
// coefficient of exactly ±1 has no interval (Fisher's z is infinite
// there: the interval was the point [r, r]), and every system-level
// coefficient without an interval says why (stats.SystemLevel.IntervalWhy).
// stats-10: the same at the sample level: a coefficient of exactly ±1 over
// the samples has no interval (stats.CorrelationInterval). stats-11: a
// criterion with annotator columns and no human column is compared with
// its annotators' mean per sample (models.WithAnnotatorMean), where it was
// compared with nothing. stats-12: a bootstrap interval keeps how many
// resamples were drawn and how many gave a defined coefficient
// (stats.Correlation.Resamples, ResamplesUsed), which the run page and
// the JSON export state when some were left out; stored figures without
// the count are computed again.
const statsVersion = "stats-12"

// criterionStats are the figures of a criterion worth storing: the
// correlations with their bootstrap intervals and the system-level
// correlations, which make most of a large run's
// report time. Everything else in a report is cheap and computed on read.
type criterionStats struct {
	Pearson, Spearman, Kendall stats.Correlation
	SystemColumn               string
	System                     map[stats.Method]stats.SystemLevel
	// Interval is how the three correlations' intervals were computed.
	Interval stats.IntervalMethod
}

// statsKey names stored figures: a criterion under one system column.
type statsKey struct {
	criterion int
	variant   string
}

// storedEntry is figures with the hash of their inputs.
type storedEntry struct {
	hash  string
	stats criterionStats
}

// statsMemo carries stored figures into a computation and the freshly
// computed ones out of it.
type statsMemo struct {
	stored map[statsKey]storedEntry
	fresh  map[statsKey]storedEntry
}

// lookup returns the stored figures of key when they were computed from
// the same inputs.
func (m *statsMemo) lookup(k statsKey, hash string) (criterionStats, bool) {
	if m == nil {
		return criterionStats{}, false
	}
	e, ok := m.stored[k]
	if !ok || e.hash != hash {
		return criterionStats{}, false
	}
	return e.stats, true
}

func (m *statsMemo) record(k statsKey, hash string, cs criterionStats) {
	if m != nil {
		m.fresh[k] = storedEntry{hash, cs}
	}
}

// criterionInputs hashes what a criterion's stored figures are computed
// from: each sample's final score and human rating in dataset order, the
// system each sample belongs to, and how the figures are computed.
func criterionInputs(cr *CriterionReport, system string, rows []models.DatasetRow) string {
	h := sha256.New()
	// The bytes are gathered in buf and written to h a few kilobytes at
	// a time: written one value at a time, each value's bytes escaped to
	// the heap (two allocations a sample, 16 MB at a million samples).
	// The hash is the same: sha256 reads a stream.
	buf := make([]byte, 0, 8<<10)
	flush := func(need int) {
		if len(buf)+need > cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	putInt := func(n int) {
		flush(8)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(n))
	}
	putOpt := func(v *float64) {
		flush(9)
		if v == nil {
			buf = append(buf, 0)
			return
		}
		buf = append(buf, 1)
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(*v))
	}
	buf = append(buf, statsVersion...)
	putInt(stats.DefaultResamples)
	putInt(bootstrapSeed)
	putInt(stats.AnalyticAbove)
	putInt(stats.ExactPermutationMax)
	flush(len(system) + 1)
	buf = append(buf, system...)
	buf = append(buf, 0)
	for i, s := range cr.Samples {
		putOpt(s.Final)
		putOpt(s.Human)
		if system != "" {
			v := rows[i].Data[system]
			putInt(len(v))
			flush(len(v))
			if len(v) > cap(buf) {
				h.Write([]byte(v))
				continue
			}
			buf = append(buf, v...)
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// encodeStats writes figures as stored: gob keeps NaN (an undefined
// correlation) exactly, which JSON cannot.
func encodeStats(cs criterionStats) (string, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(cs); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

func decodeStats(s string) (criterionStats, error) {
	var cs criterionStats
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return cs, err
	}
	err = gob.NewDecoder(bytes.NewReader(b)).Decode(&cs)
	return cs, err
}

// loadStats reads a run's stored figures; rows that cannot be decoded are
// ignored (they are computed again and overwritten).
func loadStats(ctx context.Context, db *models.DB, runID int64) (*statsMemo, error) {
	rows, err := db.ListRunStats(ctx, runID)
	if err != nil {
		return nil, err
	}
	m := &statsMemo{stored: map[statsKey]storedEntry{}, fresh: map[statsKey]storedEntry{}}
	for _, r := range rows {
		cs, err := decodeStats(r.Stats)
		if err != nil {
			continue
		}
		m.stored[statsKey{r.CriterionIndex, r.Variant}] = storedEntry{r.InputHash, cs}
	}
	return m, nil
}

// saveStats stores the figures computed afresh.
func saveStats(ctx context.Context, db *models.DB, runID int64, m *statsMemo) error {
	var rows []models.RunStats
	now := time.Now().UTC()
	for k, e := range m.fresh {
		enc, err := encodeStats(e.stats)
		if err != nil {
			return err
		}
		rows = append(rows, models.RunStats{RunID: runID, CriterionIndex: k.criterion, Variant: k.variant,
			InputHash: e.hash, Stats: enc, ComputedAt: now})
	}
	return db.SaveRunStats(ctx, rows)
}

// StoreStats computes the statistics of a finished run's criteria (with
// the dataset's usual system column) and stores them with the run's
// summary and per-sample results (LoadSummary), so that pages and exports
// read them instead of resampling or reading every sample. It is what the
// runner calls when a run finishes; what is already stored from the same
// inputs is kept.
func StoreStats(ctx context.Context, db *models.DB, wsID, runID int64) error {
	_, err := LoadSummary(ctx, db, wsID, runID, Options{})
	return err
}
