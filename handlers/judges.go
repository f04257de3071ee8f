package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/excerpt"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// judgeTestTimeout bounds "Test connection": long enough for a local model
// to load on its first request, short enough that nobody wonders whether
// the button works.
const judgeTestTimeout = 20 * time.Second

// maxTestErrorLength bounds the stored error of a failed "Test connection":
// the launch form shows it in a line, and the judges page has the test
// button for the whole message.
const maxTestErrorLength = 300

// Defaults of a new judge: the paper's temperature and top_p, a
// concurrency most hosted APIs accept on a basic tier, and a timeout that
// lets a slow model finish a batch of ten.
const (
	newJudgeTemperature = 0.2
	newJudgeTopP        = 0.9
	newJudgeConcurrency = 4
	newJudgeTimeout     = 120
)

// maxJudgeConcurrency caps concurrent calls to one judge: more than any
// endpoint's rate limit is likely to allow, and a bound on the goroutines
// one run can start.
const maxJudgeConcurrency = 64

// listJudges is the judges page.
func (h *Handlers) listJudges(c echo.Context) error {
	show, filter := showFilter(c)
	js, err := h.DB.ListJudges(c.Request().Context(), h.workspaceID(c), filter)
	if err != nil {
		return err
	}
	v := web.JudgesView{Page: page(c, "Judges"), Judges: js, Show: show}
	for _, p := range judge.Presets() {
		v.Presets = append(v.Presets, web.JudgePresetOption{Name: p.Name, Note: p.Note})
	}
	return render(c, http.StatusOK, web.JudgesPage(v))
}

// newJudge shows the form for a new judge, filled from a preset when
// ?preset= names one.
func (h *Handlers) newJudge(c echo.Context) error {
	f := newJudgeForm()
	v := web.JudgeFormView{Page: page(c, "New judge"), Action: "/judges"}
	if name := c.QueryParam("preset"); name != "" {
		p, ok := findPreset(name)
		if !ok {
			return models.Errorf(models.ENotFound, "there is no preset named %s", web.Quoted(name))
		}
		f.Name, f.BaseURL, f.Model, f.APIKeyEnv = p.Name, p.BaseURL, p.DefaultModel, p.KeyEnv
		if p.KeyHeader != "" {
			f.KeyHeader = string(p.KeyHeader)
		}
		v.PresetNote = p.Note
	}
	v.Form = f
	return render(c, http.StatusOK, h.judgeFormPage(c, v))
}

// newJudgeForm is a new judge's settings before anything is typed.
func newJudgeForm() web.JudgeForm {
	return web.JudgeForm{
		Temperature:    formatNumber(newJudgeTemperature),
		TopP:           formatNumber(newJudgeTopP),
		MaxConcurrency: strconv.Itoa(newJudgeConcurrency),
		TimeoutSeconds: strconv.Itoa(newJudgeTimeout),
		KeyHeader:      string(judge.KeyBearer),
		TokenLimit:     string(judge.TokenLimitMaxTokens),
	}
}

func findPreset(name string) (judge.Preset, bool) {
	for _, p := range judge.Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return judge.Preset{}, false
}

// editJudge shows a stored judge's form, without its key.
func (h *Handlers) editJudge(c echo.Context) error {
	j, err := h.findJudge(c)
	if err != nil {
		return err
	}
	f := judgeFormOf(j)
	lim, err := h.DB.FindJudgeLimits(c.Request().Context(), j.ID)
	if err != nil {
		return err
	}
	setLimitsForm(&f, lim)
	v := judgeFormView(c, j, f, "")
	v.Revision = j.Revision()
	return render(c, http.StatusOK, h.judgeFormPage(c, v))
}

