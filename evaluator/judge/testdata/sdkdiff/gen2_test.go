package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// level -> key -> child level ("" = scalar)
var shape = map[string]map[string]string{
	"root":    {"choices": "[choice", "model": "", "usage": "usage"},
	"choice":  {"message": "message", "finish_reason": "", "logprobs": "lp"},
	"message": {"content": ""},
	"lp":      {"content": "[token"},
	"token":   {"token": "", "logprob": "", "top_logprobs": "[top"},
	"top":     {"token": "", "logprob": ""},
	"usage":   {"prompt_tokens": "", "completion_tokens": ""},
}

func genShaped(r *rand.Rand, level string) string {
	if r.IntN(12) == 0 {
		return genValue(r, 3)
	}
	if strings.HasPrefix(level, "[") {
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			if r.IntN(15) == 0 {
				parts[i] = scalars[r.IntN(len(scalars))]
			} else {
				parts[i] = genShaped(r, level[1:])
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if level == "" {
		return scalars[r.IntN(len(scalars))]
	}
	fields := shape[level]
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	n := r.IntN(len(names) + 2)
	parts := make([]string, n)
	for i := range parts {
		k := names[r.IntN(len(names))]
		child := fields[k]
		switch r.IntN(10) {
		case 0:
			k = strings.ToUpper(k[:1]) + k[1:]
		case 1:
			k = keys[r.IntN(len(keys))]
		}
		parts[i] = `"` + k + `":` + genShaped(r, child)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestShaped(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fails, withTokens, withChoices := 0, 0, 0
	n := 300000
	for i := 0; i < n; i++ {
		doc := genShaped(r, "root")
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
	t.Logf("%d shaped documents (%d with choices, %d more with tokens), %d differ", n, withChoices, withTokens, fails)
}
