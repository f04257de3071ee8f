package stats

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"testing"
)

func TestGroupedCorrelation(t *testing.T) {
	nan := math.NaN()
	// Four groups, by hand:
	//   a: x 1,2,3 against y 1,2,3: r = rho = tau = 1.
	//   b: x 1,2,3 against y 3,1,2: dx = -1,0,1, dy = 1,-1,0, so
	//      Sxy = -1, Sxx = Syy = 2 and r = -1/2; the ranks are the values,
	//      so rho = -1/2 too; of the three pairs (1,2) and (1,3) are
	//      discordant and (2,3) concordant, so tau = (1-2)/3 = -1/3.
	//   c: three rows but one has a NaN: two pairs, skipped.
	//   d: y constant: skipped.
	// Pearson: (1 - 1/2)/2 = 1/4; Kendall: (1 - 1/3)/2 = 1/3. The pairs
	// used are the 3+3 of a and b.
	x := []float64{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}
	y := []float64{1, 2, 3, 3, 1, 2, 1, nan, 2, 4, 4, 4}
	g := []string{"a", "a", "a", "b", "b", "b", "c", "c", "c", "d", "d", "d"}
	// Interleaving the rows must not change anything: groups are by key,
	// not by contiguous runs.
	xi := []float64{1, 1, 2, 2, 3, 3, 1, 2, 3, 1, 2, 3}
	yi := []float64{1, 3, 2, 1, 3, 2, 1, nan, 2, 4, 4, 4}
	gi := []string{"a", "b", "a", "b", "a", "b", "c", "c", "c", "d", "d", "d"}

	tests := []struct {
		name    string
		m       Method
		x, y    []float64
		g       []string
		want    float64
		groups  int
		skipped int
		n       int
	}{
		{"pearson", MethodPearson, x, y, g, 0.25, 2, 2, 6},
		{"spearman", MethodSpearman, x, y, g, 0.25, 2, 2, 6},
		{"kendall", MethodKendall, x, y, g, 1.0 / 3, 2, 2, 6},
		{"pearson interleaved", MethodPearson, xi, yi, gi, 0.25, 2, 2, 6},
		{"no defined group", MethodPearson, []float64{1, 2}, []float64{2, 1}, []string{"a", "a"}, nan, 0, 1, 0},
		{"unknown method", Method("cosine"), x, y, g, nan, 0, 4, 0},
		{"empty", MethodPearson, nil, nil, nil, nan, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := GroupedCorrelation(tt.m, tt.x, tt.y, tt.g)
			if math.IsNaN(tt.want) != math.IsNaN(got.Coef) || math.Abs(got.Coef-tt.want) > 1e-12 {
				t.Errorf("Coef = %.15g, want %.15g", got.Coef, tt.want)
			}
			if got.Groups != tt.groups || got.Skipped != tt.skipped || got.N != tt.n {
				t.Errorf("Groups, Skipped, N = %d, %d, %d; want %d, %d, %d",
					got.Groups, got.Skipped, got.N, tt.groups, tt.skipped, tt.n)
			}
		})
	}
}

// A sample with an empty (or whitespace-only) group value belongs to no
// group: the three such samples here would otherwise form a group of their
// own with r = 1 and be the only one used.
func TestGroupedCorrelationLeavesOutEmptyGroups(t *testing.T) {
	nan := math.NaN()
	x := []float64{1, 2, 3, 1, 2, 1, 2, 3, 4}
	y := []float64{1, 2, 3, 2, 1, 1, 2, nan, 4}
	g := []string{"", " ", "\t", "a", "a", "b", "b", "  ", "\n"}
	got := GroupedCorrelation(MethodPearson, x, y, g)
	if !math.IsNaN(got.Coef) || got.Groups != 0 || got.N != 0 {
		t.Errorf("Coef, Groups, N = %g, %d, %d; want NaN, 0, 0 (no group has three pairs)", got.Coef, got.Groups, got.N)
	}
	if got.Skipped != 2 {
		t.Errorf("Skipped = %d, want 2 (a and b; the empty values are no group)", got.Skipped)
	}
	if got.Ungrouped != 4 {
		t.Errorf("Ungrouped = %d, want 4 (the complete pairs without a group)", got.Ungrouped)
	}
}

