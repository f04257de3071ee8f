package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// Variants of the two held-out runs of an alignment.
const (
	VariantHeldOutBefore = "held-out before" // the old rubric version on the held-out samples
	VariantHeldOutAfter  = "held-out after"  // the accepted version on the same samples
)

// HeldOutHumans are the human ratings of the aligned criterion that the
// held-out copy carries in place of the imported ones, when the source
// run's report read others (browser ratings, or imported and browser
// ratings averaged): the source run's own rating of each sample, as its
// report used it and the draft was made from, by the source dataset's row
// id (nil, or absent, where the run read none).
type HeldOutHumans struct {
	ByRow map[int64]*float64
	// Note says where they came from, for the copy's page; it names no
	// reviewer.
	Note string
}

// LaunchHeldOut measures an accepted alignment: it copies the held-out
// samples of the source run's dataset into a dataset of their own and
// launches the source run's setup on it twice, in one new experiment, on
// the aligned criterion only: once with the criterion as the source run
// used it (the old version) and once as after (the accepted version). Both
// runs share method, settings, seed and judge, so the criterion's wording
// is the only difference. a's held-out dataset and runs are set.
//
// owner is the launch's claim (models.ClaimHeldOutLaunch), which the
// caller holds: a launch that lost it (its lease lapsed during a stall and
// another launch took over) copies nothing more and launches nothing; the
// copy, its experiment and both runs are stored and recorded on the
// alignment in one transaction that checks the claim and that the
// alignment's runs are still those it was claimed over
// (models.LaunchHeldOutCopy), so a launch that loses its claim at the last
// moment, even while copying, leaves no dataset behind and no run to work
// or pay for, and never overwrites the runs of the launch that took over.
//
// With humans (nil: the copy keeps the imported ratings, which the source
// run read), the copy's human column of the criterion holds those ratings
// instead (withHumans), so that both runs are measured against the human
// ratings the draft was made from; the copy is stored with them in one
// transaction, the note among its notes.
func (r *Runner) LaunchHeldOut(ctx context.Context, wsID int64, a *models.Alignment, after evaluator.Criterion, humans *HeldOutHumans, owner string) (before, afterRun models.Run, err error) {
	// The runs the launch was claimed over (none, or runs since trashed).
	was := *a
	if err := r.db.CheckHeldOutClaim(ctx, a.ID, owner); err != nil {
		return before, afterRun, err
	}
	parent, err := r.db.FindRun(ctx, wsID, a.SourceRunID)
	if err != nil {
		return before, afterRun, err
	}
	if a.CriterionIndex < 0 || a.CriterionIndex >= len(parent.RubricSnapshot.Criteria) {
		return before, afterRun, models.Errorf(models.EInvalid, "run %d has no criterion %d", parent.ID, a.CriterionIndex+1)
	}
	if err := r.db.CheckRunCapacity(ctx, wsID, 2); err != nil {
		return before, afterRun, err
	}
	ds, err := r.db.FindDataset(ctx, wsID, parent.DatasetID)
	if err != nil {
		return before, afterRun, err
	}
	// The held-out rows in file order, their ids and positions alone: the
	// copy's rows are then read, rewritten and stored a chunk at a time
	// in one transaction (ImportDataset), never all held at once.
	order, err := r.db.DatasetRowsInFileOrder(ctx, ds.ID, a.HeldOutRowIDs)
	if err != nil {
		return before, afterRun, err
	}
	crit := parent.RubricSnapshot.Criteria[a.CriterionIndex]
	src := crit
	carried := false
	if humans != nil && models.MeansAnnotators(crit) {
		// The human rating is the annotators' mean, averaged with the
		// browser ratings or replaced by them: the copy carries the
		// source run's rating of each sample in a column of its own
		// (HeldOutHumanColumn), which the runs read as their human column.
		crit.HumanColumn = HeldOutHumanColumn(crit, ds.Columns, ds.RatingColumns)
		src.HumanColumn, carried = crit.HumanColumn, true
	}
	if humans != nil && crit.HumanColumn == "" {
		return before, afterRun, models.Errorf(models.EInvalid, "run %d's %s has no human rating column to carry the ratings in", parent.ID, crit.Name)
	}
	if len(order) == 0 {
		return before, afterRun, models.Errorf(models.EInvalid, "none of the %d held-out samples of alignment %d is left in dataset %d", len(a.HeldOutRowIDs), a.ID, ds.ID)
	}
	parentDS := ds.ID
	held := models.Dataset{WorkspaceID: wsID, ProjectID: ds.ProjectID,
		Name: models.ComposeName(models.MaxNameFor(models.KindDataset), "", models.OneLine(ds.Name),
			fmt.Sprintf(" (held-out part of alignment %d: %d samples, seed %d)", a.ID, len(order), a.Seed)),
		SourceFilename: ds.SourceFilename, Format: ds.Format, IDColumn: ds.IDColumn, Columns: ds.Columns, Fields: ds.Fields,
		RatingColumns: ds.RatingColumns, ParentDatasetID: &parentDS, GroupColumn: ds.GroupColumn, CreatedAt: time.Now().UTC()}
	if carried {
		held.Columns = appendNew(slices.Clone(ds.Columns), crit.HumanColumn)
		held.RatingColumns = appendNew(slices.Clone(ds.RatingColumns), crit.HumanColumn)
	}
	if humans != nil {
		held.ImportNotes = []string{humans.Note}
		// The per-annotator ratings are not copied (withHumans): the
		// criterion of the runs names none, so none is looked for.
		crit.AnnotatorColumns = nil
	}
	fill := func(put func(models.DatasetRow) error) error {
		position := 0
		return r.db.EachDatasetRowByID(ctx, ds.ID, order, func(row models.DatasetRow) error {
			position++ // from 1, as an upload and every other copy number their rows
			out := models.DatasetRow{Position: position, ExternalID: row.ExternalID, Data: row.Data, Ratings: row.Ratings}
			if humans != nil {
				out = withHumans(out, row, src, humans.ByRow)
			}
			return put(out)
		})
	}
	e := models.Experiment{WorkspaceID: wsID, ProjectID: parent.ProjectID, RubricID: parent.RubricID,
		Name: fmt.Sprintf("Alignment %d: held-out before and after", a.ID)}
	base, next := a.BaseVersion, 0
	if a.NewVersion != nil {
		next = *a.NewVersion
	}
	pid := parent.ID
	// The runs' dataset and experiment are the copy's, set as they are
	// stored (models.LaunchHeldOutCopy).
	make1 := func(c evaluator.Criterion, version *int, variant, label string) (models.Run, error) {
		snap := parent.RubricSnapshot
		snap.Criteria = []evaluator.Criterion{c}
		run := models.Run{WorkspaceID: wsID, ProjectID: parent.ProjectID, RubricID: parent.RubricID, RubricVersion: version,
			JudgeID: parent.JudgeID, Method: parent.Method, Settings: parent.Settings, MethodSettings: parent.MethodSettings,
			RubricSnapshot: snap, JudgeSnapshot: parent.JudgeSnapshot, Simulated: parent.Simulated,
			ParentRunID: &pid, Variant: variant,
			Name: models.ComposeName(models.MaxNameFor(models.KindRun), fmt.Sprintf("alignment %d: ", a.ID), models.OneLine(crit.Name), ", "+label+" on held-out samples")}
		return run, PrepareRun(&run)
	}
	if before, err = make1(crit, &base, VariantHeldOutBefore, fmt.Sprintf("version %d (before)", base)); err != nil {
		return before, afterRun, err
	}
	after.Name, after.Lo, after.Hi, after.HumanColumn, after.AnnotatorColumns = crit.Name, crit.Lo, crit.Hi, crit.HumanColumn, crit.AnnotatorColumns
	after.RubricScale = crit.RubricScale
	if afterRun, err = make1(after, &next, VariantHeldOutAfter, fmt.Sprintf("version %d (after)", next)); err != nil {
		return before, afterRun, err
	}
	// The copy, its experiment, both runs and their record on the
	// alignment, or nothing: a launch that lost its claim while copying
	// (or whose runs another recorded meanwhile) leaves no copy behind.
	if err := r.db.LaunchHeldOutCopy(ctx, a, owner, was, models.HeldOutCopy{Dataset: &held, Fill: fill, Experiment: &e}, &before, &afterRun, r.enqueue); err != nil {
		return models.Run{}, models.Run{}, err
	}
	// After the commit: a parked worker woken earlier could miss the jobs.
	r.wakeUp()
	return before, afterRun, nil
}

