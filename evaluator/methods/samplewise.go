package methods

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// prepareSampleWise is what every one-sample-per-call method implies: the
// papers' defaults when no method settings were given (keeping any
// evaluation steps), valid settings, and one round of one sample per call.
//
// Settings count as not given when n, the sample temperature and the scale
// are all unset; any of them set means the settings were chosen and must
// be valid (n = 0 from a form is refused, not replaced).
//
// Settings the method does not read (m.Reads) are put back to their
// defaults first, so they are neither refused nor kept for it: an
// unreadable LLM-Eval scale on a G-Eval launch was refused as "G-Eval
// settings: unknown LLM-Eval scale".
func prepareSampleWise(r *Run, m Method) error {
	if ms := r.MethodSettings; ms.Samples == 0 && ms.SampleTemperature == 0 && ms.LLMEvalScale == "" {
		steps, share := r.MethodSettings.GEvalSteps, r.MethodSettings.MinReadableShare
		r.MethodSettings = evaluator.DefaultMethodSettings()
		r.MethodSettings.GEvalSteps, r.MethodSettings.MinReadableShare = steps, share
	}
	reads := m.Reads()
	unread := func(s Setting) bool { return !slices.Contains(reads, s) }
	d, ms := evaluator.DefaultMethodSettings(), &r.MethodSettings
	if unread(SettingLLMEvalScale) {
		ms.LLMEvalScale = d.LLMEvalScale
	}
	if unread(SettingCloserLookTopP) {
		ms.CloserLookTopP = 0
	}
	if unread(SettingCloserLookScoring) {
		ms.CloserLookScoring = ""
	}
	if unread(SettingMinAllowedMass) {
		ms.MinAllowedMass = 0
	}
	switch {
	case unread(SettingMinReadableShare):
		ms.MinReadableShare = nil
	case ms.MinReadableShare == nil:
		// A new run not told otherwise: the default. (A stored run keeps
		// what it has: Prepare runs only at a launch.)
		share := evaluator.DefaultMinReadableShare
		ms.MinReadableShare = &share
	}
	if err := r.MethodSettings.Validate(); err != nil {
		return fmt.Errorf("%s settings: %w", m.Label(), err)
	}
	r.Settings.Rounds, r.Settings.BatchSize = 1, 1
	return nil
}

// Memo key and values of the sampled methods: whether the endpoint answers
// a request for several choices (n above 1) or refuses it.
const (
	memoSeveralChoices = "several_choices"
	choicesAccepted    = "accepted"
	choicesRefused     = "refused"
)

// collect asks for n completions, topping up with further calls when the
// endpoint returns fewer choices than asked (Ollama ignores n). An endpoint
// that refuses n above 1 (llama.cpp's server: HTTP 400 "Only one completion
// choice is allowed") to the first call is asked for one answer a call
// instead, after that refusal. Whether it refuses is found out once per run
// and kept in u's memo (as G-Eval's logprobs probe is): the unit that finds
// out sends the one refused call, and every later unit asks one answer a
// call straight away. At most n calls that answer are made in all; each
// call, the refused one included, is counted on o.
func collect(ctx context.Context, j Completer, u Unit, req judge.Request, n int, o *Outcome) ([]string, error) {
	// probing: this unit finds out whether n above 1 is refused, and must
	// settle the memo's key (once) before it returns.
	probing, single := false, false
	if n > 1 && u.Memo != nil {
		state, mine, err := u.Memo.AwaitAs(ctx, memoSeveralChoices, u.Lead)
		if err != nil {
			return nil, err
		}
		probing, single = mine, state == choicesRefused
	}
	settled := false
	settle := func(value string) {
		if probing && !settled {
			settled = true
			u.Memo.Settle(memoSeveralChoices, value)
		}
	}
	defer settle("") // not found out (a failed call, a cancelled run): the next unit tries
	if single {
		o.Details["one_answer_a_call"] = true
	}
	var texts []string
	base := req.Seed
	refused := false
	for calls := 0; len(texts) < n && calls < n; calls++ {
		req.N = n - len(texts)
		if single {
			req.N = 1
		}
		if base != nil && calls > 0 {
			// A top-up call needs its own seed: an endpoint that ignores n
			// but honours seed (Ollama) would otherwise answer the same
			// completion every time, and n samples would be one.
			s := *base + int64(calls)
			req.Seed = &s
		}
		// Only the first call can tell that the endpoint refuses n above
		// 1: one that answered several choices takes n, and a later
		// refusal is about something else.
		first := len(texts) == 0 && !single && req.N > 1
		callCtx := ctx
		if first {
			// A refusal of several choices is the request's answer: the
			// answer cache keeps it, so an identical re-run learns it
			// again without calling.
			callCtx = judge.KeepRefusal(ctx)
		}
		resp, err := j.Complete(callCtx, req)
		o.count(resp, err)
		if err != nil && first && refusesChoices(err) {
			single, refused = true, true
			o.Details["n_refused"], o.Details["one_answer_a_call"] = true, true
			o.Problems = append(o.Problems, fmt.Sprintf("the endpoint refused a request for %d answers at once (%s); asked for one answer a call instead", req.N, err.Error()))
			calls-- // the refused call answered nothing: it takes no place among the n
			continue
		}
		if err != nil {
			return texts, err
		}
		// An answer settles it: several choices were answered (or at
		// least not refused), or one answer came after the refusal, so
		// the refusal was about n and not about the request.
		if refused {
			settle(choicesRefused)
		} else {
			settle(choicesAccepted)
		}
		for _, ch := range resp.Choices {
			texts = append(texts, ch.Text)
		}
	}
	return texts, nil
}