// setLimitsForm shows a judge's shared limits in its form (empty: none).
func setLimitsForm(f *web.JudgeForm, l models.JudgeLimits) {
	n := func(v int) string {
		if v <= 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	f.SharedConcurrency, f.RequestsPerMinute, f.TokensPerMinute = n(l.MaxConcurrency), n(l.RequestsPerMinute), n(l.TokensPerMinute)
	f.SlowSeconds = ""
	if l.SlowMS > 0 {
		f.SlowSeconds = formatNumber(float64(l.SlowMS) / 1000)
	}
}

// judgeLimitsOf reads the shared limits typed in the form; the error
// names every limit that is not valid (judgeFormError).
func judgeLimitsOf(f web.JudgeForm) (models.JudgeLimits, error) {
	var errs []error
	whole := func(field, what, s string) int {
		if s == "" {
			return 0
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			errs = append(errs, judgeFieldErrorf(field, "%s must be a whole number, 0 or more (empty: no limit)", what))
			return 0
		}
		return v
	}
	var l models.JudgeLimits
	l.MaxConcurrency = whole("judge-shared-concurrency", "the calls at once of all runs", f.SharedConcurrency)
	l.RequestsPerMinute = whole("judge-rpm", "the requests per minute", f.RequestsPerMinute)
	l.TokensPerMinute = whole("judge-tpm", "the tokens per minute", f.TokensPerMinute)
	if f.SlowSeconds != "" {
		v, problem := typedDecimal(f.SlowSeconds, "1.5")
		switch {
		case problem != "":
			errs = append(errs, judgeFieldErrorf("judge-slow", "the slow threshold %s %s: type a number of seconds (empty: off)", web.Quoted(f.SlowSeconds), problem))
		case v < 0:
			errs = append(errs, judgeFieldErrorf("judge-slow", "the slow threshold %s must be a number of seconds, 0 or more (empty: off)", web.Quoted(f.SlowSeconds)))
		default:
			l.SlowMS = int64(v * 1000)
		}
	}
	if l.SlowMS > 0 && l.MaxConcurrency == 0 && f.SharedConcurrency == "" {
		errs = append(errs, judgeFieldErrorf("judge-slow", "%s", models.ErrSlowWithoutShared))
	}
	if len(errs) > 0 {
		return l, joinJudgeFieldErrors(errs...)
	}
	if err := models.CheckJudgeLimits(l); err != nil {
		return l, &judgeFieldError{Field: "judge-shared-concurrency", Err: err}
	}
	return l, nil
}

// judgeFieldError is an invalid value of the judge form and the id of its
// input: the form shows the message beside that input (and at the top).
type judgeFieldError struct {
	Field string
	Err   error
}

func (e *judgeFieldError) Error() string { return e.Err.Error() }

// Unwrap gives the *models.Error, so the error's code is still read.
func (e *judgeFieldError) Unwrap() error { return e.Err }

// judgeFieldErrorf is an invalid value of the judge form's input field.
func judgeFieldErrorf(field, format string, args ...any) error {
	return &judgeFieldError{Field: field, Err: models.Errorf(models.EInvalid, format, args...)}
}

// judgeFormError is every invalid value of the judge form at once, each
// with its input's id, so that the form shows them all, each beside its
// input, and not one a save.
type judgeFormError struct {
	Fields []*judgeFieldError
	// Err says them all, for the top of the form.
	Err error
}

func (e *judgeFormError) Error() string { return e.Err.Error() }

// Unwrap gives the *models.Error, so the error's code is still read.
func (e *judgeFormError) Unwrap() error { return e.Err }

// joinJudgeFieldErrors gathers the judge form's errors (nil ones are
// skipped; a judgeFormError gives its fields): nil when there are none,
// the one error when there is one, a judgeFormError otherwise. An error
// of no input (not expected) is returned alone.
func joinJudgeFieldErrors(errs ...error) error {
	var fields []*judgeFieldError
	for _, err := range errs {
		var fe *judgeFieldError
		var all *judgeFormError
		switch {
		case err == nil:
		case errors.As(err, &all):
			fields = append(fields, all.Fields...)
		case errors.As(err, &fe):
			fields = append(fields, fe)
		default:
			return err
		}
	}
	switch len(fields) {
	case 0:
		return nil
	case 1:
		return fields[0]
	}
	msgs := make([]string, len(fields))
	for i, fe := range fields {
		msgs[i] = models.ErrorMessage(fe.Err)
	}
	return &judgeFormError{Fields: fields, Err: models.Errorf(models.EInvalid, "%d values need correcting: %s", len(fields), strings.Join(msgs, "; "))}
}

// judgeFieldErrors is the form's message by input id, for every input err
// names (nil otherwise: it shows at the top only).
func judgeFieldErrors(err error) map[string]string {
	var all *judgeFormError
	var fe *judgeFieldError
	switch {
	case errors.As(err, &all):
		out := make(map[string]string, len(all.Fields))
		for _, f := range all.Fields {
			out[f.Field] = upperFirst(models.ErrorMessage(f.Err)) + "."
		}
		return out
	case errors.As(err, &fe):
		return map[string]string{fe.Field: upperFirst(models.ErrorMessage(fe.Err)) + "."}
	}
	return nil
}

func judgeFormView(c echo.Context, j models.Judge, f web.JudgeForm, msg string) web.JudgeFormView {
	return web.JudgeFormView{
		Page: page(c, "Edit "+j.Name), JudgeID: j.ID, Simulated: j.Simulated, Action: "/judges/" + strconv.FormatInt(j.ID, 10),
		Form: f, HasStoredKey: j.HasStoredKey(), Error: msg, LastTestAt: j.LastTestAt, LastTestError: j.LastTestError,
		BaseURLHoldsCredentials: j.BaseURLHoldsCredentials(),
		Manage:                  manageFor(c, models.KindJudge, j.ID, j.Name, j.ArchivedAt),
		RequestSettings:         web.JudgeRequestSettings(j),
	}
}

// judgeFormOf fills the form from a stored judge; the key stays out.
func judgeFormOf(j models.Judge) web.JudgeForm {
	f := web.JudgeForm{
		Name: j.Name, BaseURL: j.ShownBaseURL(), Model: j.Model, APIKeyEnv: j.APIKeyEnv, KeyHeader: string(j.SendsKeyAs()),
		TokenLimit: string(j.SendsTokenLimitAs()), DefaultSamplingOnly: j.DefaultSamplingOnly, ReasoningEffort: string(j.SendsReasoningEffort()),
		Temperature: formatNumber(j.Temperature), TopP: formatNumber(j.TopP),
		MaxConcurrency: strconv.Itoa(j.MaxConcurrency), TimeoutSeconds: strconv.Itoa(j.TimeoutSeconds),
	}
	if j.PriceInputPerMTok != nil {
		f.PriceInput = formatNumber(*j.PriceInputPerMTok)
	}
	if j.PriceOutputPerMTok != nil {
		f.PriceOutput = formatNumber(*j.PriceOutputPerMTok)
	}
	if j.ContextTokens != nil {
		f.ContextTokens = strconv.Itoa(*j.ContextTokens)
	}
	return f
}

// createJudge stores a new judge.
func (h *Handlers) createJudge(c echo.Context) error {
	f := judgeFormFromRequest(c)
	j := models.Judge{WorkspaceID: h.workspaceID(c), APIKey: strings.TrimSpace(c.FormValue("api_key"))}
	lim, lerr := judgeLimitsOf(f)
	err := joinJudgeFieldErrors(applyJudgeForm(&j, f), lerr)
	note := ""
	if err == nil {
		note = shortenPastedEndpoint(&j)
		err = h.DB.SaveJudgeWithLimitsIf(c.Request().Context(), &j, &lim, nil, judgeCreated(c, j.APIKey != ""))
	}
	if err != nil {
		if models.ErrorCode(err) != models.EInvalid {
			return err
		}
		v := web.JudgeFormView{Page: page(c, "New judge"), Action: "/judges", Form: f, KeyDropped: j.APIKey != "",
			Error: "Not saved: " + models.ErrorMessage(err), FieldErrors: judgeFieldErrors(err)}
		return render(c, http.StatusUnprocessableEntity, h.judgeFormPage(c, v))
	}
	return redirect(c, "/judges", strings.TrimSpace(fmt.Sprintf("Judge %s saved. %s Use “Test connection” to check it answers.", web.Quoted(j.Name), note)))
}

// updateJudge saves a judge's form. An empty key keeps the stored one. The
// simulated judge only takes a new concurrency.
func (h *Handlers) updateJudge(c echo.Context) error {
	j, err := h.findJudge(c)
	if err != nil {
		return err
	}
	f := judgeFormFromRequest(c)
	// The state the form was filled from: the save applies only over it.
	revision := c.FormValue("revision")
	if j.Simulated {
		stored := judgeFormOf(j)
		stored.MaxConcurrency = f.MaxConcurrency
		f = stored
	} else {
		j.APIKey = strings.TrimSpace(c.FormValue("api_key"))
	}
	typedKey, oldKeyEnv := j.APIKey != "", j.APIKeyEnv
	lim, lerr := judgeLimitsOf(f)
	err = joinJudgeFieldErrors(applyJudgeForm(&j, f), lerr)
	note := ""
	if err == nil {
		note = shortenPastedEndpoint(&j)
		// The limits are saved with the judge, under its revision, which
		// covers them: a limits-only change made since is not undone.
		limits := &lim
		if j.Simulated {
			limits = nil
		}
		err = h.DB.SaveJudgeWithLimitsIf(c.Request().Context(), &j, limits, expectRevision(revision), judgeUpdated(c, typedKey, oldKeyEnv))
	}
	if models.ErrorCode(err) == models.EChanged {
		return h.judgeSavedMeanwhile(c, f, typedKey)
	}
	if err != nil {
		if models.ErrorCode(err) != models.EInvalid {
			return err
		}
		v := judgeFormView(c, j, f, "Not saved: "+models.ErrorMessage(err))
		v.KeyDropped, v.FieldErrors, v.Revision = typedKey, judgeFieldErrors(err), revision
		return render(c, http.StatusUnprocessableEntity, h.judgeFormPage(c, v))
	}
	return redirect(c, "/judges", strings.TrimSpace(fmt.Sprintf("Judge %s saved. %s", web.Quoted(j.Name), note)))
}

// shortenPastedEndpoint drops the endpoint path pasted at the end of j's
// base URL (the whole .../chat/completions address, as Azure's portal and
// OpenAI's reference show it), which every call adds itself, keeping the
// query string (Azure's ?api-version=). It says so, or "" when the base
// URL had none. The form and the API save through it.
func shortenPastedEndpoint(j *models.Judge) string {
	if j.Simulated {
		return ""
	}
	short, suffix := judge.TrimEndpoint(j.BaseURL)
	if suffix == "" {
		return ""
	}
	j.BaseURL = short
	return fmt.Sprintf("The base URL ended in %s, which every call adds itself: it was shortened to %s.", suffix, judge.RedactURL(short))
}

// judgeSavedMeanwhile answers a save refused because someone saved the
// judge after the form was opened: the form again with the person's
// changes kept (a typed key must be typed again: it is never shown back),
// what the other save stored, and that state's revision, so that saving
// again overwrites it knowingly.
func (h *Handlers) judgeSavedMeanwhile(c echo.Context, f web.JudgeForm, typedKey bool) error {
	stored, err := h.findJudge(c)
	if err != nil {
		return err
	}
	saved := judgeFormOf(stored)
	lim, err := h.DB.FindJudgeLimits(c.Request().Context(), stored.ID)
	if err != nil {
		return err
	}
	setLimitsForm(&saved, lim)
	v := judgeFormView(c, stored, f, "Not saved: someone saved this judge after you opened it. Here is what they saved; your changes are kept below. Save again to overwrite their settings with yours.")
	v.Revision, v.SavedMeanwhile, v.KeyDropped = stored.Revision(), &saved, typedKey
	return render(c, http.StatusConflict, h.judgeFormPage(c, v))
}

// judgeFormFromRequest reads the posted form (the key is read separately
// so that it never lands in a value that is rendered).
func judgeFormFromRequest(c echo.Context) web.JudgeForm {
	v := func(name string) string { return strings.TrimSpace(c.FormValue(name)) }
	return web.JudgeForm{
		Name: v("name"), BaseURL: v("base_url"), Model: v("model"), APIKeyEnv: strings.TrimPrefix(v("api_key_env"), "$"), KeyHeader: v("key_header"),
		TokenLimit: v("token_limit"), DefaultSamplingOnly: v("default_sampling_only") != "", ReasoningEffort: v("reasoning_effort"),
		Temperature: v("temperature"), TopP: v("top_p"), MaxConcurrency: v("max_concurrency"), TimeoutSeconds: v("timeout_seconds"),
		PriceInput: v("price_input"), PriceOutput: v("price_output"), ContextTokens: v("context_tokens"),
		SharedConcurrency: v("shared_concurrency"), RequestsPerMinute: v("requests_per_minute"),
		TokensPerMinute: v("tokens_per_minute"), SlowSeconds: v("slow_seconds"),
	}
}

// applyJudgeForm checks the typed settings and, when every one is valid,
// copies them onto j. The error names every invalid one, in the form's
// order (judgeFormError).
func applyJudgeForm(j *models.Judge, f web.JudgeForm) error {
	var errs []error
	if !j.Simulated {
		// Said beside their fields; saving checks them again for the API.
		if f.Name == "" {
			errs = append(errs, judgeFieldErrorf("judge-name", "the judge needs a name"))
		}
		switch {
		case f.BaseURL == "":
			errs = append(errs, judgeFieldErrorf("judge-base-url", "the judge needs a base URL (e.g. https://api.openai.com/v1)"))
		default:
			if err := models.CheckJudgeBaseURL(f.BaseURL); err != nil {
				errs = append(errs, &judgeFieldError{Field: "judge-base-url", Err: err})
			} else if err := models.CheckBaseURLCredentials(f.BaseURL); err != nil {
				errs = append(errs, &judgeFieldError{Field: "judge-base-url", Err: err})
			}
		}
		if f.Model == "" {
			errs = append(errs, judgeFieldErrorf("judge-model", "the judge needs a model name (for Azure, the deployment name)"))
		}
	}
	keyHeader, err := judge.ParseKeyHeader(f.KeyHeader)
	if err != nil {
		errs = append(errs, &judgeFieldError{Field: "judge-key-header", Err: models.Errorf(models.EInvalid, "%s", err.Error())})
	}
	tokenLimit, err := judge.ParseTokenLimit(f.TokenLimit)
	if err != nil {
		errs = append(errs, &judgeFieldError{Field: "judge-token-limit", Err: models.Errorf(models.EInvalid, "%s", err.Error())})
	}
	effort, err := judge.ParseReasoningEffort(f.ReasoningEffort)
	if err != nil {
		errs = append(errs, &judgeFieldError{Field: "judge-reasoning-effort", Err: models.Errorf(models.EInvalid, "%s", err.Error())})
	}
	// A decimal comma ("0,2") is read as the other forms read it
	// (typedDecimal); typedDecimal refuses NaN and infinity.
	temp, problem := typedDecimal(f.Temperature, "0.2")
	switch {
	case problem != "":
		errs = append(errs, judgeFieldErrorf("judge-temperature", "the temperature %s %s: type a number from 0 to 2", web.Quoted(f.Temperature), problem))
	case temp < 0 || temp > 2:
		errs = append(errs, judgeFieldErrorf("judge-temperature", "the temperature must be a number from 0 to 2 (e.g. 0.2)"))
	}
	topP, problem := typedDecimal(f.TopP, "0.9")
	switch {
	case problem != "":
		errs = append(errs, judgeFieldErrorf("judge-top-p", "top p %s %s: type a number above 0 and at most 1", web.Quoted(f.TopP), problem))
	case topP <= 0 || topP > 1:
		errs = append(errs, judgeFieldErrorf("judge-top-p", "top p must be a number above 0 and at most 1 (e.g. 0.9)"))
	}
	timeout, err := strconv.Atoi(f.TimeoutSeconds)
	if err != nil || timeout < 1 {
		errs = append(errs, judgeFieldErrorf("judge-timeout", "the timeout must be a whole number of seconds, at least 1"))
	}
	var window *int
	if f.ContextTokens != "" {
		cw, err := strconv.Atoi(f.ContextTokens)
		if err != nil || cw < 1 {
			errs = append(errs, judgeFieldErrorf("judge-context", "the context window %s is not a whole number of tokens (e.g. 8192); leave it empty if you do not know it", web.Quoted(f.ContextTokens)))
		}
		window = &cw
	}
	in, err := parsePrice("input", "judge-price-in", f.PriceInput)
	errs = append(errs, err)
	out, err := parsePrice("output", "judge-price-out", f.PriceOutput)
	errs = append(errs, err)
	conc, err := strconv.Atoi(f.MaxConcurrency)
	if err != nil || conc < 1 || conc > maxJudgeConcurrency {
		errs = append(errs, judgeFieldErrorf("judge-concurrency", "the maximum concurrent calls must be a whole number from 1 to %d", maxJudgeConcurrency))
	}
	if err := joinJudgeFieldErrors(errs...); err != nil {
		return err
	}
	j.Name, j.BaseURL, j.Model, j.APIKeyEnv, j.KeyHeader = f.Name, f.BaseURL, f.Model, f.APIKeyEnv, string(keyHeader)
	j.TokenLimit, j.DefaultSamplingOnly, j.ReasoningEffort = string(tokenLimit), f.DefaultSamplingOnly, string(effort)
	j.Temperature, j.TopP, j.MaxConcurrency, j.TimeoutSeconds = temp, topP, conc, timeout
	j.PriceInputPerMTok, j.PriceOutputPerMTok = in, out
	j.ContextTokens = window
	return nil
}

// parsePrice reads a price; empty means unknown (nil), never 0. field is
// its input's id.
func parsePrice(which, field, s string) (*float64, error) {
	if s == "" {
		return nil, nil
	}
	// A decimal comma ("0,15") is read as the other forms read it.
	v, problem := typedDecimal(strings.TrimPrefix(s, "$"), "0.15")
	switch {
	case problem != "":
		return nil, judgeFieldErrorf(field, "the %s price %s %s; leave it empty if you do not know it", which, web.Quoted(s), strings.Replace(problem, "is not a number", "is not a number of dollars", 1))
	case v < 0:
		return nil, judgeFieldErrorf(field, "the %s price %s is not a number of dollars 0 or more (e.g. 0.15); leave it empty if you do not know it", which, web.Quoted(s))
	}
	return &v, nil
}

// testJudge sends the judge one small scoring request and reports how it
// went: a fragment for scripts (X-Requested-With: fetch), otherwise a flash
// on the judges page.
func (h *Handlers) testJudge(c echo.Context) error {
	j, err := h.findJudge(c)
	if err != nil {
		return err
	}
	res := h.checkJudge(c.Request().Context(), j, auditOf(c, func(j models.Judge) models.AuditNote {
		return models.AuditNote{Action: models.AuditJudgeUpdated, Target: judgeTarget(j), Detail: judgeTestedDetail(j)}
	}))
	// The launch form warns when the chosen judge's last test failed, or
	// answered with no score the product could read.
	errText := ""
	switch {
	case !res.OK:
		errText = testErrorLine(res.Error, res.Hint)
	case res.ScoreProblem != "":
		errText = excerpt.Line(res.ScoreProblem, maxTestErrorLength)
	}
	if err := h.DB.RecordJudgeTest(c.Request().Context(), j.WorkspaceID, j.ID, time.Now(), errText); err != nil {
		return err
	}
	if c.Request().Header.Get("X-Requested-With") == "fetch" {
		return renderFragment(c, web.JudgeTestFragment(res))
	}
	// What the test found the endpoint refuses, and saved, ends each
	// message (the fragment shows it apart).
	adapted := ""
	if res.Adapted != "" {
		adapted = " " + res.Adapted
	}
	if !res.OK {
		setFlash(c, "error", fmt.Sprintf("%s did not answer: %s%s", j.Name, res.Error, adapted))
		return c.Redirect(http.StatusSeeOther, "/judges")
	}
	if res.ScoreProblem != "" {
		msg := fmt.Sprintf("%s %s", j.Name, res.ScoreProblem)
		if adapted != "" {
			msg += "." + adapted
		}
		setFlash(c, "warning", msg)
		return c.Redirect(http.StatusSeeOther, "/judges")
	}
	msg := fmt.Sprintf("%s answered in %d ms with a score the product can read (%s on %s).%s", j.Name, res.LatencyMS, res.Score, res.Scale, adapted)
	if res.ContextHint != "" {
		msg += " " + res.ContextHint
	}
	// The answer is shown under the message as the judge wrote it, line
	// breaks kept (explore43: written as one Go-quoted string, it showed
	// \n and \" for its line breaks and quotes).
	msg += " " + web.JudgeReplyLabel(res)
	setFlashDetail(c, "ok", msg, res.Reply)
	return c.Redirect(http.StatusSeeOther, "/judges")
}

// testErrorLine is a failed test's error as kept with the judge: one line
// of at most maxTestErrorLength characters. A hint that ends it (hint, the
// closest model name or the base URL to write) is what the launch form's
// warning most needs, so the endpoint's own text before it is shortened
// and the hint kept whole; only a hint too long to leave room for the
// start of the error is cut too.
func testErrorLine(msg, hint string) string {
	line := excerpt.Line(msg, maxTestErrorLength)
	hint = strings.Join(strings.Fields(hint), " ")
	if hint == "" || line == strings.Join(strings.Fields(msg), " ") {
		return line
	}
	head := strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(msg, hint)), ".")
	// The start of the error ("the endpoint answered 404 Not Found ...")
	// keeps at least this many characters beside a long hint.
	const minHead = 100
	room := max(maxTestErrorLength-utf8.RuneCountInString(hint)-2, minHead)
	head = excerpt.Line(head, room)
	sep := ". "
	if strings.HasSuffix(head, excerpt.Ellipsis) {
		sep = " " // "... access tiers in the… The endpoint's model list ..."
	}
	return excerpt.Line(head+sep+hint, maxTestErrorLength)
}

