package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// Variants of the two held-out runs of an alignment.
const (
	VariantHeldOutBefore = "held-out before" // the old rubric version on the held-out samples
	VariantHeldOutAfter  = "held-out after"  // the accepted version on the same samples
)

// LaunchHeldOut measures an accepted alignment: it copies the held-out
// samples of the source run's dataset into a dataset of their own and
// launches the source run's setup on it twice, in one new experiment, on
// the aligned criterion only: once with the criterion as the source run
// used it (the old version) and once as after (the accepted version). Both
// runs share method, settings, seed and judge, so the criterion's wording
// is the only difference. a's held-out dataset and runs are set.
func (r *Runner) LaunchHeldOut(ctx context.Context, wsID int64, a *models.Alignment, after evaluator.Criterion) (before, afterRun models.Run, err error) {
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
	found, err := r.db.FindDatasetRows(ctx, ds.ID, a.HeldOutRowIDs)
	if err != nil {
		return before, afterRun, err
	}
	rows := make([]models.DatasetRow, 0, len(found))
	for _, row := range found {
		rows = append(rows, models.DatasetRow{Position: row.Position, ExternalID: row.ExternalID, Data: row.Data, Ratings: row.Ratings})
	}
	slices.SortFunc(rows, func(x, y models.DatasetRow) int { return x.Position - y.Position })
	for i := range rows {
		rows[i].Position = i
	}
	parentDS := ds.ID
	held := models.Dataset{WorkspaceID: wsID, ProjectID: ds.ProjectID,
		Name: models.ComposeName(models.MaxNameFor(models.KindDataset), "", models.OneLine(ds.Name),
			fmt.Sprintf(" (held-out part of alignment %d: %d samples, seed %d)", a.ID, len(rows), a.Seed)),
		SourceFilename: ds.SourceFilename, Format: ds.Format, IDColumn: ds.IDColumn, Columns: ds.Columns, Fields: ds.Fields,
		RatingColumns: ds.RatingColumns, ParentDatasetID: &parentDS, GroupColumn: ds.GroupColumn, CreatedAt: time.Now().UTC()}
	if err := r.db.CreateDataset(ctx, &held, rows); err != nil {
		return before, afterRun, err
	}
	a.HeldOutDatasetID = &held.ID
	// Record whatever was made, even when the second launch fails, so the
	// alignment page shows it and offers to launch again.
	defer func() {
		if serr := r.db.SetAlignmentRuns(ctx, a); serr != nil && err == nil {
			err = serr
		}
	}()
	e := models.Experiment{WorkspaceID: wsID, ProjectID: parent.ProjectID, DatasetID: held.ID, RubricID: parent.RubricID,
		Name: fmt.Sprintf("Alignment %d: held-out before and after", a.ID)}
	if err := r.db.CreateExperiment(ctx, &e); err != nil {
		return before, afterRun, err
	}
	crit := parent.RubricSnapshot.Criteria[a.CriterionIndex]
	base, next := a.BaseVersion, 0
	if a.NewVersion != nil {
		next = *a.NewVersion
	}
	pid := parent.ID
	make1 := func(c evaluator.Criterion, version *int, variant, label string) (models.Run, error) {
		snap := parent.RubricSnapshot
		snap.Criteria = []evaluator.Criterion{c}
		run := models.Run{WorkspaceID: wsID, ProjectID: parent.ProjectID, DatasetID: held.ID, RubricID: parent.RubricID, RubricVersion: version,
			JudgeID: parent.JudgeID, Method: parent.Method, Settings: parent.Settings, MethodSettings: parent.MethodSettings,
			RubricSnapshot: snap, JudgeSnapshot: parent.JudgeSnapshot, Simulated: parent.Simulated,
			ExperimentID: &e.ID, ParentRunID: &pid, Variant: variant,
			Name: models.ComposeName(models.MaxNameFor(models.KindRun), fmt.Sprintf("alignment %d: ", a.ID), models.OneLine(crit.Name), ", "+label+" on held-out samples")}
		return run, r.Launch(ctx, &run)
	}
	if before, err = make1(crit, &base, VariantHeldOutBefore, fmt.Sprintf("version %d (before)", base)); err != nil {
		return before, afterRun, err
	}
	a.BeforeRunID = &before.ID
	after.Name, after.Lo, after.Hi, after.HumanColumn, after.AnnotatorColumns = crit.Name, crit.Lo, crit.Hi, crit.HumanColumn, crit.AnnotatorColumns
	after.RubricScale = crit.RubricScale
	if afterRun, err = make1(after, &next, VariantHeldOutAfter, fmt.Sprintf("version %d (after)", next)); err != nil {
		return before, afterRun, err
	}
	a.AfterRunID = &afterRun.ID
	return before, afterRun, nil
}
