package stats

import (
	"bufio"
	"encoding/json"
	"errors"
	"github.com/batcheval/batcheval/internal/shareddata"
	"io/fs"
	"math"
	"os"
	"testing"
)

// topicalChatPath is the shared USR Topical-Chat export (360 responses,
// human ratings only), relative to this package's directory.
var topicalChatPath, _ = shareddata.Path("topical-chat-usr.jsonl")

// loadHumanScores returns one slice per score key, nil where a row lacks it.
func loadHumanScores(t *testing.T, path string, keys ...string) map[string][]*float64 {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dataset %s is absent; this test needs the shared datasets checkout", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]*float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24) // rows carry whole dialogues
	for sc.Scan() {
		var row struct {
			Scores map[string]float64 `json:"scores"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("row %d: %v", len(out[keys[0]])+1, err)
		}
		for _, k := range keys {
			var p *float64
			if v, ok := row.Scores[k]; ok {
				p = &v
			}
			out[k] = append(out[k], p)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTopicalChatHumanScores(t *testing.T) {
	scores := loadHumanScores(t, topicalChatPath, "overall", "engagingness", "understandability")
	overall, engaging, missing := Pairs(scores["overall"], scores["engagingness"])
	if len(overall) != 360 || missing != 0 {
		t.Fatalf("got %d pairs and %d missing, the README promises 360 complete rows", len(overall), missing)
	}

	// An engaging response is rated better overall: the association must be
	// positive and far from chance on 360 responses, whatever the method.
	for _, m := range Methods() {
		c := WithBootstrap(m, overall, engaging, 200, 1)
		if c.Coef <= 0.3 || c.P >= 0.001 {
			t.Errorf("%s(overall, engagingness) = %.3f (p = %g), want clearly positive", m, c.Coef, c.P)
		}
		if !(c.CILow > 0 && c.CILow <= c.Coef && c.Coef <= c.CIHigh) {
			t.Errorf("%s interval [%g, %g] should be positive and contain %g", m, c.CILow, c.CIHigh, c.Coef)
		}
	}

	// A series ranks exactly like itself, ties (steps of 1/3) included.
	for _, m := range Methods() {
		if c := Correlate(m, overall, overall); c.Coef != 1 {
			t.Errorf("%s(overall, overall) = %.17g, want exactly 1", m, c.Coef)
		}
	}

	// Means of three ratings on a 1-5 scale take at most 13 values (steps
	// of 1/3), so the entropy lies strictly between 0 and log2(13).
	if h := Entropy(overall, 0); !(h > 0 && h <= math.Log2(13)) {
		t.Errorf("Entropy(overall) = %g bits, want in (0, %g]", h, math.Log2(13))
	}
	hist := Histogram(overall, 1, 5, 4)
	total := 0
	for _, b := range hist {
		total += b.Count
	}
	if total != len(overall) {
		t.Errorf("histogram over the 1-5 scale counts %d of %d values", total, len(overall))
	}
	s := Describe(overall)
	if s.N != 360 || s.Min < 1 || s.Max > 5 || !(s.Min <= s.Median && s.Median <= s.Max) {
		t.Errorf("Describe(overall) = %+v, out of the documented 1-5 range", s)
	}
}