// maxTestReplyShown bounds the judge's answer Test connection shows: far
// more than the test's few tokens (evaluator.ScoreCheckMaxTokens) write,
// so only an endpoint that ignores the limit is cut, and small enough that
// the message and the answer fit the flash cookie (4 KB) in any script.
const maxTestReplyShown = 400

// maxTestAnswerExcerpt bounds the judge's answer quoted when no score could
// be read from it: enough to recognise a greeting or a refusal, short
// enough for the launch form's one-line warning.
const maxTestAnswerExcerpt = 100

// checkJudge sends the judge's score check (judge.Client.ScoreCheck) with
// its stored settings and reads the score from the answer as a run would.
// Settings the test finds the endpoint needs are saved with audit's entry
// (adaptToRefusals).
func (h *Handlers) checkJudge(ctx context.Context, j models.Judge, audit models.Audit[models.Judge]) web.JudgeTestResult {
	res := web.JudgeTestResult{JudgeName: j.Name}
	cfg := judge.Config{BaseURL: j.BaseURL, Model: j.Model, APIKey: j.APIKey, KeyHeader: j.SendsKeyAs(),
		TokenLimit: j.SendsTokenLimitAs(), DefaultSamplingOnly: j.DefaultSamplingOnly, ReasoningEffort: j.SendsReasoningEffort(),
		Timeout: min(time.Duration(j.TimeoutSeconds)*time.Second, judgeTestTimeout)}
	if j.Simulated {
		if h.SimulatedURL == "" {
			res.Error = "the simulated judge is not running in this server process"
			return res
		}
		cfg.BaseURL, cfg.APIKey = h.SimulatedURL, ""
	} else if j.KeyProblem != "" {
		res.Error = j.KeyProblem + ": enter the key again"
		return res
	} else if cfg.APIKey == "" && j.APIKeyEnv != "" {
		key, err := h.DB.KeyFromEnv(ctx, j.WorkspaceID, j.APIKeyEnv)
		if err != nil {
			res.Error = models.ErrorMessage(err)
			return res
		}
		cfg.APIKey = key
		if cfg.APIKey == "" {
			res.Error = fmt.Sprintf("the environment variable %s is empty or not set on the server", j.APIKeyEnv)
			return res
		}
	}
	// The workspace's own network permission, checked at every
	// connection (netpolicy.go); the hints below reuse cfg and so it.
	hc := h.judgeHTTPClient(j.WorkspaceID)
	defer hc.CloseIdleConnections()
	cfg.HTTPClient = hc
	client, err := judge.New(cfg)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, judgeTestTimeout)
	defer cancel()
	resp, err := client.ScoreCheck(ctx)
	if !j.Simulated {
		client, resp, err = h.adaptToRefusals(ctx, j, &cfg, client, resp, err, &res, audit)
	}
	if err != nil {
		res.Error = err.Error()
		// An Azure per-deployment address's slips: the client says them
		// with the error, as a run's failure does.
		var hint string
		var je *judge.Error
		if errors.As(err, &je) {
			hint = je.Hint
		}
		if hint == "" {
			hint = baseURLHint(ctx, cfg, err)
		}
		if hint == "" {
			hint = modelNameHint(ctx, client, cfg, err)
		}
		if hint != "" {
			res.Error, res.Hint = strings.TrimSuffix(res.Error, ".")+". "+hint, hint
		}
		return res
	}
	res.OK, res.LatencyMS, res.Model = true, resp.Latency.Milliseconds(), resp.Model
	// The answer is quoted, and kept with the judge when it holds no score:
	// an endpoint that echoes the key back, or a part of it, must not show
	// it (judge.RedactKey).
	answer := judge.RedactKey(strings.TrimSpace(resp.Text()), cfg.APIKey)
	res.Reply, res.ReplyLength = excerpt.Cut(answer, maxTestReplyShown), utf8.RuneCountInString(answer)
	c := evaluator.ScoreCheckCriterion
	res.Scale = fmt.Sprintf("%s, %s to %s", c.Name, formatNumber(c.Lo), formatNumber(c.Hi))
	if score, ok := evaluator.ReadScoreCheck(resp.Text()); ok {
		res.Score = formatNumber(score)
	} else {
		res.ScoreProblem = scoreProblem(answer, resp)
	}
	if !j.Simulated {
		res.ContextHint = h.contextHint(ctx, client, j)
	}
	return res
}

