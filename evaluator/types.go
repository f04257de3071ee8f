// Package evaluator is the judging engine: it composes batches, builds the
// prompts, talks to the judge, parses its answers and computes the
// statistics that say how far the judge can be trusted. It knows nothing of
// HTTP servers, pages or SQL; it declares the small interfaces it needs.
package evaluator

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
)

// Field is a dataset column shown to the judge under a human-readable label,
// e.g. column "context" shown as "Conversation history".
type Field struct {
	Column string `json:"column" yaml:"column"`
	Label  string `json:"label" yaml:"label"`
}

// Levels describes what the low, middle and high ends of a criterion's range mean.
type Levels struct {
	Low    string `json:"low" yaml:"low"`
	Middle string `json:"middle" yaml:"middle"`
	High   string `json:"high" yaml:"high"`
}

// Criterion is one quality the judge scores, on the closed range [Lo, Hi].
type Criterion struct {
	Name        string  `json:"name" yaml:"name"`
	Description string  `json:"description" yaml:"description"`
	Lo          float64 `json:"lo" yaml:"lo"`
	Hi          float64 `json:"hi" yaml:"hi"`
	Levels      Levels  `json:"levels" yaml:"levels"`
	// HumanColumn names the dataset column holding the human rating for this
	// criterion; empty when there is none.
	HumanColumn string `json:"human_column,omitempty" yaml:"human_column,omitempty"`
	// AnnotatorColumns optionally name columns holding individual
	// annotators' ratings of this criterion, for inter-annotator agreement
	// and the human ceiling. Ratings imported one row per annotator are
	// found without this (as "<human_column>@<annotator>").
	AnnotatorColumns []string `json:"annotator_columns,omitempty" yaml:"annotator_columns,omitempty"`
	// Examples are labelled samples shown to the judge in the prompt, each
	// with the score a person gave it (see WriteExamples). Alignment adds
	// them from calibration samples; none by default.
	Examples []Example `json:"examples,omitempty" yaml:"examples,omitempty"`
	// RubricScale is the rubric's own range of the criterion when a method
	// judged it on a scale of its own (LLM-Eval's 0 to 5 or 0 to 100, which
	// become Lo and Hi): the scale people rate on. nil when Lo and Hi are
	// the rubric's. Set by the method, never read from a rubric file.
	RubricScale *Scale `json:"rubric_scale,omitempty" yaml:"-"`
}

// Scale is a closed range of scores.
type Scale struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// HumanScale is the range people rate the criterion on: the rubric's own,
// whatever scale the judge was asked to use.
func (c Criterion) HumanScale() Scale {
	if c.RubricScale != nil {
		return *c.RubricScale
	}
	return Scale{Lo: c.Lo, Hi: c.Hi}
}

// Example is one labelled sample shown to the judge: the sample's fields,
// the score a person gave it on the criterion and, optionally, why.
type Example struct {
	// SampleID is the sample's id in its dataset, so the product can refuse
	// an example taken from samples held out for testing.
	SampleID string  `json:"sample_id" yaml:"sample_id"`
	Fields   []Text  `json:"fields" yaml:"fields"`
	Score    float64 `json:"score" yaml:"score"`
	Reason   string  `json:"reason,omitempty" yaml:"reason,omitempty"`
}

// Rubric is what the judge is told: what a sample is, which fields it sees,
// and the criteria to score.
type Rubric struct {
	Task     string      `json:"task" yaml:"task"`
	Fields   []Field     `json:"fields,omitempty" yaml:"fields"`
	Criteria []Criterion `json:"criteria" yaml:"criteria"`
}

// Validate reports the first problem that would make the rubric unusable
// (the first of Problems).
func (r Rubric) Validate() error {
	if ps := r.Problems(); len(ps) > 0 {
		return ps[0]
	}
	return nil
}

