package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// defaultTemperature is the temperature a method gets when the person left
// the field as the form showed it. Only BatchEval and LLM-Eval send it:
// G-Eval's log-probability call is greedy and the sampled estimates (G-Eval
// without log-probabilities, CloserLook) use the sample temperature.
// defaultTopP is the judge's top_p, else the paper's 0.9.
func (pl *launchPlan) defaultTopP() float64 {
	if pl.defaultSamplingOnly() {
		return 1
	}
	if pl != nil && pl.judge != nil && !pl.judge.Simulated && pl.judge.TopP > 0 && pl.judge.TopP <= 1 {
		return pl.judge.TopP
	}
	return evaluator.DefaultSettings().TopP
}

// defaultTemperature is the temperature a run of method m gets when the
// person leaves the field alone.
func (pl *launchPlan) defaultTemperature(m evaluator.Method) float64 {
	// The method's own (LLM-Eval: greedy), then the judge's own setting
	// (Judges page), then the paper's.
	if pl.defaultSamplingOnly() {
		// The only temperature the judge takes, whatever the method's own.
		return 1
	}
	otherwise := evaluator.DefaultSettings().Temperature
	if pl != nil && pl.judge != nil && !pl.judge.Simulated && pl.judge.Temperature >= 0 && pl.judge.Temperature <= 2 {
		otherwise = pl.judge.Temperature
	}
	return methods.DefaultTemperature(methods.For(string(m)), otherwise)
}

// defaultSamplingOnly reports whether the chosen judge takes only the
// default temperature and top_p (OpenAI's reasoning models): the client
// sends it neither, so a run must record the default for what it records
// to be what the judge did.
func (pl *launchPlan) defaultSamplingOnly() bool {
	return pl != nil && pl.judge != nil && !pl.judge.Simulated && pl.judge.DefaultSamplingOnly
}

// samplingProblems lists the settings of a run of method that a judge
// taking only the default temperature and top_p (defaultSamplingOnly)
// cannot follow, each naming its field and the value to set: refused at
// launch, before any call, rather than recorded and not done (the client
// never sends them to that judge).
func (pl *launchPlan) samplingProblems(method methods.Method, s evaluator.Settings, ms evaluator.MethodSettings) []fieldError {
	if !pl.defaultSamplingOnly() {
		return nil
	}
	why := fmt.Sprintf("judge %s takes only the default (its model, like OpenAI's reasoning models, refuses any other)", pl.judge.Name)
	var out []fieldError
	check := func(setting methods.Setting, label string, v float64, ok bool) {
		if methods.Reads(method, setting) && !ok {
			out = append(out, fieldError{fmt.Sprintf("%s: %g cannot be used: %s; set it to 1.", label, v, why), setting, string(setting)})
		}
	}
	check(methods.SettingTemperature, "Temperature", s.Temperature, s.Temperature == 1)
	check(methods.SettingTopP, "top_p", s.TopP, s.TopP == 1)
	check(methods.SettingSampleTemperature, "Sample temperature", ms.SampleTemperature, ms.SampleTemperature == 1)
	check(methods.SettingCloserLookTopP, "CloserLook top_p", ms.CloserLookTopP, ms.CloserLookTopP == 0 || ms.CloserLookTopP == 1)
	return out
}

// fieldError is a form field that could not be read, with the setting it
// holds; the empty setting means every launch (the method select itself).
// A field's parse error blocks only the launches of methods that read it
// (methods.Method.Reads): a typo in "Rounds" must not block G-Eval.
type fieldError struct {
	text    string
	setting methods.Setting
	// field is the form field the message belongs next to (its id).
	field string
}

// launchInput is the launch form as submitted (or as given in a GET query
// when the form reloads for another rubric).
type launchInput struct {
	DatasetID, RubricID, JudgeID int64
	// CriteriaOf is the rubric whose criteria the checkboxes showed. When
	// the rubric changed since, a reload shows all criteria of the new one
	// ticked, and a launch is refused (criteriaProblems).
	CriteriaOf int64
	Criteria   []int
	// AllCriteria asks for every criterion of the rubric (the API's launch
	// without a criteria list).
	AllCriteria bool
	Name        string
	Method      evaluator.Method
	// Settings are BatchEval's settings (temperature and top_p are also
	// read by the sample-wise methods, see settingsFor).
	Settings evaluator.Settings
	// MethodSettings are the baselines' settings; GEvalSteps is filled by
	// planLaunch, which knows the rubric.
	MethodSettings evaluator.MethodSettings
	// Steps are G-Eval's evaluation steps as typed, by criterion index of
	// the rubric named by CriteriaOf.
	Steps map[int]string
	// tempUntouched is true when the temperature field is blank or still
	// holds the value the form showed: the method's default then applies.
	tempUntouched bool
	// topPUntouched is the same for top_p: the judge's own value applies.
	topPUntouched bool
	raw           map[string]string
	errs          []fieldError
}