// adaptToRefusals answers a score check the endpoint refused for a
// parameter the judge's settings decide (a reasoning model refusing
// max_tokens, or a temperature other than the default): it asks again
// with the setting that model takes, at most once for each of the two, and
// when the endpoint then answers it saves the settings on the judge
// (RecordJudgeRequestSettings), so that every later call, a run's too,
// is sent that way from the start and none is refused. res.Adapted says
// what was found and saved (or, when the endpoint still failed, that
// nothing was). It returns the client and the outcome of the last call.
func (h *Handlers) adaptToRefusals(ctx context.Context, j models.Judge, cfg *judge.Config, client *judge.Client, resp judge.Response, err error, res *web.JudgeTestResult, audit models.Audit[models.Judge]) (*judge.Client, judge.Response, error) {
	var found []string
	// Each of the two refusals is answered once: two asks more at most.
	for range 2 {
		refused := judge.UnsupportedOf(err)
		switch {
		case refused == judge.UnsupportedMaxTokens && cfg.TokenLimit != judge.TokenLimitMaxCompletionTokens:
			cfg.TokenLimit = judge.TokenLimitMaxCompletionTokens
			found = append(found, "refuses max_tokens (it takes max_completion_tokens)")
		case refused == judge.UnsupportedSampling && !cfg.DefaultSamplingOnly:
			cfg.DefaultSamplingOnly = true
			found = append(found, "refuses any temperature or top p but the default")
		default:
			// No refusal, or one the settings already answer: asking
			// again would be refused the same way.
			return h.savedAdaptation(ctx, j, *cfg, found, client, resp, err, res, audit)
		}
		next, nerr := judge.New(*cfg)
		if nerr != nil {
			break
		}
		client = next
		resp, err = client.ScoreCheck(ctx)
	}
	return h.savedAdaptation(ctx, j, *cfg, found, client, resp, err, res, audit)
}