// Problems lists every problem that would make the rubric unusable, in
// the rubric's order, each at its place in a rubric file (Path): a file
// with several mistakes is told them all at once. A criterion's name and
// its scale are checked apart; of its examples the first problem is said.
func (r Rubric) Problems() []*RubricProblem {
	var out []*RubricProblem
	add := func(err error) {
		var p *RubricProblem
		if errors.As(err, &p) {
			out = append(out, p)
		}
	}
	if strings.TrimSpace(r.Task) == "" {
		add(problemAt("$.task", "task description is empty: say what one sample is (e.g. a dialogue and its next response)"))
	}
	if len(r.Criteria) == 0 {
		add(problemAt("$.criteria", "the rubric has no criteria: add at least one"))
	}
	seen := map[string]int{} // lower-cased name: index of its first criterion
	for i, c := range r.Criteria {
		name := strings.TrimSpace(c.Name)
		who := fmt.Sprintf("criterion %q", name) // how the scale's problems name it
		switch first, twice := seen[strings.ToLower(name)]; {
		case name == "":
			add(problemAt(criterionPath(i), "criterion %d has no name", i+1))
			who = fmt.Sprintf("criterion %d", i+1)
		case OneLineProblem(c.Name) != "":
			add(problemAt(criterionPath(i)+".name", "criterion %d (%q): the name holds %s; the judge reads it as one line of its prompt: write the name on one line, without control characters", i+1, c.Name, OneLineProblem(c.Name)))
		case twice:
			add(&RubricProblem{Path: criterionPath(i) + ".name", Also: criterionPath(first) + ".name",
				Msg: fmt.Sprintf("criterion %q appears twice: criterion names must be unique", name)})
		default:
			seen[strings.ToLower(name)] = i
		}
		switch {
		case math.IsNaN(c.Lo) || math.IsNaN(c.Hi) || math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0):
			add(problemAt(criterionPath(i)+".lo", "%s: the range ends must be finite numbers", who))
		case c.Lo == 0 && c.Hi == 0:
			add(problemAt(criterionPath(i), "%s has no score range: give its lo and hi, the lowest and highest score (e.g. lo 1 and hi 5)", who))
		case !(c.Lo < c.Hi):
			add(problemAt(criterionPath(i)+".lo", "%s: the range [%g, %g] is empty: the low end must be below the high end", who, c.Lo, c.Hi))
		case ScaleProblem(c.Lo, c.Hi) != "":
			add(problemAt(criterionPath(i)+".lo", "%s: %s", who, ScaleProblem(c.Lo, c.Hi)))
		case name != "":
			// (A nameless criterion's examples wait for its name.)
			add(c.validateExamples(criterionPath(i), name))
		}
	}
	for i, f := range r.Fields {
		if strings.TrimSpace(f.Column) == "" {
			add(problemAt(fmt.Sprintf("$.fields[%d]", i), "field %d names no column", i+1))
			continue
		}
		if what := OneLineProblem(f.Label); what != "" {
			add(problemAt(fmt.Sprintf("$.fields[%d].label", i), "field %d (column %q): the label %q holds %s; the judge reads it as one line of its prompt: write the label on one line, without control characters", i+1, f.Column, f.Label, what))
		}
	}
	return out
}

// MaxScaleEnd and MaxScaleSpan bound a criterion's scale: both ends
// within ±1,000,000 and at most 1,000,000 apart. Why: a judge asked for a
// score with one decimal cannot tell a million steps apart, so a wider
// scale is a typo (0 to 1e308 was accepted), and every figure built from
// scores (squared errors, variances, the sum over a run's samples) stays
// far from float64's overflow and loss of precision. G-Eval's forms are
// bounded tighter still (maxGEvalScores).
const (
	MaxScaleEnd  = 1_000_000
	MaxScaleSpan = 1_000_000
)

// ScaleProblem says why [lo, hi] is no usable scale beyond an empty range
// (an end that is not a finite number, an end beyond ±MaxScaleEnd, ends
// more than MaxScaleSpan apart); "" when it is usable.
func ScaleProblem(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return "the range ends must be finite numbers"
	case math.Abs(lo) > MaxScaleEnd || math.Abs(hi) > MaxScaleEnd:
		return fmt.Sprintf("the scale %s to %s is too large: both ends must lie between -1,000,000 and 1,000,000 (e.g. 1 to 5, or 0 to 100)", formatNumber(lo), formatNumber(hi))
	case hi-lo > MaxScaleSpan:
		return fmt.Sprintf("the scale %s to %s is too wide: its ends may be at most 1,000,000 apart (e.g. 1 to 5, or 0 to 100)", formatNumber(lo), formatNumber(hi))
	}
	return ""
}

