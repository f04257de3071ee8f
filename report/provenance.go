package report

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
)

// version is the product version, stamped at build time:
//
//	go build -ldflags "-X github.com/batcheval/batcheval/report.version=v1.2.0" ./cmd/batcheval
//
// (the Makefile's build target does it from `git describe`). Empty means
// "not stamped": ProductVersion then falls back to the build information.
var version string

// ProductVersion names the build that produced a report: the stamped
// version; else the module version or VCS revision Go recorded in the
// binary; else "dev" (tests and `go run`).
func ProductVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	// Twelve hex digits identify a commit in any repository of this size.
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		return "dev+" + rev + "-dirty"
	}
	return "dev+" + rev
}

// Provenance is what produced a report: enough to run it again and get the
// same figures, given the same dataset and judge answers.
type Provenance struct {
	ProductVersion string
	Method         evaluator.Method
	MethodLabel    string
	Settings       evaluator.Settings
	// MethodSettings are the baselines' own settings; nil for BatchEval,
	// which has none beyond Settings.
	MethodSettings *evaluator.MethodSettings
	// Unread are the launch settings the method does not read (a G-Eval
	// run's batch size and rounds): Settings holds them, the report does
	// not state them. Nil for a method this version does not know.
	Unread     []methods.Setting
	JudgeModel string
	// SimulatedJudge is true when the built-in simulated judge, not a
	// language model, gave the scores.
	SimulatedJudge bool
	// PromptTemplateVersion is the version of the method's prompt
	// templates stored with the run when it was launched: the wording that
	// built its prompts, whatever the code's version is now. "" when the
	// run was stored before versions were recorded (PromptVersionText).
	PromptTemplateVersion string
	// PromptVersions are the versions later executions built the run's
	// prompts with (models.Run.PromptVersions): a run resumed after an
	// upgrade that changed its method's wording used several, and
	// PromptVersionText says which held when.
	PromptVersions []models.PromptVersionSpan
	// HumanColumns are the dataset columns each criterion was compared
	// with, in rubric order: only those the report read a rating from.
	HumanColumns []HumanColumns
	// HumanUse says whether those were the imported ratings, the browser
	// ratings or both (humansource.go).
	HumanUse HumanUse
	// Seed seeds batch composition and the judge requests (round r sends
	// Seed + r; the simulated judge's noise follows it).
	Seed int64
	// Variant is how a derived run differs from its parent ("" when not derived).
	Variant string
	// RubricVersion is the version of the stored rubric the run used; nil
	// when none was recorded. Examples counts the labelled examples its
	// criteria showed the judge in every prompt.
	RubricVersion *int
	Examples      int
}

// RubricText says which rubric version the run used and how many
// labelled examples its prompts carried.
func (p Provenance) RubricText() string {
	v := "version not recorded"
	if p.RubricVersion != nil {
		v = fmt.Sprintf("version %d", *p.RubricVersion)
	}
	switch p.Examples {
	case 0:
		return v + ", no labelled examples"
	case 1:
		return v + ", 1 labelled example in the prompt"
	}
	return fmt.Sprintf("%s, %d labelled examples in the prompts", v, p.Examples)
}

// PromptVersionNotRecorded is what the reports say of a run stored before
// its prompt template version was recorded.
const PromptVersionNotRecorded = "not recorded"

// PromptVersionText is the run's prompt template version, or "not
// recorded" for a run stored before versions were kept: its version
// cannot be told from the code's (which may have changed since) nor from
// its date (versions can change within a day). A run whose later
// executions built their prompts with another version (resumed or
// continued after an upgrade) says each version and when it held:
// "mixed: A for the answers stored before T1, B from T1 on", a batch
// being built by the execution that sent it.
func (p Provenance) PromptVersionText() string {
	name := func(v string) string {
		if v == "" {
			return PromptVersionNotRecorded
		}
		return v
	}
	if len(p.PromptVersions) == 0 {
		return name(p.PromptTemplateVersion)
	}
	at := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
	var b strings.Builder
	b.WriteString("mixed: ")
	b.WriteString(name(p.PromptTemplateVersion))
	b.WriteString(" (launch) for the answers stored before ")
	b.WriteString(at(p.PromptVersions[0].Since))
	for i, s := range p.PromptVersions {
		b.WriteString(", ")
		b.WriteString(name(s.Version))
		b.WriteString(" from ")
		b.WriteString(at(s.Since))
		if i+1 < len(p.PromptVersions) {
			b.WriteString(" to ")
			b.WriteString(at(p.PromptVersions[i+1].Since))
		} else {
			b.WriteString(" on")
		}
	}
	b.WriteString(" (the run was resumed after an upgrade changed its method's prompt wording)")
	return b.String()
}

