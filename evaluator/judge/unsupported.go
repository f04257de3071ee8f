package judge

import (
	"encoding/json"
	"errors"
	"strings"
)

// Unsupported names a request parameter the endpoint refused for the model, of
// those a judge's settings decide: the same request is refused every time,
// and the judge's settings, not a retry, are the remedy.
type Unsupported string

const (
	// UnsupportedMaxTokens: the model takes its cap only as
	// max_completion_tokens (OpenAI's reasoning models answer 400
	// unsupported_parameter, param "max_tokens").
	UnsupportedMaxTokens Unsupported = "max_tokens"
	// UnsupportedSampling: the model takes no temperature or top_p but the
	// default (400 unsupported_value or unsupported_parameter, param
	// "temperature" or "top_p").
	UnsupportedSampling Unsupported = "sampling"
	// UnsupportedReasoningEffort: the model (or the endpoint) takes no
	// reasoning_effort, or not the value sent (400 unsupported_parameter
	// or unsupported_value, param "reasoning_effort"): the judge's
	// reasoning effort is to be cleared or changed.
	UnsupportedReasoningEffort Unsupported = "reasoning_effort"
)

// unsupportedIn reads which parameter an error body refuses, as OpenAI and
// Azure OpenAI word it ({"error":{"message","type","param","code"}}), and
// as OpenRouter passes the provider's answer on ({"error":{"code":400,
// "message":"Provider returned error","metadata":{"raw":"<the provider's
// body>"}}}); a gateway that quotes the provider's body in its own message
// is read by the wording. "" when it refuses neither.
func unsupportedIn(body []byte) Unsupported {
	var v struct {
		Error struct {
			Message  string          `json:"message"`
			Param    string          `json:"param"`
			Code     any             `json:"code"`
			Metadata json.RawMessage `json:"metadata"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return unsupportedInText(string(body))
	}
	code, _ := v.Error.Code.(string)
	if code == "unsupported_parameter" || code == "unsupported_value" {
		switch v.Error.Param {
		case "max_tokens":
			if code == "unsupported_parameter" {
				return UnsupportedMaxTokens
			}
		case "temperature", "top_p":
			return UnsupportedSampling
		case "reasoning_effort", "reasoning.effort":
			return UnsupportedReasoningEffort
		}
	}
	if raw := providerRaw(v.Error.Metadata); raw != nil {
		if r := unsupportedIn(raw); r != "" {
			return r
		}
	}
	return unsupportedInText(v.Error.Message)
}

// providerRaw is the provider's own error body that OpenRouter passes on
// in error.metadata.raw (a JSON string holding it, or the object); nil when
// there is none.
func providerRaw(metadata json.RawMessage) []byte {
	if len(metadata) == 0 {
		return nil
	}
	var m struct {
		Raw json.RawMessage `json:"raw"`
	}
	if json.Unmarshal(metadata, &m) != nil || len(m.Raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(m.Raw, &s) == nil {
		return []byte(s)
	}
	return m.Raw
}

// unsupportedInText reads the refusal from OpenAI's wording quoted in a text:
// "Unsupported parameter: 'max_tokens' is not supported with this model.
// Use 'max_completion_tokens' instead.", "Unsupported value: 'temperature'
// does not support 0.2 with this model. Only the default (1) value is
// supported.", "Unsupported parameter: 'temperature' is not supported with
// this model.".
func unsupportedInText(s string) Unsupported {
	s = strings.ToLower(s)
	if !strings.Contains(s, "unsupported parameter") && !strings.Contains(s, "unsupported value") {
		return ""
	}
	switch {
	case strings.Contains(s, "'max_tokens'") && strings.Contains(s, "max_completion_tokens"):
		return UnsupportedMaxTokens
	case strings.Contains(s, "'temperature'") || strings.Contains(s, "'top_p'"):
		return UnsupportedSampling
	case strings.Contains(s, "'reasoning_effort'") || strings.Contains(s, "'reasoning.effort'"):
		return UnsupportedReasoningEffort
	}
	return ""
}

// UnsupportedOf returns the parameter a failed call's endpoint refused for the
// model (Error.Refused); "" when err is no such refusal.
func UnsupportedOf(err error) Unsupported {
	var e *Error
	if errors.As(err, &e) {
		return e.Unsupported
	}
	return ""
}

// SettingsPlace is where a judge's request settings are changed, which a
// refusal's hint names.
type SettingsPlace int

const (
	// SettingsOnJudgePage: the judge's page in the browser (its Test
	// connection button and form fields). The default.
	SettingsOnJudgePage SettingsPlace = iota
	// SettingsAsFlags: the flags of `batcheval run`, which has no judge
	// page and no button.
	SettingsAsFlags
	// SettingsKeptByRun: `batcheval resume`, whose run keeps the judge
	// settings it started with (its snapshot): neither the judge's page
	// nor a flag changes them, so the hint says that resuming fails the
	// same way and how to judge in a new run from the command line.
	SettingsKeptByRun
)

// keptByRun is the start of a resumed run's hint: why neither the judge's
// page nor another resume helps.
const keptByRun = `: a resumed run keeps the judge settings it started with, so resuming it again fails the same way (its stored answers are kept); start a new run instead, `

// unsupportedHint names the judge setting that a refusal calls for, worded
// for where the settings are changed (cfg.SettingsAt); "" when the judge
// already has it (the refusal is then something else's).
func unsupportedHint(cfg Config, e *Error) string {
	flags, kept := cfg.SettingsAt == SettingsAsFlags, cfg.SettingsAt == SettingsKeptByRun
	switch {
	case e.Unsupported == UnsupportedMaxTokens && cfg.TokenLimit != TokenLimitMaxCompletionTokens:
		if kept {
			return `The model takes its token limit only as max_completion_tokens (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5)` + keptByRun +
				"`batcheval run` with --token-limit max_completion_tokens"
		}
		if flags {
			return `The model takes its token limit only as max_completion_tokens (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5): run again with --token-limit max_completion_tokens`
		}
		return `The model takes its token limit only as max_completion_tokens (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5): press Test connection on the judge's page, which finds this and saves it, or set "Token limit sent as" to max_completion_tokens there`
	case e.Unsupported == UnsupportedSampling && !cfg.DefaultSamplingOnly:
		if kept {
			return `The model takes only the default temperature and top p (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5)` + keptByRun +
				"`batcheval run` with --default-sampling-only and --token-limit max_completion_tokens"
		}
		if flags {
			return `The model takes only the default temperature and top p (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5): run again with --default-sampling-only (and --token-limit max_completion_tokens), which sends neither and records temperature 1 and top p 1`
		}
		return `The model takes only the default temperature and top p (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5): press Test connection on the judge's page, which finds this and saves it, or tick "Takes only the default temperature and top p" there; then launch with temperature 1 and top p 1`
	case e.Unsupported == UnsupportedReasoningEffort && cfg.ReasoningEffort != ReasoningEffortUnset:
		sent := string(cfg.ReasoningEffort)
		if kept {
			return `The model (or its endpoint) refuses reasoning_effort ` + sent + keptByRun +
				"`batcheval run` without --reasoning-effort, or with a value the model takes"
		}
		if flags {
			return `The model (or its endpoint) refuses reasoning_effort ` + sent + `: run again without --reasoning-effort, or with a value the model takes`
		}
		return `The model (or its endpoint) refuses reasoning_effort ` + sent + `: clear "Reasoning effort" on the judge's page (blank sends none), or choose a value the model takes`
	}
	return ""
}
