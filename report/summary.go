package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// summaryVersion is part of every stored summary's key: bump it when what
// a summary holds or how its figures are computed changes, and every
// stored summary is computed again on its next use. summary-2: human
// ratings of a criterion judged on a method's own scale (LLM-Eval) are
// mapped from the rubric's range onto it for the errors (humanOnJudgeScale),
// which changes the differences, positions, decomposition and note stored;
// the correlations stored under statsVersion do not change (a linear map
// leaves them as they are), so that is not bumped. summary-3: each
// criterion keeps that mapping's span (CriterionReport.HumanScale), which
// the judge-against-human chart draws its human axis over. summary-4: the
// stored reading sentences (CriterionReport.Reading) word the strength
// band, the interval's width and the p-value from the figures as printed
// (stats.Interpret). summary-5: the reading's p-value is printed by one
// rule (stats.PText: 0.0995 to 0.1 printed "p = 0.100", now "p = 0.10").
// summary-6: a criterion without any human rating counts every sample as
// missing from its correlations (n 0, missing = the samples), not 0.
// summary-7: a criterion counts apart the round scores whose call failed
// (NoAnswer): they are no longer unreadable in the exports and their rate.
// summary-8: the human ratings keep, per criterion, the browser ratings
// read (HumanUse.Criteria), which the notes on different human ratings
// decide per criterion from. summary-9: each position of the batch counts
// its scores with a human rating (PositionStat.Rated), the samples its
// error means are over; the stored reading sentences print their figures
// as the export's decimals rounded half away from zero (stats.CoefDecimal),
// as the pages now do; and a sample whose group value is empty or only
// whitespace belongs to no group (stats.Grouped.Ungrouped), where the
// empty value was one group of its own. summary-10: the human ceiling
// keeps the samples the judge's correlation is over and how many of them
// are rated by two or more annotators (Ceiling.Judged, Ceiling.Both).
// summary-11: a sample-wise run's unit counts (G-Eval's sources, the
// sampled answers behind each criterion's scores) are stored with its
// figures (storedSummary.SampleWise), so that its pages and exports do not
// scan every unit's details at each view. summary-12: a sampling run with
// a fewest readable answers for a score counts apart, per criterion and
// per sample, the scores left missing for too few readable answers
// (CriterionReport.TooFew), which are no longer unreadable. summary-13: a
// reading whose samples cannot tell its coefficient from chance names no
// strength band ("Too few samples to tell (3 samples; -0.81, p = 0.40)",
// stats.TooFewToTell). summary-14: a criterion with annotator columns
// and no human column is compared with its annotators' mean per sample
// (models.WithAnnotatorMean), its human column named "mean of a1, a2, a3".
// summary-15: a dataset's own rating column with that name keeps its
// ratings, and the computed mean is named "mean of a1, a2, a3 (computed)"
// (models.WithAnnotatorMeanAmong): a criterion reading the real column read
// the computed mean instead, and its stored summary kept those figures.
// summary-16: the judge-against-human chart's grid of counts (stored in
// Scatter) counts a score on a cell's edge in the cell that edge opens, as
// the histogram does (stats.BinIndex): a final 3.4 on a 1 to 5 scale was
// counted under "2.6 to 3.4"; and the note on human ratings that are all
// one value inside the judge's range says so ("are all 1.5") where it said
// they "span only 1.5 to 1.5". summary-17: each correlation's bootstrap
// interval keeps how many resamples it is from (stats.Correlation's
// Resamples and ResamplesUsed; stats-12): a summary-16 holds no count and
// is computed again, so its run page and JSON export never read an
// interval "from 0 of 0 resamples" or leave out a count they should say.
// summary-18: the stored reading sentences name the coefficient they read
// ("Strong agreement (Pearson r = 0.62)", stats.Interpret), where they
// printed it bare ("Strong agreement (0.62)"). summary-19: the stored
// human ceiling's reading names its coefficient too ("(Pearson r = 0.71
// vs 0.68)", stats.InterpretCeiling), where it printed "(0.71 vs 0.68)".
const summaryVersion = "summary-19"

