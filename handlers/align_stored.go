package handlers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
	"github.com/labstack/echo/v4"
)

// An alignment's page shows, of its run's criterion, the held-out samples'
// ids and the largest calibration disagreements. Both used to be found by
// reading every sample's score (ListRunSampleScores: 0.16-0.21 s at
// 100,000 samples, about 2 s at a million). From a finished run's stored
// results the page now reads the rows it shows: the disagreements walk the
// results' order by difference (rank_diff_desc) from the top, and the
// held-out ids are read a page at a time in dataset order (rank_position).

// heldOutPageSize is how many held-out ids the page lists at once: a split
// of a million samples holds half a million, megabytes of page; a thousand
// is more than anyone reads through, and every split of a few thousand
// samples still fits on one page as it did.
const heldOutPageSize = 1000

// alignCasesChunk is how many stored results the walk down the order by
// difference reads at once: enough for the draft's cases and the held-out
// rows among them at any share up to 90%.
const alignCasesChunk = 128

// storedAlignable reports whether criterion ci's disagreements can be read
// from sum's order by difference: the stored difference is the alignment's
// (judge − human) only when the human ratings are compared as given, not
// mapped onto the judge's scale (report.humanOnJudgeScale).
func storedAlignable(sum *report.Report, ci int) bool {
	if ci < 0 || ci >= len(sum.Criteria) {
		return false
	}
	c := sum.Criteria[ci]
	return c.HasHuman && !c.HumanScale.Mapped
}

// rowSet tests membership in a list of row ids: by binary search when the
// list is sorted (align.Split sorts both parts), else through a map.
func rowSet(ids []int64) func(int64) bool {
	if slices.IsSorted(ids) {
		return func(id int64) bool { _, ok := slices.BinarySearch(ids, id); return ok }
	}
	m := idSet(ids)
	return func(id int64) bool { return m[id] }
}

// storedWorstCases are the align.DraftCases largest disagreements of the
// calibration rows of criterion ci of a finished run, in
// align.Disagreements' order, read down the stored order by difference
// (largest first, samples without one last) until the draft's count is
// reached and the difference drops below the last one kept (its ties are
// read too: the order by difference breaks them in dataset order, the
// alignment by row).
func (h *Handlers) storedWorstCases(ctx context.Context, sum *report.Report, ci int, calibration func(int64) bool) ([]align.Item, error) {
	c := sum.Criteria[ci]
	var items []align.Item
	last := math.Inf(1)
	for from := 0; from < c.SampleCount; from += alignCasesChunk {
		rows, err := h.DB.ListRunSampleResults(ctx, models.SampleResultPage{RunID: sum.Run.ID, Criterion: c.Index, Sort: "diff", Dir: "desc",
			Offset: from, Limit: alignCasesChunk, Total: c.SampleCount})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.AbsDiff == nil || (len(items) >= align.DraftCases && *r.AbsDiff < last) {
				return align.Disagreements(items), nil
			}
			if !calibration(r.RowID) || r.Final == nil || r.Human == nil {
				continue
			}
			// Read here only when the ratings are compared as given
			// (storedAlignable): the rating given is the one compared.
			items = append(items, align.Item{RowID: r.RowID, Judge: *r.Final, Human: *r.Human, Given: *r.Human})
			last = *r.AbsDiff
		}
		if len(rows) < alignCasesChunk {
			break
		}
	}
	return align.Disagreements(items), nil
}

// storedPlan is planAlignment from the stored results sum of a finished
// run, for a criterion whose disagreements the order by difference gives
// (storedAlignable). The split is align.Split over the criterion's row ids,
// read from the results' primary key alone (ListRunSampleRowIDs: for the
// rows of a dataset imported at once, its two ends; the same set of ids
// every score gave, so the same split for the same seed and share). The rated
// samples are read down the order by human rating (rank_human_asc: those
// without one come last) until align.MinHeldOut of them are held out, or
// the unrated ones begin; the disagreements are storedWorstCases'.
func (h *Handlers) storedPlan(ctx context.Context, sum *report.Report, ci int, seed int64, share float64) (alignmentPlan, error) {
	c := sum.Criteria[ci]
	ids, err := h.DB.ListRunSampleRowIDs(ctx, sum.Run.ID, c.Index, c.SampleCount)
	if err != nil {
		return alignmentPlan{}, err
	}
	if len(ids) != c.SampleCount {
		return alignmentPlan{}, fmt.Errorf("run %d, criterion %d: %d stored results, the summary counts %d", sum.Run.ID, c.Index, len(ids), c.SampleCount)
	}
	var p alignmentPlan
	p.calibration, p.heldOut = align.Split(ids, seed, share)
	held := rowSet(p.heldOut)
rated:
	for from := 0; from < c.SampleCount; from += alignCasesChunk {
		rows, err := h.DB.ListRunSampleResults(ctx, models.SampleResultPage{RunID: sum.Run.ID, Criterion: c.Index, Sort: "human", Dir: "asc",
			Offset: from, Limit: alignCasesChunk, Total: c.SampleCount})
		if err != nil {
			return alignmentPlan{}, err
		}
		for _, r := range rows {
			if r.Human == nil {
				break rated
			}
			p.rated++
			if held(r.RowID) {
				p.heldRated++
			}
			if p.heldRated >= align.MinHeldOut {
				break rated
			}
		}
		if len(rows) < alignCasesChunk {
			break
		}
	}
	worst, err := h.storedWorstCases(ctx, sum, ci, rowSet(p.calibration))
	if err != nil {
		return alignmentPlan{}, err
	}
	p.items = len(worst)
	p.worst, err = withTexts(ctx, alignSamples{texts: h.storedSampleTexts(sum, ci)}, worst[:min(len(worst), align.DraftCases)])
	return p, err
}

