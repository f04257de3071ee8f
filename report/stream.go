package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
)

// Streaming exports: the per-sample part of the CSV and JSON exports is
// read from the database a page of rows at a time (the dataset's rows in
// file order, and only the score values of those rows) and written as it
// goes, so memory follows the page size and the first bytes leave before
// the last row is read. The bytes are the same as WriteCSV and WriteJSON
// write from a built report.

// streamPageRows is how many dataset rows one page reads: large enough
// that the two queries per page cost little next to writing the rows,
// small enough that a page of long texts stays a few megabytes.
const streamPageRows = 1000

// exportSource is what streaming a run's samples needs, read once: the
// run, its dataset and fields, and how its human ratings are read.
type exportSource struct {
	db     *models.DB
	run    models.Run
	ds     models.Dataset
	fields []evaluator.Field
	method methods.Method
	rounds int
	source models.HumanSource
	use    HumanUse
	// crits are the run's criteria as stored; pinned are the same with
	// their imported annotators listed explicitly, so that merging the
	// human ratings of one page reads what merging every row would read.
	crits, pinned []evaluator.Criterion
	// merged are the criteria as the report reads them under the human
	// source (human key, annotators).
	merged []evaluator.Criterion
	// reviews are each criterion's current browser reviews, by row.
	reviews []map[int64][]models.ReviewRating
	// onScale are each criterion's decision how its imported ratings are
	// put on the browser ratings' scale, taken over every row where
	// merging averages the two (nil elsewhere), so that a page is merged
	// as all rows are.
	onScale []*models.ImportedOnScale
	// pageRows and onPage are for tests: the page size (0: streamPageRows)
	// and a hook called with every page of rows read.
	pageRows int
	onPage   func(rows int)
	// keys memoizes ratingKeysWithPrefix.
	keys map[string][]string
}

// openExport reads what streaming the samples of a run needs: the run,
// its dataset, its human source and browser reviews, never its rows.
func openExport(ctx context.Context, db *models.DB, wsID, runID int64) (*exportSource, error) {
	run, err := db.FindRun(ctx, wsID, runID)
	if err != nil {
		return nil, err
	}
	ds, err := db.FindDataset(ctx, wsID, run.DatasetID)
	if err != nil {
		return nil, err
	}
	use, reviews, err := chosenReviews(ctx, db, wsID, run, nil)
	if err != nil {
		return nil, err
	}
	x := &exportSource{db: db, run: run, ds: ds, fields: run.RubricSnapshot.Fields, method: methods.For(run.Method),
		rounds: run.Settings.Rounds, source: use.Source, crits: run.RubricSnapshot.Criteria}
	if len(x.fields) == 0 {
		x.fields = ds.Fields
	}
	// The ratings the report reads (chosenReviews), by row.
	x.use = use
	for i := range x.crits {
		byRow := map[int64][]models.ReviewRating{}
		if reviews != nil {
			for _, r := range models.CurrentReviews(reviews[i]) {
				byRow[r.RowID] = append(byRow[r.RowID], r)
			}
		}
		x.reviews = append(x.reviews, byRow)
	}
	return x, nil
}

// needsAnnotatorScan says whether merging a criterion's human ratings
// reads the "<column>@<annotator>" keys of every row: under "both", for a
// human column without an explicit list of annotators.
func (x *exportSource) needsAnnotatorScan(crit evaluator.Criterion) bool {
	return x.source == models.HumansBoth && crit.HumanColumn != "" && len(crit.AnnotatorColumns) == 0
}

// pinAnnotators finds, where merging the human ratings needs them, each
// criterion's imported annotator keys over every row of the dataset (one
// pass over the ratings column, only for the "both" source) and sets
// pinned and merged.
func (x *exportSource) pinAnnotators(ctx context.Context) error {
	x.pinned, x.merged, x.onScale = nil, nil, nil
	x.use.ScaleNotes, x.use.Apart = nil, nil
	for i, crit := range x.crits {
		p := crit
		if x.needsAnnotatorScan(crit) {
			keys, err := x.ratingKeysWithPrefix(ctx, crit.HumanColumn+"@")
			if err != nil {
				return err
			}
			p.AnnotatorColumns = keys
		}
		x.pinned = append(x.pinned, p)
		var pin *models.ImportedOnScale
		if x.averagesImported(i, p) {
			sp, err := x.importedSpan(ctx, p)
			if err != nil {
				return err
			}
			on := models.DecideImportedOnScale(p, sp, x.pageReviews(i, nil, true))
			pin = &on
		}
		x.onScale = append(x.onScale, pin)
		_, m, on := models.MergeHumanRatingsOn(nil, p, x.source, x.pageReviews(i, nil, true), pin)
		x.merged = append(x.merged, m)
		x.use.noteScale(on)
	}
	return nil
}

