package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// launchInput is the launch form as submitted (or as given in a GET query
// when the form reloads for another rubric).
type launchInput struct {
	DatasetID, RubricID, JudgeID int64
	// CriteriaOf is the rubric whose criteria the checkboxes showed; when
	// the rubric changed since, all criteria of the new one are chosen.
	CriteriaOf int64
	Criteria   []int
	Name       string
	Settings   evaluator.Settings
	raw        map[string]string
	errs       []string
}

func parseLaunchInput(vals url.Values) launchInput {
	in := launchInput{Settings: evaluator.DefaultSettings(), raw: map[string]string{}}
	id := func(key string) int64 {
		v, _ := strconv.ParseInt(strings.TrimSpace(vals.Get(key)), 10, 64)
		return v
	}
	in.DatasetID, in.RubricID, in.JudgeID, in.CriteriaOf = id("dataset"), id("rubric"), id("judge"), id("criteria_of")
	in.Name = strings.TrimSpace(vals.Get("name"))
	for _, c := range vals["criteria"] {
		if k, err := strconv.Atoi(c); err == nil {
			in.Criteria = append(in.Criteria, k)
		}
	}
	s := &in.Settings
	ints := []struct {
		key, label string
		dst        *int
	}{{"rounds", "Rounds", &s.Rounds}, {"batch_size", "Batch size", &s.BatchSize}}
	for _, f := range ints {
		in.raw[f.key] = strconv.Itoa(*f.dst)
		if v := strings.TrimSpace(vals.Get(f.key)); v != "" {
			in.raw[f.key] = v
			n, err := strconv.Atoi(v)
			if err != nil {
				in.errs = append(in.errs, fmt.Sprintf("%s: %q is not a whole number.", f.label, v))
				continue
			}
			*f.dst = n
		}
	}
	floats := []struct {
		key, label string
		dst        *float64
	}{{"temperature", "Temperature", &s.Temperature}, {"top_p", "top_p", &s.TopP}}
	for _, f := range floats {
		in.raw[f.key] = strconv.FormatFloat(*f.dst, 'g', -1, 64)
		if v := strings.TrimSpace(vals.Get(f.key)); v != "" {
			in.raw[f.key] = v
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				in.errs = append(in.errs, fmt.Sprintf("%s: %q is not a number.", f.label, v))
				continue
			}
			*f.dst = x
		}
	}
	in.raw["seed"] = strconv.FormatInt(s.Seed, 10)
	if v := strings.TrimSpace(vals.Get("seed")); v != "" {
		in.raw["seed"] = v
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			in.errs = append(in.errs, fmt.Sprintf("Seed: %q is not a whole number.", v))
		} else {
			s.Seed = n
		}
	}
	if v := vals.Get("procedure"); v != "" {
		s.Procedure = evaluator.Procedure(v)
	}
	if v := vals.Get("composition"); v != "" {
		s.Composition = evaluator.Composition(v)
	}
	if v := vals.Get("sort_key"); v != "" {
		s.SortKey = evaluator.SortKey(v)
	}
	if v := vals.Get("scoring"); v != "" {
		s.Scoring = evaluator.Scoring(v)
	}
	return in
}

// launchPlan is the launch form resolved against the database: what would
// run if the person pressed Launch now.
type launchPlan struct {
	view    web.RunLaunchView
	project models.Project
	dataset *models.Dataset
	rubric  *models.Rubric
	judge   *models.Judge
	chosen  []evaluator.Criterion
}