// HumanColumns are the human-rating columns of one criterion.
type HumanColumns struct {
	Criterion string
	// HumanColumn is the column the criterion's scores were compared with;
	// "" when the report read no human rating for it.
	HumanColumn string
	// NamedUnread is, under the imported source, the column the rubric
	// names for the criterion when the report read no rating from it (the
	// dataset lacks it, or it holds none for the run's samples); ""
	// otherwise.
	NamedUnread string
	// AnnotatorColumns are the per-annotator columns behind the human
	// ceiling; nil when there is no ceiling.
	AnnotatorColumns []string
	// MeanOf are the annotator columns whose mean per sample the scores
	// were compared with, for a criterion with annotator columns and no
	// human column (HumanColumn is then models.AnnotatorMeanKey of them,
	// "mean of a1, a2, a3"); nil otherwise.
	MeanOf []string
}

// Provenance returns what produced the report.
func (r *Report) Provenance() Provenance {
	run := r.Run
	m := evaluator.Method(run.Method)
	// The method states whether it has method settings; a method this
	// version does not know has none. The prompt version is the run's own,
	// never the code's: a run launched before a prompt change was built
	// the old way.
	readsMS := true
	var unread []methods.Setting
	if method, err := methods.Lookup(run.Method); err == nil {
		m, readsMS = method.Name(), methods.MethodSettingsRead(method)
		unread = methods.Unread(method, methods.Run{Settings: run.Settings, MethodSettings: run.MethodSettings, Rubric: run.RubricSnapshot})
	}
	p := Provenance{ProductVersion: ProductVersion(), Method: m, MethodLabel: methods.Label(string(m)), Settings: run.Settings,
		Unread: unread, JudgeModel: run.JudgeSnapshot.Model, SimulatedJudge: r.Simulated, PromptTemplateVersion: run.PromptTemplateVersion, PromptVersions: run.PromptVersions,
		Seed: run.Settings.Seed, Variant: run.Variant, RubricVersion: run.RubricVersion, HumanUse: r.Humans}
	for _, c := range run.RubricSnapshot.Criteria {
		p.Examples += len(c.Examples)
	}
	if readsMS {
		ms := run.MethodSettings
		p.MethodSettings = &ms
	}
	for _, c := range r.Criteria {
		h := HumanColumns{Criterion: c.Criterion.Name, AnnotatorColumns: c.AnnotatorColumns}
		// What was used, as the page says it: a column the rubric names
		// but no rating was read from compared nothing.
		// Under browser ratings the criterion's key is the column's or,
		// without one, the criterion's name: only under the imported
		// source is it the rubric's column as named.
		switch {
		case c.HasHuman:
			h.HumanColumn = c.Criterion.HumanColumn
			// The computed mean's key, which a real rating column
			// named like it does not take (models.AnnotatorMeanKeyAmong).
			if cols := c.Criterion.AnnotatorColumns; models.IsAnnotatorMeanKey(h.HumanColumn, cols, r.Dataset.RatingColumns) {
				h.MeanOf = cols
			}
		case r.Humans.Source == "" || r.Humans.Source == models.HumansImported:
			h.NamedUnread = c.Criterion.HumanColumn
		}
		p.HumanColumns = append(p.HumanColumns, h)
	}
	return p
}

// SettingsText lists the settings the method reads as "name=value" pairs
// in their JSON names, the method settings after the shared ones; G-Eval's
// evaluation steps are long texts and left to the JSON export. Method
// settings a method records when it runs (G-Eval's min_allowed_mass,
// CloserLook's top_p) are left out when empty: another method's. A
// spending cap is stated when the run has one ("spend_cap_usd=2.5"), and
// re-sent slow calls when the run asked for them ("hedge_slow_calls=true"):
// runs without them read as before.
func (p Provenance) SettingsText() string {
	parts := slices.DeleteFunc(fieldPairs(p.Settings, p.Unread, false), func(s string) bool { return s == "hedge_slow_calls=false" })
	if c := p.Settings.SpendCapUSD; c != nil {
		parts = append(parts, "spend_cap_usd="+strconv.FormatFloat(*c, 'f', -1, 64))
	}
	if p.MethodSettings != nil {
		parts = append(parts, fieldPairs(*p.MethodSettings, p.Unread, true)...)
		// A share behind a pointer (fieldPairs leaves pointers out): stated
		// when the run stored one; older runs read as before.
		if v := p.MethodSettings.MinReadableShare; v != nil && !slices.Contains(p.Unread, methods.SettingMinReadableShare) {
			parts = append(parts, "min_readable_share="+strconv.FormatFloat(*v, 'g', -1, 64))
		}
	}
	return strings.Join(parts, "; ")
}