// averagesImported says whether merging criterion ci's human ratings
// averages imported ratings with browser ones: under "both", with an
// imported column and a browser rating.
func (x *exportSource) averagesImported(ci int, crit evaluator.Criterion) bool {
	if x.source != models.HumansBoth || crit.HumanColumn == "" {
		return false
	}
	for _, r := range x.pageReviews(ci, nil, true) {
		if r.Score != nil {
			return true
		}
	}
	return false
}

// importedSpan is the criterion's imported ratings' span over every row
// (models.ImportedRatingSpan), reading the ratings column page by page.
func (x *exportSource) importedSpan(ctx context.Context, crit evaluator.Criterion) (models.ImportedSpan, error) {
	var sp models.ImportedSpan
	size := x.pageRows
	if size <= 0 {
		size = streamPageRows
	}
	err := x.db.EachDatasetRowChunk(ctx, x.ds.ID, size, "id, dataset_id, position, external_id, ratings", func(page []models.DatasetRow) error {
		sp.Join(models.ImportedRatingSpan(crit, page))
		return nil
	})
	return sp, err
}

// pageReviews are criterion ci's reviews of rows (all of them with all).
func (x *exportSource) pageReviews(ci int, rows []models.DatasetRow, all bool) []models.ReviewRating {
	var out []models.ReviewRating
	if all {
		for _, rs := range x.reviews[ci] {
			out = append(out, rs...)
		}
		return out
	}
	for _, r := range rows {
		out = append(out, x.reviews[ci][r.ID]...)
	}
	return out
}

// provenance is the run's provenance as the built report states it: the
// human columns of every criterion from which a rating was read, with its
// annotators when it has a human ceiling (two annotators or more).
// Listing the annotators found in the rows' keys reads the ratings column
// of every row once.
func (x *exportSource) provenance(ctx context.Context) (Provenance, error) {
	run := x.run
	run.RubricSnapshot.Criteria = x.merged
	rep := Report{Run: run, Dataset: x.ds, Simulated: run.Simulated, Humans: x.use}
	has, err := x.criteriaWithHumans(ctx)
	if err != nil {
		return Provenance{}, err
	}
	for i, m := range x.merged {
		cols := m.AnnotatorColumns
		if len(cols) == 0 && m.HumanColumn != "" && x.source != models.HumansBrowser {
			// What models.AnnotatorColumns finds in the rows (under
			// "browser" the imported annotators' keys are not read).
			keys, err := x.ratingKeysWithPrefix(ctx, m.HumanColumn+"@")
			if err != nil {
				return Provenance{}, err
			}
			cols = keys
		}
		cr := CriterionReport{Index: i, Criterion: m, HasHuman: has[i]}
		if len(cols) >= 2 { // ceilingOf: a ceiling needs two annotators
			cr.AnnotatorColumns = cols
		}
		rep.Criteria = append(rep.Criteria, cr)
	}
	return rep.Provenance(), nil
}

// errAllFound ends criteriaWithHumans' pass over the rows early.
var errAllFound = errors.New("every criterion has a human rating")

// criteriaWithHumans says, by criterion, whether any sample has a human
// rating under the run's human source, merged as eachSample merges it: a
// built report's HasHuman. It reads the ratings column page by page and
// stops at the first page where every criterion with a human column has
// found one (usually the first), so only a criterion without any rating
// costs a whole pass.
func (x *exportSource) criteriaWithHumans(ctx context.Context) ([]bool, error) {
	has := make([]bool, len(x.merged))
	left := 0
	for _, m := range x.merged {
		if m.HumanColumn != "" {
			left++
		}
	}
	if left == 0 {
		return has, nil
	}
	size := x.pageRows
	if size <= 0 {
		size = streamPageRows
	}
	err := x.db.EachDatasetRowChunk(ctx, x.ds.ID, size, "id, dataset_id, position, external_id, ratings", func(page []models.DatasetRow) error {
		for ci, m := range x.merged {
			if has[ci] || m.HumanColumn == "" {
				continue
			}
			merged, crit, _ := models.MergeHumanRatingsOn(page, x.pinned[ci], x.source, x.pageReviews(ci, page, false), x.onScale[ci])
			if crit.HumanColumn == "" {
				continue
			}
			for _, r := range merged {
				if h := r.Ratings[crit.HumanColumn]; h != nil && !math.IsNaN(*h) {
					has[ci] = true
					left--
					break
				}
			}
		}
		if left == 0 {
			return errAllFound
		}
		return nil
	})
	if errors.Is(err, errAllFound) {
		err = nil
	}
	return has, err
}