// planLaunch loads the project's choices, picks the selected (or first)
// dataset, rubric and judge, and fills the form view with the estimate.
func (h *Handlers) planLaunch(ctx context.Context, projectID int64, in launchInput) (*launchPlan, error) {
	ws := h.Workspace.ID
	p, err := h.DB.FindProject(ctx, ws, projectID)
	if err != nil {
		return nil, err
	}
	datasets, err := h.DB.ListDatasets(ctx, ws, p.ID)
	if err != nil {
		return nil, err
	}
	rubrics, err := h.DB.ListRubrics(ctx, ws, p.ID)
	if err != nil {
		return nil, err
	}
	judges, err := h.DB.ListJudges(ctx, ws)
	if err != nil {
		return nil, err
	}
	pl := &launchPlan{project: p}
	v := &pl.view
	v.ProjectID, v.ProjectName, v.Name = p.ID, p.Name, in.Name
	v.Rounds, v.BatchSize, v.Temperature, v.TopP, v.Seed = in.raw["rounds"], in.raw["batch_size"], in.raw["temperature"], in.raw["top_p"], in.raw["seed"]
	s := in.Settings
	v.Procedure, v.Composition, v.SortKey, v.Scoring = string(s.Procedure), string(s.Composition), string(s.SortKey), string(s.Scoring)
	v.Errors = append(v.Errors, in.errs...)

	for i := range datasets {
		d := &datasets[i]
		v.Datasets = append(v.Datasets, web.RunOption{ID: d.ID, Label: fmt.Sprintf("%s (%d samples)", d.Name, d.RowCount)})
		if d.ID == in.DatasetID || (in.DatasetID == 0 && pl.dataset == nil) {
			pl.dataset = d
		}
	}
	for i := range rubrics {
		r := &rubrics[i]
		v.Rubrics = append(v.Rubrics, web.RunOption{ID: r.ID, Label: r.Name})
		if r.ID == in.RubricID || (in.RubricID == 0 && pl.rubric == nil) {
			pl.rubric = r
		}
	}
	for i := range judges {
		j := &judges[i]
		v.Judges = append(v.Judges, web.RunOption{ID: j.ID, Label: j.Name + " · " + j.Model, Simulated: j.Simulated})
		if j.ID == in.JudgeID || (in.JudgeID == 0 && pl.judge == nil) {
			pl.judge = j
		}
	}
	switch {
	case pl.dataset == nil && in.DatasetID != 0:
		v.Errors = append(v.Errors, "The chosen dataset does not exist in this project.")
	case pl.dataset == nil:
		v.Errors = append(v.Errors, "This project has no dataset yet: import one first.")
	default:
		v.DatasetID = pl.dataset.ID
	}
	switch {
	case pl.rubric == nil && in.RubricID != 0:
		v.Errors = append(v.Errors, "The chosen rubric does not exist in this project.")
	case pl.rubric == nil:
		v.Errors = append(v.Errors, "This project has no rubric yet: write one first.")
	default:
		v.RubricID = pl.rubric.ID
	}
	switch {
	case pl.judge == nil && in.JudgeID != 0:
		v.Errors = append(v.Errors, "The chosen judge does not exist.")
	case pl.judge == nil:
		v.Errors = append(v.Errors, "No judge is set up yet: add one on the Judges page.")
	default:
		v.JudgeID = pl.judge.ID
	}

	if pl.rubric != nil {
		// Fresh form, or the checkboxes belonged to another rubric: all
		// criteria, as most people judge every criterion of a rubric.
		all := in.CriteriaOf == 0 || in.CriteriaOf != pl.rubric.ID
		for i, c := range pl.rubric.Criteria {
			checked := all || slices.Contains(in.Criteria, i)
			human := ""
			if c.HumanColumn != "" {
				human = "; human ratings in " + c.HumanColumn
			}
			v.Criteria = append(v.Criteria, web.RunCriterionChoice{Index: i, Name: c.Name, Range: fmt.Sprintf("%g to %g", c.Lo, c.Hi), Human: human, Checked: checked})
			if checked {
				pl.chosen = append(pl.chosen, c)
			}
		}
	}
	v.Estimate = h.estimate(ctx, pl, s)
	return pl, nil
}

// snapshot is the rubric the run will use: only the chosen criteria, and
// the dataset's fields when the rubric names none.
func (pl *launchPlan) snapshot() evaluator.Rubric {
	r := pl.rubric.Evaluator()
	r.Criteria = pl.chosen
	if len(r.Fields) == 0 && pl.dataset != nil {
		r.Fields = pl.dataset.Fields
	}
	return r
}

// judgeSnapshot copies the judge for a run. A judge without prices of its
// own takes the operator's configured prices for its model, so estimates
// and run costs agree.
func (h *Handlers) judgeSnapshot(j models.Judge) models.JudgeSnapshot {
	snap := j.Snapshot()
	if p, ok := h.Prices[j.Model]; ok && !j.Simulated && snap.PriceInputPerMTok == nil && snap.PriceOutputPerMTok == nil {
		in, out := p.Input, p.Output
		snap.PriceInputPerMTok, snap.PriceOutputPerMTok = &in, &out
	}
	return snap
}

