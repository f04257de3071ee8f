package perturb

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestDefaultLexicon(t *testing.T) {
	lex := DefaultLexicon()
	if len(lex) < 150 {
		t.Fatalf("lexicon has %d words, want about 200", len(lex))
	}
	if got := lex["happy"]; len(got) != 2 || got[0] != "glad" {
		t.Errorf("happy -> %v", got)
	}
}

func TestTextRatesAndDeterminism(t *testing.T) {
	lex := DefaultLexicon()
	// 2000 words, all known to the lexicon, so replacement is never short of candidates.
	src := strings.TrimSpace(strings.Repeat("I really like this movie. ", 500))
	a, sa := Text(src, lex, PaperOptions(), rand.New(rand.NewPCG(1, 2)))
	b, _ := Text(src, lex, PaperOptions(), rand.New(rand.NewPCG(1, 2)))
	if a != b {
		t.Fatal("same seed gave different texts")
	}
	if sa.Words != 2500 {
		t.Fatalf("words = %d, want 2500", sa.Words)
	}
	// Binomial(2500, 0.05): mean 125, sd about 11; allow 4 sd.
	for name, n := range map[string]int{"deleted": sa.Deleted} {
		if n < 80 || n > 170 {
			t.Errorf("%s = %d, want about 125", name, n)
		}
	}
	// "I" and "this" are not in the lexicon, the other three words are:
	// 5% of all the words are replaced all the same, drawn among those.
	if sa.Replaced < 80 || sa.Replaced > 170 {
		t.Errorf("replaced = %d, want about 125", sa.Replaced)
	}
	if got := len(strings.Fields(a)); got != sa.Words-sa.Deleted {
		t.Errorf("output has %d words, want %d", got, sa.Words-sa.Deleted)
	}
}

func TestReplaceKeepsPunctuationAndCase(t *testing.T) {
	lex := Lexicon{"happy": {"glad"}}
	rng := rand.New(rand.NewPCG(3, 4))
	cases := map[string]string{"Happy!": "Glad!", "(happy)": "(glad)", "happy,": "glad,", "123": "123"}
	for in, want := range cases {
		got, _ := replace(in, lex, rng)
		if got != want {
			t.Errorf("replace(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextKeepsLinesAndNeverEmptiesALine(t *testing.T) {
	src := "User: hi\nSystem: hello there friend\nUser: ok"
	out, _ := Text(src, DefaultLexicon(), Options{DeleteRate: 0.9}, rand.New(rand.NewPCG(5, 6)))
	lines := strings.Split(out, "\n")
	if len(lines) != 3 {
		t.Fatalf("lines = %d, want 3", len(lines))
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			t.Errorf("line %d emptied", i+1)
		}
	}
}
