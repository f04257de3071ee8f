package evaluator

import "strings"

// reasoningTags are the tags reasoning models (DeepSeek-R1, Qwen3, QwQ and
// their distills) wrap their thinking in when the server passes it through
// in the answer's text: Ollama's OpenAI-compatible API, llama.cpp's server
// and vLLM without a reasoning parser do.
var reasoningTags = []string{"think", "thinking", "reasoning"}

// reasoningOnlyProblem is said of an answer that is all thinking: its
// closing tag never came, so the model was cut off before it answered.
const reasoningOnlyProblem = "the answer is only the model's reasoning (its <think> block never closes): it was cut off before answering; raise the judge's max tokens, or use a model that does not think aloud"

// StripReasoning returns the answer that follows a reasoning model's
// thinking block, which opens the text: "<think>…</think>" (or thinking,
// reasoning), or a lone "</think>" when the chat template opened the block
// in the prompt. The thinking drafts scores ("maybe 3… Float Scores:
// [Sample1:3]") that the answer then revises; read with the answer, a
// draft made the scores disagree and the sample unreadable. only is true
// when the text is a block that never closes: nothing in it is an answer.
// Text without such a block is returned unchanged.
func StripReasoning(text string) (answer string, only bool) {
	t := strings.TrimLeft(text, " \t\r\n\ufeff")
	for _, tag := range reasoningTags {
		open, closing := "<"+tag+">", "</"+tag+">"
		if !strings.HasPrefix(t, open) {
			continue
		}
		i := strings.Index(t, closing)
		if i < 0 {
			return "", true
		}
		return strings.TrimLeft(t[i+len(closing):], " \t\r\n"), false
	}
	if i := strings.Index(text, "</think>"); i >= 0 && !strings.Contains(text[:i], "<think>") {
		return strings.TrimLeft(text[i+len("</think>"):], " \t\r\n"), false
	}
	return text, false
}