func parseLaunchInput(vals url.Values) launchInput {
	in := launchInput{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(),
		Method: evaluator.MethodBatchEval, Steps: map[int]string{}, raw: map[string]string{}}
	id := func(key string) int64 {
		v, _ := strconv.ParseInt(strings.TrimSpace(vals.Get(key)), 10, 64)
		return v
	}
	in.DatasetID, in.RubricID, in.JudgeID, in.CriteriaOf = id("dataset"), id("rubric"), id("judge"), id("criteria_of")
	in.Name = strings.TrimSpace(vals.Get("name"))
	in.AllCriteria = vals.Get("criteria_all") == "1"
	for _, c := range vals["criteria"] {
		if k, err := strconv.Atoi(c); err == nil {
			in.Criteria = append(in.Criteria, k)
		}
	}
	if m := evaluator.Method(strings.TrimSpace(vals.Get("method"))); m != "" {
		in.Method = m
	}
	if !knownMethod(in.Method) {
		in.errs = append(in.errs, fieldError{fmt.Sprintf("Method: %s is not a method; use %s.", web.Quoted(string(in.Method)), methodChoices()), "", "method"})
	}
	s, ms := &in.Settings, &in.MethodSettings
	// The ranges are Settings.Validate's and MethodSettings.Validate's,
	// checked here too so that every field out of range is named beside
	// it at once, not one per submission in the form's summary.
	ints := []struct {
		key    methods.Setting
		label  string
		dst    *int
		lo, hi int
	}{
		{methods.SettingRounds, "Rounds", &s.Rounds, 1, 50},
		{methods.SettingBatchSize, "Batch size", &s.BatchSize, 1, 100},
		{methods.SettingSamples, "Samples n", &ms.Samples, 1, 100},
	}
	for _, f := range ints {
		key := string(f.key)
		in.raw[key] = strconv.Itoa(*f.dst)
		if v := strings.TrimSpace(vals.Get(key)); v != "" {
			in.raw[key] = v
			n, err := strconv.Atoi(v)
			if err != nil {
				in.errs = append(in.errs, fieldError{fmt.Sprintf("%s: %s is not a whole number.", f.label, web.Quoted(v)), f.key, key})
				continue
			}
			// Kept even when out of range, so that the estimate, which
			// validates the settings, says why it has no figures.
			if n < f.lo || n > f.hi {
				in.errs = append(in.errs, fieldError{fmt.Sprintf("%s: %d is out of range; use %d to %d.", f.label, n, f.lo, f.hi), f.key, key})
			}
			*f.dst = n
		}
	}
	// loOpen: the lowest value is itself refused (top_p 0 samples nothing).
	// example is the value the advice for unreadable text shows.
	floats := []struct {
		key     methods.Setting
		label   string
		dst     *float64
		lo, hi  float64
		loOpen  bool
		example string
	}{
		{methods.SettingTemperature, "Temperature", &s.Temperature, 0, 2, false, "0.2"},
		{methods.SettingTopP, "top_p", &s.TopP, 0, 1, true, "0.9"},
		{methods.SettingSampleTemperature, "Sample temperature", &ms.SampleTemperature, 0, 2, false, "0.7"},
	}
	for _, f := range floats {
		key := string(f.key)
		in.raw[key] = formatNumber(*f.dst)
		if v := strings.TrimSpace(vals.Get(key)); v != "" {
			in.raw[key] = v
			// A decimal comma ("0,2") is read as the other forms read it.
			x, problem := typedDecimal(v, f.example)
			if problem != "" {
				in.errs = append(in.errs, fieldError{fmt.Sprintf("%s: %s %s.", f.label, web.Quoted(v), problem), f.key, key})
				continue
			}
			if x < f.lo || x > f.hi || (f.loOpen && x == f.lo) {
				rng := fmt.Sprintf("%g to %g", f.lo, f.hi)
				if f.loOpen {
					rng = fmt.Sprintf("more than %g, up to %g", f.lo, f.hi)
				}
				in.errs = append(in.errs, fieldError{fmt.Sprintf("%s: %g is out of range; use %s.", f.label, x, rng), f.key, key})
			}
			*f.dst = x
		}
	}
	// The fewest readable answers for a sampled score, a share of those
	// asked for; absent (a form that never showed it, a script) leaves
	// it to the method's default (methods.prepareSampleWise).
	if v := strings.TrimSpace(vals.Get("min_readable_share")); v != "" {
		key := string(methods.SettingMinReadableShare)
		in.raw[key] = v
		x, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil || math.IsNaN(x):
			in.errs = append(in.errs, fieldError{fmt.Sprintf("Fewest readable answers for a score: %s is not a share; choose one of the listed shares (0 to 1 of the answers asked for).", web.Quoted(v)), methods.SettingMinReadableShare, key})
		case x < 0 || x > 1:
			in.errs = append(in.errs, fieldError{fmt.Sprintf("Fewest readable answers for a score: %g is out of range; use a share from 0 (any one readable answer) to 1 (all of them).", x), methods.SettingMinReadableShare, key})
		default:
			ms.MinReadableShare = &x
		}
	}
	// The temperature field is "untouched" when blank or equal to what the
	// form showed (temperature_shown); a post without that hidden field
	// (a script) counts BatchEval's default as untouched. Untouched, the
	// chosen method's default applies: LLM-Eval runs greedy.
	shown := evaluator.DefaultSettings().Temperature
	if v, err := strconv.ParseFloat(strings.TrimSpace(vals.Get("temperature_shown")), 64); err == nil {
		shown = v
	}
	// A value that cannot be read is never untouched: the form shows it
	// back as typed beside its message, not the default it left in place.
	untouched := func(key string, value, shown float64) bool {
		typed := strings.TrimSpace(vals.Get(key))
		_, problem := typedDecimal(typed, "0.2")
		return typed == "" || (problem == "" && value == shown)
	}
	in.tempUntouched = untouched("temperature", s.Temperature, shown)
	shownP := evaluator.DefaultSettings().TopP
	if v, err := strconv.ParseFloat(strings.TrimSpace(vals.Get("top_p_shown")), 64); err == nil {
		shownP = v
	}
	in.topPUntouched = untouched("top_p", s.TopP, shownP)
	in.raw["seed"] = strconv.FormatInt(s.Seed, 10)
	if v := strings.TrimSpace(vals.Get("seed")); v != "" {
		in.raw["seed"] = v
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			in.errs = append(in.errs, fieldError{fmt.Sprintf("Seed: %s is not a whole number.", web.Quoted(v)), methods.SettingSeed, "seed"})
		} else {
			s.Seed = n
		}
	}
	// An optional spending cap in USD (blank: none); Validate checks it.
	if v := strings.TrimSpace(vals.Get("spend_cap_usd")); v != "" {
		in.raw["spend_cap_usd"] = v
		x, problem := typedDecimal(v, "2.5")
		if problem != "" {
			problem = strings.Replace(problem, "is not a number", "is not an amount of US dollars", 1)
			in.errs = append(in.errs, fieldError{fmt.Sprintf("Spending cap: %s %s.", web.Quoted(v), problem), "", "spend_cap_usd"}) // every method: "" blocks them all
		} else {
			if !(x > 0) || math.IsInf(x, 1) {
				in.errs = append(in.errs, fieldError{fmt.Sprintf("Spending cap: %s is not a positive amount of US dollars; leave the field empty for no cap.", v), "", "spend_cap_usd"})
			}
			s.SpendCapUSD = &x
		}
	}
	// The answer cache is on unless a form that showed its checkbox
	// (reuse_answers_shown) comes back without it ticked; a post without
	// the checkbox at all (a script) keeps the default, on.
	s.NoCache = vals.Get("reuse_answers_shown") != "" && vals.Get("reuse_answers") == ""
	// Re-sending slow calls is on unless a form that showed its checkbox
	// (hedge_slow_calls_shown) comes back without it ticked; a post without
	// the checkbox at all (a script, the API) keeps the default, on.
	s.HedgeSlowCalls = vals.Get("hedge_slow_calls_shown") == "" || vals.Get("hedge_slow_calls") != ""
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
	if v := vals.Get("llmeval_scale"); v != "" {
		ms.LLMEvalScale = evaluator.LLMEvalScale(v)
	}
	// A checkbox sends nothing when unticked, so the form puts a hidden
	// "0" before it: the last value wins, and a form that never showed the
	// box (a fresh page) keeps the default, on.
	if v := vals["use_logprobs"]; len(v) > 0 {
		ms.UseLogprobs = v[len(v)-1] == "1"
	}
	for key, v := range vals {
		if k, ok := strings.CutPrefix(key, "steps_"); ok && len(v) > 0 {
			if i, err := strconv.Atoi(k); err == nil && i >= 0 {
				in.Steps[i] = strings.TrimSpace(strings.ReplaceAll(v[len(v)-1], "\r\n", "\n"))
			}
		}
	}
	return in
}

