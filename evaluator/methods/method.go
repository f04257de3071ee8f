// Package methods holds the evaluation methods as values of one interface.
// Each method (BatchEval, G-Eval, LLM-Eval, CloserLook) is one
// implementation in one file, registered here; the runner and the pages ask
// the method what to do and what to call things instead of testing its
// name. Adding a method is one new file plus its tests.
//
// Like the rest of evaluator, this package imports neither storage nor HTTP
// handlers nor web: it sees a run through Run and a judge through Completer.
package methods

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// Completer is the judge as a method sees it: one chat completion request,
// one answer or an error (a *judge.Error when it comes from the client).
type Completer interface {
	Complete(ctx context.Context, r judge.Request) (judge.Response, error)
}

// Words are what a method calls the parts of its work, for pages, exports
// and the command line.
type Words struct {
	// Round and Rounds name one pass over every sample and several; empty
	// when the method judges each sample once (no rounds to speak of).
	Round, Rounds string
	// Unit and Units name one stored call unit and several: "batch" for
	// BatchEval, "sample" for the methods that judge one sample per unit.
	Unit, Units string
}

// Run is what a method sees of a run: its settings and rubric.
type Run struct {
	Settings       evaluator.Settings
	MethodSettings evaluator.MethodSettings
	Rubric         evaluator.Rubric
	// Estimated counts a G-Eval run's scored units by how their score was
	// estimated, for its settings' account (GEval.Summary); nil when not
	// known (a run not scored yet, other methods).
	Estimated *Estimated
}

// Estimated counts units scored from log-probabilities and from sampled
// answers.
type Estimated struct {
	Logprobs, Samples int
}

// Method is one evaluation method.
type Method interface {
	// Name is the stored method name, e.g. "geval".
	Name() evaluator.Method
	// Label is the display name, e.g. "G-Eval".
	Label() string
	// Words are what the method calls a round and a call unit.
	Words() Words
	// Batched reports whether several samples share one call, so that a
	// sample's position in the prompt can sway its score.
	Batched() bool
	// Prepare fills in, before the run is stored, what the method implies
	// (its defaults, fixed settings, a scale of its own), and checks it.
	Prepare(r *Run) error
	// Passes groups the rubric's criteria into passes, in order; each pass
	// is judged on its own. Its first criterion index is where its units
	// are stored.
	Passes(rub evaluator.Rubric) [][]int
	// Rounds is the number of rounds of each pass.
	Rounds(r Run) int
	// Plan forms the call units of one round of one pass: indexes into the
	// run's samples (every sample exactly once per round).
	Plan(p Plan) ([][]int, error)
	// Judge makes one unit's calls and reads the answers. It never
	// panics on a judge failure: a unit whose calls failed is Failed with
	// Err set; Err with Failed false means the answer is kept but the
	// failure (a run-level one, such as a rate limit) stops the round.
	Judge(ctx context.Context, j Completer, u Unit) Outcome
	// Final is a sample's final score from its scores of every round (nil
	// entries are missing); nil when none could be read.
	Final(rounds []*float64) *float64
	// Summary is the run's settings as the method uses them, part by part,
	// each with what its terms of art mean: its Line is the run's settings
	// line, its Terms the help under it.
	Summary(r Run) Summary
	// Note says in one line what the method does, for the method choice.
	Note() string
	// Estimate predicts a run's calls and tokens before it is launched.
	Estimate(in EstimateInput) Estimate
	// Reads lists the launch settings the method reads; a setting it does
	// not read is ignored for its runs (an unreadable one does not block
	// them).
	Reads() []Setting
	// Setups are the method's rows in the standard comparison ("launch
	// all methods") made from the launch's settings: one per variant.
	Setups(base evaluator.Settings, ms evaluator.MethodSettings) []Setup
	// PromptVersion is the version of the method's prompt templates,
	// stated in every report (see evaluator's prompt versions).
	PromptVersion() string
}

// Setupper is a method that makes calls once per pass before its units
// (G-Eval generates its evaluation steps).
type Setupper interface {
	// Setup prepares pass (criterion indexes) of the run, changing
	// r.MethodSettings when it learns something to keep; Changed says so.
	Setup(ctx context.Context, j Completer, r *Run, pass []int) (SetupOutcome, error)
}

// TemperatureChooser is a method with a temperature of its own: its runs
// get it unless the person chose one (LLM-Eval's paper found greedy
// decoding best).
type TemperatureChooser interface {
	DefaultTemperature() float64
}

// DefaultTemperature is the temperature a run of m gets when the person
// leaves it alone: the method's own, else otherwise.
func DefaultTemperature(m Method, otherwise float64) float64 {
	if tc, ok := m.(TemperatureChooser); ok {
		return tc.DefaultTemperature()
	}
	return otherwise
}

// SetupOutcome is what a Setup call cost and whether it changed the run's
// method settings (which the caller then stores).
//
// Calls and tokens count the calls that reached the judge, also when
// Setup fails afterwards (an answer that could not be read was paid for):
// a call that failed counts when it reached the judge (judge.Reached),
// with its billed tokens (judge.BilledOf); one that never did counts
// nothing.
type SetupOutcome struct {
	Changed          bool
	Calls            int
	PromptTokens     int
	CompletionTokens int
}

// Plan is the input of Method.Plan.
type Plan struct {
	Run Run
	// Criterion is the pass's first criterion index; Round counts from 0.
	Criterion, Round int
	// N is the number of samples.
	N int
	// Past returns, for every earlier round, one score per sample (NaN when
	// missing); only methods that need it call it.
	Past func() ([][]float64, error)
}