// OneLineProblem says what stops s from being one line of a prompt (a
// field label, a criterion name): "a line break" or "a control character"
// such as a tab; "" when there is none. Each is written into the judge's
// prompt as it is, so a label "Reply\nScore: 5" would add a line of its own.
func OneLineProblem(s string) string {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == '\u2028' || r == '\u2029':
			return "a line break"
		case unicode.IsControl(r):
			return fmt.Sprintf("a control character (%U)", r)
		}
	}
	return ""
}

// validateExamples checks the labelled examples of a criterion named name:
// each is shown to the judge as "scored X" on the criterion's scale, so a
// score off that scale (or an example with nothing to read) would teach it
// a wrong scale.
func (c Criterion) validateExamples(at, name string) error {
	if len(c.Examples) > MaxExamples {
		return problemAt(at+".examples", "criterion %q has %d labelled examples; at most %d, each one lengthens every call: remove some", name, len(c.Examples), MaxExamples)
	}
	for i, ex := range c.Examples {
		switch {
		case math.IsNaN(ex.Score) || math.IsInf(ex.Score, 0) || ex.Score < c.Lo || ex.Score > c.Hi:
			return problemAt(fmt.Sprintf("%s.examples[%d].score", at, i), "criterion %q, example %d: the score %g is outside the criterion's range [%g, %g]: give the example a score on that scale", name, i+1, ex.Score, c.Lo, c.Hi)
		case len(ex.Fields) == 0:
			return problemAt(fmt.Sprintf("%s.examples[%d]", at, i), "criterion %q, example %d has no fields: give it the sample's text as fields (label and value) the judge reads", name, i+1)
		}
		for k, f := range ex.Fields {
			if what := OneLineProblem(f.Label); what != "" {
				return problemAt(fmt.Sprintf("%s.examples[%d].fields[%d].label", at, i, k), "criterion %q, example %d: the label %q holds %s; the judge reads it as one line of its prompt: write the label on one line, without control characters", name, i+1, f.Label, what)
			}
		}
	}
	return nil
}

// Text is one labelled piece of a sample as the judge sees it.
type Text struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Sample is one item to judge.
type Sample struct {
	ID     string `json:"id"`
	Fields []Text `json:"fields"`
}

// Message is one chat message of a judge request.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Procedure is how the batch prompt asks the judge to work.
type Procedure string

// The evaluation procedures of the BatchEval paper.
const (
	OneStage   Procedure = "one"   // analyse and score each sample in turn
	TwoStage   Procedure = "two"   // analyse all, then all scores in one list (default, best)
	ThreeStage Procedure = "three" // analyse, rank with reasons, then score
)

// Composition is how the batches of rounds after the first are formed.
type Composition string

// Batch composition strategies.
const (
	Random        Composition = "random"
	Homogeneous   Composition = "homogeneous"
	Heterogeneous Composition = "heterogeneous"
)

// SortKey says which score orders samples when composing the next round.
type SortKey string

// Sort keys for composition.
const (
	SortByPrevious SortKey = "previous" // the last round's score, as in the paper
	SortByMean     SortKey = "mean"     // the running mean of all rounds so far
)

// Scoring is the number format the judge is asked for.
type Scoring string

// Scoring formats.
const (
	Decimal Scoring = "decimal" // "a float score within [lo, hi]" (default, best)
	Integer Scoring = "integer"
)

// Settings are the BatchEval hyperparameters of one run.
type Settings struct {
	Rounds      int         `json:"rounds"`
	BatchSize   int         `json:"batch_size"`
	Temperature float64     `json:"temperature"`
	TopP        float64     `json:"top_p"`
	Seed        int64       `json:"seed"`
	Procedure   Procedure   `json:"procedure"`
	Composition Composition `json:"composition"`
	SortKey     SortKey     `json:"sort_key"`
	Scoring     Scoring     `json:"scoring"`
	// MaxTokens caps the judge's answer per call; 0 lets the endpoint decide.
	MaxTokens int `json:"max_tokens"`
	// SpendCapUSD, when set, is the most the run may spend: no new judge
	// call starts once the cost so far plus the next call's estimate would
	// pass it. Absent (nil) means no cap; it is left out of the JSON then,
	// so runs without one export exactly as before.
	SpendCapUSD *float64 `json:"spend_cap_usd,omitempty"`
	// NoCache turns off the judge answer cache for the run: every call goes
	// to the endpoint even when an identical request was answered before.
	// False (the default, "reuse identical judge answers") is left out of
	// the JSON, so runs export exactly as before.
	NoCache bool `json:"no_cache,omitempty"`
	// HedgeSlowCalls re-sends a judge call that has been out much longer
	// than the run's other calls, and takes whichever copy answers first
	// (judge.Hedger). Each re-send is a paid call. False (the default) is
	// left out of the JSON, so runs without it export exactly as before.
	HedgeSlowCalls bool `json:"hedge_slow_calls,omitempty"`
}