// settingsFor returns the settings a run of method m gets: the form's,
// with the default temperature and top_p (the judge's own, or greedy for
// LLM-Eval) when the person left the fields alone, and one round of one-sample calls for the sample-wise methods (as
// runner.PrepareRun sets them).
func (pl *launchPlan) settingsFor(in launchInput, m evaluator.Method) evaluator.Settings {
	s := in.Settings
	if in.tempUntouched {
		s.Temperature = pl.defaultTemperature(m)
	}
	if in.topPUntouched {
		s.TopP = pl.defaultTopP()
	}
	// What the method fixes (one round of one sample for the sample-wise
	// methods) comes from the method.
	if method, err := methods.Lookup(string(m)); err == nil {
		trial := methods.Run{Settings: s}
		if method.Prepare(&trial) == nil {
			s = trial.Settings
		}
	}
	return s
}

// problems lists the parse errors of the fields method m reads (every
// field error when m is unknown).
func (in launchInput) problems(m evaluator.Method) []fieldError {
	method, err := methods.Lookup(string(m))
	var out []fieldError
	for _, e := range in.errs {
		if e.setting == "" || err != nil || methods.Reads(method, e.setting) {
			out = append(out, e)
		}
	}
	return out
}

// addLaunchErrors adds messages to the form: each once to the list at the
// top (all of them, not only the first) and next to its field.
func addLaunchErrors(v *web.RunLaunchView, errs ...fieldError) {
	for _, e := range errs {
		if !slices.Contains(v.Errors, e.text) {
			v.Errors = append(v.Errors, e.text)
		}
		if e.field == "" {
			continue
		}
		if v.FieldErrors == nil {
			v.FieldErrors = map[string][]string{}
		}
		if !slices.Contains(v.FieldErrors[e.field], e.text) {
			v.FieldErrors[e.field] = append(v.FieldErrors[e.field], e.text)
		}
	}
}

// criteriaProblems checks that the submitted criteria are those the form
// showed for the chosen rubric: ticked on another rubric's list (the
// rubric changed after the boxes were ticked) or naming a criterion the
// rubric lacks, the run would judge other criteria than the person saw.
func (pl *launchPlan) criteriaProblems(in launchInput) []fieldError {
	if pl.rubric == nil {
		return nil
	}
	if in.CriteriaOf != 0 && in.CriteriaOf != pl.rubric.ID {
		return []fieldError{{text: fmt.Sprintf("Criteria: the ticked criteria belonged to another rubric than %s. The list now shows %s's criteria: check them and launch again.",
			web.Quoted(pl.rubric.Name), web.Quoted(pl.rubric.Name)), field: "criteria"}}
	}
	var out []fieldError
	seen := map[int]bool{}
	for _, k := range in.Criteria {
		switch {
		case k < 0 || k >= len(pl.rubric.Criteria):
			out = append(out, fieldError{text: fmt.Sprintf("Criteria: rubric %s has no criterion number %d.", web.Quoted(pl.rubric.Name), k+1), field: "criteria"})
		case seen[k]:
			// A post can name a criterion twice (the form's boxes cannot):
			// the run would judge it once, not what was asked.
			out = append(out, fieldError{text: fmt.Sprintf("Criteria: criterion number %d (%s) is chosen more than once; choose each criterion once.",
				k+1, web.Quoted(pl.rubric.Criteria[k].Name)), field: "criteria"})
		}
		seen[k] = true
	}
	if len(out) == 0 && len(pl.chosen) == 0 {
		out = append(out, fieldError{text: "Choose at least one criterion.", field: "criteria"})
	}
	return out
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
	// methodSettings are the form's method settings with the G-Eval steps
	// of the chosen criteria (empty boxes left out: generated at the start).
	methodSettings evaluator.MethodSettings
}

