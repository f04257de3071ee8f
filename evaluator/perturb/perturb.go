// Package perturb makes noisy copies of texts for the robustness
// experiment of the BatchEval paper: a share of the words is deleted and
// another share replaced by synonyms, so one can see how much a judge's
// agreement with humans drops when the inputs are slightly damaged.
//
// Synonyms come from a small lexicon written for this project
// (synonyms.txt, about 200 common casual-English words). Words the lexicon
// does not know are never replaced, so on texts with few known words fewer
// replacements happen than asked; Stats reports how many did.
package perturb

import (
	"bufio"
	_ "embed"
	"math/rand/v2"
	"strings"
	"unicode"
)

//go:embed synonyms.txt
var lexiconText string

// Lexicon maps a lower-case word to its synonyms.
type Lexicon map[string][]string

// DefaultLexicon is the shipped lexicon.
func DefaultLexicon() Lexicon {
	lex := Lexicon{}
	sc := bufio.NewScanner(strings.NewReader(lexiconText))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, syns, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for _, s := range strings.Split(syns, ",") {
			if s = strings.TrimSpace(s); s != "" {
				lex[strings.TrimSpace(word)] = append(lex[strings.TrimSpace(word)], s)
			}
		}
	}
	return lex
}

// Options say how much noise to add. The paper deletes 5% and replaces 5%.
type Options struct {
	DeleteRate  float64
	ReplaceRate float64
}

// PaperOptions are the paper's rates: 5% deleted, 5% replaced.
func PaperOptions() Options { return Options{DeleteRate: 0.05, ReplaceRate: 0.05} }

// Stats counts what a perturbation did.
type Stats struct {
	Words, Deleted, Replaced int
}

// Add accumulates counts.
func (s *Stats) Add(o Stats) {
	s.Words += o.Words
	s.Deleted += o.Deleted
	s.Replaced += o.Replaced
}

// Text perturbs one text. Line breaks are kept (turn structure matters in
// dialogues); words are whitespace-separated tokens, and a word's
// surrounding punctuation stays with a replacement.
func Text(s string, lex Lexicon, opt Options, rng *rand.Rand) (string, Stats) {
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
				// Never delete a line's last word: a turn must keep its speaker.
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

// replace swaps the word core (letters) for a synonym, keeping punctuation
// around it and a leading capital.
func replace(w string, lex Lexicon, rng *rand.Rand) (string, bool) {
	start := strings.IndexFunc(w, unicode.IsLetter)
	if start < 0 {
		return w, false
	}
	end := strings.LastIndexFunc(w, unicode.IsLetter) + 1
	core := w[start:end]
	syns := lex[strings.ToLower(core)]
	if len(syns) == 0 {
		return w, false
	}
	syn := syns[rng.IntN(len(syns))]
	if r := []rune(core); unicode.IsUpper(r[0]) {
		sr := []rune(syn)
		sr[0] = unicode.ToUpper(sr[0])
		syn = string(sr)
	}
	return w[:start] + syn + w[end:], true
}