// ratingKeysWithPrefix lists, sorted, the distinct rating keys starting
// with prefix over every row of the dataset, as models.AnnotatorColumns
// finds them; it reads the ratings column alone, page by page, once per
// prefix.
func (x *exportSource) ratingKeysWithPrefix(ctx context.Context, prefix string) ([]string, error) {
	if keys, ok := x.keys[prefix]; ok {
		return keys, nil
	}
	// The database lists the keys (JSON functions of each dialect), so
	// no row is decoded here; sorted here, as models.AnnotatorColumns
	// sorts them, whatever the database's collation.
	q := "SELECT DISTINCT j.key FROM dataset_rows r, json_each(r.ratings) j WHERE r.dataset_id = ? AND substr(j.key, 1, length(?)) = ?"
	args := []any{x.ds.ID, prefix, prefix}
	if x.db.Dialect == models.Postgres {
		q = "SELECT DISTINCT k FROM dataset_rows r, json_object_keys(CASE WHEN json_typeof(r.ratings::json) = 'object' THEN r.ratings::json ELSE '{}'::json END) k " +
			"WHERE r.dataset_id = ? AND starts_with(k, ?)"
		args = []any{x.ds.ID, prefix}
	}
	if literalInJSON(prefix) {
		// Only rows whose text holds the quoted prefix are parsed: most
		// datasets have no annotator keys, and finding a substring costs
		// far less than parsing the JSON. A key starting with the prefix
		// is written as a quote and the prefix by any JSON encoder.
		find := "instr(r.ratings, ?) > 0"
		if x.db.Dialect == models.Postgres {
			find = "strpos(r.ratings, ?) > 0"
		}
		q += " AND " + find
		args = append(args, `"`+prefix)
	}
	var keys []string
	if err := x.db.Reader(ctx).Raw(q, args...).Scan(&keys).Error; err != nil {
		return nil, fmt.Errorf("list the annotators of dataset %d: %w", x.ds.ID, err)
	}
	sort.Strings(keys)
	if x.keys == nil {
		x.keys = map[string][]string{}
	}
	x.keys[prefix] = keys
	return keys, nil
}

// literalInJSON says whether every JSON encoder writes s inside a string
// as it is: printable ASCII without the quote, the backslash, the slash
// (which some escape) and the characters escaped for HTML.
func literalInJSON(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || strings.IndexByte(`"\/<>&`, c) >= 0 {
			return false
		}
	}
	return true
}

// streamRow is one sample with its results on the criteria asked for.
type streamRow struct {
	row     models.DatasetRow
	results []SampleResult // one per criterion asked for, in that order
}