// planLaunch loads the project's choices, picks the selected (or first)
// dataset, rubric and judge, and fills the form view with the estimate.
// The view's errors are about the choices only; callers add the parse
// errors of the fields their action uses (launchInput.problems).
func (h *Handlers) planLaunch(ctx context.Context, projectID int64, in launchInput) (*launchPlan, error) {
	ws := workspaceOf(ctx)
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
	pl := &launchPlan{project: p, methodSettings: in.MethodSettings}
	v := &pl.view
	v.ProjectID, v.ProjectName, v.Name = p.ID, p.Name, in.Name
	v.Rounds, v.BatchSize, v.TopP, v.Seed = in.raw["rounds"], in.raw["batch_size"], in.raw["top_p"], in.raw["seed"]
	s := in.Settings
	v.Procedure, v.Composition, v.SortKey, v.Scoring = string(s.Procedure), string(s.Composition), string(s.SortKey), string(s.Scoring)
	v.Method = string(in.Method)
	// Every form shown gets its own one-time key (launch_formkeys.go).
	v.LaunchKey = newFormLaunchKey()
	for _, m := range methodNames() {
		v.Methods = append(v.Methods, web.RunMethodChoice{Value: string(m), Label: methods.Label(string(m)), Note: methodNote(m)})
	}
	def, _ := methods.Lookup("")
	for _, su := range runner.StandardSetups(pl.settingsFor(in, def.Name()), in.MethodSettings) {
		v.AllSetups = append(v.AllSetups, su.Name)
	}
	v.Samples, v.SampleTemperature = in.raw["samples"], in.raw["sample_temperature"]
	v.MinReadableShare = cmp.Or(in.raw[string(methods.SettingMinReadableShare)], formatNumber(evaluator.DefaultMinReadableShare))
	v.UseLogprobs, v.LLMEvalScale = in.MethodSettings.UseLogprobs, string(in.MethodSettings.LLMEvalScale)

	v.Datasets = datasetOptions(datasets)
	if in.DatasetID == 0 {
		pl.dataset = mainDataset(p, datasets)
	}
	for i := range datasets {
		if datasets[i].ID == in.DatasetID {
			pl.dataset = &datasets[i]
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
		addLaunchErrors(v, fieldError{text: "The chosen dataset does not exist in this project.", field: "dataset"})
	case pl.dataset == nil:
		v.Missing = append(v.Missing, web.LaunchMissing{Field: "dataset", Text: "A dataset: the samples to judge, with their human ratings.",
			Link: fmt.Sprintf("/projects/%d/datasets/new", p.ID), LinkText: "Upload a dataset"})
		addLaunchErrors(v, fieldError{text: "This project has no dataset yet: import one first.", field: "dataset"})
	default:
		v.DatasetID = pl.dataset.ID
	}
	switch {
	case pl.rubric == nil && in.RubricID != 0:
		addLaunchErrors(v, fieldError{text: "The chosen rubric does not exist in this project.", field: "rubric"})
	case pl.rubric == nil:
		v.Missing = append(v.Missing, web.LaunchMissing{Field: "rubric", Text: "A rubric: the criteria the judge scores.",
			Link: fmt.Sprintf("/projects/%d/rubrics/new", p.ID), LinkText: "Write a rubric or start from a template"})
		addLaunchErrors(v, fieldError{text: "This project has no rubric yet: write one first.", field: "rubric"})
	default:
		v.RubricID = pl.rubric.ID
	}
	switch {
	case pl.judge == nil && in.JudgeID != 0:
		addLaunchErrors(v, fieldError{text: "The chosen judge does not exist.", field: "judge"})
	case pl.judge == nil:
		v.Missing = append(v.Missing, web.LaunchMissing{Field: "judge", Text: "A judge: the language model that scores (owners add judges).",
			Link: "/judges/new", LinkText: "Add a judge"})
		addLaunchErrors(v, fieldError{text: "No judge is set up yet: add one on the Judges page.", field: "judge"})
	default:
		v.JudgeID = pl.judge.ID
		v.JudgeTest = launchJudgeTest(*pl.judge, navFor(principalOf(ctx)).IsOwner())
		// A cap is checked against the run's cost, which needs prices.
		if snap := h.judgeSnapshot(*pl.judge); in.Settings.SpendCapUSD != nil && (snap.PriceInputPerMTok == nil || snap.PriceOutputPerMTok == nil) {
			addLaunchErrors(v, fieldError{text: "Spending cap: judge " + pl.judge.Name + " has no prices, so its cost is unknown and a cap cannot be kept; set its prices or leave the cap blank.", field: "spend_cap_usd"})
		}
	}
	v.SpendCapUSD = in.raw["spend_cap_usd"]
	v.ReuseAnswers = !in.Settings.NoCache
	v.HedgeSlowCalls = in.Settings.HedgeSlowCalls
	// Show the temperature and top_p the run would get (the method's and
	// the judge's defaults unless the person typed others); remember them,
	// so that the next post can tell whether the person changed them.
	v.Temperature = in.raw["temperature"]
	if in.tempUntouched {
		v.Temperature = formatNumber(pl.defaultTemperature(in.Method))
	}
	v.TemperatureShown = v.Temperature
	if in.topPUntouched {
		v.TopP = formatNumber(pl.defaultTopP())
	}
	v.TopPShown = v.TopP

	pl.methodSettings.GEvalSteps = nil
	if pl.rubric != nil {
		// Fresh form, or the checkboxes belonged to another rubric: all
		// criteria, as most people judge every criterion of a rubric. Typed
		// steps belong to the rubric they were typed for.
		all := in.CriteriaOf == 0 || in.CriteriaOf != pl.rubric.ID
		var unrated []string
		for i, c := range pl.rubric.Criteria {
			checked := all || in.AllCriteria || slices.Contains(in.Criteria, i)
			human := ""
			switch {
			case c.HumanColumn != "":
				human = "; human ratings in " + c.HumanColumn
			case models.MeansAnnotators(c):
				// QA: said nothing, as if the criterion had no human
				// ratings, though runs compare it with the annotators'
				// mean (and no warning said it had none).
				human = "; human ratings: " + models.AnnotatorMeanKey(c.AnnotatorColumns)
			case !ratedCriterion(c):
				human = "; no human rating column"
				unrated = append(unrated, c.Name)
			}
			v.Criteria = append(v.Criteria, web.RunCriterionChoice{Index: i, Name: c.Name, Range: scaleText(c), Human: human, Checked: checked})
			steps := ""
			if !all {
				steps = in.Steps[i]
			}
			v.Steps = append(v.Steps, web.RunStepsBox{Index: i, Name: c.Name, Steps: steps, Chosen: checked})
			if checked {
				pl.chosen = append(pl.chosen, c)
				if steps != "" {
					if pl.methodSettings.GEvalSteps == nil {
						pl.methodSettings.GEvalSteps = map[string]string{}
					}
					pl.methodSettings.GEvalSteps[c.Name] = steps
				}
			}
		}
		// Beside the criteria: the rubric has no human ratings at all (the
		// list is shown again when the rubric changes, not on each tick,
		// so it says nothing about the ticks: the estimate does).
		if len(unrated) == len(pl.rubric.Criteria) && len(unrated) > 0 {
			v.NoHuman = noHumanLead("this rubric's", unrated)
		}
	}
	v.Estimate = h.estimate(ctx, pl, in.Method, pl.settingsFor(in, in.Method))
	// The ticked criteria, in the estimate (refreshed on every tick),
	// unless the warning beside the criteria already says it of them all.
	if pl.rubric != nil && v.Estimate.Problem == "" && v.NoHuman == "" {
		var unrated []string
		for _, c := range pl.chosen {
			if ratedCriterion(c) {
				unrated = nil
				break
			}
			unrated = append(unrated, c.Name)
		}
		if len(unrated) > 0 {
			v.Estimate.NoHuman = noHumanLead("the chosen", unrated)
			v.Estimate.RubricID = pl.rubric.ID
		}
	}
	// The ticked criteria name rating columns the chosen dataset lacks (in
	// the estimate, so it follows the dataset select).
	if pl.rubric != nil && pl.dataset != nil && v.Estimate.Problem == "" {
		text, elsewhere := ratingsNotInDataset(pl.chosen, *pl.dataset, datasets)
		v.Estimate.NotInDataset, v.Estimate.NotInDatasetFix = text, text != "" && !elsewhere
		v.Estimate.RubricID = pl.rubric.ID
		// Ratings outside a ticked criterion's scale (typos, most likely):
		// named with what the report will do with them.
		off, err := h.offScaleRatings(ctx, *pl.dataset, pl.chosen)
		if err != nil {
			return pl, err
		}
		for i := range pl.chosen {
			if s, ok := off[i]; ok {
				v.Estimate.OffScale = append(v.Estimate.OffScale, s)
			}
		}
	}
	return pl, nil
}

// noHumanLead says that criteria (of whose: "the chosen") have no human
// rating column, naming them.
func noHumanLead(whose string, names []string) string {
	if len(names) == 1 {
		return fmt.Sprintf("%s criterion %s has no human rating column", strings.ToUpper(whose[:1])+whose[1:], joinQuoted(names))
	}
	return fmt.Sprintf("None of %s criteria (%s) has a human rating column", whose, joinQuoted(names))
}

// ratedCriterion reports whether a run of the criterion reads human
// ratings (a human rating column, or annotators' columns) and so can
// measure how far the judge agrees with people.
func ratedCriterion(c evaluator.Criterion) bool {
	return c.HumanColumn != "" || len(c.AnnotatorColumns) > 0
}

// mainDataset is the dataset a fresh launch form chooses: the one marked
// main, else the project's first uploaded dataset that is not a derived
// copy (a noisy copy made for the robustness experiment must never be
// chosen silently). nil when the project has none.
func mainDataset(p models.Project, datasets []models.Dataset) *models.Dataset {
	for i := range datasets {
		if p.MainDatasetID != nil && datasets[i].ID == *p.MainDatasetID && datasets[i].ParentDatasetID == nil {
			return &datasets[i]
		}
	}
	var best *models.Dataset
	for i := range datasets {
		d := &datasets[i]
		switch {
		case best == nil:
			best = d
		case (best.ParentDatasetID != nil) != (d.ParentDatasetID != nil):
			// An original beats a copy, whatever their age.
			if d.ParentDatasetID == nil {
				best = d
			}
		case d.ID < best.ID:
			best = d
		}
	}
	return best
}

// datasetOptions lists the datasets for the select: originals first (the
// oldest first, as they were uploaded), then derived copies, each labelled
// with the dataset it was copied from.
func datasetOptions(datasets []models.Dataset) []web.RunOption {
	names := make(map[int64]string, len(datasets))
	for _, d := range datasets {
		names[d.ID] = d.Name
	}
	sorted := slices.Clone(datasets)
	slices.SortStableFunc(sorted, func(a, b models.Dataset) int {
		if ac, bc := a.ParentDatasetID != nil, b.ParentDatasetID != nil; ac != bc {
			if ac {
				return 1
			}
			return -1
		}
		return int(a.ID - b.ID)
	})
	out := make([]web.RunOption, 0, len(sorted))
	for _, d := range sorted {
		samples := fmt.Sprintf("%d samples", d.RowCount)
		if d.RowCount == 1 {
			samples = "1 sample"
		}
		o := web.RunOption{ID: d.ID, Label: d.Name + " (" + samples + ")"}
		if d.ParentDatasetID != nil {
			parent, ok := names[*d.ParentDatasetID]
			if !ok {
				parent = fmt.Sprintf("dataset %d", *d.ParentDatasetID)
			}
			o.Derived = "noisy copy of " + parent
		}
		out = append(out, o)
	}
	return out
}

// methodNote says in one line what a method does, for the method select.
func methodNote(m evaluator.Method) string {
	if method, err := methods.Lookup(string(m)); err == nil {
		return method.Note()
	}
	return ""
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

// estimate predicts calls, tokens and cost of a run of method m with
// settings s (already resolved by settingsFor): the method makes the
// prediction, the handler adds the cost.
func (h *Handlers) estimate(ctx context.Context, pl *launchPlan, m evaluator.Method, s evaluator.Settings) web.RunEstimate {
	method, err := methods.Lookup(string(m))
	switch {
	case err != nil || m == "":
		return web.RunEstimate{Problem: "Choose a method to see an estimate."}
	case pl.dataset == nil || pl.rubric == nil || pl.judge == nil:
		return web.RunEstimate{Problem: "Choose a dataset, a rubric and a judge to see an estimate."}
	case len(pl.chosen) == 0:
		return web.RunEstimate{Problem: "Choose at least one criterion to see an estimate."}
	}
	if err := s.Validate(); err != nil {
		return web.RunEstimate{Problem: "No estimate until the settings are valid: " + err.Error() + "."}
	}
	trial := methods.Run{Settings: s, MethodSettings: pl.methodSettings, Rubric: pl.snapshot()}
	if err := method.Prepare(&trial); err != nil {
		return web.RunEstimate{Problem: "No estimate until the " + method.Label() + " settings are valid: " + err.Error() + "."}
	}
	rows, err := h.DB.ListDatasetRows(ctx, pl.dataset.ID, 0, trial.Settings.BatchSize)
	if err != nil || len(rows) == 0 {
		return web.RunEstimate{Problem: "The dataset has no rows to estimate from."}
	}
	first := make([]evaluator.Sample, len(rows))
	for i, r := range rows {
		first[i] = r.Sample(trial.Rubric.Fields)
	}
	n := pl.dataset.RowCount
	in := methods.EstimateInput{Run: trial, Rows: n, First: first, TokenLimit: h.judgeSnapshot(*pl.judge).SendsTokenLimitAs()}
	window := 0
	if cw := pl.judge.ContextTokens; cw != nil && *cw > 0 && !pl.judge.Simulated {
		window = *cw
		// Through an index (dataset_rows_length): a few milliseconds at any size.
		longest, err := h.DB.LongestDatasetRows(ctx, pl.dataset.ID, max(1, trial.Settings.BatchSize))
		if err != nil {
			h.Log.Warn("read the longest rows for the launch estimate", "dataset", pl.dataset.ID, "err", err)
			window = 0
		}
		for _, r := range longest {
			in.Longest = append(in.Longest, r.Sample(trial.Rubric.Fields))
		}
	}
	me := method.Estimate(in)
	e := web.RunEstimate{Method: method.Label(), JudgeName: pl.judge.Name, Simulated: pl.judge.Simulated, Rows: n, Criteria: len(pl.chosen),
		Calls: me.Calls, CallsMax: me.CallsMax, PromptTokens: me.PromptTokens, CompletionTokens: me.CompletionTokens,
		CallsNote: me.CallsNote, PromptNote: me.PromptNote, CompletionNote: me.CompletionNote}
	e.Cost = costText(pl.judge.Simulated, runner.Cost(h.judgeSnapshot(*pl.judge), e.PromptTokens, e.CompletionTokens))
	if s.HedgeSlowCalls && !pl.judge.Simulated {
		// On by default, so the bill it may add is said before launch.
		e.Resends = judge.MaxResends(max(e.Calls, e.CallsMax))
	}
	e.Reasoning = in.TokenLimit == judge.TokenLimitMaxCompletionTokens
	if window > 0 && me.LongestPrompt > 0 {
		e.LongestPrompt, e.AnswerRoom, e.ContextTokens = me.LongestPrompt, me.AnswerRoom, window
		// The room is a cap sent (SentCap) when it holds the reasoning's
		// allowance; an uncapped call's expected answer is far smaller.
		e.ReasoningRoom = in.TokenLimit == judge.TokenLimitMaxCompletionTokens && me.AnswerRoom > judge.ReasoningAllowance
		e.TooLong = tooLongText(method, in, me, window)
	}
	return e
}

// tooLongText says that the longest call of a run does not fit the judge's
// context window, and what to change; "" when it fits.
func tooLongText(method methods.Method, in methods.EstimateInput, me methods.Estimate, window int) string {
	need := me.LongestPrompt + me.AnswerRoom
	if need <= window {
		return ""
	}
	head := fmt.Sprintf("The longest call of this run needs about %s tokens with its answer, more than the judge's context window of %s: "+
		"the endpoint may refuse it, or cut the prompt and score text the model never read.", web.Count(need), web.Count(window))
	if be, ok := method.(methods.BatchEval); ok && in.Run.Settings.BatchSize > 1 {
		if b := be.LargestFittingBatch(in, window); b > 0 {
			return fmt.Sprintf("%s Lower the batch size to %d or less, or choose a judge with a longer context window.", head, b)
		}
	}
	if in.Run.Settings.MaxTokens > 0 && me.LongestPrompt < window {
		return head + " Lower max tokens, shorten the dataset's longest texts, or choose a judge with a longer context window."
	}
	return head + " Shorten the dataset's longest texts, or choose a judge with a longer context window."
}

func launchPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// costText formats dollars; an unknown price is "unknown", never $0.
func costText(simulated bool, cost *float64) string {
	switch {
	case simulated:
		return "$0 (simulated judge)"
	case cost == nil:
		return "unknown"
	default:
		return web.Money(*cost)
	}
}

// runCostText is what a run paid, as its page and the run list show it.
// A run answered partly from the answer cache shows what it paid beside
// how many calls the cache answered; one answered wholly from it shows
// "cached", never a $0 that would read as a free judge.
func runCostText(run models.Run) string {
	// What the cached calls would cost at this run's prices, when their
	// tokens are known: the tokens are those of the answers when first
	// paid for, the prices the run's own (the judge's may have changed
	// since, and what they were then is not kept).
	without := ""
	if prompt, completion, ok := run.FullTokens(); ok && run.CachedCalls > 0 {
		if c := runner.Cost(run.JudgeSnapshot, prompt, completion); c != nil {
			without = web.Money(*c)
		}
	}
	switch {
	case run.Simulated:
		return costText(true, nil)
	case run.WhollyCached():
		if without != "" {
			return fmt.Sprintf("cached (all %s calls answered from the answer cache; %s as if paid, at the prices of this run)", runCount(run.Calls), without)
		}
		return fmt.Sprintf("cached (all %s calls answered from the answer cache)", runCount(run.Calls))
	case run.PartlyCached():
		paid := costText(false, run.CostSoFar())
		if run.CostSoFar() != nil {
			paid += " paid"
		}
		if without != "" {
			return paid + "; " + cacheShareText(run) + "; " + without + " without the cache"
		}
		return paid + "; " + cacheShareText(run)
	}
	return costText(false, run.CostSoFar())
}

func (h *Handlers) showLaunchForm(c echo.Context) error {
	if c.Request().Header.Get("X-Requested-With") == "fetch" {
		// The launch form's selects reload it for the parts that follow
		// them (static/app.js): a refusal is their sentence, not a page.
		fragmentErrors(c)
	}
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	pl, err := h.planLaunch(c.Request().Context(), pid, parseLaunchInput(c.QueryParams()))
	if err != nil {
		return err
	}
	// Messages are for submitted forms; a reload only shows the choices
	// (and what the project still lacks).
	pl.view.Errors, pl.view.FieldErrors = nil, nil
	pl.view.Page = page(c, "New run")
	return render(c, http.StatusOK, web.RunLaunchPage(pl.view))
}

// estimateRun renders the estimate fragment for the form's live preview.
func (h *Handlers) estimateRun(c echo.Context) error {
	fragmentErrors(c)
	vals, err := c.FormParams()
	if err != nil {
		return models.Errorf(models.EInvalid, "unreadable form: %v", err)
	}
	pid, _ := strconv.ParseInt(vals.Get("project_id"), 10, 64)
	pl, err := h.planLaunch(c.Request().Context(), pid, parseLaunchInput(vals))
	if err != nil {
		return err
	}
	return renderFragment(c, web.RunEstimateFragment(pl.view.Estimate))
}

// readLaunchForm parses a posted launch form and plans it.
func (h *Handlers) readLaunchForm(c echo.Context) (launchInput, *launchPlan, error) {
	pid, err := paramID(c, "id")
	if err != nil {
		return launchInput{}, nil, err
	}
	vals, err := c.FormParams()
	if err != nil {
		return launchInput{}, nil, models.Errorf(models.EInvalid, "unreadable form: %v", err)
	}
	in := parseLaunchInput(vals)
	pl, err := h.planLaunch(c.Request().Context(), pid, in)
	return in, pl, err
}

// checkLaunch lists what stops a run of method m: unreadable fields it
// uses, invalid settings, no criterion, an unusable rubric. It returns the
// method settings the run gets.
func (pl *launchPlan) checkLaunch(in launchInput, m evaluator.Method) (evaluator.MethodSettings, []fieldError) {
	// Every problem at once: unreadable fields and the criteria first,
	// then what can only be checked on readable settings.
	errs := append(in.problems(m), pl.criteriaProblems(in)...)
	ms := pl.methodSettings
	if len(in.problems(m)) > 0 {
		return ms, errs
	}
	if err := pl.settingsFor(in, m).Validate(); err != nil {
		errs = append(errs, fieldError{text: "Settings: " + err.Error() + "."})
	}
	if pl.rubric != nil && len(pl.chosen) > 0 {
		if err := pl.snapshot().Validate(); err != nil {
			errs = append(errs, fieldError{text: "Rubric " + pl.rubric.Name + ": " + err.Error() + ".", field: "rubric"})
		}
	}
	// The method checks its own settings (and what it needs of the
	// rubric) the way the runner will when the run is launched.
	if method, err := methods.Lookup(string(m)); err == nil && pl.rubric != nil {
		trial := methods.Run{Settings: pl.settingsFor(in, m), MethodSettings: ms, Rubric: pl.snapshot()}
		if err := method.Prepare(&trial); err != nil {
			errs = append(errs, fieldError{text: err.Error() + ".", field: "method"})
		}
		ms = trial.MethodSettings
		errs = append(errs, pl.samplingProblems(method, trial.Settings, trial.MethodSettings)...)
	}
	return ms, errs
}

// runTemplate is a queued run of the plan, without method and settings.
func (h *Handlers) runTemplate(pl *launchPlan, name string) models.Run {
	return models.Run{WorkspaceID: pl.project.WorkspaceID, ProjectID: pl.project.ID, DatasetID: pl.dataset.ID,
		RubricID: &pl.rubric.ID, RubricVersion: &pl.rubric.Version, JudgeID: &pl.judge.ID, Name: name,
		RubricSnapshot: pl.snapshot(), JudgeSnapshot: h.judgeSnapshot(*pl.judge), Simulated: pl.judge.Simulated}
}

// launchRun launches the form's run; a post with the form's one-time key
// used before launches nothing (beginFormLaunch).
func (h *Handlers) launchRun(c echo.Context) error {
	in, pl, err := h.readLaunchForm(c)
	if err != nil {
		return err
	}
	k, keyed, done, err := h.beginFormLaunch(c, models.LaunchKeyRun, pl)
	if done || err != nil {
		return err
	}
	run, errs, err := h.launchPlanned(c, in, pl)
	if keyed && errors.Is(err, models.ErrLaunchKeyTaken) {
		// Sent twice at once, and the other post launched first: nothing
		// was launched by this one; answer what the other launched.
		if done, err := h.replayFormLaunch(c, k, pl); done {
			return err
		}
	}
	if err != nil {
		if models.ErrorCode(err) == models.EConflict {
			return h.refuseLaunch(c, pl, err)
		}
		return err
	}
	if len(errs) > 0 {
		v := &pl.view
		v.Errors = errs
		v.Page = page(c, "New run")
		return render(c, http.StatusUnprocessableEntity, web.RunLaunchPage(*v))
	}
	return redirect(c, runURL(run.ID), methods.Label(string(in.Method))+" run launched: it starts as soon as a worker is free.")
}

// launchPlanned checks a planned launch and, when nothing stops it,
// launches the run and records it in the audit log. errs lists what stops
// it (nothing is launched then). The launch form and the API both use it.
func (h *Handlers) launchPlanned(c echo.Context, in launchInput, pl *launchPlan) (models.Run, []string, error) {
	ms, errs := pl.checkLaunch(in, in.Method)
	addLaunchErrors(&pl.view, errs...)
	if len(pl.view.Errors) > 0 {
		return models.Run{}, pl.view.Errors, nil
	}
	name := in.Name
	if name == "" {
		// Stored names may hold line breaks from before they were refused;
		// a dataset name near its limit is shortened, not refused: the
		// person typed no name.
		label := ""
		if def, _ := methods.Lookup(""); in.Method != def.Name() {
			// Runs of the default method go unlabelled.
			label = " (" + methods.Label(string(in.Method)) + ")"
		}
		name = models.ComposeName(models.MaxNameFor(models.KindRun), models.OneLine(pl.rubric.Name)+" on ", models.OneLine(pl.dataset.Name), label)
	}
	run := h.runTemplate(pl, name)
	run.Method, run.Settings = string(in.Method), pl.settingsFor(in, in.Method)
	run.MethodSettings = ms // the method keeps what it reads (BatchEval: none)
	if err := h.Runner.Launch(c.Request().Context(), &run); err != nil {
		return run, nil, err
	}
	h.audit(c, models.AuditRunLaunched, runTarget(run), methods.Label(string(in.Method))+" with judge "+pl.judge.Name)
	return run, nil, nil
}

// launchAllMethods launches the standard comparison (runner.StandardSetups)
// on the form's dataset, rubric, judge and criteria, as one experiment.
// The form's BatchEval settings are the base of every BatchEval variant,
// and its method settings (n, log-probabilities, scale, steps) apply to
// the baselines. A post with the form's one-time key used before launches
// nothing (beginFormLaunch).
func (h *Handlers) launchAllMethods(c echo.Context) error {
	in, pl, err := h.readLaunchForm(c)
	if err != nil {
		return err
	}
	k, keyed, done, err := h.beginFormLaunch(c, models.LaunchKeyExperiment, pl)
	if done || err != nil {
		return err
	}
	e, runs, setups, errs, err := h.launchAllPlanned(c, in, pl)
	if keyed && errors.Is(err, models.ErrLaunchKeyTaken) && len(errs) == 0 {
		// Sent twice at once and the other post launched first (nothing
		// was made by this one, though e has the id rolled back).
		if done, err := h.replayFormLaunch(c, k, pl); done {
			return err
		}
	}
	if len(errs) > 0 {
		v := &pl.view
		v.Errors = errs
		v.Page = page(c, "New run")
		v.ErrorTitle = "No method was launched:"
		return render(c, http.StatusUnprocessableEntity, web.RunLaunchPage(*v))
	}
	if err != nil {
		if e.ID == 0 {
			if models.ErrorCode(err) == models.EConflict {
				return h.refuseLaunch(c, pl, err)
			}
			return err
		}
		setFlash(c, "error", fmt.Sprintf("Only %d of %d runs were launched: %s", len(runs), setups, models.ErrorMessage(err)))
		return c.Redirect(http.StatusSeeOther, launchedExperimentURL(e.ID))
	}
	return redirect(c, launchedExperimentURL(e.ID), fmt.Sprintf("%d runs launched, one per method and variant: they start as workers free up.", len(runs)))
}

// refuseLaunch shows the launch form again with why nothing was launched
// (e.g. the workspace's limit of runs at once).
func (h *Handlers) refuseLaunch(c echo.Context, pl *launchPlan, err error) error {
	v := pl.view
	v.Page = page(c, "New run")
	v.ErrorTitle = "Not launched:"
	v.Errors = append(v.Errors, models.ErrorMessage(err))
	return render(c, http.StatusConflict, web.RunLaunchPage(v))
}

// launchAllPlanned checks a planned launch for every method and, when
// nothing stops any of them, launches the standard comparison as one
// experiment (audited). errs lists what stops it; setups is how many runs
// were meant. On an error after the experiment was made, e and the runs
// launched so far come back with it. The form and the API both use it.
func (h *Handlers) launchAllPlanned(c echo.Context, in launchInput, pl *launchPlan) (e models.Experiment, runs []models.Run, setups int, errs []string, err error) {
	for _, m := range methodNames() {
		_, merrs := pl.checkLaunch(in, m)
		addLaunchErrors(&pl.view, merrs...)
	}
	if len(pl.view.Errors) > 0 {
		return e, nil, 0, pl.view.Errors, nil
	}
	// The base settings are those of the default method's launch; each
	// method's setups adjust them (LLM-Eval: greedy).
	def, _ := methods.Lookup("")
	list := runner.StandardSetups(pl.settingsFor(in, def.Name()), pl.methodSettings)
	name := in.Name
	if name == "" {
		name = models.ComposeName(models.MaxNameFor(models.KindExperiment), "All methods on ", models.OneLine(pl.dataset.Name), "")
	}
	e, runs, err = h.Runner.LaunchAll(c.Request().Context(), h.runTemplate(pl, ""), name, list)
	if e.ID != 0 {
		h.audit(c, models.AuditExperiment, fmt.Sprintf("experiment %d (%s)", e.ID, name), fmt.Sprintf("%d of %d runs launched with judge %s", len(runs), len(list), pl.judge.Name))
	}
	return e, runs, len(list), nil, err
}

func launchedExperimentURL(id int64) string { return "/experiments/" + strconv.FormatInt(id, 10) }

// Limits of "Generate steps now": a person waits on the page, so a call
// gets at most stepsCallTimeout and two attempts rather than a run's
// patient retries.
const (
	stepsCallTimeout  = 60 * time.Second
	stepsCallAttempts = 2
)

// generateGEvalSteps asks the chosen judge for G-Eval's evaluation steps
// of every chosen criterion whose box is empty (boxes with text are kept,
// so edits are never lost; empty a box to regenerate it), and shows the
// form again with the steps filled in for the person to edit.
func (h *Handlers) generateGEvalSteps(c echo.Context) error {
	in, pl, err := h.readLaunchForm(c)
	if err != nil {
		return err
	}
	// The button belongs to G-Eval: the re-rendered form has it chosen.
	in.Method = evaluator.MethodGEval
	v := &pl.view
	v.Page = page(c, "New run")
	v.Method = string(in.Method)
	v.ErrorTitle = "The evaluation steps were not generated:"
	addLaunchErrors(v, pl.criteriaProblems(in)...)
	if len(v.Errors) > 0 {
		return render(c, http.StatusUnprocessableEntity, web.RunLaunchPage(*v))
	}
	client, err := h.judgeClient(c.Request().Context(), *pl.judge)
	if err != nil {
		v.Errors = append(v.Errors, pl.judge.Name+": "+err.Error())
		return render(c, http.StatusBadGateway, web.RunLaunchPage(*v))
	}
	ctx := c.Request().Context()
	rub := pl.snapshot()
	var made []string
	for i := range v.Steps {
		box := &v.Steps[i]
		if !box.Chosen || box.Steps != "" {
			continue
		}
		crit := pl.rubric.Criteria[box.Index]
		steps, err := askGEvalSteps(ctx, client, rub, crit)
		if err != nil {
			v.Errors = append(v.Errors, crit.Name+": "+err.Error())
			continue
		}
		box.Steps = steps
		if pl.methodSettings.GEvalSteps == nil {
			pl.methodSettings.GEvalSteps = map[string]string{}
		}
		pl.methodSettings.GEvalSteps[crit.Name] = steps
		made = append(made, crit.Name)
	}
	v.Estimate = h.estimate(ctx, pl, in.Method, pl.settingsFor(in, in.Method))
	switch {
	case len(made) > 0:
		v.Notice = fmt.Sprintf("%s wrote the evaluation steps of %s. Read and edit them before launching.", pl.judge.Name, strings.Join(made, ", "))
	case len(v.Errors) == 0:
		v.Notice = "Every chosen criterion already has steps. Empty a box to have the judge write it again."
	}
	if len(v.Errors) > 0 {
		return render(c, http.StatusBadGateway, web.RunLaunchPage(*v))
	}
	return render(c, http.StatusOK, web.RunLaunchPage(*v))
}

// askGEvalSteps makes G-Eval's auto chain-of-thought call for one
// criterion, greedy as the runner does, and reads the numbered steps.
func askGEvalSteps(ctx context.Context, client *judge.Client, rub evaluator.Rubric, crit evaluator.Criterion) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepsCallTimeout)
	defer cancel()
	resp, err := client.Complete(ctx, judge.Request{Messages: evaluator.BuildGEvalStepsPrompt(rub, crit), Temperature: 0})
	if err != nil {
		return "", err
	}
	steps, err := evaluator.ParseGEvalSteps(resp.Text())
	if err != nil {
		return "", fmt.Errorf("the answer could not be read: %w", err)
	}
	return steps, nil
}