// storedHeldOutPage is a page of the held-out samples' ids of criterion ci
// of a finished run, in dataset order, from the place from of that order:
// at most size ids (heldOutPageSize), and the place to read the next page
// from (-1 when this page is the last).
func (h *Handlers) storedHeldOutPage(ctx context.Context, sum *report.Report, ci int, heldOut func(int64) bool, from, size int) ([]string, int, error) {
	c := sum.Criteria[ci]
	var rows []int64
	next := -1
	// Read in chunks a few times the page, so that a small held-out share
	// costs a few reads, not one a page's worth of samples.
	chunk := 4 * size
scan:
	for at := max(from, 0); at < c.SampleCount; at += chunk {
		ids, err := h.DB.ListRowIDsByPosition(ctx, sum.Run.ID, c.Index, at, chunk)
		if err != nil {
			return nil, -1, err
		}
		for k, id := range ids {
			if !heldOut(id) {
				continue
			}
			if len(rows) == size {
				next = at + k
				break scan
			}
			rows = append(rows, id)
		}
		if len(ids) < chunk {
			break
		}
	}
	ext, err := h.DB.ListExternalIDs(ctx, rows)
	if err != nil {
		return nil, -1, err
	}
	out := make([]string, len(rows))
	for i, id := range rows {
		out[i] = ext[id]
	}
	return out, next, nil
}

// heldOutPageURL is the alignment's page listing its held-out ids from
// place from of the dataset order.
func heldOutPageURL(id int64, from int) string {
	if from <= 0 {
		return fmt.Sprintf("/alignments/%d#held-out-ids", id)
	}
	return fmt.Sprintf("/alignments/%d?held=%d#held-out-ids", id, from)
}

// fillStoredCases fills the held-out ids (the page asked for by ?held=)
// and the largest calibration disagreements of alignment a's page from its
// run's stored results sum, as alignmentViewWith does from every sample.
func (h *Handlers) fillStoredCases(c echo.Context, v *web.AlignmentView, sum *report.Report, a models.Alignment) error {
	ctx := c.Request().Context()
	from := 0
	if q := c.QueryParam("held"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 {
			return models.Errorf(models.EInvalid, "held=%s is not a place in the dataset: follow the page's own links to the held-out samples", web.Quoted(q))
		}
		from = n
	}
	ids, next, err := h.storedHeldOutPage(ctx, sum, a.CriterionIndex, rowSet(a.HeldOutRowIDs), from, heldOutPageSize)
	if err != nil {
		return err
	}
	v.HeldOutIDs = ids
	if next >= 0 {
		v.HeldOutNextURL = heldOutPageURL(a.ID, next)
	}
	if from > 0 {
		v.HeldOutFirstURL = heldOutPageURL(a.ID, 0)
	}
	worst, err := h.storedWorstCases(ctx, sum, a.CriterionIndex, rowSet(a.CalibrationRowIDs))
	if err != nil {
		return err
	}
	texts := alignSamples{texts: h.storedSampleTexts(sum, a.CriterionIndex)}
	worst, err = withTexts(ctx, texts, worst[:min(len(worst), align.DraftCases)])
	if err != nil {
		return err
	}
	for _, it := range worst {
		v.Worst = append(v.Worst, web.AlignCase{SampleID: it.SampleID, Judge: formatScore(it.Judge), Human: formatScore(it.Human),
			Gap: web.Signed(it.Gap(), 2), Text: fieldsExcerpt(it.Fields)})
	}
	return nil
}
