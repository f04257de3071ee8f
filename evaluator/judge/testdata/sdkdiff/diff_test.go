package diff

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/openai/openai-go/v3"
)

// sdk is what the old client's decode produced, as one string.
func sdk(raw []byte) string {
	var cc openai.ChatCompletion
	if err := json.Unmarshal(raw, &cc); err != nil {
		return "ERR " + err.Error()
	}
	var chs []Choice
	for _, ch := range cc.Choices {
		choice := Choice{Text: ch.Message.Content, FinishReason: ch.FinishReason}
		for _, tl := range ch.Logprobs.Content {
			tok := TokenLogprob{Token: tl.Token, Logprob: tl.Logprob}
			for _, alt := range tl.TopLogprobs {
				tok.Top = append(tok.Top, TopLogprob{Token: alt.Token, Logprob: alt.Logprob})
			}
			choice.Logprobs = append(choice.Logprobs, tok)
		}
		chs = append(chs, choice)
	}
	return render(chs, cc.Model, cc.Usage.PromptTokens, cc.Usage.CompletionTokens)
}

func ours(raw []byte) string {
	if !json.Valid(raw) {
		err := json.Unmarshal(raw, new(struct{}))
		return "ERR " + err.Error()
	}
	cc, err := parseCompletion(raw)
	if err != nil {
		return "ERR " + err.Error()
	}
	return render(cc.Choices, cc.Model, cc.PromptTokens, cc.CompletionTokens)
}

func render(chs []Choice, model string, p, c int64) string {
	s := fmt.Sprintf("%q %d %d n=%d", model, p, c, len(chs))
	for _, ch := range chs {
		s += fmt.Sprintf(" {%q %q %d", ch.Text, ch.FinishReason, len(ch.Logprobs))
		for _, t := range ch.Logprobs {
			s += fmt.Sprintf(" (%q %v %d", t.Token, math.Float64bits(t.Logprob), len(t.Top))
			for _, a := range t.Top {
				s += fmt.Sprintf(" %q %v", a.Token, math.Float64bits(a.Logprob))
			}
			s += ")"
		}
		s += "}"
	}
	return s
}

var seeds = []string{
	`{"id":"x","object":"chat.completion","created":1,"model":"m-1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Score: 4"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}`,
	`{"model":"m","choices":[{"message":{"content":"4"},"logprobs":{"content":[{"token":"4","logprob":-0.1,"top_logprobs":[{"token":"4","logprob":-0.1},{"token":"5","logprob":"-2.5"}]}]}}]}`,
	`{"choices":[null,{"message":{"content":3.50},"finish_reason":true}],"usage":{"prompt_tokens":"12.9","completion_tokens":1e30}}`,
	`{"Choices":[],"choices":[{"message":{"content":"a\u00e9\ud83d\ude42\ud800x"}}],"model":7,"model":"b"}`,
	`{"choices":[{"message":{"content":{"a":[1,"]"]}},"logprobs":{"content":[{"token":null,"logprob":true},"x"]}}]}`,
	`[1]`, `null`, `"s"`, `true`, `-1`, `{}`, `{"choices":"x"}`,
	`{"usage":{"prompt_tokens":9007199254740993,"completion_tokens":-99999999999999999999},"choices":[{}]}`,
	`{"choices":[{"message":{"content":"\\\"\/\b\f\n\r\t"}}],"usage":{"prompt_tokens":40000000000000000000}}`,
}

func FuzzDecodeLikeSDK(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if want, got := sdk(raw), ours(raw); want != got {
			t.Fatalf("body %q:\n sdk  %s\n ours %s", raw, want, got)
		}
	})
}

func TestSeeds(t *testing.T) {
	for _, s := range seeds {
		if want, got := sdk([]byte(s)), ours([]byte(s)); want != got {
			t.Errorf("body %s:\n sdk  %s\n ours %s", s, want, got)
		}
	}
}