// savedAdaptation saves the settings adaptToRefusals found when the
// endpoint answered with them, and says so in res.Adapted.
func (h *Handlers) savedAdaptation(ctx context.Context, j models.Judge, cfg judge.Config, found []string, client *judge.Client, resp judge.Response, err error, res *web.JudgeTestResult, audit models.Audit[models.Judge]) (*judge.Client, judge.Response, error) {
	if len(found) == 0 {
		return client, resp, err
	}
	what := "The model " + strings.Join(found, " and ") + ", as OpenAI's reasoning models (o1, o3, o4-mini, gpt-5) do"
	if err != nil {
		res.Adapted = what + ", but the test failed even when asked that way, so the judge's settings were not changed."
		return client, resp, err
	}
	if rerr := h.DB.RecordJudgeRequestSettings(ctx, j, cfg.TokenLimit, cfg.DefaultSamplingOnly, audit); rerr != nil {
		res.Adapted = what + ": the judge's settings could not be saved (" + models.ErrorMessage(rerr) + ")."
		return client, resp, err
	}
	saved := []string{}
	if cfg.TokenLimit != j.SendsTokenLimitAs() {
		saved = append(saved, "“Token limit sent as” is now "+string(cfg.TokenLimit))
	}
	if cfg.DefaultSamplingOnly != j.DefaultSamplingOnly {
		saved = append(saved, "“Takes only the default temperature and top p” is now ticked: its runs launch with temperature 1 and top p 1")
	}
	res.Adapted = what + ". Saved on the judge: " + strings.Join(saved, "; ") + "."
	return client, resp, err
}