// storedSummary is a finished run's report without its samples, as stored
// in run_summaries (gob keeps NaN, an undefined correlation, exactly).
type storedSummary struct {
	// Criteria have every figure and Samples nil.
	Criteria []CriterionReport
	// RubricCriteria are the run's criteria as the report read them (with
	// the human source's rating column), GroupColumn the dataset's group
	// column as used.
	RubricCriteria []evaluator.Criterion
	GroupColumn    string
	Humans         HumanUse
	// SampleWise are a sample-wise run's unit counts (Report.GEvalSources,
	// Report.SampledAnswers); nil for the other methods.
	SampleWise *models.SampleWiseCounts
}

// humanChoiceKey normalises a run's human-source choice as a report uses it.
func humanChoiceKey(c models.RunHumanSource) (src models.HumanSource, asOf int64, upto int64) {
	if c.Source == models.HumansImported || c.Source == "" {
		return models.HumansImported, 0, 0
	}
	return c.Source, c.AsOf.UnixNano(), c.UptoRatingID
}

// sampleKey hashes what a finished run's per-sample results depend on: the
// run as it finished (a resumed run finishes again), the human ratings
// chosen for it and the browser ratings that choice reads (ratings, from
// usedRatingsKey; "" under the imported source, which keeps the keys of
// such runs as they were).
func sampleKey(run models.Run, choice models.RunHumanSource, ratings string) string {
	return sampleKeyAt(summaryVersion, statsVersion, run, choice, ratings)
}