// judgeClient builds a client for a stored judge the way "Test
// connection" does: the simulated judge is reached at h.SimulatedURL, a
// real one with its stored key or the environment variable it names.
func (h *Handlers) judgeClient(ctx context.Context, j models.Judge) (*judge.Client, error) {
	if j.HasStoredKey() && j.APIKey == "" && j.KeyProblem == "" {
		// Judges from a list carry their key sealed; FindJudge opens it.
		found, err := h.DB.FindJudge(ctx, j.WorkspaceID, j.ID)
		if err != nil {
			return nil, err
		}
		j = found
	}
	if j.KeyProblem != "" && !j.Simulated {
		return nil, errors.New(j.KeyProblem)
	}
	cfg := judge.Config{BaseURL: j.BaseURL, Model: j.Model, APIKey: j.APIKey, KeyHeader: j.SendsKeyAs(), MaxAttempts: stepsCallAttempts,
		TokenLimit: j.SendsTokenLimitAs(), DefaultSamplingOnly: j.DefaultSamplingOnly && !j.Simulated, ReasoningEffort: j.SendsReasoningEffort(),
		Timeout: min(time.Duration(j.TimeoutSeconds)*time.Second, stepsCallTimeout), HTTPClient: h.judgeHTTPClient(j.WorkspaceID)}
	if cfg.Timeout <= 0 {
		cfg.Timeout = stepsCallTimeout
	}
	if j.Simulated {
		if h.SimulatedURL == "" {
			return nil, errors.New("the simulated judge is not running in this server process")
		}
		cfg.BaseURL, cfg.APIKey = h.SimulatedURL, ""
	} else if cfg.APIKey == "" && j.APIKeyEnv != "" {
		key, err := h.DB.KeyFromEnv(ctx, j.WorkspaceID, j.APIKeyEnv)
		if err != nil {
			return nil, err
		}
		cfg.APIKey = key
		if cfg.APIKey == "" {
			return nil, fmt.Errorf("the environment variable %s is empty or not set on the server", j.APIKeyEnv)
		}
	}
	return judge.New(cfg)
}