// eachSample calls fn with every sample of the run in dataset order and
// its results on criteria cis, computed as ComputeWith computes them:
// each round's score (nil when unreadable or not judged), the unreadable
// rounds, the method's final score and the human rating under the run's
// human source. withData reads the rows' texts too (the CSV's fields).
func (x *exportSource) eachSample(ctx context.Context, cis []int, withData bool, fn func(streamRow) error) error {
	cols := "id, dataset_id, position, external_id, ratings"
	if withData {
		cols += ", data"
	}
	size := x.pageRows
	if size <= 0 {
		size = streamPageRows
	}
	rounds := make([]int, x.rounds)
	for r := range rounds {
		rounds[r] = r
	}
	// The run's failed batches: their rounds got no answer (NoAnswer),
	// as ComputeWith counts them. A run has few batches beside its scores.
	var failedIDs []int64
	if err := x.db.Reader(ctx).Model(&models.RunBatch{}).Where("run_id = ? AND status = ?", x.run.ID, models.BatchFailed).
		Pluck("id", &failedIDs).Error; err != nil {
		return fmt.Errorf("read the failed batches of run %d: %w", x.run.ID, err)
	}
	failed := make(map[int64]bool, len(failedIDs))
	for _, id := range failedIDs {
		failed[id] = true
	}
	// Its units scored from too few readable answers (TooFew), likewise.
	short, err := tooFewUnits(ctx, x.db, x.run)
	if err != nil {
		return err
	}
	return x.db.EachDatasetRowChunk(ctx, x.ds.ID, size, cols, func(page []models.DatasetRow) error {
		if x.onPage != nil {
			x.onPage(len(page))
		}

		// The page's scores: values only, never the judge's analysis.
		type place struct {
			row       int64
			crit, rnd int
		}
		type cell struct {
			score                    *float64
			judged, noAnswer, tooFew bool
		}
		grid := map[place]cell{}
		if x.rounds > 0 && len(cis) > 0 {
			// The page's ids are written into the statement as numbers:
			// binding a thousand parameters costs the SQLite driver more
			// than the query (its binding is quadratic in their number).
			ids := make([]string, len(page))
			for i, r := range page {
				ids[i] = strconv.FormatInt(r.ID, 10)
			}
			var scores []models.RunScore
			if err := x.db.Reader(ctx).Select("row_id, criterion_index, round, score, batch_id").
				Where("run_id = ? AND criterion_index IN ? AND round IN ? AND row_id IN ("+strings.Join(ids, ",")+")", x.run.ID, cis, rounds).
				Find(&scores).Error; err != nil {
				return fmt.Errorf("read the scores of run %d: %w", x.run.ID, err)
			}
			for _, s := range scores {
				grid[place{s.RowID, s.CriterionIndex, s.Round}] = cell{s.Score, true, s.Score == nil && failed[s.BatchID], s.Score == nil && short[s.BatchID]}
			}
		}
		// Human ratings of the page, merged per criterion as the report
		// merges them over every row.
		humans := make([][]*float64, len(cis))
		for k, ci := range cis {
			merged, crit, _ := models.MergeHumanRatingsOn(page, x.pinned[ci], x.source, x.pageReviews(ci, page, false), x.onScale[ci])
			humans[k] = make([]*float64, len(page))
			if crit.HumanColumn == "" {
				continue
			}
			for i, r := range merged {
				if h, ok := r.Ratings[crit.HumanColumn]; ok && h != nil && !math.IsNaN(*h) {
					v := *h
					humans[k][i] = &v
				}
			}
		}
		for i, row := range page {
			sr := streamRow{row: row, results: make([]SampleResult, len(cis))}
			for k, ci := range cis {
				s := SampleResult{RowID: row.ID, ExternalID: row.ExternalID, Position: int32(row.Position), Rounds: make([]*float64, x.rounds), Human: humans[k][i]}
				for r := range x.rounds {
					c := grid[place{row.ID, ci, r}]
					s.Rounds[r] = c.score
					if c.judged && c.score == nil {
						s.Missing++
						switch {
						case c.noAnswer:
							s.NoAnswer++
						case c.tooFew:
							s.TooFew++
						}
					}
				}
				s.Final = x.method.Final(s.Rounds)
				sr.results[k] = s
			}
			if err := fn(sr); err != nil {
				return err
			}
		}
		return nil
	})
}

