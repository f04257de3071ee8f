// Package perturb makes noisy copies of texts for the robustness
// experiment of the BatchEval paper: a share of the words is deleted and
// another share replaced by synonyms, so one can see how much a judge's
// agreement with humans drops when the inputs are slightly damaged.
//
// Synonyms come from a small lexicon written for this project
// (synonyms.txt, about 200 common casual-English words). Words the lexicon
// does not know are never replaced: the replacements are drawn among the
// known words, so that the share asked is replaced (Text); a text with
// fewer known words than that gets all of them replaced, and Stats reports
// how many were.
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
//
// Each word is deleted with probability DeleteRate (never a line's last
// word). ReplaceRate is the share of the text's words to replace: the
// replacements are drawn among the kept words the lexicon knows, each with
// probability ReplaceRate × words / known words (at most 1), so that a text
// with enough known words gets ReplaceRate of its words replaced, as the
// paper's 5% asks, and one with fewer gets all of them. Drawing every
// word at ReplaceRate, as before, replaced only the known ones among
// those drawn: on FED's and Topical-Chat's dialogues, where the lexicon
// knows 12.5% and 8.6% of the words, 0.7% and 0.4% of the words were
// replaced when 5% was asked.
func Text(s string, lex Lexicon, opt Options, rng *rand.Rand) (string, Stats) {
	var st Stats
	lines := strings.Split(s, "\n")
	kept := make([][]string, len(lines))
	var known []bool // by kept word, in order: the lexicon knows it
	nKnown := 0
	for li, line := range lines {
		words := strings.Fields(line)
		st.Words += len(words)
		out := words[:0:0]
		left := len(words)
		for _, w := range words {
			if rng.Float64() < opt.DeleteRate && left > 1 {
				// Never delete a line's last word: a turn must keep its speaker.
				st.Deleted++
				left--
				continue
			}
			out = append(out, w)
			k := opt.ReplaceRate > 0 && knows(w, lex)
			known = append(known, k)
			if k {
				nKnown++
			}
		}
		kept[li] = out
	}
	q := 0.0
	if nKnown > 0 {
		q = min(1, opt.ReplaceRate*float64(st.Words)/float64(nKnown))
	}
	at := 0
	for li, words := range kept {
		for i, w := range words {
			if known[at] && rng.Float64() < q {
				if r, ok := replace(w, lex, rng); ok {
					st.Replaced++
					words[i] = r
				}
			}
			at++
		}
		lines[li] = strings.Join(words, " ")
	}
	return strings.Join(lines, "\n"), st
}

// core is a word's letters with the punctuation around them left out
// ("" for a word without letters), and where they start and end.
func core(w string) (string, int, int) {
	start := strings.IndexFunc(w, unicode.IsLetter)
	if start < 0 {
		return "", 0, 0
	}
	end := strings.LastIndexFunc(w, unicode.IsLetter) + 1
	return w[start:end], start, end
}

// knows reports whether the lexicon has a synonym for w's core.
func knows(w string, lex Lexicon) bool {
	c, _, _ := core(w)
	if c == "" {
		return false
	}
	// Most words are lower case already: no copy for them.
	if strings.IndexFunc(c, unicode.IsUpper) >= 0 {
		c = strings.ToLower(c)
	}
	return len(lex[c]) > 0
}

// replace swaps the word core (letters) for a synonym, keeping punctuation
// around it and a leading capital.
func replace(w string, lex Lexicon, rng *rand.Rand) (string, bool) {
	c, start, end := core(w)
	if c == "" {
		return w, false
	}
	syns := lex[strings.ToLower(c)]
	if len(syns) == 0 {
		return w, false
	}
	syn := syns[rng.IntN(len(syns))]
	if r := []rune(c); unicode.IsUpper(r[0]) {
		sr := []rune(syn)
		sr[0] = unicode.ToUpper(sr[0])
		syn = string(sr)
	}
	return w[:start] + syn + w[end:], true
}