// runTarget names a run in the audit log.
func runTarget(r models.Run) string { return fmt.Sprintf("run %d (%s)", r.ID, r.Name) }

// methodNames lists the registered methods' names, in table order.
func methodNames() []evaluator.Method {
	var out []evaluator.Method
	for _, m := range methods.All() {
		out = append(out, m.Name())
	}
	return out
}

// methodChoices lists the methods as a request names them, each with its
// label ("batcheval for BatchEval, geval for G-Eval…"): a script sending an
// unknown name learns the names it can send.
func methodChoices() string {
	var labels []string
	for _, m := range methods.All() {
		labels = append(labels, string(m.Name())+" for "+m.Label())
	}
	if len(labels) < 2 {
		return strings.Join(labels, "")
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " or " + labels[len(labels)-1]
}

// knownMethod reports whether m names a registered method.
func knownMethod(m evaluator.Method) bool {
	_, err := methods.Lookup(string(m))
	return err == nil && m != ""
}

// launchJudgeTest is the warning beside the launch form's judge when the
// judge's last "Test connection" failed (nil otherwise). The link goes to
// the judge's page for owners, who may test it; others see the judges list.
func launchJudgeTest(j models.Judge, canManage bool) *web.LaunchJudgeTest {
	if !j.LastTestFailed() {
		return nil
	}
	link := "/judges"
	if canManage {
		link = fmt.Sprintf("/judges/%d/edit", j.ID)
	}
	return &web.LaunchJudgeTest{JudgeID: j.ID, At: *j.LastTestAt, Error: strings.TrimSuffix(j.LastTestError, "."),
		ChangedSince: j.UpdatedAt.After(*j.LastTestAt), Link: link}
}