// DefaultSettings are the paper's defaults: N=5 rounds, B=10, temperature
// 0.2 and top_p 0.9 (the authors' code), two-stage prompts, heterogeneous
// batches sorted by the previous round's score, decimal scores.
func DefaultSettings() Settings {
	return Settings{
		Rounds:      5,
		BatchSize:   10,
		Temperature: 0.2,
		TopP:        0.9,
		Seed:        1,
		Procedure:   TwoStage,
		Composition: Heterogeneous,
		SortKey:     SortByPrevious,
		Scoring:     Decimal,
	}
}

// The most rounds and the largest batch a run may have: 50 rounds is ten
// times the paper's 5, beyond which the ensemble gains nothing measurable;
// 100 samples is ten times its best batch size, and already more than most
// judges' context windows hold.
const (
	MaxRounds    = 50
	MaxBatchSize = 100
)

// MaxTemperature is the highest sampling temperature OpenAI-compatible
// endpoints take.
const MaxTemperature = 2.0

// Validate reports settings that cannot run.
func (s Settings) Validate() error {
	switch {
	case math.IsNaN(s.Temperature) || math.IsNaN(s.TopP):
		return fmt.Errorf("temperature and top_p must be numbers")
	case s.Rounds < 1 || s.Rounds > MaxRounds:
		return fmt.Errorf("rounds must be between 1 and %d, got %d", MaxRounds, s.Rounds)
	case s.BatchSize < 1 || s.BatchSize > MaxBatchSize:
		return fmt.Errorf("batch size must be between 1 and %d, got %d", MaxBatchSize, s.BatchSize)
	case s.Temperature < 0 || s.Temperature > MaxTemperature:
		return fmt.Errorf("temperature must be between 0 and 2, got %g", s.Temperature)
	case s.TopP <= 0 || s.TopP > 1:
		return fmt.Errorf("top_p must be in (0, 1], got %g", s.TopP)
	case s.SpendCapUSD != nil && !(*s.SpendCapUSD > 0 && *s.SpendCapUSD < math.Inf(1)):
		return fmt.Errorf("the spending cap must be a positive amount of US dollars, got %g", *s.SpendCapUSD)
	}
	switch s.Procedure {
	case OneStage, TwoStage, ThreeStage:
	default:
		return fmt.Errorf("unknown procedure %q: use one, two or three", s.Procedure)
	}
	switch s.Composition {
	case Random, Homogeneous, Heterogeneous:
	default:
		return fmt.Errorf("unknown composition %q: use random, homogeneous or heterogeneous", s.Composition)
	}
	switch s.SortKey {
	case SortByPrevious, SortByMean:
	default:
		return fmt.Errorf("unknown sort key %q: use previous or mean", s.SortKey)
	}
	switch s.Scoring {
	case Decimal, Integer:
	default:
		return fmt.Errorf("unknown scoring %q: use decimal or integer", s.Scoring)
	}
	return nil
}

// RubricProblem is why Validate refuses a rubric, and where: Path is the
// rubric-file path of the part at fault ("$.criteria[1].name"), and Also,
// when set, the path of another part it clashes with (the first criterion
// of a repeated name). Its Error is Msg alone; ParseRubricFile turns the
// paths into the file's line numbers.
type RubricProblem struct {
	Path, Also, Msg string
}

func (p *RubricProblem) Error() string { return p.Msg }

// problemAt is a RubricProblem at path, its message formatted.
func problemAt(path, format string, args ...any) error {
	return &RubricProblem{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// criterionPath is the rubric-file path of criterion i (from 0).
func criterionPath(i int) string { return fmt.Sprintf("$.criteria[%d]", i) }