// scoreProblem says that the judge answered the score check with no score
// the product could read, quoting the start of its answer (one line, in
// quotes, control characters escaped), and what that means for a run.
func scoreProblem(answer string, resp judge.Response) string {
	quoted := web.Quoted(excerpt.Line(answer, maxTestAnswerExcerpt))
	cut := ""
	if len(resp.Choices) > 0 && resp.Choices[0].FinishReason == "length" {
		cut = fmt.Sprintf(" (cut off at the test's limit of %d tokens)", evaluator.ScoreCheckMaxTokens)
	}
	return web.JudgeAnsweredWithoutScore + " from its answer: " + quoted + cut +
		". A run would get no scores from answers like this: check the model name, and that the model follows format instructions"
}

// contextHint reads the judge model's context window from the endpoint's
// model list and says so when the judge has none set, or another one:
// with it, the launch form checks that a run's prompts fit. The list is
// optional (OpenAI and Ollama state no window): no figure, no hint. An
// endpoint without a model list (an Azure OpenAI deployment's address,
// which is not asked, or one answering 404) is said to have none, and
// nothing is logged: it is not a failure.
func (h *Handlers) contextHint(ctx context.Context, client *judge.Client, j models.Judge) string {
	tokens, found, err := client.ContextWindow(ctx)
	if errors.Is(err, judge.ErrNoModelList) {
		what, where := "This endpoint does not list its models (it answered 404 for the list)", "the server's or the model's documentation"
		if !client.ListsModels() {
			what, where = "An Azure OpenAI deployment's address has no model list", "Azure's documentation of the model"
		}
		if j.ContextTokens == nil {
			return what + ", so Test connection cannot read the model's context window: enter it under Context window on the judge's page (" + where + " states it), and launches will check that prompts fit."
		}
		return what + ", so Test connection cannot check the Context window set on this judge (" + web.Count(*j.ContextTokens) + " tokens) against the endpoint."
	}
	if err != nil {
		h.Log.Debug("read the judge's model list", "judge", j.ID, "err", err)
	}
	switch {
	case !found && j.ContextTokens == nil && client.IsOllama(ctx):
		return ollamaContextHint
	case !found:
		return ""
	case j.ContextTokens == nil:
		return fmt.Sprintf("The endpoint states a context window of %s tokens for %s: enter it under Context window on the judge's page, and launches will check that prompts fit.",
			web.Count(tokens), j.Model)
	case *j.ContextTokens != tokens:
		return fmt.Sprintf("The endpoint states a context window of %s tokens for %s, not the %s set on this judge: correct the judge's Context window.",
			web.Count(tokens), j.Model, web.Count(*j.ContextTokens))
	}
	return ""
}

