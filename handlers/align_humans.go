package handlers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// This file holds which human ratings an alignment's held-out runs are
// measured against: the source run's own, as its report read them and the
// draft was made from, copied onto the held-out samples when the runs are
// launched; and what the alignment's page says when they can still differ.

// launchHeldOut launches the held-out runs of accepted alignment a of run
// with the aligned criterion worded as after, their copy of the held-out
// samples carrying run's human ratings (heldOutHumans), under owner's
// claim on the launch (runner.LaunchHeldOut).
func (h *Handlers) launchHeldOut(ctx context.Context, ws int64, a *models.Alignment, run models.Run, after evaluator.Criterion, owner string) (models.Run, models.Run, error) {
	humans, err := h.heldOutHumans(ctx, *a, run)
	if err != nil {
		return models.Run{}, models.Run{}, err
	}
	return h.Runner.LaunchHeldOut(ctx, ws, a, after, humans, owner)
}

// heldOutHumans are the human ratings the held-out copy of alignment a of
// run carries on the aligned criterion (runner.HeldOutHumans): nil when
// run's report reads the imported column there, which the copy carries as
// it is; otherwise run's own rating of each held-out sample, read as the
// alignment's draft and page read them (alignSamplesOf: the human rating
// the run's report used, browser ratings or imported and browser ratings
// averaged, on the scale and by the rules the report applied), so that
// the held-out runs are measured against the ratings the draft was made
// from rather than against the imported column. They are run's ratings
// as it reads them when the held-out runs are launched; sourceHumansNote
// says so on the page when they were chosen again after the draft.
func (h *Handlers) heldOutHumans(ctx context.Context, a models.Alignment, run models.Run) (*runner.HeldOutHumans, error) {
	choice, err := h.DB.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	if choice.Source == models.HumansImported || choice.Source == "" {
		return nil, nil
	}
	ci := a.CriterionIndex
	as, err := h.alignSamplesOf(ctx, run, ci, false, false, h.newRunReviews())
	if p := preparingOf(err); p != nil {
		return nil, models.Errorf(models.EConflict, "run %d's results (%s samples) are being computed and stored again, since its human ratings were chosen again, and the held-out samples take their human ratings from them: try again in a minute",
			run.ID, web.Count(p.samples))
	}
	if err != nil {
		return nil, err
	}
	if as.rep != nil && as.rep.CriterionReadsImported(ci) {
		return nil, nil
	}
	held := idSet(a.HeldOutRowIDs)
	hs := &runner.HeldOutHumans{ByRow: make(map[int64]*float64, len(a.HeldOutRowIDs))}
	rated := 0
	for _, s := range as.scores {
		if !held[s.RowID] {
			continue
		}
		hs.ByRow[s.RowID] = s.Human
		if s.Human != nil {
			rated++
		}
	}
	crit := run.RubricSnapshot.Criteria[ci]
	column := crit.HumanColumn
	if models.MeansAnnotators(crit) {
		// The copy carries them in a column of its own.
		ds, err := h.DB.FindDataset(ctx, run.WorkspaceID, run.DatasetID)
		if err != nil {
			return nil, err
		}
		column = runner.HeldOutHumanColumn(crit, ds.Columns, ds.RatingColumns)
	}
	read := "the " + choice.Source.Label()
	var scale []string
	if as.rep != nil {
		read = as.rep.CriterionShort(ci)
		for _, n := range as.rep.Humans.ScaleNotes {
			if strings.HasPrefix(n, crit.Name+":") {
				scale = append(scale, n)
			}
		}
	}
	hs.Note = fmt.Sprintf("The human ratings of %s (column %s) in this copy are run %d's, as its report read them when the held-out runs were launched: %s, chosen on its page on %s. Each sample's rating is the one the report used (the mean of its raters where several rated it); %s of the %s samples have one. "+
		"They replace the column's imported ratings, so that the held-out runs are measured against the human ratings the alignment's draft was made from. The reviewers are not named here, and neither their separate ratings nor the imported annotators' columns of %s are copied.",
		crit.Name, column, run.ID, read, stampText(choice.AsOf), web.Count(rated), web.Count(len(hs.ByRow)), crit.Name)
	if len(scale) > 0 {
		hs.Note += " " + strings.Join(scale, " ")
	}
	return hs, nil
}

// stampText writes a moment as the pages write when human ratings were
// chosen.
func stampText(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// sourceHumansNote says, "" when there is nothing to say, that the source
// run's human ratings were chosen again (on its page) after alignment a
// was drafted: the draft was made from the disagreements with the ratings
// it read before, the disagreements the page lists are read from those it
// reads now, and the held-out copy (made at heldMade; nil before the
// held-out runs were launched) carries the ones run read when it was made.
func sourceHumansNote(run models.Run, a models.Alignment, choice models.RunHumanSource, heldMade *time.Time) string {
	if a.CreatedAt.IsZero() || choice.AsOf.IsZero() || !choice.AsOf.After(a.CreatedAt) {
		return ""
	}
	s := fmt.Sprintf("Run %d's human ratings were chosen again on its page (the %s, on %s) after this alignment's draft was made (on %s): the draft was made from the disagreements with the ratings it read before, and the largest disagreements listed here are read from the ratings it reads now.",
		run.ID, choice.Source.Label(), stampText(choice.AsOf), stampText(a.CreatedAt))
	switch {
	case heldMade == nil:
	case heldMade.After(choice.AsOf):
		s += fmt.Sprintf(" The held-out runs were launched after that (on %s): their held-out samples carry the ratings run %d reads now, not those the draft was made from.", stampText(*heldMade), run.ID)
	default:
		s += fmt.Sprintf(" The held-out runs were launched before that (on %s): their held-out samples carry the ratings run %d read then, those the draft was made from.", stampText(*heldMade), run.ID)
	}
	return s
}

// beforeHumansNote says, "" when it reads the held-out copy's column as it
// is, that the before run's report reads other human ratings on the
// held-out samples (browser ratings chosen on its page): the comparison is
// measured against those, not against the column, which holds the human
// ratings source run read (those the draft was made from).
func beforeHumansNote(source int64, beforeRun models.Run, before alignSamples) string {
	if before.rep == nil || before.rep.CriterionReadsImported(0) {
		return ""
	}
	return fmt.Sprintf("The before run (run %d) reads %s on the held-out samples, not their human rating column, which holds the ratings run %d read, those the draft was made from: the comparison is measured against the before run's. "+
		"To measure both versions against run %d's ratings, choose the imported column on the before run's page (under Human ratings).",
		beforeRun.ID, before.rep.CriterionShort(0), source, source)
}

// fillAlignmentHumans says on alignment a's page where the held-out
// samples' human ratings come from (the notes their copy was made with)
// and when run's ratings were chosen again after the draft.
func (h *Handlers) fillAlignmentHumans(ctx context.Context, v *web.AlignmentView, a models.Alignment, run models.Run) error {
	choice, err := h.DB.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return err
	}
	var heldMade *time.Time
	if a.HeldOutDatasetID != nil {
		ds, err := h.DB.FindDataset(ctx, a.WorkspaceID, *a.HeldOutDatasetID)
		switch {
		case err == nil:
			heldMade, v.HeldOutNotes = &ds.CreatedAt, ds.ImportNotes
		case models.ErrorCode(err) != models.ENotFound:
			return err
		}
	}
	v.SourceHumansNote = sourceHumansNote(run, a, choice, heldMade)
	return nil
}