// refusesChoices reports whether err is the endpoint's refusal of a request
// (HTTP 400 or 422) that may be its refusal of n above 1. A refusal for
// another reason is refused again when one answer is asked for, and that
// error is the one the unit keeps. A prompt too long for the model is not
// asked again.
func refusesChoices(err error) bool {
	var je *judge.Error
	if !errors.As(err, &je) || je.Kind != judge.KindBadRequest || je.ContextOverflow() {
		return false
	}
	return je.Status == http.StatusBadRequest || je.Status == http.StatusUnprocessableEntity
}

// A score computed from fewer sampled answers than asked is kept when at
// least half of them came, with the shortfall recorded (the unit's
// problems, its details "asked" and "answered", the run's short_scores
// counter) and shown wherever the score is. Below half the unit fails:
// its score is missing, counted under "No answer", tried again at the end
// of the round and resumable. Why one half: G-Eval's probabilities and
// CloserLook's mean are shares and means over the answers, whose
// standard error grows as 1/sqrt(answers); with half of n = 20 the error
// is 1.4 times the one the run's settings promise, which is still a
// usable score, while with fewer the score is a coarser estimate than the
// method the run names, and the failure was the judge's call, which a
// resume can repair.
const (
	minSampledShareNum = 1
	minSampledShareDen = 2
)

// sampledEnough reports whether received of asked sampled answers are
// enough to score from (at least half).
func sampledEnough(received, asked int) bool {
	return received*minSampledShareDen >= asked*minSampledShareNum && received > 0
}

// takeSamples records on o what collect returned for a request of asked
// answers and decides what becomes of the unit. With enough answers
// (sampledEnough) it returns true and the score is computed from them; a
// shortfall is written among o's problems, and the judge's error (if any)
// is kept in o.Err so that a stop of the whole run (the spending cap, a
// long rate limit, a shutdown) still leaves the unit for the resume. With
// too few it fails o and returns false.
func takeSamples(o *Outcome, asked int, texts []string, err error) bool {
	o.Asked, o.Received = asked, len(texts)
	o.Details["asked"], o.Details["answered"] = asked, len(texts)
	if len(texts) >= asked {
		return true
	}
	why := "the endpoint returned no more"
	if err != nil {
		why = "the call for the rest failed: " + err.Error()
	}
	if len(texts) == 0 && err != nil {
		o.fail(err)
		return false
	}
	if !sampledEnough(len(texts), asked) {
		if err == nil {
			err = fmt.Errorf("only %d of %d asked answers came", len(texts), asked)
		}
		o.Failed, o.Err, o.Scores = true, err, nil
		o.Problems = append(o.Problems, fmt.Sprintf("only %d of %d asked answers came (%s): fewer than half, so the score is left missing rather than computed from so few", len(texts), asked, why))
		return false
	}
	o.Err = err
	o.Problems = append(o.Problems, fmt.Sprintf("%d of %d asked answers came (%s); the score is computed from the %d that came", len(texts), asked, why, len(texts)))
	return true
}