// ollamaContextHint is Test connection's word on an Ollama judge with no
// context window set: Ollama cuts an over-long prompt without an error,
// so a batch longer than its context is scored unread, and its model list
// states no window for the product to check against.
const ollamaContextHint = "This is an Ollama server: it cuts a prompt longer than the model's context length without an error, and the judge then scores text it never read, and its model list does not state that length. Enter it under Context window on the judge's page (ollama show MODEL prints the model's; the server uses a few thousand tokens unless OLLAMA_CONTEXT_LENGTH sets more), and launches will check that prompts fit."

// findJudge loads the judge named by :id.
func (h *Handlers) findJudge(c echo.Context) (models.Judge, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.Judge{}, err
	}
	return h.DB.FindJudge(c.Request().Context(), h.workspaceID(c), id)
}

// formatNumber writes a setting in its shortest form (0.2, not 0.200000).
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// judgeTarget names a judge in the audit log.
func judgeTarget(j models.Judge) string { return fmt.Sprintf("judge %d (%s)", j.ID, j.Name) }

// judgeCreated is the audit entry of a new judge, written with it;
// typedKey says a key was typed into the form.
func judgeCreated(c echo.Context, typedKey bool) models.Audit[models.Judge] {
	return auditOf(c, func(j models.Judge) models.AuditNote {
		return models.AuditNote{Action: models.AuditJudgeCreated, Target: judgeTarget(j), Detail: keyAuditDetail(typedKey, "", j.APIKeyEnv)}
	})
}

