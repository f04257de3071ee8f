package handlers

import (
	"context"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// tableFinalMissing says, for a table's cell, why a sample has no final
// score: nothing came back for it yet from a run still going (missing, its
// missing round scores, is 0; -1 when not known), or no round gave a
// readable score. Which of the judge's answers could not be read, or
// which call failed, the sample's page says (unreadableReason).
func tableFinalMissing(run models.Run, missing int) string {
	if !run.Finished() && missing <= 0 {
		if missing == 0 {
			return "not judged yet"
		}
		return "not judged yet, or no round gave a readable score (the sample's page says which)"
	}
	return "no round gave a readable score: the judge's answer could not be read or its call failed (the sample's page says which)"
}

// sayWhyTableMissing gives each shown sample of the run page's table
// without a human rating its reason, in the sample page's words
// (humanMissingReason, from the run's reviews the page read already, pre),
// and each without a final score its own (tableFinalMissing).
func (h *Handlers) sayWhyTableMissing(ctx context.Context, run models.Run, pre *report.BrowserReviews, t *web.RunSampleTable) error {
	var missing []roundKey
	t.HumanMissing, t.FinalMissing = map[int64]string{}, map[int64]string{}
	for _, s := range t.Rows {
		if web.IsMissing(s.Human) {
			missing = append(missing, roundKey{s.RowID, t.Criterion})
		}
		if web.IsMissing(s.Final) {
			t.FinalMissing[s.RowID] = tableFinalMissing(run, s.Missing)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hr, err := h.humanReasonsOf(ctx, run, readerMember)
	if err != nil {
		return err
	}
	hr.read = pre
	why, err := hr.why(ctx, missing)
	if err != nil {
		return err
	}
	for _, k := range missing {
		t.HumanMissing[k.row] = why[k]
	}
	return nil
}

// sayWhyCompareRowsMissing gives each shown sample of a comparison
// without a human rating its reason, as run A's report has it
// (humanMissingReason, to reader), and each without run A's or run B's
// final score its own (tableFinalMissing).
func (h *Handlers) sayWhyCompareRowsMissing(ctx context.Context, cmp comparison, v *web.CompareView, reader humanReader) error {
	var missing []roundKey
	for i := range v.Rows {
		r := &v.Rows[i]
		if web.IsMissing(r.Human) {
			missing = append(missing, roundKey{r.RowID, cmp.criterion})
		}
		if web.IsMissing(r.A) {
			r.AMissing = tableFinalMissing(cmp.a, -1)
		}
		if web.IsMissing(r.B) {
			r.BMissing = tableFinalMissing(cmp.b, -1)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hr, err := h.humanReasonsOf(ctx, cmp.a, reader)
	if err != nil {
		return err
	}
	why, err := hr.why(ctx, missing)
	if err != nil {
		return err
	}
	for i := range v.Rows {
		if w, ok := why[roundKey{v.Rows[i].RowID, cmp.criterion}]; ok && web.IsMissing(v.Rows[i].Human) {
			v.Rows[i].HumanMissing = w
		}
	}
	return nil
}
