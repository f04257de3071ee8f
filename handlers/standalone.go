package handlers

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// standaloneChunkRows is how many dataset rows the standalone report reads
// and writes at a time: the memory of a download follows it, not the run
// (a variable so tests can cross chunk boundaries on a small run).
var standaloneChunkRows = 1000

// sendStandalone answers with the run's report as one HTML file, written
// as it is read: the figures from the run's stored summary, then the
// samples a chunk of rows at a time. A large finished run whose summary is
// still being built gets a 503 with Retry-After before anything is sent.
// An error once the file has started can only cut it short (the error
// handler logs it).
func (h *Handlers) sendStandalone(c echo.Context, run models.Run) error {
	ctx := c.Request().Context()
	page, err := h.standalonePage(ctx, run, time.Now())
	if p := preparingOf(err); p != nil {
		hdr := c.Response().Header()
		hdr.Set("Retry-After", strconv.Itoa(preparingRetrySeconds))
		hdr.Set(echo.HeaderCacheControl, "no-store")
		return c.String(http.StatusServiceUnavailable, p.Error())
	}
	if err != nil {
		return err
	}
	name := fmt.Sprintf("run-%d-%s-report.html", run.ID, fileSlug(run.Name))
	resp := c.Response()
	resp.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", name))
	resp.Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	resp.WriteHeader(http.StatusOK)
	return page.Render(ctx, resp)
}

// standalonePage is a run's standalone report ready to be written: what it
// needs before its first byte (the run's facts and figures) is read here,
// so that an error, or results still being prepared, can be answered
// as such; the samples are read while it is written.
//
// A finished run's figures are its stored summary (runSummary) and its
// samples are the dataset's rows in file order with their stored results;
// a run still going has no stored results, so its report is built afresh
// (as its pages build it) and its samples are cut from that.
func (h *Handlers) standalonePage(ctx context.Context, run models.Run, generated time.Time) (templ.Component, error) {
	facts, err := h.reportFacts(ctx, run)
	if err != nil {
		return nil, err
	}
	v := web.StandaloneRunView{ReportFacts: facts, Generated: generated}
	if run.BatchesDone == 0 {
		return web.StandaloneRunFrame(v, templ.NopComponent, templ.NopComponent), nil
	}
	var chunks sampleChunks
	// missing are the built report's samples' missing round counts (nil
	// for stored results, which do not keep them).
	var missing map[roundKey]int
	if run.Finished() {
		if v.Report, err = h.runSummary(ctx, run.ID, report.Options{}); err != nil {
			return nil, err
		}
		chunks = h.storedSampleChunks(v.Report)
	}
	if !run.Finished() || !v.Report.Run.Finished() {
		// Going, or resumed since it was read (its summary was then built
		// afresh without samples, and none are stored).
		if v.Report, err = h.buildReport(ctx, run.ID, ""); err != nil {
			return nil, err
		}
		chunks = h.builtSampleChunks(v.Report)
		missing = builtMissing(v.Report)
	}
	rows := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return chunks(ctx, false, func(ss []web.StandaloneSample) error {
			sayWhyStandaloneFinalMissing(run, ss, missing)
			return web.StandaloneTableRows(ss).Render(ctx, w)
		})
	})
	sayWhy := h.standaloneHumanReasons(run, v.Report.Criteria)
	sections := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return chunks(ctx, true, func(ss []web.StandaloneSample) error {
			sayWhyStandaloneFinalMissing(run, ss, missing)
			if err := sayWhy(ctx, ss); err != nil {
				return err
			}
			return web.StandaloneSampleSections(ss).Render(ctx, w)
		})
	})
	return web.StandaloneRunFrame(v, rows, sections), nil
}

// sampleChunks calls fn with a run's samples, a chunk at a time, in the
// report's order (the dataset's); with rounds, each criterion's rounds with
// their analyses are read too (the table of samples needs only the final
// scores and human ratings).
type sampleChunks func(ctx context.Context, rounds bool, fn func([]web.StandaloneSample) error) error