// Unit is one call unit of a round, as Method.Judge receives it.
type Unit struct {
	Run Run
	// Criteria are the criterion indexes of the pass.
	Criteria []int
	Round    int
	Samples  []evaluator.Sample
	// Memo remembers, across the units of one run, what the method learned
	// about the endpoint (a structured-output mode, whether it returns
	// log-probabilities). Never nil when the runner calls Judge.
	Memo *Memo
	// Lead says this unit finds out first what the memo does not know
	// (Memo.StartLead): the same unit in every identical run, so that a
	// re-run probes the endpoint with the request the answer cache holds.
	Lead bool
}

// Score is one sample's score on one criterion.
type Score struct {
	Criterion int
	Sample    int // index into Unit.Samples
	Value     *float64
	Analysis  string
}

// Outcome is everything one unit's calls produced, to store as they are.
type Outcome struct {
	// Failed means no usable answer came; every score of the unit is
	// missing. Err is the judge failure behind it.
	Failed bool
	Err    error

	Request, Response             string
	RepairRequest, RepairResponse string
	Problems                      []string
	// Details are method-specific facts (G-Eval's probabilities, sampled
	// ratings, the structured-output mode used), stored as JSON.
	Details map[string]any
	Scores  []Score

	Calls, Attempts                int
	PromptTokens, CompletionTokens int
	Latency                        time.Duration
	// Answered counts the calls that came back with an answer (Calls
	// also counts those that failed): what the unit paid for.
	Answered int
	// Asked and Received count the sampled answers of a method that
	// scores from n answers to one request (G-Eval's sampling, CloserLook):
	// how many it asked for and how many came. Both are 0 for a unit that
	// sampled nothing. Received < Asked on a unit that is not Failed means
	// its score was computed from fewer answers than asked (see
	// MinSampledShare).
	Asked, Received int
}

// count adds a call's cost to o: its attempts (from the response or the
// error), tokens and latency. A failed call's tokens are those the endpoint
// billed for answers that could not be used (judge.BilledOf). A call that
// never reached the judge (judge.NeverSentOf: nothing listened, or it was
// cancelled while its connection was being opened) is not one of the
// unit's calls, though its attempts are counted.
func (o *Outcome) count(resp judge.Response, err error) {
	if err != nil {
		// A refusal from the answer cache is a call of the unit, as a
		// cached answer is.
		if judge.Reached(err) || judge.CachedOf(err) {
			o.Calls++
		}
		o.Calls += judge.ExtraCallsOf(err)
		o.Attempts += judge.AttemptsOf(err)
		p, c := judge.BilledOf(err)
		o.PromptTokens += p
		o.CompletionTokens += c
		return
	}
	o.Calls++
	o.Answered++
	// A hedged copy that lost is a call paid for, not one answered.
	o.Calls += resp.ExtraCalls
	o.Attempts += resp.Attempts
	o.PromptTokens += resp.PromptTokens
	o.CompletionTokens += resp.CompletionTokens
	o.Latency += resp.Latency
}

// fail marks o failed because of err.
func (o *Outcome) fail(err error) Outcome {
	o.Failed, o.Err = true, err
	o.Scores = nil
	o.Problems = append(o.Problems, "the judge gave no usable answer: "+err.Error())
	return *o
}

// registry holds every method, in the order comparison tables show them.
var registry []Method

// register adds m to the registry; each method's file calls it from init.
func register(m Method) {
	for _, k := range registry {
		if k.Name() == m.Name() {
			panic(fmt.Sprintf("methods: %q registered twice", m.Name()))
		}
	}
	registry = append(registry, m)
	slices.SortStableFunc(registry, func(a, b Method) int { return order(a) - order(b) })
}

// order places the paper's methods in Table 1's order; a method added
// later sorts after them.
func order(m Method) int {
	if i := slices.Index([]evaluator.Method{evaluator.MethodBatchEval, evaluator.MethodGEval, evaluator.MethodLLMEval, evaluator.MethodCloserLook}, m.Name()); i >= 0 {
		return i
	}
	return 100
}

// All lists every method.
func All() []Method { return slices.Clone(registry) }

// Lookup returns the method named name ("" is BatchEval, the default).
func Lookup(name string) (Method, error) {
	if strings.TrimSpace(name) == "" {
		name = string(evaluator.MethodBatchEval)
	}
	for _, m := range registry {
		if string(m.Name()) == name {
			return m, nil
		}
	}
	names := make([]string, len(registry))
	for i, m := range registry {
		names[i] = string(m.Name())
	}
	return nil, fmt.Errorf("unknown method %q: use %s", name, strings.Join(names, ", "))
}

// For returns the method named name, or BatchEval when name is unknown
// (for pages showing runs stored by an older version).
func For(name string) Method {
	if m, err := Lookup(name); err == nil {
		return m
	}
	return registry[0]
}

// Label is the display name of the method named name; an unknown name is
// shown as it is.
func Label(name string) string {
	if m, err := Lookup(name); err == nil {
		return m.Label()
	}
	return name
}

// perCriterion is the passes of a method that judges one criterion at a
// time.
func perCriterion(rub evaluator.Rubric) [][]int {
	out := make([][]int, len(rub.Criteria))
	for i := range out {
		out[i] = []int{i}
	}
	return out
}

// oneSamplePerUnit plans a round of n units of one sample each, in order.
func oneSamplePerUnit(n int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = []int{i}
	}
	return out
}

// meanOf is the mean of the readable values in order (a fixed order of
// summation, so the same values always give the same bits); nil when none.
func meanOf(vs []*float64) *float64 {
	sum, n := 0.0, 0
	for _, v := range vs {
		if v == nil || math.IsNaN(*v) {
			continue
		}
		sum += *v
		n++
	}
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
}

// newRand is a reproducible random stream for one criterion and round of a
// run with seed: see seedMix.
func newRand(seed int64, criterion, round int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), seedMix(criterion, round)))
}