// withHumans is the held-out copy of a row (out, made from the source
// dataset's row src) whose human rating of crit is the source run's,
// byRow[src.ID] (none when absent), in the rating and in the column's
// text, as an import of a file holding it would store it. The imported
// annotators' ratings of the criterion (its annotator columns, and every
// "<column>@..." key) are left out, ratings and text: the human rating is
// not their mean, and the browser reviewers behind it are not copied (the
// copy names no reviewer), so a report of the copy computes no
// agreement between annotators from ratings the runs are not measured
// against. The source row's maps are not changed.
func withHumans(out, src models.DatasetRow, crit evaluator.Criterion, byRow map[int64]*float64) models.DatasetRow {
	col := crit.HumanColumn
	annotator := func(k string) bool { return strings.HasPrefix(k, col+"@") || slices.Contains(crit.AnnotatorColumns, k) }
	out.Ratings = maps.Clone(src.Ratings)
	if out.Ratings == nil {
		out.Ratings = map[string]*float64{}
	}
	maps.DeleteFunc(out.Ratings, func(k string, _ *float64) bool { return annotator(k) })
	out.Data = maps.Clone(src.Data)
	if out.Data == nil {
		out.Data = map[string]string{}
	}
	maps.DeleteFunc(out.Data, func(k string, _ string) bool { return annotator(k) })
	if v := byRow[src.ID]; v != nil {
		x := *v
		out.Ratings[col], out.Data[col] = &x, strconv.FormatFloat(x, 'g', -1, 64)
	} else {
		out.Ratings[col], out.Data[col] = nil, ""
	}
	return out
}

// HeldOutHumanColumn is the column of an alignment's held-out copy that
// carries the source run's human ratings of crit (HeldOutHumans): its
// human column; for a criterion whose human rating is its annotators'
// mean (models.MeansAnnotators), whose source run read browser ratings,
// the name the run's report gives that rating (models.HumanKey, the
// criterion's name), or, when the dataset has a column of that name
// already, the name followed by " (human rating)".
func HeldOutHumanColumn(crit evaluator.Criterion, columns, ratingColumns []string) string {
	if !models.MeansAnnotators(crit) {
		return crit.HumanColumn
	}
	name := models.HumanKey(crit)
	for slices.Contains(columns, name) || slices.Contains(ratingColumns, name) || slices.Contains(crit.AnnotatorColumns, name) {
		name += " (human rating)"
	}
	return name
}

// appendNew appends s to list unless list holds it already.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
