package perturb

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/internal/shareddata"
)

// everyWordText is Text as it was before the replacements were drawn among
// the known words (each word drawn at ReplaceRate, replaced only when
// known): the baseline BenchmarkText measures the change against.
func everyWordText(s string, lex Lexicon, opt Options, rng *rand.Rand) (string, Stats) {
	var st Stats
	lines := strings.Split(s, "\n")
	for li, line := range lines {
		words := strings.Fields(line)
		st.Words += len(words)
		out := words[:0:0]
		left := len(words)
		for _, w := range words {
			u := rng.Float64()
			switch {
			case u < opt.DeleteRate && left > 1:
				st.Deleted++
				left--
				continue
			case u < opt.DeleteRate+opt.ReplaceRate:
				if r, ok := replace(w, lex, rng); ok {
					st.Replaced++
					w = r
				}
			}
			out = append(out, w)
		}
		lines[li] = strings.Join(out, " ")
	}
	return strings.Join(lines, "\n"), st
}

// BenchmarkText perturbs the 125 FED dialogues at the paper's rates, as
// Text does now and as it did before (everyWordText), in one process.
func BenchmarkText(b *testing.B) {
	path, ok := shareddata.Path("fed-dialog.jsonl")
	if !ok {
		b.Skip("fed-dialog.jsonl is absent")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	// The dialogues' text, near enough: the JSON lines themselves.
	texts := strings.Split(strings.TrimSpace(string(raw)), "\n")
	lex := DefaultLexicon()
	for _, bc := range []struct {
		name string
		text func(string, Lexicon, Options, *rand.Rand) (string, Stats)
	}{{"known words (now)", Text}, {"every word (before)", everyWordText}} {
		b.Run(bc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				for _, s := range texts {
					bc.text(s, lex, PaperOptions(), rng)
				}
			}
		})
	}
}