// judgeUpdated is the audit entry of a judge's settings saved, written
// with them: a key change (a key typed, or another key variable than
// oldKeyEnv) is named as one.
func judgeUpdated(c echo.Context, typedKey bool, oldKeyEnv string) models.Audit[models.Judge] {
	return auditOf(c, func(j models.Judge) models.AuditNote {
		if typedKey || oldKeyEnv != j.APIKeyEnv {
			return models.AuditNote{Action: models.AuditKeyChanged, Target: judgeTarget(j), Detail: keyAuditDetail(typedKey, oldKeyEnv, j.APIKeyEnv)}
		}
		return models.AuditNote{Action: models.AuditJudgeUpdated, Target: judgeTarget(j)}
	})
}

// judgeTestedDetail is the audit detail of the request settings Test
// connection found a judge's endpoint needs and saved.
func judgeTestedDetail(j models.Judge) string {
	d := "Test connection saved: token limit sent as " + string(j.SendsTokenLimitAs())
	if j.DefaultSamplingOnly {
		d += "; takes only the default temperature and top p"
	}
	return d
}

// keyAuditDetail says what happened to a judge's key, never the key.
func keyAuditDetail(typedKey bool, oldEnv, newEnv string) string {
	var parts []string
	if typedKey {
		parts = append(parts, "stored key replaced")
	}
	if oldEnv != newEnv {
		parts = append(parts, fmt.Sprintf("key variable %q → %q", oldEnv, newEnv))
	}
	return strings.Join(parts, "; ")
}

// baseURLHint names the fix when a test call answered 404 for the two
// usual slips in a base URL: the whole endpoint pasted (…/chat/completions,
// which every call adds itself), and /v1 left off, which it checks by one
// more tiny request to the base URL with /v1 added. The base URL's query
// string (Azure's ?api-version=) stays in the address it suggests. ""
// otherwise.
func baseURLHint(ctx context.Context, cfg judge.Config, err error) string {
	var je *judge.Error
	if !errors.As(err, &je) || je.Kind != judge.KindNotFound {
		return ""
	}
	u, perr := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if perr != nil {
		return ""
	}
	withPath := func(p string) string {
		v := *u
		v.Path, v.RawPath = p, ""
		return v.String()
	}
	path := strings.TrimRight(u.Path, "/")
	if suffix := judge.EndpointSuffix(path); suffix != "" {
		return fmt.Sprintf("The base URL ends in %s, which is added to it for every call: set the base URL to %s", suffix, judge.RedactURL(withPath(path[:len(path)-len(suffix)])))
	}
	// An Azure deployment's address has no /v1 to add.
	if strings.HasSuffix(path, "/v1") || strings.Contains(path, "/deployments/") {
		return ""
	}
	cfg.BaseURL = withPath(path + "/v1")
	client, cerr := judge.New(cfg)
	if cerr != nil {
		return ""
	}
	if _, perr := client.Ping(ctx); perr != nil {
		return ""
	}
	return fmt.Sprintf("%s answers: set the base URL to that (add /v1)", judge.RedactURL(cfg.BaseURL))
}

// maxModelsNamed is how many of the endpoint's models a 404's hint lists
// when none is close to the judge's model: a local server's few, not a
// router's hundreds.
const maxModelsNamed = 5

// modelNameHint names the model a test call's 404 most likely meant, from
// the endpoint's model list: "did you mean "gpt-4o-mini"?" for the judge's
// "gpt-4o-mnii" (judge.ClosestModels), the list itself when it is short
// and nothing is close, or that the model is listed (the address is then
// what to check). Without a list to read it says nothing, and it never
// names a model the list does not hold. Listed names are the endpoint's
// text: quoted, on one line and cut short.
func modelNameHint(ctx context.Context, client *judge.Client, cfg judge.Config, err error) string {
	var je *judge.Error
	if !errors.As(err, &je) || je.Kind != judge.KindNotFound {
		return ""
	}
	names, lerr := client.ModelNames(ctx)
	if cfg.APIKey != "" {
		// An endpoint that echoes the key back must not show it.
		names = slices.DeleteFunc(names, func(n string) bool { return strings.Contains(n, cfg.APIKey) })
	}
	if lerr != nil || len(names) == 0 {
		return ""
	}
	model := cfg.Model
	quote := func(ns []string) string {
		q := make([]string, len(ns))
		for i, n := range ns {
			q[i] = web.Quoted(excerpt.Line(n, 80))
		}
		if len(q) < 2 {
			return strings.Join(q, "")
		}
		return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	}
	if slices.Contains(names, model) {
		return fmt.Sprintf("The endpoint's model list has %s, so the model name is right: check the base URL", web.Quoted(excerpt.Line(model, 80)))
	}
	if near := judge.ClosestModels(model, names); len(near) > 0 {
		return fmt.Sprintf("The endpoint's model list has no model named %s: did you mean %s? Correct the model on the judge's page", web.Quoted(excerpt.Line(model, 80)), quote(near))
	}
	if len(names) <= maxModelsNamed {
		return fmt.Sprintf("The endpoint's model list has no model named %s; it lists %s", web.Quoted(excerpt.Line(model, 80)), quote(names))
	}
	return fmt.Sprintf("The endpoint's model list has no model named %s, nor one close to it (it lists %d models)", web.Quoted(excerpt.Line(model, 80)), len(names))
}

// showJudge answers a judge's bare address (the id /metrics labels it by)
// with its page, the editor, once the judge is found in the workspace.
func (h *Handlers) showJudge(c echo.Context) error {
	j, err := h.findJudge(c)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/judges/"+strconv.FormatInt(j.ID, 10)+"/edit")
}