// enoughReadable applies the run's fewest readable answers for a score
// (evaluator.MethodSettings.MinReadable) to a unit that sampled asked
// answers of which readable could be read: with at least that many, or
// with none (no score either way: the answers are unreadable, as before
// there was a minimum), it returns true and the score stands as computed.
// With some but fewer it records why the score is missing (its details
// "too_few_readable", "readable" and "min_readable", a problem) and
// returns false: the caller leaves the score missing. A run stored before
// the setting existed has no minimum but the one readable answer a mean
// needs, and keeps its scores.
func enoughReadable(o *Outcome, ms evaluator.MethodSettings, readable, asked int) bool {
	need := ms.MinReadable(asked)
	if ms.MinReadableShare != nil {
		o.Details["readable"], o.Details["min_readable"] = readable, need
	}
	if readable == 0 || readable >= need {
		return true
	}
	o.Details["too_few_readable"] = true
	o.Problems = append(o.Problems, TooFewReadableText(readable, asked, need))
	return false
}

// TooFewReadableText says why a sampled score is missing when readable of
// the asked answers could be read and the run asks for need.
func TooFewReadableText(readable, asked, need int) string {
	return fmt.Sprintf("only %d of the %d answers asked for could be read, fewer than the %d this run asks for (its fewest readable answers for a score): the score is left missing rather than resting on so few", readable, asked, need)
}

// ReadableShares are the fewest readable answers for a score a launch
// offers, as shares of the answers asked for: none beyond the one a mean
// needs (as runs scored before the setting existed), a quarter, a half
// (evaluator.DefaultMinReadableShare), three quarters, all of them.
var ReadableShares = []float64{0, 0.25, evaluator.DefaultMinReadableShare, 0.75, 1}

// ShareWords words a share of the answers asked for ("a half").
func ShareWords(share float64) string {
	switch share {
	case 0:
		return "any one"
	case 0.25:
		return "a quarter"
	case 0.5:
		return "a half"
	case 0.75:
		return "three quarters"
	case 1:
		return "all"
	}
	return strconv.FormatFloat(share*100, 'f', -1, 64) + "%"
}

// readableTerm explains the fewest readable answers for a score.
var readableTerm = Term{"Fewest readable answers for a score", "a sampled score is computed from the answers the judge wrote that could be read. When fewer of the answers asked for could be read than this share, the score is left missing and counted under \"too few readable answers\", rather than resting on one or two answers. Runs launched before this setting existed score from any one readable answer and keep their scores."}

// readableSummary adds to sum the run's fewest readable answers for a
// score, a share of the n answers asked for; runs stored before it existed
// (which score from any one readable answer) read as before, without it.
func readableSummary(sum Summary, ms evaluator.MethodSettings) Summary {
	if ms.MinReadableShare == nil {
		return sum
	}
	return append(sum, readablePart(ms, ""))
}

// readablePart is the fewest readable answers for a score, said of the
// scores that where (prefix, "" for every score) it applies.
func readablePart(ms evaluator.MethodSettings, where string) SummaryPart {
	p := ms.MinReadableShare
	switch {
	case *p == 0:
		return explained(where+"a score from any one readable answer (no fewest readable answers)", readableTerm)
	}
	return explained(fmt.Sprintf("%sa score needs %s of the %d answers readable (at least %d)", where, ShareWords(*p), ms.Samples, ms.MinReadable(ms.Samples)), readableTerm)
}

// gevalReadableSummary adds to a G-Eval run's sum its fewest readable
// answers for a score where it applies: to the scores it sampled. A run
// that reads log-probabilities says it of the sampled scores only, or
// not at all when it sampled none (est, when known).
func gevalReadableSummary(sum Summary, ms evaluator.MethodSettings, est *Estimated) Summary {
	if ms.MinReadableShare == nil {
		return sum
	}
	switch {
	case !ms.UseLogprobs || est != nil && est.Samples > 0 && est.Logprobs == 0:
		return append(sum, readablePart(ms, ""))
	case est == nil || est.Samples+est.Logprobs == 0:
		return append(sum, readablePart(ms, "where it samples instead of reading log-probabilities, "))
	case est.Samples == 0:
		return sum // every score from log-probabilities: it never applied
	}
	return append(sum, readablePart(ms, fmt.Sprintf("for the %d sampled scores (the other %d from log-probabilities), ", est.Samples, est.Logprobs)))
}

// Sampler is a method that may score a sample from n sampled answers to
// one request (G-Eval when it cannot read log-probabilities, CloserLook):
// its runs count the scores computed from fewer answers than asked.
type Sampler interface {
	// SamplesAnswers reports whether the method's units may sample.
	SamplesAnswers() bool
}

// SamplesAnswers reports whether m's units may sample answers (Sampler).
func SamplesAnswers(m Method) bool {
	s, ok := m.(Sampler)
	return ok && s.SamplesAnswers()
}