// Inside each group the judge orders the samples exactly as humans do, but
// the groups sit at different levels in opposite directions, so the pooled
// correlation is negative while every within-group one is +1. This is the
// case grouped correlation exists for.
func TestGroupedCorrelationDiffersFromPooled(t *testing.T) {
	// Group a: x 1,2,3, y 11,12,13; group b: x 11,12,13, y 1,2,3.
	// Pooled, by hand: mean x = mean y = 7; dx = -6,-5,-4,4,5,6 and
	// dy = 4,5,6,-6,-5,-4, so Sxy = -24-25-24-24-25-24 = -146 and
	// Sxx = Syy = 36+25+16+16+25+36 = 154: r = -146/154 = -0.948052.
	x := []float64{1, 2, 3, 11, 12, 13}
	y := []float64{11, 12, 13, 1, 2, 3}
	g := []string{"a", "a", "a", "b", "b", "b"}
	if got := Pearson(x, y).Coef; math.Abs(got-(-146.0/154)) > 1e-12 {
		t.Errorf("pooled Pearson = %g, want %g", got, -146.0/154)
	}
	if got := GroupedCorrelation(MethodPearson, x, y, g); math.Abs(got.Coef-1) > 1e-12 || got.Groups != 2 {
		t.Errorf("GroupedCorrelation = %+v, want Coef 1 over 2 groups", got)
	}
}

func TestGroupedCorrelationPanicsOnLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for groups shorter than x and y")
		}
	}()
	GroupedCorrelation(MethodPearson, []float64{1, 2, 3}, []float64{1, 2, 3}, []string{"a", "a"})
}

// On USR Topical-Chat each of the 60 contexts has 6 candidate responses.
// Within a context, a more engaging response should still be rated better
// overall, so the per-context correlation is positive on average; a few
// contexts can be undefined when humans gave all six the same score.
func TestTopicalChatGroupedByContext(t *testing.T) {
	f, err := os.Open(topicalChatPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dataset %s is absent; this test needs the shared datasets checkout", topicalChatPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var overall, engaging []float64
	var contexts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24) // rows carry whole dialogues
	for sc.Scan() {
		var row struct {
			ContextID string             `json:"context_id"`
			Scores    map[string]float64 `json:"scores"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("row %d: %v", len(contexts)+1, err)
		}
		o, ok1 := row.Scores["overall"]
		e, ok2 := row.Scores["engagingness"]
		if !ok1 || !ok2 || row.ContextID == "" {
			t.Fatalf("row %d lacks context_id, overall or engagingness", len(contexts)+1)
		}
		overall = append(overall, o)
		engaging = append(engaging, e)
		contexts = append(contexts, row.ContextID)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range Methods() {
		got := GroupedCorrelation(m, overall, engaging, contexts)
		t.Logf("%s grouped by context: %+v", m, got)
		if got.Groups+got.Skipped != 60 {
			t.Errorf("%s: %d defined + %d skipped groups, the README promises 60 contexts", m, got.Groups, got.Skipped)
		}
		// "Most": at least three in four contexts must have a defined
		// coefficient.
		if got.Groups < 45 {
			t.Errorf("%s: only %d of 60 contexts defined", m, got.Groups)
		}
		if !(got.Coef > 0) {
			t.Errorf("%s: grouped correlation %g, want positive", m, got.Coef)
		}
		if got.N != 6*got.Groups {
			t.Errorf("%s: N = %d, want 6 pairs in each of %d groups", m, got.N, got.Groups)
		}
	}
}
