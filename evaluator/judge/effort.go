package judge

import (
	"fmt"
	"strings"
)

// ReasoningEffort is how long a reasoning model is asked to think before
// it answers, sent as reasoning_effort. OpenAI's reasoning models (o1, o3,
// o4-mini, gpt-5) and OpenRouter take it; other endpoints and models may
// refuse it, so the empty value, the default, sends nothing.
type ReasoningEffort string

const (
	// ReasoningEffortUnset sends no reasoning_effort: the model thinks as
	// long as its default says (OpenAI's: medium). Every judge that was
	// stored before the setting existed has it.
	ReasoningEffortUnset ReasoningEffort = ""
	// ReasoningEffortLow asks for less hidden reasoning: cheaper and
	// faster answers, and fewer completion tokens billed.
	ReasoningEffortLow ReasoningEffort = "low"
	// ReasoningEffortMedium is OpenAI's default, sent explicitly.
	ReasoningEffortMedium ReasoningEffort = "medium"
	// ReasoningEffortHigh asks for more hidden reasoning.
	ReasoningEffortHigh ReasoningEffort = "high"
)

// ReasoningEfforts lists the values a judge may send, in order.
var ReasoningEfforts = []ReasoningEffort{ReasoningEffortLow, ReasoningEffortMedium, ReasoningEffortHigh}

// ParseReasoningEffort reads a stored or typed reasoning effort, in any
// case and with spaces around: "" is ReasoningEffortUnset; anything but
// low, medium and high is an error saying which exist and that blank
// sends none.
func ParseReasoningEffort(s string) (ReasoningEffort, error) {
	e := ReasoningEffort(strings.ToLower(strings.TrimSpace(s)))
	switch e {
	case ReasoningEffortUnset, ReasoningEffortLow, ReasoningEffortMedium, ReasoningEffortHigh:
		return e, nil
	}
	return "", fmt.Errorf("the reasoning effort %q is not one of low, medium and high (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5); leave it blank to send none", s)
}

// CacheModel is the model name stored answers are kept under for a judge
// serving model with effort: the model itself when no effort is sent (so
// the keys of every judge without it are unchanged), else the model and
// its effort, so that an answer thought over at one effort is never
// replayed for another.
func CacheModel(model string, effort ReasoningEffort) string {
	if effort == ReasoningEffortUnset {
		return model
	}
	return model + " reasoning_effort=" + string(effort)
}
