package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/perturb"
	"github.com/batcheval/batcheval/models"
)

// Variants of a finished run, for repeatability and robustness.
const (
	VariantReseed   = "reseed"   // same setup, another seed
	VariantNoise    = "noise"    // same setup on a perturbed copy of the data
	VariantReworded = "reworded" // same setup with a reworded rubric
)

// derive copies a run's setup into a new queued run marked as a variant,
// in the parent's experiment (one is created around the parent if needed).
// check runs before anything is stored, so a refused variant leaves nothing.
func (r *Runner) derive(ctx context.Context, wsID, parentID int64, variant string, check func(parent models.Run) error) (models.Run, error) {
	parent, err := r.db.FindRun(ctx, wsID, parentID)
	if err != nil {
		return parent, err
	}
	if check != nil {
		if err := check(parent); err != nil {
			return parent, err
		}
	}
	// A workspace at its limit of runs at once refuses the variant's
	// launch: refused here, before the experiment around the parent and a
	// noisy copy of its dataset are stored, it leaves neither behind.
	// (Launch checks again when it stores the run.)
	if err := r.db.CheckRunCapacity(ctx, wsID, 1); err != nil {
		return parent, err
	}
	if parent.ExperimentID == nil {
		e := models.Experiment{WorkspaceID: wsID, ProjectID: parent.ProjectID, DatasetID: parent.DatasetID, RubricID: parent.RubricID,
			Name: models.ComposeName(models.MaxNameFor(models.KindExperiment), fmt.Sprintf("Around run %d: ", parent.ID), models.OneLine(parent.Name), "")}
		if err := r.db.CreateExperiment(ctx, &e); err != nil {
			return parent, err
		}
		if err := r.db.SetRunExperiment(ctx, wsID, parent.ID, e.ID); err != nil {
			return parent, err
		}
		parent.ExperimentID = &e.ID
	}
	pid := parent.ID
	child := models.Run{WorkspaceID: wsID, ProjectID: parent.ProjectID, DatasetID: parent.DatasetID, RubricID: parent.RubricID,
		RubricVersion: parent.RubricVersion, JudgeID: parent.JudgeID, Method: parent.Method, Settings: parent.Settings, MethodSettings: parent.MethodSettings,
		RubricSnapshot: parent.RubricSnapshot, JudgeSnapshot: parent.JudgeSnapshot, Simulated: parent.Simulated,
		ExperimentID: parent.ExperimentID, ParentRunID: &pid, Variant: variant}
	return child, nil
}

// LaunchReseed re-runs a run's setup with another seed (repeatability).
func (r *Runner) LaunchReseed(ctx context.Context, wsID, parentID, seed int64) (models.Run, error) {
	child, err := r.derive(ctx, wsID, parentID, VariantReseed, func(p models.Run) error {
		if seed == p.Settings.Seed {
			return models.Errorf(models.EInvalid, "choose a seed other than the run's own (%d)", seed)
		}
		return nil
	})
	if err != nil {
		return child, err
	}
	child.Settings.Seed = seed
	child.Name = fmt.Sprintf("run %d with seed %d", parentID, seed)
	return child, r.Launch(ctx, &child)
}

// LaunchReworded re-runs a run's setup with a reworded rubric; the criteria
// must stay the same in number, order, range and human column so the
// results compare.
func (r *Runner) LaunchReworded(ctx context.Context, wsID, parentID int64, rub evaluator.Rubric) (models.Run, error) {
	child, err := r.derive(ctx, wsID, parentID, VariantReworded, func(p models.Run) error {
		old := p.RubricSnapshot
		if len(rub.Criteria) != len(old.Criteria) {
			return models.Errorf(models.EInvalid, "a reworded rubric keeps the same %d criteria: reword them, do not add or remove", len(old.Criteria))
		}
		for i, c := range rub.Criteria {
			o := old.Criteria[i]
			c.Lo, c.Hi, c.HumanColumn, c.AnnotatorColumns, c.RubricScale = o.Lo, o.Hi, o.HumanColumn, o.AnnotatorColumns, o.RubricScale
			rub.Criteria[i] = c
		}
		if len(rub.Fields) == 0 {
			rub.Fields = old.Fields
		}
		if err := rub.Validate(); err != nil {
			return &models.Error{Code: models.EInvalid, Message: err.Error()}
		}
		return nil
	})
	if err != nil {
		return child, err
	}
	child.RubricSnapshot = rub
	child.RubricID, child.RubricVersion = nil, nil
	child.Name = fmt.Sprintf("run %d with a reworded rubric", parentID)
	return child, r.Launch(ctx, &child)
}

