package judge

import (
	"fmt"
	"strings"
)

// TokenLimit is the name under which a request caps the judge's answer.
type TokenLimit string

const (
	// TokenLimitMaxTokens sends max_tokens, the name every
	// OpenAI-compatible server knows (Ollama, vLLM, llama.cpp, OpenAI's
	// chat models). The default.
	TokenLimitMaxTokens TokenLimit = "max_tokens"
	// TokenLimitMaxCompletionTokens sends max_completion_tokens, the only
	// name OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and its mini
	// and nano) take, through OpenAI, Azure or OpenRouter. Their cap
	// counts the hidden reasoning tokens too.
	TokenLimitMaxCompletionTokens TokenLimit = "max_completion_tokens"
)

// ParseTokenLimit reads a stored or typed token limit name: "" is
// TokenLimitMaxTokens; anything but the two names is an error saying which
// exist.
func ParseTokenLimit(s string) (TokenLimit, error) {
	switch TokenLimit(strings.ToLower(strings.TrimSpace(s))) {
	case "", TokenLimitMaxTokens:
		return TokenLimitMaxTokens, nil
	case TokenLimitMaxCompletionTokens:
		return TokenLimitMaxCompletionTokens, nil
	}
	return "", fmt.Errorf("the token limit %q is not one of %q (the default, every OpenAI-compatible server) and %q (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5)", s, TokenLimitMaxTokens, TokenLimitMaxCompletionTokens)
}

// ReasoningAllowance is added to every cap sent as max_completion_tokens:
// a reasoning model counts its hidden reasoning tokens in that cap, and
// one that reaches it while still reasoning answers with no text at all
// (finish_reason "length"), billed all the same. OpenAI advises reserving
// about 25,000 tokens for reasoning and answer; a cap only bounds the
// tokens, the bill counts those used, so the room costs nothing unless the
// model reasons that long. Without it the test's 30 tokens
// (evaluator.ScoreCheckMaxTokens) and G-Eval's 5 would get no answer.
const ReasoningAllowance = 25000

// SentCap is the cap a request that asks for maxTokens actually sends
// under this token limit, 0 when it sends none (maxTokens 0 or less):
// maxTokens as max_tokens, maxTokens plus ReasoningAllowance as
// max_completion_tokens. Everything that reasons about the most tokens a
// call may use (the request itself, a shared tokens-per-minute limit, the
// launch form's estimate) reads it here, so none of them counts a
// reasoning judge's call 25,000 tokens short.
func (l TokenLimit) SentCap(maxTokens int) int {
	switch {
	case maxTokens <= 0:
		return 0
	case l == TokenLimitMaxCompletionTokens:
		return maxTokens + ReasoningAllowance
	}
	return maxTokens
}

// SentCap is the cap this judge's requests send for one that asks for
// maxTokens (TokenLimit.SentCap under cfg.TokenLimit).
func (cfg Config) SentCap(maxTokens int) int { return cfg.TokenLimit.SentCap(maxTokens) }

// AnswerGuess is how many tokens a call that asks for maxTokens is
// reckoned to use for its answer before it is known: the cap it sends
// (SentCap), or, when it sends none (maxTokens 0), uncapped, the caller's
// guess for an answer without a cap, given the same reasoning room. A
// reasoning judge's hidden reasoning is billed as completion tokens
// whether or not a cap is sent: guessing a plain answer's size for it
// let a shared tokens-per-minute limit pass calls 25,000 tokens short.
// A judge asked for a reasoning effort reasons too, whatever name its cap
// goes under: with no cap sent it gets the same room (with one, the cap
// bounds the reasoning as well).
func (l TokenLimit) AnswerGuess(maxTokens, uncapped int, effort ReasoningEffort) int {
	if c := l.SentCap(maxTokens); c > 0 {
		return c
	}
	if effort != "" && l != TokenLimitMaxCompletionTokens {
		return uncapped + ReasoningAllowance
	}
	return l.SentCap(uncapped)
}
