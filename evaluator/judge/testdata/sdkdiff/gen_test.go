package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var keys = []string{"choices", "model", "usage", "message", "content", "finish_reason", "logprobs", "token", "logprob",
	"top_logprobs", "prompt_tokens", "completion_tokens", "Choices", "x", "\\u0063hoices", "conte\\u006et"}
var scalars = []string{`"s"`, `""`, `"12"`, `"-3.5"`, `"1e400"`, `"abc"`, `" 7"`, `"\u00e9\ud800\ud83d\ude42\n\"\\"`, "\"\xff\xfe\"",
	`0`, `-0`, `12`, `-12`, `3.50`, `1e2`, `1E-2`, `-1e400`, `9007199254740993`, `-9007199254740993`, `18446744073709551616`,
	`99999999999999999999999`, `0.1`, `true`, `false`, `null`, `[]`, `{}`, `[null]`, `"NaN"`, `"Infinity"`, `"+5"`, `"0x10"`}

func genValue(r *rand.Rand, depth int) string {
	if depth > 5 || r.IntN(4) == 0 {
		return scalars[r.IntN(len(scalars))]
	}
	ws := []string{"", " ", "\n", "\t "}
	w := func() string { return ws[r.IntN(len(ws))] }
	if r.IntN(3) == 0 {
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = w() + genValue(r, depth+1) + w()
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	n := r.IntN(5)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = w() + `"` + keys[r.IntN(len(keys))] + `"` + w() + ":" + w() + genValue(r, depth+1) + w()
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fails, withChoices, withTokens := 0, 0, 0
	n := 300000
	for i := 0; i < n; i++ {
		doc := genValue(r, 0)
		want, got := sdk([]byte(doc)), ours([]byte(doc))
		if strings.Contains(want, " (") {
			withTokens++
		} else if !strings.Contains(want, "n=0") && !strings.HasPrefix(want, "ERR") {
			withChoices++
		}
		if want != got {
			fails++
			if fails < 5 {
				t.Errorf("body %s:\n sdk  %s\n ours %s", doc, want, got)
			}
		}
	}
	t.Logf("%d generated documents (%d with choices, %d more with tokens), %d differ", n, withChoices, withTokens, fails)
}