// sampleKeyAt is sampleKey as the given versions of this package computed
// it (a test stores a summary of an older version with it).
func sampleKeyAt(summaryVersion, statsVersion string, run models.Run, choice models.RunHumanSource, ratings string) string {
	h := sha256.New()
	src, asOf, upto := humanChoiceKey(choice)
	fin := int64(0)
	if run.FinishedAt != nil {
		fin = run.FinishedAt.UnixNano()
	}
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\x00%d\x00%d\x00%d\x00%s\x00%d\x00%d", summaryVersion, statsVersion, run.ID, run.Status, fin,
		run.BatchesDone, run.BatchesFailed, src, asOf, upto)
	if ratings != "" {
		fmt.Fprintf(h, "\x00%s", ratings)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// summaryVariant names the stored summary of a set of options (as a query
// string: column names may hold any character but NUL, which PostgreSQL's
// text refuses).
func summaryVariant(opt Options) string {
	return url.Values{"group": {opt.GroupColumn}, "system": {opt.SystemColumn}}.Encode()
}

// summaryKey hashes what a stored summary depends on: the samples' inputs,
// the options and the dataset's columns they are resolved against.
func summaryKey(run models.Run, choice models.RunHumanSource, ratings string, ds models.Dataset, opt Options) string {
	return summaryKeyAt(summaryVersion, statsVersion, run, choice, ratings, ds, opt)
}

// summaryKeyAt is summaryKey as the given versions of this package
// computed it.
func summaryKeyAt(summaryVersion, statsVersion string, run models.Run, choice models.RunHumanSource, ratings string, ds models.Dataset, opt Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d\x00", sampleKeyAt(summaryVersion, statsVersion, run, choice, ratings), summaryVariant(opt), ds.GroupColumn, DefaultSystemColumn(ds.Columns), ds.ID)
	for _, c := range ds.Columns {
		fmt.Fprintf(h, "%d:%s", len(c), c)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func encodeSummary(s storedSummary) (string, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

func decodeSummary(text string) (storedSummary, error) {
	var s storedSummary
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return s, err
	}
	err = gob.NewDecoder(bytes.NewReader(b)).Decode(&s)
	return s, err
}

// LoadSummary returns the report of a run with every figure of every
// criterion (correlations and intervals, reading, histogram, entropy,
// rounds, batch bias, decomposition, positions, ceiling, system level,
// grouped, counts, the scatter's digest) and no samples: Criteria[i].Samples
// is nil, and the samples are read a page at a time (LoadSamplePage) or
// streamed. For a finished run it reads one stored row; when that row is
// missing or was computed from other inputs (another human source, a
// resumed run, an older version of this package) the report is built once,
// stored with the run's per-sample results, and returned. A run still going
// is built afresh each time and not stored.
func LoadSummary(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error) {
	look, err := LookupSummary(ctx, db, wsID, runID, opt)
	if err != nil {
		return nil, err
	}
	if !look.Run.Finished() {
		opt.figuresOnly = true // its samples are dropped: no texts
		rep, err := BuildWith(ctx, db, wsID, runID, opt)
		if err != nil {
			return nil, err
		}
		return withoutSamples(rep), nil
	}
	if look.Stored != nil {
		return look.Stored, nil
	}
	return storeSummary(ctx, db, wsID, look.Run, look.ds, look.choice, look.ratings, opt)
}

// SummaryLookup is what LoadSummary finds of a run's summary before it
// builds anything.
type SummaryLookup struct {
	Run models.Run
	// Stored is the finished run's stored summary when it was computed
	// from the inputs the run has now; nil when LoadSummary would build it
	// (and for a run still going, which is never stored).
	Stored *Report
	// Samples are the samples a build reads: the dataset's rows times the
	// run's criteria.
	Samples int
	// InputKey names the summary LoadSummary would store for these
	// options: its variant and what it is computed from. Two lookups with
	// the same InputKey build the same summary.
	InputKey string

	ds     models.Dataset
	choice models.RunHumanSource
	// ratings hashes the browser ratings the choice reads (usedRatingsKey).
	ratings string
}

// LookupSummary reads a run's stored summary for opt as LoadSummary does,
// without building it on a miss: a caller can then decide where (and
// whether) the build runs.
func LookupSummary(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (SummaryLookup, error) {
	run, err := db.FindRun(ctx, wsID, runID)
	if err != nil {
		return SummaryLookup{}, err
	}
	look := SummaryLookup{Run: run}
	if !run.Finished() {
		return look, nil
	}
	if look.ds, err = db.FindDataset(ctx, wsID, run.DatasetID); err != nil {
		return look, err
	}
	if look.choice, err = db.FindRunHumanSource(ctx, run.ID); err != nil {
		return look, err
	}
	look.Samples = look.ds.RowCount * max(1, len(run.RubricSnapshot.Criteria))
	if look.ratings, err = usedRatingsKey(ctx, db, run, look.choice, opt.Reviews); err != nil {
		return look, err
	}
	key := summaryKey(run, look.choice, look.ratings, look.ds, opt)
	look.InputKey = summaryVariant(opt) + "\x00" + key
	row, found, err := db.FindRunSummary(ctx, run.ID, summaryVariant(opt))
	if err != nil {
		return look, err
	}
	if found && row.InputKey == key {
		if s, err := decodeSummary(row.Summary); err == nil {
			look.Stored = summaryReport(run, look.ds, s)
		}
		// An undecodable row is computed again and overwritten.
	}
	return look, nil
}

// summaryReport puts a stored summary together with the run and dataset as
// they are now (a finished run can be renamed or moved into an experiment).
func summaryReport(run models.Run, ds models.Dataset, s storedSummary) *Report {
	run.RubricSnapshot.Criteria = s.RubricCriteria
	ds.GroupColumn = s.GroupColumn
	rep := &Report{Run: run, Dataset: ds, Simulated: run.Simulated, Criteria: s.Criteria, Humans: s.Humans}
	if c := s.SampleWise; c != nil {
		rep.setSampleWiseCounts(*c)
	}
	return rep
}

// withoutSamples is rep with its criteria's samples dropped (a copy).
func withoutSamples(rep *Report) *Report {
	out := *rep
	out.Criteria = make([]CriterionReport, len(rep.Criteria))
	for i, c := range rep.Criteria {
		c.Samples = nil
		out.Criteria[i] = c
	}
	return &out
}

// storeSummary builds a finished run's report, stores its summary under
// opt's variant and, unless current, its per-sample results, and returns
// the summary.
func storeSummary(ctx context.Context, db *models.DB, wsID int64, run models.Run, ds models.Dataset, choice models.RunHumanSource, ratings string, opt Options) (*Report, error) {
	opt.figuresOnly = true // nothing stored or returned here holds texts
	rep, err := BuildWith(ctx, db, wsID, run.ID, opt)
	if err != nil {
		return nil, err
	}
	if !rep.Run.Finished() {
		// Resumed since it was read: nothing to store.
		return withoutSamples(rep), nil
	}
	sum := withoutSamples(rep)
	stored := storedSummary{Criteria: sum.Criteria, RubricCriteria: rep.Run.RubricSnapshot.Criteria,
		GroupColumn: rep.Dataset.GroupColumn, Humans: rep.Humans}
	if rep.SampledAnswers != nil {
		c := models.SampleWiseCounts{Answers: rep.SampledAnswers}
		if rep.GEvalSources != nil {
			c.Sources = *rep.GEvalSources
		}
		stored.SampleWise = &c
	}
	enc, err := encodeSummary(stored)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	key := sampleKey(run, choice, ratings)
	var samples []models.RunSampleResult
	set, found, err := db.FindRunSampleSet(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	if !found || set.InputKey != key {
		samples = sampleRows(run.ID, rep)
		if samples == nil {
			samples = []models.RunSampleResult{} // still record the (empty) set
		}
	}
	perCriterion := 0
	if len(rep.Criteria) > 0 {
		perCriterion = len(rep.Criteria[0].Samples)
	}
	row := models.RunSummary{RunID: run.ID, Variant: summaryVariant(opt), InputKey: summaryKey(run, choice, ratings, ds, opt), Summary: enc, ComputedAt: now}
	if err := db.SaveRunSummary(ctx, row, key, perCriterion, samples); err != nil {
		return nil, err
	}
	return sum, nil
}

// sampleSorts are the sort keys of the results page's table.
var sampleSorts = []string{"position", "score", "human", "diff", "missing"}

// sampleRows are a report's per-sample results as stored, each with its
// rank in every order of the results page (SortSamples's orders).
func sampleRows(runID int64, rep *Report) []models.RunSampleResult {
	var out []models.RunSampleResult
	if len(rep.Criteria) > 0 {
		out = make([]models.RunSampleResult, 0, len(rep.Criteria)*len(rep.Criteria[0].Samples))
	}
	for _, c := range rep.Criteria {
		base := len(out)
		for _, s := range c.Samples {
			out = append(out, models.RunSampleResult{RunID: runID, CriterionIndex: c.Index, RowID: s.RowID, Position: int(s.Position),
				Final: s.Final, Human: s.Human, AbsDiff: s.AbsDiff, Missing: int(s.Missing), Rounds: encodeRounds(s.Rounds)})
		}
		rows := out[base:]
		for _, key := range sampleSorts {
			for _, desc := range []bool{false, true} {
				if key == "position" && desc {
					continue // the reverse of ascending: positions are distinct
				}
				for rank, i := range sampleOrder(c.Samples, key, desc) {
					r := &rows[i]
					switch key + strconv.FormatBool(desc) {
					case "positionfalse":
						r.RankPosition = rank
					case "scorefalse":
						r.RankScoreAsc = rank
					case "scoretrue":
						r.RankScoreDesc = rank
					case "humanfalse":
						r.RankHumanAsc = rank
					case "humantrue":
						r.RankHumanDesc = rank
					case "difffalse":
						r.RankDiffAsc = rank
					case "difftrue":
						r.RankDiffDesc = rank
					case "missingfalse":
						r.RankMissingAsc = rank
					case "missingtrue":
						r.RankMissingDesc = rank
					}
				}
			}
		}
		for rank, i := range SpreadOrder(c.Samples) {
			rows[i].RankSpreadDesc = &rank
		}
	}
	return out
}

// RoundSpread is the spread between a sample's readable rounds (highest
// minus lowest); ok is false with fewer than two, which no spread ranks.
func RoundSpread(rounds []*float64) (spread float64, ok bool) {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, v := range rounds {
		if v != nil {
			lo, hi, n = math.Min(lo, *v), math.Max(hi, *v), n+1
		}
	}
	return hi - lo, n >= 2
}

// SpreadOrder is the review queue's order by the spread between rounds:
// the samples' indexes, largest spread first, those RoundSpread cannot
// rank last, ties in the samples' order.
func SpreadOrder(ss []SampleResult) []int {
	idx := make([]int, len(ss))
	key := make([]float64, len(ss))
	for i := range ss {
		idx[i], key[i] = i, -1
		if spread, ok := RoundSpread(ss[i].Rounds); ok {
			key[i] = spread
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return key[idx[a]] > key[idx[b]] })
	return idx
}

// encodeRounds writes round scores as stored: comma-separated, exact
// (shortest form that reads back the same float64), empty for unreadable.
func encodeRounds(rs []*float64) string {
	var b strings.Builder
	for i, v := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		if v != nil {
			b.WriteString(strconv.FormatFloat(*v, 'g', -1, 64))
		}
	}
	return b.String()
}

func decodeRounds(s string, n int) ([]*float64, error) {
	out := make([]*float64, n)
	if n == 0 {
		return out, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("stored rounds %q: want %d", s, n)
	}
	for i, p := range parts {
		if p == "" {
			continue
		}
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return nil, err
		}
		out[i] = &v
	}
	return out, nil
}

// SamplePage asks for one page of a criterion's samples, as the results
// page's table shows them.
type SamplePage struct {
	Criterion int
	// Sort is "position", "score", "human", "diff" or "missing" (others:
	// position); Dir "asc" or "desc" (others: asc).
	Sort, Dir   string
	OnlyMissing bool
	// Page is 1-based; PerPage the samples per page.
	Page, PerPage int
}

// LoadSamplePage reads one page of a finished run's samples on one
// criterion from the stored per-sample results, in the order SortSamples
// gives, with the text of only that page's rows. sum is the run's
// LoadSummary; matching is the number of samples the filter keeps. It
// reads the page's rows and nothing of the others.
func LoadSamplePage(ctx context.Context, db *models.DB, sum *Report, p SamplePage) (rows []SampleResult, matching int, err error) {
	if p.Criterion < 0 || p.Criterion >= len(sum.Criteria) {
		return nil, 0, models.Errorf(models.EInvalid, "no criterion %d", p.Criterion)
	}
	if !sum.Run.Finished() {
		return nil, 0, models.Errorf(models.EConflict, "run %d is not finished: its samples are not stored", sum.Run.ID)
	}
	c := sum.Criteria[p.Criterion]
	matching = c.SampleCount
	if p.OnlyMissing {
		matching = c.MissingSamples
	}
	if p.PerPage <= 0 || p.Page < 1 {
		return nil, matching, nil
	}
	q := models.SampleResultPage{RunID: sum.Run.ID, Criterion: c.Index, Sort: p.Sort, Dir: p.Dir, OnlyMissing: p.OnlyMissing,
		Offset: (p.Page - 1) * p.PerPage, Limit: p.PerPage, Total: c.SampleCount}
	if !slicesContains(sampleSorts, q.Sort) {
		q.Sort = "position"
	}
	if q.Dir != "desc" {
		q.Dir = "asc"
	}
	stored, err := db.ListRunSampleResults(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	rows, err = sampleResultsOf(ctx, db, sum, stored)
	return rows, matching, err
}

// sampleFields are the fields a run shows of each sample.
func sampleFields(sum *Report) []evaluator.Field {
	if len(sum.Run.RubricSnapshot.Fields) > 0 {
		return sum.Run.RubricSnapshot.Fields
	}
	return sum.Dataset.Fields
}

// sampleResultsOf puts stored results together with their rows' text.
func sampleResultsOf(ctx context.Context, db *models.DB, sum *Report, stored []models.RunSampleResult) ([]SampleResult, error) {
	ids := make([]int64, len(stored))
	for i, s := range stored {
		ids[i] = s.RowID
	}
	text := map[int64]models.DatasetRow{}
	if len(ids) > 0 {
		var err error
		if text, err = db.FindDatasetRows(ctx, sum.Run.DatasetID, ids); err != nil {
			return nil, err
		}
	}
	fields := sampleFields(sum)
	n := sum.Run.Settings.Rounds
	var rows []SampleResult
	for _, s := range stored {
		rounds, err := decodeRounds(s.Rounds, n)
		if err != nil {
			return nil, err
		}
		row := text[s.RowID]
		rows = append(rows, SampleResult{RowID: s.RowID, ExternalID: row.ExternalID, Position: int32(s.Position), Fields: row.Sample(fields).Fields,
			Final: s.Final, Rounds: rounds, Human: s.Human, AbsDiff: s.AbsDiff, Missing: int32(s.Missing)})
	}
	return rows, nil
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// sampleOrder is the order SortSamples puts samples in, as indexes into ss.
func sampleOrder(ss []SampleResult, key string, desc bool) []int {
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	less := sampleLess(key, desc)
	sort.SliceStable(idx, func(a, b int) bool { return less(&ss[idx[a]], &ss[idx[b]]) })
	return idx
}

// searchChunk is the dataset rows a search reads at a time.
const searchChunk = 1000

// MatchingRows is the ids, in dataset order, of the run's dataset rows
// whose id or shown text (the fields rep's samples show) contains needle,
// whatever its case: the results page's search (SampleContains). The rows
// are read a chunk at a time as stored, so memory follows the matches, not
// the dataset, and a row's fields are decoded only when its stored text
// may match (textMayContain); rep needs no texts, so a running run's shared
// figures, which keep none, are searched without building the report.
func MatchingRows(ctx context.Context, db *models.DB, rep *Report, needle string) ([]int64, error) {
	fields := sampleFields(rep)
	needle = strings.ToLower(needle)
	screen := storedAsTyped(needle)
	var ids []int64
	var lower []byte
	err := db.EachRawDatasetRowChunk(ctx, rep.Run.DatasetID, searchChunk, func(rows []models.RawDatasetRow) error {
		for _, r := range rows {
			if screen && !strings.Contains(strings.ToLower(r.ExternalID), needle) {
				if lower = appendLower(lower[:0], r.Data); !bytes.Contains(lower, []byte(needle)) {
					continue
				}
			}
			row := models.DatasetRow{ID: r.ID, ExternalID: r.ExternalID}
			if err := json.Unmarshal(r.Data, &row.Data); err != nil {
				return fmt.Errorf("read the fields of row %s: %w", r.ExternalID, err)
			}
			if SampleContains(SampleResult{ExternalID: r.ExternalID, Fields: row.Sample(fields).Fields}, needle) {
				ids = append(ids, r.ID)
			}
		}
		return nil
	})
	return ids, err
}

// storedAsTyped reports whether text appears in a row's stored JSON as it
// is in the row's fields: none of its characters is one a JSON writer
// escapes (the quote, the backslash, control characters, and <, >, &,
// U+2028, U+2029 that the product's writers escape for HTML, nor U+FFFD,
// which stands for bytes that were not UTF-8). Then a field containing
// text has its stored JSON contain it too, in any case: those characters
// are their own lower case, so lowering cannot make one of the others.
func storedAsTyped(text string) bool {
	for _, c := range text {
		switch {
		case c < 0x20, c == 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&',
			c == '\u2028', c == '\u2029', c == utf8.RuneError:
			return false
		}
	}
	return true
}

// appendLower appends b in lower case, a rune at a time as strings.ToLower
// maps them, so that the stored text is searched as its fields are.
func appendLower(dst, b []byte) []byte {
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst, b = append(dst, c), b[1:]
			continue
		}
		r, n := utf8.DecodeRune(b)
		dst, b = utf8.AppendRune(dst, unicode.ToLower(r)), b[n:]
	}
	return dst
}

// SearchSamples finds a finished run's samples whose id or shown text
// contains needle (case-insensitive, as the results page's search does),
// with the filter of p, in p's order: the rows' text is streamed a chunk at
// a time, so memory follows the matches, not the dataset. It returns the
// matching row ids in order; LoadSampleRows reads a page of them.
func SearchSamples(ctx context.Context, db *models.DB, sum *Report, p SamplePage, needle string) ([]int64, error) {
	if p.Criterion < 0 || p.Criterion >= len(sum.Criteria) {
		return nil, models.Errorf(models.EInvalid, "no criterion %d", p.Criterion)
	}
	ids, err := MatchingRows(ctx, db, sum, needle)
	if err != nil {
		return nil, err
	}
	if !slicesContains(sampleSorts, p.Sort) {
		p.Sort = "position"
	}
	if p.Dir != "desc" {
		p.Dir = "asc"
	}
	ranks, err := db.ListRunSampleRanks(ctx, sum.Run.ID, sum.Criteria[p.Criterion].Index, p.Sort, p.Dir, ids)
	if err != nil {
		return nil, err
	}
	kept := ranks[:0]
	for _, r := range ranks {
		if !p.OnlyMissing || r.Missing > 0 {
			kept = append(kept, r)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Rank < kept[j].Rank })
	out := make([]int64, len(kept))
	for i, r := range kept {
		out[i] = r.RowID
	}
	return out, nil
}

// SampleContains reports whether a sample's id or one of its shown fields
// contains lowerNeedle (already lower-case): the results page's search.
func SampleContains(s SampleResult, lowerNeedle string) bool {
	if strings.Contains(strings.ToLower(s.ExternalID), lowerNeedle) {
		return true
	}
	for _, f := range s.Fields {
		if strings.Contains(strings.ToLower(f.Value), lowerNeedle) {
			return true
		}
	}
	return false
}

// LoadSampleRows reads the stored results and text of the given rows of a
// finished run on one criterion, in the order given.
func LoadSampleRows(ctx context.Context, db *models.DB, sum *Report, criterion int, ids []int64) ([]SampleResult, error) {
	if criterion < 0 || criterion >= len(sum.Criteria) {
		return nil, models.Errorf(models.EInvalid, "no criterion %d", criterion)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	stored, err := db.ListRunSampleResultsOf(ctx, sum.Run.ID, sum.Criteria[criterion].Index, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]models.RunSampleResult, 0, len(ids))
	for _, id := range ids {
		if r, ok := stored[id]; ok {
			rows = append(rows, r)
		}
	}
	return sampleResultsOf(ctx, db, sum, rows)
}

// ResultsKey hashes what a run's results (its report, its exports) are
// computed from as they stand now, finished or not: the run's inputs to
// its samples (its status, end and answered batches, which move with every
// answer stored, the human ratings chosen and the browser ratings they
// read) and its dataset (columns, and its current name, which the JSON
// export states). Equal keys, with the run's own fields equal, give the
// same results; a conditional GET compares them (handlers' ETags).
func ResultsKey(ctx context.Context, db *models.DB, run models.Run) (string, error) {
	ds, err := db.FindDataset(ctx, run.WorkspaceID, run.DatasetID)
	if err != nil {
		return "", err
	}
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return "", err
	}
	ratings, err := usedRatingsKey(ctx, db, run, choice, nil)
	if err != nil {
		return "", err
	}
	return summaryKey(run, choice, ratings, ds, Options{}) + "\x00" + ds.Name, nil
}
