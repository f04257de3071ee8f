package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// showRunSample shows one sample of a run: its fields, the human ratings,
// and per criterion every round's score, the judge's analysis and the
// batch it was judged in, with links to the other samples of that batch.
func (h *Handlers) showRunSample(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	rowID, err := paramID(c, "rowID")
	if err != nil {
		return err
	}
	v, err := h.runSampleView(c, run, rowID, false)
	if err != nil {
		return err
	}
	if v.Review, err = h.sampleReviewPanel(c, run, rowID, &v); err != nil {
		return err
	}
	v.ProjectCrumb = h.projectCrumb(c.Request().Context(), h.workspaceID(c), run.ProjectID)
	return render(c, http.StatusOK, web.RunSamplePage(v))
}

// runSampleView gathers one sample of a run as its page shows it (the run
// page's and the share link's sample pages).
//
// outside is for readers outside the run's workspace (a share link's
// sample page): what the page quotes of the judge's errors is what they
// may read (unreadableReason).
func (h *Handlers) runSampleView(c echo.Context, run models.Run, rowID int64, outside bool) (web.RunSampleView, error) {
	ctx := c.Request().Context()
	rows, err := h.DB.FindDatasetRows(ctx, run.DatasetID, []int64{rowID})
	if err != nil {
		return web.RunSampleView{}, err
	}
	row, ok := rows[rowID]
	if !ok {
		return web.RunSampleView{}, models.Errorf(models.ENotFound, "sample %d is not part of this run's dataset", rowID)
	}
	fields := run.RubricSnapshot.Fields
	if len(fields) == 0 {
		ds, err := h.DB.FindDataset(ctx, h.workspaceID(c), run.DatasetID)
		if err != nil {
			return web.RunSampleView{}, err
		}
		fields = ds.Fields
	}
	scores, err := h.DB.ListRowScores(ctx, run.ID, rowID)
	if err != nil {
		return web.RunSampleView{}, err
	}
	// The batches this sample was in, the ids of their other samples and
	// those samples' scores in them.
	batches := map[int64]models.RunBatch{}
	mateScores := map[int64]map[int64]models.RunScore{} // [batch][row] on the batch's criterion
	var mateIDs []int64
	for _, s := range scores {
		if _, seen := batches[s.BatchID]; seen {
			continue
		}
		b, err := h.DB.FindBatch(ctx, run.ID, s.BatchID)
		if err != nil {
			return web.RunSampleView{}, err
		}
		b.ShowAddrs = run.ShowAddrs
		batches[b.ID] = b
		mateIDs = append(mateIDs, b.RowIDs...)
		bs, err := h.DB.ListBatchScores(ctx, run.ID, b.ID)
		if err != nil {
			return web.RunSampleView{}, err
		}
		mateScores[b.ID] = map[int64]models.RunScore{}
		for _, ms := range bs {
			if ms.CriterionIndex == s.CriterionIndex {
				mateScores[b.ID][ms.RowID] = ms
			}
		}
	}
	mates := map[int64]models.DatasetRow{}
	if len(mateIDs) > 0 {
		if mates, err = h.DB.FindDatasetRows(ctx, run.DatasetID, mateIDs); err != nil {
			return web.RunSampleView{}, err
		}
	}

	v := web.RunSampleView{Page: page(c, "Sample "+row.ExternalID), Run: run, RowID: row.ID, ExternalID: row.ExternalID,
		Position: row.Position, Fields: row.Sample(fields).Fields}
	if v.Prev, v.Next, err = h.DB.NeighbourRows(ctx, run.DatasetID, row.Position); err != nil {
		return web.RunSampleView{}, err
	}
	humans, err := h.reportHumans(ctx, run, append([]int64{rowID}, mateIDs...))
	if err != nil {
		return web.RunSampleView{}, err
	}
	for ci, crit := range run.RubricSnapshot.Criteria {
		sc := web.RunSampleCriterion{Name: crit.Name, Range: scaleText(crit), HumanSource: humans.source, HumanPending: humans.pending}
		humanOf := func(r models.DatasetRow) *float64 {
			if humans.byCriterion != nil {
				return humans.byCriterion[ci][r.ID]
			}
			// The column's, or the annotators' mean without one.
			return models.HumanOf(r, crit)
		}
		sc.Human = humanOf(row)
		sc.HumanScale, sc.HumanOnJudge = humanOnJudgeScale(crit, sc.Human)
		for _, col := range crit.AnnotatorColumns {
			a := web.SampleAnnotatorRating{Column: col}
			if v := row.Ratings[col]; v != nil && !math.IsNaN(*v) {
				a.Rating = v
			}
			sc.Annotators = append(sc.Annotators, a)
		}
		var sum float64
		var k int
		for _, s := range scores {
			if s.CriterionIndex != ci {
				continue
			}
			b := batches[s.BatchID]
			r := web.RunSampleRound{Round: s.Round + 1, Score: s.Score, Analysis: s.Analysis, BatchID: b.ID, BatchIndex: b.BatchIndex, Label: s.Label,
				Response: b.Response, BatchSize: len(b.RowIDs)}
			if s.Score == nil {
				r.Unreadable = unreadableReason(b, s.Label, outside)
			}
			if asked, answered, ok := sampledAnswers(b.Details); ok && answered < asked {
				r.Sampled = web.SampledText(asked, answered)
			}
			for _, id := range b.RowIDs {
				if id == rowID {
					continue
				}
				ms, stored := mateScores[b.ID][id]
				mate := web.RunSampleMate{RowID: id, ExternalID: fmt.Sprintf("#%d", id), Label: ms.Label, Score: ms.Score}
				if m, ok := mates[id]; ok {
					mate.ExternalID = m.ExternalID
					mate.Human = humanOf(m)
				}
				if web.IsMissing(mate.Score) {
					mate.ScoreMissing = mateScoreMissing(run, b, ms, stored, outside)
				}
				if web.IsMissing(mate.Human) && humans.pending {
					mate.HumanMissing = "the report's human ratings are being prepared"
				}
				r.Mates = append(r.Mates, mate)
			}
			sc.Rounds = append(sc.Rounds, r)
			if s.Score != nil {
				sum += *s.Score
				k++
			}
		}
		if k > 0 {
			mean := sum / float64(k)
			sc.Final = &mean
		}
		v.Criteria = append(v.Criteria, sc)
	}
	if err := h.sayWhyMatesHumansMissing(ctx, run, &v, outside); err != nil {
		return web.RunSampleView{}, err
	}
	return v, nil
}

