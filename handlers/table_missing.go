package handlers

import (
	"context"
	"strings"

	"github.com/batcheval/batcheval/evaluator/methods"
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
	if run.MethodSettings.MinReadableShare != nil && methods.SamplesAnswers(methods.For(run.Method)) {
		// A run with a fewest readable answers for a score: a third cause.
		return "no score: the judge's answers could not be read, too few of them could be read (fewer than the run's fewest readable answers for a score), or its call failed (the sample's page says which)"
	}
	return "no round gave a readable score: the judge's answer could not be read or its call failed (the sample's page says which)"
}

// tableRoundMissing says, for a table's cell, why a sample has no score
// in one round (round, as the method calls it), from what its row knows:
// nilRounds of its rounds have no score, missing of those were answered
// and could not be read (or their call failed; -1 when not known), the
// others were not judged. When the row cannot tell which round is which,
// the reason says both, and the sample's page says which.
func tableRoundMissing(run models.Run, round string, nilRounds, missing int) string {
	unreadable := "the judge's answer in this " + round + " could not be read, or its call failed (the sample's page says which)"
	switch {
	case missing >= 0 && missing >= nilRounds:
		return unreadable
	case missing == 0 && !run.Finished():
		return "not judged yet in this " + round
	case missing == 0:
		return "not judged in this " + round + ": the run ended before its call was answered"
	case !run.Finished():
		return "not judged yet in this " + round + ", or the judge's answer could not be read or its call failed (the sample's page says which)"
	}
	return "the judge's answer in this " + round + " could not be read, its call failed, or the run ended before it (the sample's page says which)"
}

// tableDiffMissing says why a sample has no difference between its final
// score and its human rating: one of them is missing, each with its
// reason (finalWhy, humanWhy; "" when that one is there).
func tableDiffMissing(finalWhy, humanWhy string) string {
	var parts []string
	if finalWhy != "" {
		parts = append(parts, "no final score ("+finalWhy+")")
	}
	if humanWhy != "" {
		parts = append(parts, noHumanRatingPart(humanWhy))
	}
	if len(parts) == 0 {
		return ""
	}
	return "no difference without both a score and a rating: " + strings.Join(parts, "; ")
}

// noHumanRatingPart is the part of a difference's reason that says the
// human rating is missing, and why (humanWhy, humanMissingReason's words),
// saying "no human rating" once: a reason that already begins with it
// ("no human rating in the dataset for this sample") is the part itself,
// where "no human rating (no human rating in the dataset…)" said it twice
// to a pointer's hover and to a screen reader.
func noHumanRatingPart(humanWhy string) string {
	if strings.HasPrefix(humanWhy, "no human rating") {
		return humanWhy
	}
	return "no human rating (" + humanWhy + ")"
}

// sayWhyTableMissing gives each shown sample of the run page's table
// without a human rating its reason, in the sample page's words
// (humanMissingReason, from the shown samples' reviews),
// each without a final score or a round's score its own
// (tableFinalMissing, tableRoundMissing), and each without a difference
// the reasons of the values it lacks (tableDiffMissing).
func (h *Handlers) sayWhyTableMissing(ctx context.Context, run models.Run, t *web.RunSampleTable) error {
	var missing []roundKey
	t.HumanMissing, t.FinalMissing = map[int64]string{}, map[int64]string{}
	t.RoundMissing, t.DiffMissing = map[int64][]string{}, map[int64]string{}
	round := methods.For(run.Method).Words().Round
	if round == "" {
		round = "round"
	}
	for _, s := range t.Rows {
		if web.IsMissing(s.Human) {
			missing = append(missing, roundKey{s.RowID, t.Criterion})
		}
		if web.IsMissing(s.Final) {
			t.FinalMissing[s.RowID] = tableFinalMissing(run, int(s.Missing))
		}
		nilRounds := 0
		for _, r := range s.Rounds {
			if web.IsMissing(r) {
				nilRounds++
			}
		}
		if nilRounds > 0 {
			why := make([]string, len(s.Rounds))
			for i, r := range s.Rounds {
				if web.IsMissing(r) {
					why[i] = tableRoundMissing(run, round, nilRounds, int(s.Missing))
				}
			}
			t.RoundMissing[s.RowID] = why
		}
	}
	if err := h.sayWhyTableHumansMissing(ctx, run, t, missing); err != nil {
		return err
	}
	for _, s := range t.Rows {
		if web.IsMissing(s.AbsDiff) {
			t.DiffMissing[s.RowID] = tableDiffMissing(t.FinalMissing[s.RowID], t.HumanMissing[s.RowID])
		}
	}
	return nil
}