// AnswerUncapped reports whether the settings line shows max_tokens=0, a
// value a reader takes for "no answer at all": it means the run set no
// cap on the judge's answers and the endpoint's own limit applied. The
// page says so under the line; the exports keep the JSON name and value.
func (p Provenance) AnswerUncapped() bool {
	return p.Settings.MaxTokens == 0 && !slices.Contains(p.Unread, methods.SettingMaxTokens)
}

// HumanColumnsText lists each criterion's human-rating column and its
// annotators' columns, e.g. "Coherent=scores.Coherent (annotators a1, a2)";
// "none" for a criterion compared with no rating, saying which column the
// rubric named when no rating was read from it.
// NoneWhy says why the criterion was compared with no human-rating
// column ("" when it was): the column the rubric names gave no rating (the
// dataset lacks it, or it holds none for the run's samples), or no rating
// was read for it at all. For a criterion compared with its annotators'
// mean (MeanOf) it says how that rating was made.
func (h HumanColumns) NoneWhy() string {
	if len(h.MeanOf) > 0 {
		return "the rubric names no human column, so each sample's human rating is the mean of its readable ratings in " +
			strings.Join(h.MeanOf, ", ") + "; a sample none of them rated is missing"
	}
	switch {
	case h.HumanColumn != "":
		return ""
	case h.NamedUnread != "":
		return "the rubric names " + h.NamedUnread + ", from which no rating was read"
	}
	return "no human rating was read for this criterion"
}

func (p Provenance) HumanColumnsText() string {
	var parts []string
	for _, h := range p.HumanColumns {
		col := h.HumanColumn
		switch {
		case col != "":
		case h.NamedUnread != "":
			col = "none (" + h.NoneWhy() + ")"
		default:
			col = "none"
		}
		s := h.Criterion + "=" + col
		if len(h.AnnotatorColumns) > 0 {
			s += " (annotators " + strings.Join(h.AnnotatorColumns, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// WithoutReviewerNames is p for readers outside the workspace (a share
// link's pages and report): each browser reviewer among the annotators is
// named "reviewer 1", "reviewer 2"... in the order they first appear,
// the same number for the same reviewer on every criterion, instead of by
// the account's display name or the name typed, which the workspace's own pages
// show. Imported annotators' columns are the dataset's, shown as they are.
func (p Provenance) WithoutReviewerNames() Provenance {
	number := map[string]int{}
	cols := make([]HumanColumns, len(p.HumanColumns))
	for i, h := range p.HumanColumns {
		cols[i] = h
		if len(h.AnnotatorColumns) == 0 {
			continue
		}
		cols[i].AnnotatorColumns = make([]string, len(h.AnnotatorColumns))
		for j, a := range h.AnnotatorColumns {
			key, reviewer, ok := models.SplitBrowserAnnotatorKey(a)
			if ok {
				n, seen := number[reviewer]
				if !seen {
					n = len(number) + 1
					number[reviewer] = n
				}
				a = models.BrowserAnnotatorKey(key, "reviewer "+strconv.Itoa(n))
			}
			cols[i].AnnotatorColumns[j] = a
		}
	}
	p.HumanColumns = cols
	return p
}

// JudgeText is the judge model, marked when it is the simulated judge.
func (p Provenance) JudgeText() string {
	if p.SimulatedJudge {
		return p.JudgeModel + " (simulated judge, not a language model)"
	}
	return p.JudgeModel
}

// fieldPairs writes a struct's scalar fields as json-name=value; maps,
// slices and nested structs are skipped, and so are the unread settings
// and, with skipEmpty, empty omitempty fields.
func fieldPairs(v any, unread []methods.Setting, skipEmpty bool) []string {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	var out []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || slices.Contains(unread, methods.Setting(name)) ||
			(skipEmpty && opts == "omitempty" && rv.Field(i).IsZero()) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		switch f.Type.Kind() {
		case reflect.Map, reflect.Slice, reflect.Struct, reflect.Pointer, reflect.Interface:
			continue
		}
		out = append(out, fmt.Sprintf("%s=%v", name, rv.Field(i).Interface()))
	}
	return out
}
