package perturb

import (
	"bufio"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/internal/shareddata"
)

// TestPaperRatesOnRealDialogues: the noise experiment of the BatchEval
// paper deletes 5% and replaces 5% of the tokens. On the shared FED and
// Topical-Chat dialogues (every field a judge sees: the dialogue, and
// Topical-Chat's response) the product asked for 5% and 5% replaced 0.7%
// and 0.4% of the words: each word was drawn at 5% and only those the
// lexicon knows (12.5% and 8.6% of them) could be replaced. The share
// deleted and the share replaced are each recomputed here from the texts
// (words counted as whitespace-separated tokens, a replaced word being one
// that differs from the original at its place) and must lie within 4
// standard deviations of 5%.
func TestPaperRatesOnRealDialogues(t *testing.T) {
	lex := DefaultLexicon()
	for _, tc := range []struct {
		file   string
		fields []string
	}{{"fed-dialog.jsonl", []string{"context"}}, {"topical-chat-usr.jsonl", []string{"context", "response"}}} {
		t.Run(tc.file, func(t *testing.T) {
			path, ok := shareddata.Path(tc.file)
			if !ok {
				t.Skipf("dataset %s is absent; this test needs the shared datasets checkout", tc.file)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rng := rand.New(rand.NewPCG(3, 4))
			var words, deleted, replaced int
			var st Stats
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
			for sc.Scan() {
				var row map[string]any
				if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
					t.Fatal(err)
				}
				for _, field := range tc.fields {
					text, _ := row[field].(string)
					noisy, s := Text(text, lex, PaperOptions(), rng)
					st.Add(s)
					// The deleted and replaced words: the fewest that turn each
					// original line into the noisy one (alignedEdits).
					in, out := strings.Split(text, "\n"), strings.Split(noisy, "\n")
					if len(in) != len(out) {
						t.Fatalf("a perturbation changed the number of lines: %d to %d", len(in), len(out))
					}
					for l := range in {
						a, b := strings.Fields(in[l]), strings.Fields(out[l])
						d, r := alignedEdits(a, b)
						words, deleted, replaced = words+len(a), deleted+d, replaced+r
					}
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			sd := math.Sqrt(0.05 * 0.95 / float64(words))
			for _, r := range []struct {
				what  string
				count int
			}{{"deleted", deleted}, {"replaced", replaced}} {
				share := float64(r.count) / float64(words)
				t.Logf("%s: %.2f%% of %d words %s", tc.file, 100*share, words, r.what)
				if math.Abs(share-0.05) > 4*sd {
					t.Errorf("%.2f%% of the words %s, want 5%% (within %.2f%%)", 100*share, r.what, 400*sd)
				}
			}
			// The alignment cannot always tell a deletion beside a replacement
			// from a replacement beside a deletion ("let down" for one word):
			// the counts the perturbation reports agree to 0.5% of the words.
			if st.Words != words || math.Abs(float64(st.Deleted-deleted)) > 0.005*float64(words) || math.Abs(float64(st.Replaced-replaced)) > 0.005*float64(words) {
				t.Errorf("the perturbation's counts: %d words, %d deleted, %d replaced; recomputed %d, %d and %d", st.Words, st.Deleted, st.Replaced, words, deleted, replaced)
			}
			t.Logf("%s: the perturbation counts %d deleted and %d replaced", tc.file, st.Deleted, st.Replaced)
		})
	}
}

// alignedEdits are the fewest deletions and replacements (together;
// fewer deletions first) that turn the words a into b, each word of a
// kept, deleted, or replaced by one to three words (a synonym such as
// "let down"), by dynamic programming over prefixes.
func alignedEdits(a, b []string) (deleted, replaced int) {
	type cost struct{ edits, replaced, deleted int }
	const far = 1 << 30
	better := func(x, y cost) bool {
		return x.edits < y.edits || (x.edits == y.edits && x.deleted < y.deleted)
	}
	// c[i][j]: turning a[:i] into b[:j].
	c := make([][]cost, len(a)+1)
	for i := range c {
		c[i] = make([]cost, len(b)+1)
		for j := range c[i] {
			c[i][j] = cost{edits: far}
		}
	}
	c[0][0] = cost{}
	for i := 1; i <= len(a); i++ {
		for j := 0; j <= len(b); j++ {
			best := c[i][j]
			if p := c[i-1][j]; p.edits < far {
				if v := (cost{p.edits + 1, p.replaced, p.deleted + 1}); better(v, best) {
					best = v
				}
			}
			if j >= 1 && a[i-1] == b[j-1] && c[i-1][j-1].edits < far {
				if v := c[i-1][j-1]; better(v, best) {
					best = v
				}
			}
			for k := 1; k <= 3 && k <= j; k++ {
				if p := c[i-1][j-k]; p.edits < far {
					if v := (cost{p.edits + 1, p.replaced + 1, p.deleted}); better(v, best) {
						best = v
					}
				}
			}
			c[i][j] = best
		}
	}
	end := c[len(a)][len(b)]
	return end.deleted, end.replaced
}