// sayWhyTableHumansMissing gives the table's samples of missing their
// human rating's reason (humanMissingReason).
func (h *Handlers) sayWhyTableHumansMissing(ctx context.Context, run models.Run, t *web.RunSampleTable, missing []roundKey) error {
	if len(missing) == 0 {
		return nil
	}
	hr, err := h.humanReasonsOf(ctx, run, readerMember)
	if err != nil {
		return err
	}
	why, err := hr.why(ctx, missing)
	if err != nil {
		return err
	}
	for _, k := range missing {
		t.HumanMissing[k.row] = why[k]
	}
	return nil
}

// compareDiffMissing says why a comparison's row has no difference: run
// A (named a) or run B has no score, each with its reason (aWhy, bWhy;
// "" when it has one).
func compareDiffMissing(a, aWhy, b, bWhy string) string {
	var parts []string
	if aWhy != "" {
		parts = append(parts, a+" has no score ("+aWhy+")")
	}
	if bWhy != "" {
		parts = append(parts, b+" has no score ("+bWhy+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "no difference without both runs' scores: " + strings.Join(parts, "; ")
}

// sayWhyCompareRowsMissing gives each shown sample of a comparison
// without a human rating its reason, as run A's report has it
// (humanMissingReason, to reader), and each without run A's or run B's
// final score its own (tableFinalMissing; a running run's rows have theirs
// from compareView), and each without a difference
// which run's score it lacks (compareDiffMissing).
func (h *Handlers) sayWhyCompareRowsMissing(ctx context.Context, cmp comparison, v *web.CompareView, reader humanReader) error {
	var missing []roundKey
	for i := range v.Rows {
		r := &v.Rows[i]
		if web.IsMissing(r.Human) {
			missing = append(missing, roundKey{r.RowID, cmp.criterion})
		}
		// A running run's rows already say which (compareView).
		if web.IsMissing(r.A) && r.AMissing == "" {
			r.AMissing = tableFinalMissing(cmp.a, -1)
		}
		if web.IsMissing(r.B) && r.BMissing == "" {
			r.BMissing = tableFinalMissing(cmp.b, -1)
		}
		if web.IsMissing(r.Diff) {
			r.DiffMissing = compareDiffMissing(cmp.a.Name, r.AMissing, cmp.b.Name, r.BMissing)
		}
	}
	why, err := h.humanWhy(ctx, cmp.a, reader, missing)
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

// sayWhyReportSamplesMissing gives each sample of a read-only report's
// samples table (a share link's page: rep's criteria hold the samples
// shown) without a human rating its reason, worded for a reader outside
// the workspace (humanMissingReason), and each without a final score its
// own (tableFinalMissing).
func (h *Handlers) sayWhyReportSamplesMissing(ctx context.Context, run models.Run, rep *report.Report) (web.ReportMissing, error) {
	miss := web.ReportMissing{Human: map[int64][]string{}, Final: map[int64][]string{}}
	if rep == nil {
		return miss, nil
	}
	n := len(rep.Criteria)
	put := func(m map[int64][]string, row int64, ci int, why string) {
		if m[row] == nil {
			m[row] = make([]string, n)
		}
		m[row][ci] = why
	}
	var missing []roundKey
	at := map[roundKey]int{} // the criterion's place in the report
	for ci, c := range rep.Criteria {
		for _, s := range c.Samples {
			if web.IsMissing(s.Final) {
				put(miss.Final, s.RowID, ci, tableFinalMissing(run, int(s.Missing)))
			}
			if web.IsMissing(s.Human) {
				k := roundKey{s.RowID, c.Index}
				missing = append(missing, k)
				at[k] = ci
			}
		}
	}
	why, err := h.humanWhy(ctx, run, readerOutside, missing)
	if err != nil {
		return miss, err
	}
	for _, k := range missing {
		put(miss.Human, k.row, at[k], why[k])
	}
	return miss, nil
}