// storedSampleChunks are a finished run's samples: the dataset's rows a
// chunk at a time, each chunk's stored results per criterion (the final
// scores and human ratings the summary was computed from) and, when asked,
// its scores with their analyses. sum is the run's stored summary.
func (h *Handlers) storedSampleChunks(sum *report.Report) sampleChunks {
	fields := sum.Run.RubricSnapshot.Fields
	if len(fields) == 0 {
		fields = sum.Dataset.Fields
	}
	runID := sum.Run.ID
	return func(ctx context.Context, rounds bool, fn func([]web.StandaloneSample) error) error {
		if len(sum.Criteria) == 0 {
			return nil // no criterion: the report lists no sample
		}
		return h.DB.EachDatasetRowChunk(ctx, sum.Run.DatasetID, standaloneChunkRows, "", func(rows []models.DatasetRow) error {
			ids := make([]int64, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			finals := make([]map[int64]models.SampleFinal, len(sum.Criteria))
			for ci, c := range sum.Criteria {
				var err error
				if finals[ci], err = h.DB.ListSampleFinalsOf(ctx, runID, c.Index, ids); err != nil {
					return err
				}
			}
			var byRow map[roundKey][]web.RunSampleRound
			if rounds {
				var err error
				if byRow, err = h.roundsOf(ctx, runID, len(sum.Criteria), ids); err != nil {
					return err
				}
			}
			out := make([]web.StandaloneSample, len(rows))
			for i, r := range rows {
				s := web.StandaloneSample{RowID: r.ID, ExternalID: r.ExternalID, Fields: r.Sample(fields).Fields,
					Criteria: make([]web.RunSampleCriterion, len(sum.Criteria))}
				for ci, c := range sum.Criteria {
					f := finals[ci][r.ID]
					s.Criteria[ci] = standaloneCriterion(c, f.Human, f.Final, byRow[roundKey{r.ID, ci}])
				}
				out[i] = s
			}
			return fn(out)
		})
	}
}

// builtSampleChunks are the samples of a report built whole (a run still
// going), cut into chunks, with the scores and analyses of each chunk's
// rows read when asked.
func (h *Handlers) builtSampleChunks(rep *report.Report) sampleChunks {
	return func(ctx context.Context, rounds bool, fn func([]web.StandaloneSample) error) error {
		if len(rep.Criteria) == 0 {
			return nil
		}
		// Every criterion lists the same rows in the same order
		// (report.ComputeWith); the first one's order is the report's.
		order := rep.Criteria[0].Samples
		at := make([]map[int64]int, len(rep.Criteria))
		for ci, c := range rep.Criteria {
			at[ci] = make(map[int64]int, len(c.Samples))
			for i, s := range c.Samples {
				at[ci][s.RowID] = i
			}
		}
		for lo := 0; lo < len(order); lo += standaloneChunkRows {
			part := order[lo:min(lo+standaloneChunkRows, len(order))]
			ids := make([]int64, len(part))
			for i, s := range part {
				ids[i] = s.RowID
			}
			var byRow map[roundKey][]web.RunSampleRound
			if rounds {
				var err error
				if byRow, err = h.roundsOf(ctx, rep.Run.ID, len(rep.Criteria), ids); err != nil {
					return err
				}
			}
			out := make([]web.StandaloneSample, len(part))
			for i, first := range part {
				s := web.StandaloneSample{RowID: first.RowID, ExternalID: first.ExternalID, Fields: first.Fields,
					Criteria: make([]web.RunSampleCriterion, len(rep.Criteria))}
				for ci, c := range rep.Criteria {
					var human, final *float64
					if k, ok := at[ci][first.RowID]; ok {
						human, final = c.Samples[k].Human, c.Samples[k].Final
					}
					s.Criteria[ci] = standaloneCriterion(c, human, final, byRow[roundKey{first.RowID, ci}])
				}
				out[i] = s
			}
			if err := fn(out); err != nil {
				return err
			}
		}
		return nil
	}
}

// roundKey is a sample on one criterion (its place in the report's
// criteria).
type roundKey struct {
	row int64
	ci  int
}

// roundsOf reads every stored score with its analysis of the given rows on
// a run's first criteria criteria, grouped by row and criterion, in round
// order.
func (h *Handlers) roundsOf(ctx context.Context, runID int64, criteria int, ids []int64) (map[roundKey][]web.RunSampleRound, error) {
	scores, err := h.DB.ListScoresOfRows(ctx, runID, criteria, ids)
	if err != nil {
		return nil, err
	}
	out := map[roundKey][]web.RunSampleRound{}
	for _, s := range scores {
		k := roundKey{s.RowID, s.CriterionIndex}
		out[k] = append(out[k], web.RunSampleRound{Round: s.Round + 1, Score: s.Score, Analysis: s.Analysis, Label: s.Label})
	}
	for _, rs := range out {
		sortRounds(rs)
	}
	return out, nil
}

// standaloneHumanReasons gives each criterion of the standalone report's
// samples without a human rating its reason (humanMissingReason), worded
// for a reader outside the workspace: the file is passed on, and whoever
// reads it cannot recompute the report. crits are the report's criteria,
// in the order of each sample's; what the reasons need of the run is read
// at the first missing rating, the reviews of each chunk's samples with
// that chunk.
func (h *Handlers) standaloneHumanReasons(run models.Run, crits []report.CriterionReport) func(ctx context.Context, ss []web.StandaloneSample) error {
	var hr *humanReasons
	return func(ctx context.Context, ss []web.StandaloneSample) error {
		var missing []roundKey
		at := map[roundKey]*web.RunSampleCriterion{}
		for i := range ss {
			for j := range ss[i].Criteria {
				c := &ss[i].Criteria[j]
				if j >= len(crits) || (c.Human != nil && !math.IsNaN(*c.Human)) {
					continue
				}
				k := roundKey{ss[i].RowID, crits[j].Index}
				missing = append(missing, k)
				at[k] = c
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if hr == nil {
			var err error
			if hr, err = h.humanReasonsOf(ctx, run, readerOutside); err != nil {
				return err
			}
		}
		why, err := hr.why(ctx, missing)
		if err != nil {
			return err
		}
		for k, c := range at {
			c.HumanMissing = why[k]
		}
		return nil
	}
}

// sayWhyStandaloneFinalMissing gives each of the samples' criteria
// without a final score its reason, in the run page's samples table's
// words (tableFinalMissing). missing are the samples' missing round
// counts by row and criterion (its place in the report) when the report
// was built whole (builtMissing): a run still going then says of each
// sample whether it is not judged yet or its answered rounds gave no
// readable score, as its page's table does. Stored results do not keep
// them (their run has ended, where the reason does not depend on them).
func sayWhyStandaloneFinalMissing(run models.Run, ss []web.StandaloneSample, missing map[roundKey]int) {
	for i := range ss {
		for j := range ss[i].Criteria {
			if c := &ss[i].Criteria[j]; web.IsMissing(c.Final) {
				n, ok := missing[roundKey{ss[i].RowID, j}]
				if !ok {
					n = -1
				}
				c.FinalMissing = tableFinalMissing(run, n)
			}
		}
	}
}

// builtMissing is a report's samples' missing round counts (judged rounds
// without a score) by row and criterion, the criterion by its place in
// the report.
func builtMissing(rep *report.Report) map[roundKey]int {
	out := map[roundKey]int{}
	for ci, c := range rep.Criteria {
		for _, s := range c.Samples {
			out[roundKey{s.RowID, ci}] = int(s.Missing)
		}
	}
	return out
}

// standaloneCriterion is one criterion of a sample of the standalone
// report.
func standaloneCriterion(c report.CriterionReport, human, final *float64, rounds []web.RunSampleRound) web.RunSampleCriterion {
	sc := web.RunSampleCriterion{Name: c.Criterion.Name, Range: scaleText(c.Criterion),
		Human: human, Final: final, Rounds: rounds}
	sc.HumanScale, sc.HumanOnJudge = humanOnJudgeScale(c.Criterion, human)
	return sc
}

func sortRounds(rs []web.RunSampleRound) {
	slices.SortStableFunc(rs, func(a, b web.RunSampleRound) int { return a.Round - b.Round })
}