// mateScoreMissing says why a batch mate has no score in batch b (ms, its
// stored score there, stored when there is one): the judge's answer about
// it could not be read or the call failed, in the batch's words as the
// mate's own page says them (unreadableReason), or nothing was stored for
// it yet.
func mateScoreMissing(run models.Run, b models.RunBatch, ms models.RunScore, stored, outside bool) string {
	if stored {
		if why := unreadableReason(b, ms.Label, outside); why != "" {
			return why
		}
		return "the judge's answer about it could not be read (its page says more)"
	}
	if b.Error != "" {
		return unreadableReason(b, ms.Label, outside)
	}
	if !run.Finished() {
		return "not judged yet"
	}
	return "not judged: the run ended before this call was answered"
}

// sayWhyMatesHumansMissing gives each batch mate of a sample page without
// a human rating its reason, in the words of the run page's samples table
// (humanMissingReason): one reading of the reviews for every mate and
// criterion. A share link's sample page (outside) lists its mates without
// their ratings, so nothing is read for it.
func (h *Handlers) sayWhyMatesHumansMissing(ctx context.Context, run models.Run, v *web.RunSampleView, outside bool) error {
	if outside {
		return nil
	}
	var missing []roundKey
	for ci := range v.Criteria {
		if v.Criteria[ci].HumanPending {
			continue
		}
		for _, r := range v.Criteria[ci].Rounds {
			for _, m := range r.Mates {
				if web.IsMissing(m.Human) {
					missing = append(missing, roundKey{m.RowID, ci})
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	why, err := h.humanWhy(ctx, run, readerMember, missing)
	if err != nil {
		return err
	}
	for ci := range v.Criteria {
		for ri := range v.Criteria[ci].Rounds {
			mates := v.Criteria[ci].Rounds[ri].Mates
			for mi := range mates {
				if web.IsMissing(mates[mi].Human) {
					mates[mi].HumanMissing = why[roundKey{mates[mi].RowID, ci}]
				}
			}
		}
	}
	return nil
}

// sampleHumans are the human ratings a run's report uses, read for a few
// rows (a sample page's sample and its batch mates).
type sampleHumans struct {
	// source names them when they are not simply the imported column
	// ("imported column and browser ratings"); "" for the imported column.
	source string
	// byCriterion[ci][rowID] is the rating, nil when the report has none;
	// byCriterion is nil when the report reads the imported column as the
	// rows hold it.
	byCriterion []map[int64]*float64
	// pending: a large run's results are being prepared; the ratings are
	// not known yet.
	pending bool
}

// reportHumans reads the human ratings the run's report uses for the rows.
// Until someone recomputes the report with browser ratings that is the
// imported column, as the rows hold it. After, a sample's rating is the
// mean of its annotators, imported and browser (models.MergeHumanRatings),
// which the rows alone do not hold: it is read as the review queue reads
// it, from the run's stored results or its report, so the sample page, the
// queue and the run's table show the same human rating.
func (h *Handlers) reportHumans(ctx context.Context, run models.Run, ids []int64) (sampleHumans, error) {
	src, err := h.DB.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return sampleHumans{}, err
	}
	if src.Source == models.HumansImported || src.Source == "" {
		return sampleHumans{}, nil
	}
	out := sampleHumans{source: src.Source.Label(), byCriterion: make([]map[int64]*float64, len(run.RubricSnapshot.Criteria))}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	// The run's browser reviews, read once for every criterion.
	rr := h.newRunReviews()
	for ci := range out.byCriterion {
		sum, samples, err := h.criterionSource(ctx, run, ci, false, rr)
		if preparingOf(err) != nil {
			// A large run's results are being stored again for the new
			// ratings: no rating is shown until they are, rather than the
			// imported one.
			out.pending = true
			return out, nil
		}
		if err != nil {
			return sampleHumans{}, err
		}
		if sum != nil {
			if samples, err = report.LoadSampleRows(ctx, h.DB, sum, ci, ids); err != nil {
				return sampleHumans{}, err
			}
		}
		m := make(map[int64]*float64, len(ids))
		for _, s := range samples {
			if want[s.RowID] && s.Human != nil && !math.IsNaN(*s.Human) {
				m[s.RowID] = s.Human
			}
		}
		out.byCriterion[ci] = m
	}
	return out, nil
}

// showRunBatch shows one judge call in full: the samples, what was sent,
// what came back, the repair exchange and what went wrong.
func (h *Handlers) showRunBatch(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	batchID, err := paramID(c, "batchID")
	if err != nil {
		return err
	}
	b, err := h.DB.FindBatch(ctx, run.ID, batchID)
	if err != nil {
		return err
	}
	b.ShowAddrs = run.ShowAddrs
	rows, err := h.DB.FindDatasetRows(ctx, run.DatasetID, b.RowIDs)
	if err != nil {
		return err
	}
	m := methods.For(run.Method)
	crit := unitCriterion(run, m, b.CriterionIndex)
	v := web.RunBatchView{Page: page(c, crit+" "+m.Words().Unit), Run: run, Batch: b, Criterion: crit,
		ProjectCrumb: h.projectCrumb(ctx, h.workspaceID(c), run.ProjectID)}
	human := ""
	if b.CriterionIndex < len(run.RubricSnapshot.Criteria) && crit != "All criteria" {
		human = run.RubricSnapshot.Criteria[b.CriterionIndex].HumanColumn
	}
	v.HasHuman = human != ""
	humans, err := h.reportHumans(ctx, run, b.RowIDs)
	if err != nil {
		return err
	}
	if humans.byCriterion != nil && crit != "All criteria" && b.CriterionIndex < len(humans.byCriterion) {
		v.HasHuman = true // browser ratings count without an imported column
	}
	// The batch's scores in one read (by its id); by criterion, so a
	// sample's last criterion's score is the one shown, as when each
	// sample's scores were read on their own.
	batchScores, err := h.DB.ListBatchScores(ctx, run.ID, b.ID)
	if err != nil {
		return err
	}
	scoreOf := make(map[int64]models.RunScore, len(b.RowIDs))
	for _, sc := range batchScores {
		scoreOf[sc.RowID] = sc
	}
	for k, id := range b.RowIDs {
		s := web.RunBatchSample{Label: k + 1, RowID: id, ExternalID: fmt.Sprintf("#%d", id)}
		if r, ok := rows[id]; ok {
			s.ExternalID = r.ExternalID
			switch {
			case humans.byCriterion != nil && v.HasHuman && b.CriterionIndex < len(humans.byCriterion):
				s.Human = humans.byCriterion[b.CriterionIndex][id]
			case human != "":
				s.Human = r.Ratings[human]
			}
		}
		if sc, ok := scoreOf[id]; ok {
			s.Score, s.Analysis = sc.Score, sc.Analysis
		}
		v.Samples = append(v.Samples, s)
	}
	v.Asked, v.Answered, _ = sampledAnswers(b.Details)
	v.Probabilities, v.ProbSource = gevalDetails(b.Details)
	v.Ratings, v.RatingsUnreadable, v.HasRatings = closerLookDetails(b.Details)
	if b.Request != "" {
		v.Messages = runner.DecodeMessages(b.Request)
	}
	if b.RepairRequest != "" {
		msgs := runner.DecodeMessages(b.RepairRequest)
		last := msgs[len(msgs)-1]
		v.RepairMessage = &evaluator.Message{Role: last.Role, Content: last.Content}
	}
	return render(c, http.StatusOK, web.RunBatchPage(v))
}

// exportRunCSV downloads one line per sample with every round's score,
// streamed from the database (report.StreamCSV): no statistics are
// computed, and memory does not grow with the run.
// With ?excel=1 it is the same file for Excel on Windows (excelCSV): a
// UTF-8 byte order mark first, so that Excel reads the text as UTF-8
// instead of the system's code page, and CRLF line ends.
//
// With ?excel=semicolon it is the file for Excel where decimals are written
// with a comma (semicolonExcelCSV): semicolons between cells and decimal
// commas, as that Excel writes and reads a ".csv" file.
func (h *Handlers) exportRunCSV(c echo.Context) error {
	ext := "csv"
	excel, err := excelVariant(c)
	if err != nil {
		return err
	}
	switch excel {
	case "1":
		ext = "excel.csv"
	case "semicolon":
		ext = "excel-semicolon.csv"
	}
	return h.exportRun(c, ext, "text/csv; charset=utf-8", func(ctx context.Context, run models.Run, w io.Writer) error {
		stream := func(w io.Writer) error { return h.writeRunCSV(ctx, run, w) }
		switch excel {
		case "1":
			return stream(&excelCSV{w: w})
		case "semicolon":
			return semicolonExcelCSV(w, stream)
		}
		return stream(w)
	})
}

// writeRunCSV writes the CSV export of a run (report.StreamCSV), as the
// run page's Export CSV button and `batcheval export` send it.
func (h *Handlers) writeRunCSV(ctx context.Context, run models.Run, w io.Writer) error {
	return report.StreamCSV(ctx, h.DB, run.WorkspaceID, run.ID, w)
}

// excelCSV passes a CSV file on to w with a UTF-8 byte order mark before
// its first byte and every line feed not already after a carriage return
// written as CRLF (line breaks inside quoted cells too, as Excel writes
// them). Nothing reaches w before the first Write, so an export that
// fails before its first byte still gets its own status.
type excelCSV struct {
	w       io.Writer
	started bool
	lastCR  bool   // the last byte passed on was '\r'
	buf     []byte // reused between writes
}

func (x *excelCSV) Write(p []byte) (int, error) {
	x.buf = x.buf[:0]
	if !x.started {
		x.started = true
		x.buf = append(x.buf, 0xEF, 0xBB, 0xBF)
	}
	for _, b := range p {
		if b == '\n' && !x.lastCR {
			x.buf = append(x.buf, '\r')
		}
		x.buf = append(x.buf, b)
		x.lastCR = b == '\r'
	}
	if _, err := x.w.Write(x.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// exportRunJSON downloads the whole report with its statistics, the
// samples streamed from the database (report.StreamJSON).
func (h *Handlers) exportRunJSON(c echo.Context) error {
	return h.exportRun(c, "json", echo.MIMEApplicationJSONCharsetUTF8, h.writeRunJSON)
}

// writeRunJSON writes the JSON export of a run: its figures from the
// run's summary, its samples streamed.
func (h *Handlers) writeRunJSON(ctx context.Context, run models.Run, w io.Writer) error {
	sum, err := h.summaryForExport(ctx, run.ID)
	if err != nil {
		return err
	}
	return report.StreamJSON(ctx, h.DB, sum, w)
}

// summaryForExport is the report of a run without its samples: every
// figure the JSON export states before each criterion's samples, read from
// the run's stored summary (runSummary), so the export's memory does not
// grow with the run. A large finished run whose summary is still being
// built gives a *preparingError (answerPreparing).
func (h *Handlers) summaryForExport(ctx context.Context, runID int64) (*report.Report, error) {
	sum, err := h.runSummary(ctx, runID, report.Options{})
	if err != nil {
		return nil, err
	}
	return h.withCurrentDatasetName(ctx, sum), nil
}

// exportRun sends a run's export as a download, written straight to the
// response as it is produced. Nothing is sent before write's first byte,
// so an error before it (the run's dataset gone) still gets its own
// status; an error after it can only end the download, which the client
// sees as a truncated file, and is logged by the error handler.
func (h *Handlers) exportRun(c echo.Context, ext, contentType string, write func(context.Context, models.Run, io.Writer) error) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	tag, err := h.runResultsTag(c.Request().Context(), run, ext)
	if err != nil {
		return err
	}
	if notModifiedWeak(c, tag) {
		return c.NoContent(http.StatusNotModified)
	}
	name := fmt.Sprintf("run-%d-%s.%s", run.ID, fileSlug(run.Name), ext)
	resp := c.Response()
	resp.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", name))
	resp.Header().Set(echo.HeaderContentType, contentType)
	// Results still being prepared are a 503 with Retry-After, not a
	// download (nothing was written yet: the summary comes first).
	return answerPreparing(c, write(c.Request().Context(), run, resp))
}

var slugJunk = regexp.MustCompile(`[^a-z0-9]+`)

// fileSlug makes a run name safe for a download file name.
func fileSlug(s string) string {
	s = strings.Trim(slugJunk.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		return "export"
	}
	return s
}

// detailAs reads one entry of a batch's Details into dst. Details come back
// from the database as generic JSON values, so the entry is re-encoded
// rather than type-asserted; false when it is absent or of another shape.
func detailAs(details map[string]any, key string, dst any) bool {
	v, ok := details[key]
	if !ok || v == nil {
		return false
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return json.Unmarshal(raw, dst) == nil
}

// gevalDetails returns G-Eval's score probabilities, in score order, and a
// plain description of where they came from; nil for other methods.
func gevalDetails(details map[string]any) ([]web.ScoreProbability, string) {
	var probs map[string]float64
	if !detailAs(details, "probabilities", &probs) || len(probs) == 0 {
		return nil, ""
	}
	out := make([]web.ScoreProbability, 0, len(probs))
	for k, p := range probs {
		s, err := strconv.ParseFloat(k, 64)
		if err != nil {
			continue
		}
		out = append(out, web.ScoreProbability{Score: s, P: p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Score < out[j].Score })
	var source string
	var used, total int
	detailAs(details, "source", &source)
	detailAs(details, "used", &used)
	detailAs(details, "total", &total)
	switch source {
	case evaluator.GEvalSourceLogprobs:
		source = "log-probabilities: read from the likelihood the judge gave each possible score token, renormalised over the allowed scores"
	case evaluator.GEvalSourceSamples:
		source = fmt.Sprintf("%d sampled answers: the share of answers giving each score (%d of %d could be read)", total, used, total)
		if asked, answered, ok := sampledAnswers(details); ok && answered < asked {
			source = fmt.Sprintf("%d sampled answers (%s): the share of answers giving each score (%d of %d could be read)", total, web.SampledText(asked, answered), used, total)
		}
		source += gevalSampledWhy(details)
	case "":
		source = "not recorded"
	}
	return out, source
}

// gevalSampledWhy says why a G-Eval sample that asked for log-probabilities
// was scored from sampled answers instead, as the run page's count of
// sampled scores promises: the endpoint gave none (in this answer, or in an
// earlier one, after which the run stops asking), or those it gave could
// not be used. "" when log-probabilities were not asked for.
func gevalSampledWhy(details map[string]any) string {
	var problem string
	if detailAs(details, "logprobs_unreadable", &problem) && problem != "" {
		return "; sampled because the log-probabilities could not be used: " + problem
	}
	var absent bool
	if detailAs(details, "logprobs_unavailable", &absent) && absent {
		return "; sampled because the endpoint gave no log-probabilities (for this sample, or for an earlier one of the run, after which the run stops asking for them)"
	}
	return ""
}

// sampledAnswers returns how many sampled answers a unit of G-Eval's
// sampling or CloserLook asked for and how many came; ok is false for a
// unit that sampled nothing, or one stored before they were recorded.
func sampledAnswers(details map[string]any) (asked, answered int, ok bool) {
	if !detailAs(details, "asked", &asked) || !detailAs(details, "answered", &answered) || asked <= 0 {
		return 0, 0, false
	}
	return asked, answered, true
}

// closerLookDetails returns CloserLook's sampled ratings and how many of
// the sampled answers held no readable rating.
func closerLookDetails(details map[string]any) ([]float64, int, bool) {
	if _, ok := details["ratings"]; !ok {
		return nil, 0, false
	}
	var ratings []float64 // null when no sampled answer could be read
	detailAs(details, "ratings", &ratings)
	var unreadable int
	detailAs(details, "unreadable", &unreadable)
	return ratings, unreadable, true
}

// unitCriterion names the criterion a call unit stored at criterion index
// ci judged: "All criteria" when one call scored every criterion of its
// pass (LLM-Eval).
func unitCriterion(run models.Run, m methods.Method, ci int) string {
	crit := fmt.Sprintf("Criterion %d", ci+1)
	if ci < len(run.RubricSnapshot.Criteria) {
		crit = run.RubricSnapshot.Criteria[ci].Name
	}
	for _, pass := range m.Passes(run.RubricSnapshot) {
		if len(pass) > 1 && pass[0] == ci {
			crit = "All criteria"
		}
	}
	return crit
}

// unreadableReason says why a sample's score in batch b is missing, from
// the batch's stored problems: those of its label (without the label,
// which the page shows beside) and those of the whole answer, then
// whether the repair request was tried. Empty when nothing was recorded
// (a batch not judged yet). The batch page lists the same problems.
//
// outside is for readers outside the run's workspace (a share link): the
// judge client's errors are given in its own words only, without the
// details members see (the address it called, this server's network).
func unreadableReason(b models.RunBatch, label int, outside bool) string {
	if readable, asked, need, ok := b.TooFewReadable(); ok {
		// Answers came and some were read: not unreadable, too few.
		return "too few readable answers: " + methods.TooFewReadableText(readable, asked, need)
	}
	own := fmt.Sprintf("Sample%d: ", label)
	var parts []string
	problems := b.ShownProblems()
	if outside {
		problems = b.SharedProblems()
	}
	for _, p := range problems {
		switch {
		case strings.HasPrefix(p, own):
			parts = append(parts, strings.TrimPrefix(p, own))
		case !strings.HasPrefix(p, "Sample"):
			// A problem of the whole answer ("no scores found in the
			// answer", a failed repair): it concerns every sample.
			parts = append(parts, p)
		}
	}
	switch {
	case b.Error == "":
	case !outside:
		parts = append(parts, "the judge's call failed: "+b.ShownError())
	case b.SharedError() != "":
		parts = append(parts, "the judge's call failed: "+b.SharedError())
	default:
		parts = append(parts, "the judge's call failed"+models.SharedJudgeDetailsNote)
	}
	// A repair that answered (even emptily) left this score missing; one
	// that failed is among the problems already.
	repairFailed := slices.ContainsFunc(b.Problems, func(p string) bool { return strings.HasPrefix(p, "repair request failed") })
	if b.RepairRequest != "" && !repairFailed {
		parts = append(parts, "the repair request did not recover it")
	}
	if len(parts) == 0 {
		return ""
	}
	return "not readable: " + strings.Join(parts, "; ")
}

// humanOnJudgeScale says the scale a criterion's human rating is on when
// the run's method judged on a scale of its own (LLM-Eval's 0 to 5 against
// the rubric's 1 to 3: Criterion.RubricScale), and the rating mapped onto
// the judge's scale linearly from the rubric's, as the report maps ratings
// within the rubric's range for the errors (report.humanOnJudgeScale).
// scale is "" when the judge and the people rate on one scale; onJudge is
// nil without a rating or for one outside the rubric's range.
func humanOnJudgeScale(crit evaluator.Criterion, human *float64) (scale string, onJudge *float64) {
	rs := crit.RubricScale
	if rs == nil || !(rs.Hi > rs.Lo) || (rs.Lo == crit.Lo && rs.Hi == crit.Hi) {
		return "", nil
	}
	scale = scaleEnd(rs.Lo) + " to " + scaleEnd(rs.Hi)
	if human == nil || *human < rs.Lo-1e-9 || *human > rs.Hi+1e-9 {
		return scale, nil
	}
	v := stats.Rescale(*human, rs.Lo, rs.Hi, crit.Lo, crit.Hi)
	return scale, &v
}