// LaunchNoise copies the run's dataset with words deleted and replaced
// (the paper: 5% each, synonyms from the shipped lexicon) in the fields the
// judge sees, and re-runs the same setup on the copy. It returns the run
// and what the perturbation did.
func (r *Runner) LaunchNoise(ctx context.Context, wsID, parentID, seed int64, opt perturb.Options) (models.Run, perturb.Stats, error) {
	var st perturb.Stats
	child, err := r.derive(ctx, wsID, parentID, VariantNoise, func(models.Run) error {
		if opt.DeleteRate < 0 || opt.ReplaceRate < 0 || opt.DeleteRate+opt.ReplaceRate <= 0 || opt.DeleteRate+opt.ReplaceRate > 1 {
			return models.Errorf(models.EInvalid, "the noise rates must be positive and add up to at most 100%%")
		}
		return nil
	})
	if err != nil {
		return child, st, err
	}
	ds, err := r.db.FindDataset(ctx, wsID, child.DatasetID)
	if err != nil {
		return child, st, err
	}
	rows, err := r.db.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		return child, st, err
	}
	fields := child.RubricSnapshot.Fields
	if len(fields) == 0 {
		fields = ds.Fields
	}
	lex := perturb.DefaultLexicon()
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(ds.ID)))
	copies := make([]models.DatasetRow, len(rows))
	for i, row := range rows {
		data := make(map[string]string, len(row.Data))
		for k, v := range row.Data {
			data[k] = v
		}
		for _, f := range fields {
			noisy, s := perturb.Text(data[f.Column], lex, opt, rng)
			data[f.Column] = noisy
			st.Add(s)
		}
		copies[i] = models.DatasetRow{Position: row.Position, ExternalID: row.ExternalID, Data: data, Ratings: row.Ratings}
	}
	parentDS := ds.ID
	noisy := models.Dataset{WorkspaceID: wsID, ProjectID: ds.ProjectID, Name: models.ComposeName(models.MaxNameFor(models.KindDataset), "", models.OneLine(ds.Name),
		fmt.Sprintf(" (noisy copy, %d%% deleted, %d%% replaced, seed %d)", int(opt.DeleteRate*100+0.5), int(opt.ReplaceRate*100+0.5), seed)), SourceFilename: ds.SourceFilename, Format: ds.Format,
		IDColumn: ds.IDColumn, Columns: ds.Columns, Fields: ds.Fields, RatingColumns: ds.RatingColumns,
		ParentDatasetID: &parentDS, GroupColumn: ds.GroupColumn, CreatedAt: time.Now().UTC()}
	if err := r.db.CreateDataset(ctx, &noisy, copies); err != nil {
		return child, st, err
	}
	child.DatasetID = noisy.ID
	child.Name = fmt.Sprintf("run %d on noisy data", parentID)
	return child, st, r.Launch(ctx, &child)
}

// Setup is what "launch all methods" varies over: one run per entry.
type Setup = methods.Setup

// StandardSetups are the comparison the paper's Table 1 makes: each
// registered method's own setups (BatchEval with its defaults and its main
// variants, then the baselines) from the launch's settings and method
// settings.
func StandardSetups(base evaluator.Settings, ms evaluator.MethodSettings) []Setup {
	return methods.StandardSetups(base, ms)
}

// LaunchAll creates an experiment and one run per setup on the same
// dataset, rubric and judge, from the template run (its Method and
// Settings are overwritten per setup).
func (r *Runner) LaunchAll(ctx context.Context, template models.Run, name string, setups []Setup) (models.Experiment, []models.Run, error) {
	e := models.Experiment{WorkspaceID: template.WorkspaceID, ProjectID: template.ProjectID, DatasetID: template.DatasetID,
		RubricID: template.RubricID, Name: name}
	// All or none: refuse the group before half of it is launched.
	if err := r.db.CheckRunCapacity(ctx, template.WorkspaceID, len(setups)); err != nil {
		return e, nil, err
	}
	if err := r.db.CreateExperiment(ctx, &e); err != nil {
		return e, nil, err
	}
	var runs []models.Run
	for _, s := range setups {
		run := template
		run.ID = 0
		run.ExperimentID = &e.ID
		run.Name = s.Name
		run.Method = string(s.Method)
		run.Settings = s.Settings
		run.MethodSettings = s.MethodSettings
		if err := r.Launch(ctx, &run); err != nil {
			return e, runs, fmt.Errorf("launch %s: %w", s.Name, err)
		}
		runs = append(runs, run)
	}
	return e, runs, nil
}