// estimate predicts calls, tokens and cost of the planned run.
func (h *Handlers) estimate(ctx context.Context, pl *launchPlan, s evaluator.Settings) web.RunEstimate {
	switch {
	case pl.dataset == nil || pl.rubric == nil || pl.judge == nil:
		return web.RunEstimate{Problem: "Choose a dataset, a rubric and a judge to see an estimate."}
	case len(pl.chosen) == 0:
		return web.RunEstimate{Problem: "Choose at least one criterion to see an estimate."}
	}
	if err := s.Validate(); err != nil {
		return web.RunEstimate{Problem: "No estimate until the settings are valid: " + err.Error() + "."}
	}
	rows, err := h.DB.ListDatasetRows(ctx, pl.dataset.ID, 0, s.BatchSize)
	if err != nil || len(rows) == 0 {
		return web.RunEstimate{Problem: "The dataset has no rows to estimate from."}
	}
	rub := pl.snapshot()
	samples := make([]evaluator.Sample, len(rows))
	for i, r := range rows {
		samples[i] = r.Sample(rub.Fields)
	}
	n := pl.dataset.RowCount
	perRound := (n + s.BatchSize - 1) / s.BatchSize
	e := web.RunEstimate{JudgeName: pl.judge.Name, Simulated: pl.judge.Simulated, Rows: n, Criteria: len(pl.chosen),
		Rounds: s.Rounds, BatchSize: s.BatchSize, BatchesPerRound: perRound, CompletionPerSample: completionTokensPerSample}
	e.Calls = e.Criteria * s.Rounds * perRound
	for _, c := range pl.chosen {
		// Each criterion has its own prompt; its first real batch stands
		// for every batch of that criterion.
		e.PromptTokens += evaluator.EstimateTokens(evaluator.BuildBatchPrompt(rub, c, samples, s)) * s.Rounds * perRound
	}
	e.CompletionTokens = completionTokensPerSample * n * s.Rounds * e.Criteria
	e.Cost = costText(pl.judge.Simulated, runner.Cost(h.judgeSnapshot(*pl.judge), e.PromptTokens, e.CompletionTokens))
	return e
}

// costText formats dollars; an unknown price is "unknown", never $0.
func costText(simulated bool, cost *float64) string {
	switch {
	case simulated:
		return "$0 (simulated judge)"
	case cost == nil:
		return "unknown"
	case *cost < 1:
		return fmt.Sprintf("$%.4f", *cost)
	default:
		return fmt.Sprintf("$%.2f", *cost)
	}
}

func (h *Handlers) showLaunchForm(c echo.Context) error {
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	pl, err := h.planLaunch(c.Request().Context(), pid, parseLaunchInput(c.QueryParams()))
	if err != nil {
		return err
	}
	// Messages are for submitted forms; a reload only shows the choices.
	pl.view.Errors = nil
	pl.view.Page = page(c, "New run")
	return render(c, http.StatusOK, web.RunLaunchPage(pl.view))
}

// estimateRun renders the estimate fragment for the form's live preview.
func (h *Handlers) estimateRun(c echo.Context) error {
	vals, err := c.FormParams()
	if err != nil {
		return models.Errorf(models.EInvalid, "unreadable form: %v", err)
	}
	pid, _ := strconv.ParseInt(vals.Get("project_id"), 10, 64)
	pl, err := h.planLaunch(c.Request().Context(), pid, parseLaunchInput(vals))
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.RunEstimateFragment(pl.view.Estimate))
}

func (h *Handlers) launchRun(c echo.Context) error {
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	vals, err := c.FormParams()
	if err != nil {
		return models.Errorf(models.EInvalid, "unreadable form: %v", err)
	}
	ctx := c.Request().Context()
	in := parseLaunchInput(vals)
	pl, err := h.planLaunch(ctx, pid, in)
	if err != nil {
		return err
	}
	v := &pl.view
	if len(in.errs) == 0 {
		if err := in.Settings.Validate(); err != nil {
			v.Errors = append(v.Errors, "Settings: "+err.Error()+".")
		}
	}
	if pl.rubric != nil {
		if len(pl.chosen) == 0 {
			v.Errors = append(v.Errors, "Choose at least one criterion.")
		} else if err := pl.snapshot().Validate(); err != nil {
			v.Errors = append(v.Errors, "Rubric "+pl.rubric.Name+": "+err.Error()+".")
		}
	}
	if len(v.Errors) > 0 {
		v.Page = page(c, "New run")
		return render(c, http.StatusUnprocessableEntity, web.RunLaunchPage(*v))
	}
	name := in.Name
	if name == "" {
		name = pl.rubric.Name + " on " + pl.dataset.Name
	}
	run := models.Run{WorkspaceID: h.Workspace.ID, ProjectID: pl.project.ID, DatasetID: pl.dataset.ID,
		RubricID: &pl.rubric.ID, JudgeID: &pl.judge.ID, Name: name, Method: models.MethodBatchEval,
		Settings: in.Settings, RubricSnapshot: pl.snapshot(), JudgeSnapshot: h.judgeSnapshot(*pl.judge), Simulated: pl.judge.Simulated}
	if err := h.Runner.Launch(ctx, &run); err != nil {
		return err
	}
	return redirect(c, runURL(run.ID), "Run launched: it starts as soon as a worker is free.")
}