// flush pushes what was written so far to the client, when w can.
func flush(w io.Writer) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// pushOut sends what bw holds to the client after the first sample, so
// the first line leaves at once, and then after every page of samples.
func pushOut(samples int, bw *bufio.Writer, w io.Writer) error {
	if samples != 1 && samples%streamPageRows != 0 {
		return nil
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	flush(w)
	return nil
}

// StreamCSV writes the CSV export of a run (the bytes WriteCSV writes
// from its built report) straight from the database: the header, then
// each sample's line as its page of rows and scores is read. It computes
// no statistics: the CSV has none.
func StreamCSV(ctx context.Context, db *models.DB, wsID, runID int64, w io.Writer) error {
	x, err := openExport(ctx, db, wsID, runID)
	if err != nil {
		return err
	}
	return x.writeCSV(ctx, w)
}

func (x *exportSource) writeCSV(ctx context.Context, w io.Writer) error {
	if len(x.crits) == 0 {
		return errNoCriteria
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	names := make([]string, len(x.crits))
	cis := make([]int, len(x.crits))
	for i, c := range x.crits {
		names[i], cis[i] = c.Name, i
	}
	// The header names the fields only when the run has samples (as
	// WriteCSV, which takes them from the first sample).
	var probe []models.DatasetRow
	if err := x.db.Reader(ctx).Select("id").Where("dataset_id = ?", x.ds.ID).Limit(1).Find(&probe).Error; err != nil {
		return err
	}
	var labels []evaluator.Text
	if len(probe) > 0 {
		labels = models.DatasetRow{}.Sample(x.fields).Fields
	}
	tooFew := hasReadableMinimum(x.run)
	if err := cw.Write(csvHeader(labels, names, x.rounds, tooFew)); err != nil {
		return err
	}
	cw.Flush()
	if err := bw.Flush(); err != nil {
		return err
	}
	flush(w)
	if err := x.pinAnnotators(ctx); err != nil {
		return err
	}
	prov, err := x.provenance(ctx)
	if err != nil {
		return err
	}
	provCells := csvProvenanceCells(prov)
	line := []string{}
	lines := 0
	err = x.eachSample(ctx, cis, true, func(s streamRow) error {
		sr := s.results[0]
		sr.Fields = s.row.Sample(x.fields).Fields
		line = csvSampleCells(line[:0], sr)
		for _, cs := range s.results {
			line = csvScoreCells(line, cs, tooFew)
		}
		line = append(line, provCells...)
		if err := cw.Write(line); err != nil {
			return err
		}
		cw.Flush() // into bw, which pushOut sends
		lines++
		return pushOut(lines, bw, w)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// samplesPlaceholder is how a criterion's samples encode when it has none
// (nil); at the depth of the criteria in the indented export it can only
// be a criterion's own "samples" key (a raw newline never appears inside
// a JSON string, and the method settings' "samples" is a number).
const samplesPlaceholder = "\n        \"samples\": null"

// sampleIndent is the indentation of a criterion's samples in the export.
const sampleIndent = "          "

// StreamJSON writes the JSON export of a run (the bytes WriteJSON writes
// from a built report): the envelope, provenance and each criterion's
// figures come from summary, a report of the run whose Criteria carry
// every figure (their Samples are not read); each criterion's samples are
// read from the database page by page and written as they come. The
// run's events (envelope.events) are read from the database too: a run
// has a handful (at most one of a kind per worker, and a late count per
// answer that came back after the end), so they are read at once.
func StreamJSON(ctx context.Context, db *models.DB, summary *Report, w io.Writer) error {
	x, err := openExport(ctx, db, summary.Run.WorkspaceID, summary.Run.ID)
	if err != nil {
		return err
	}
	events, err := db.RunEvents(ctx, summary.Run.ID)
	if err != nil {
		return err
	}
	withEvents := *summary
	withEvents.Events = events
	if err := withSampleWiseCounts(ctx, db, &withEvents); err != nil {
		return err
	}
	return x.writeJSON(ctx, &withEvents, w)
}

// withSampleWiseCounts fills the report's counts of a sample-wise run's
// units (G-Eval's sources, the sampled answers behind each criterion's
// scores) from storage, unless it has them (a stored summary keeps them);
// a run of another method keeps none.
func withSampleWiseCounts(ctx context.Context, db *models.DB, r *Report) error {
	if !methods.SamplesAnswers(methods.For(r.Run.Method)) || r.SampledAnswers != nil {
		return nil
	}
	counts, err := db.SampleWiseCountsOf(ctx, r.Run.ID)
	if err != nil {
		return err
	}
	r.setSampleWiseCounts(counts)
	return nil
}

// setSampleWiseCounts puts a sample-wise run's unit counts on the report:
// SampledAnswers is never nil after it (it says the counts were read).
func (r *Report) setSampleWiseCounts(c models.SampleWiseCounts) {
	r.SampledAnswers = c.Answers
	if r.SampledAnswers == nil {
		r.SampledAnswers = map[int]models.SampledAnswers{}
	}
	if r.Run.Method == models.MethodGEval {
		src := c.Sources
		r.GEvalSources = &src
	}
}

func (x *exportSource) writeJSON(ctx context.Context, summary *Report, w io.Writer) error {
	head := *summary
	head.Criteria = slices.Clone(summary.Criteria)
	for i := range head.Criteria {
		head.Criteria[i].Samples = nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(head.Export()); err != nil {
		return err
	}
	parts := strings.Split(buf.String(), samplesPlaceholder)
	if len(parts) != len(head.Criteria)+1 || len(head.Criteria) > len(x.crits) {
		return fmt.Errorf("export of run %d: the report's criteria do not match the run's", x.run.ID)
	}
	if err := x.pinAnnotators(ctx); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for ci := range head.Criteria {
		if _, err := io.WriteString(bw, parts[ci]+strings.TrimSuffix(samplesPlaceholder, "null")); err != nil {
			return err
		}
		n := 0
		err := x.eachSample(ctx, []int{ci}, false, func(s streamRow) error {
			r := s.results[0]
			el, err := json.MarshalIndent(NewJSONSample(r.ExternalID, r.Final, r.Rounds, r.Human), sampleIndent, "  ")
			if err != nil {
				return err
			}
			sep := ",\n"
			if n == 0 {
				sep = "[\n"
			}
			bw.WriteString(sep + sampleIndent)
			if _, err := bw.Write(el); err != nil {
				return err
			}
			n++
			return pushOut(n, bw, w)
		})
		if err != nil {
			return err
		}
		tail := "null"
		if n > 0 {
			tail = "\n        ]"
		}
		if _, err := bw.WriteString(tail); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(bw, parts[len(parts)-1]); err != nil {
		return err
	}
	return bw.Flush()
}
