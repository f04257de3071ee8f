package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// topicalRubric asks for three of the paper's Topical-Chat criteria on the
// paper's judge scales.
const topicalRubric = `task: the next turn of a conversation
fields:
  - {column: context, label: Conversation history}
  - {column: response, label: Response}
criteria:
  - name: Engaging
    description: Is the response dull or interesting?
    lo: 1
    hi: 3
    levels: {low: dull, middle: somewhat interesting, high: interesting}
    human_column: scores.engagingness
  - name: Understandable
    description: Is the response understandable given the history?
    lo: 0
    hi: 2
    levels: {low: not understandable, middle: partly, high: understandable}
    human_column: scores.understandability
  - name: Overall
    description: Overall quality of the response.
    lo: 1
    hi: 5
    levels: {low: poor, middle: fair, high: excellent}
    human_column: scores.overall
`

// TestTopicalChatFiguresRecomputed checks the correlations of a run on the
// real Topical-Chat data against a computation that shares no code with
// the product: the human ratings read straight from the file, the judge's
// finals from the result, and Pearson's r (two-pass), Spearman's rho
// (Pearson of average ranks) and Kendall's tau-b (every pair counted) with
// their p-values written out here from the textbook formulas, at the three
// levels the result reports: turn level (each response, the level
// method.md says the paper reports for Topical-Chat), within contexts
// (averaged over the 60 contexts) and system level (the 6 systems' mean
// scores, with exact permutation p-values for the rank coefficients).
func TestTopicalChatFiguresRecomputed(t *testing.T) {
	topicalChatPath := sharedDataset(t, "topical-chat-usr.jsonl")
	f, err := os.Open(topicalChatPath)
	if err != nil {
		t.Fatal(err)
	}
	type tcRow struct {
		ID      string             `json:"id"`
		Context string             `json:"context_id"`
		System  string             `json:"system_id"`
		Scores  map[string]float64 `json:"scores"`
	}
	byID := map[string]tcRow{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var r tcRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		byID[r.ID] = r
	}
	f.Close()
	if len(byID) != 360 {
		t.Fatalf("Topical-Chat has %d rows, its README says 360", len(byID))
	}

	dir := t.TempDir()
	rubric := writeFile(t, filepath.Join(dir, "tc.yaml"), topicalRubric)
	out := filepath.Join(dir, "tc.json")
	if _, stderr, err := runCLI(t, "run", "--data", topicalChatPath, "--rubric", rubric, "--simulated", "--rounds", "3",
		"--seed", "3", "--group-column", "context_id", "--out", out, "--db", filepath.Join(dir, "t.db")); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	type coef struct {
		Coef *float64 `json:"coef"`
		P    *float64 `json:"p"`
		N    int      `json:"n"`
	}
	var res struct {
		Report struct {
			Criteria []struct {
				Name        string `json:"name"`
				HumanColumn string `json:"human_column"`
				Pearson     coef   `json:"pearson"`
				Spearman    coef   `json:"spearman"`
				Kendall     coef   `json:"kendall"`
				Grouped     struct {
					Column   string   `json:"column"`
					Pearson  *float64 `json:"pearson"`
					Spearman *float64 `json:"spearman"`
					Kendall  *float64 `json:"kendall"`
					Groups   int      `json:"groups"`
				} `json:"grouped"`
				System struct {
					Column   string `json:"column"`
					Pearson  coef   `json:"pearson"`
					Spearman coef   `json:"spearman"`
					Kendall  coef   `json:"kendall"`
				} `json:"system_level"`
				Samples []struct {
					ID    string   `json:"id"`
					Final *float64 `json:"final"`
					Human *float64 `json:"human"`
				} `json:"samples"`
			} `json:"criteria"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Report.Criteria) != 3 {
		t.Fatalf("%d criteria in the result, want 3", len(res.Report.Criteria))
	}
	key := map[string]string{"Engaging": "engagingness", "Understandable": "understandability", "Overall": "overall"}

	near := func(what string, got *float64, want, tol float64) {
		t.Helper()
		switch {
		case got == nil:
			t.Errorf("%s: missing, want %.6f", what, want)
		case math.Abs(*got-want) > tol:
			t.Errorf("%s = %.12f, recomputed %.12f", what, *got, want)
		}
	}
	for _, c := range res.Report.Criteria {
		var judge, human []float64
		groups := map[string][2][]float64{}
		systems := map[string][2][]float64{}
		for _, s := range c.Samples {
			row, ok := byID[s.ID]
			if !ok {
				t.Fatalf("%s: sample %q is not in the data file", c.Name, s.ID)
			}
			h := row.Scores[key[c.Name]]
			if s.Human == nil || *s.Human != h {
				t.Fatalf("%s: sample %s has human %v in the result, %v in the file", c.Name, s.ID, s.Human, h)
			}
			if s.Final == nil {
				continue
			}
			// The finals are means of three one-decimal scores: read them
			// as the decimals they are, so equal finals tie.
			x := math.Round(*s.Final*1e9) / 1e9
			judge, human = append(judge, x), append(human, h)
			g := groups[row.Context]
			groups[row.Context] = [2][]float64{append(g[0], x), append(g[1], h)}
			sy := systems[row.System]
			systems[row.System] = [2][]float64{append(sy[0], *s.Final), append(sy[1], h)}
		}
		if len(judge) != 360 || c.Pearson.N != 360 {
			t.Fatalf("%s: %d finals here, n = %d in the result; want 360", c.Name, len(judge), c.Pearson.N)
		}

		// Turn level.
		n := float64(len(judge))
		r := refPearson(judge, human)
		near(c.Name+" Pearson r", c.Pearson.Coef, r, 1e-9)
		near(c.Name+" Pearson p", c.Pearson.P, refTTestP(r, n), 1e-9)
		rho := refPearson(refRanks(judge), refRanks(human))
		near(c.Name+" Spearman rho", c.Spearman.Coef, rho, 1e-12)
		near(c.Name+" Spearman p", c.Spearman.P, refTTestP(rho, n), 1e-9)
		tau, z := refKendall(judge, human)
		near(c.Name+" Kendall tau-b", c.Kendall.Coef, tau, 1e-12)
		near(c.Name+" Kendall p", c.Kendall.P, math.Erfc(math.Abs(z)/math.Sqrt2), 1e-9)

		// Within contexts: every context has six responses.
		if c.Grouped.Column != "context_id" || c.Grouped.Groups != 60 {
			t.Errorf("%s: grouped by %q over %d groups, want context_id over 60", c.Name, c.Grouped.Column, c.Grouped.Groups)
		}
		var gp, gs, gk []float64
		for _, g := range groups {
			if refConstant(g[0]) || refConstant(g[1]) {
				continue
			}
			gp = append(gp, refPearson(g[0], g[1]))
			gs = append(gs, refPearson(refRanks(g[0]), refRanks(g[1])))
			tk, _ := refKendall(g[0], g[1])
			gk = append(gk, tk)
		}
		near(c.Name+" Pearson within contexts", c.Grouped.Pearson, refMean(gp), 1e-9)
		near(c.Name+" Spearman within contexts", c.Grouped.Spearman, refMean(gs), 1e-12)
		near(c.Name+" Kendall within contexts", c.Grouped.Kendall, refMean(gk), 1e-12)

		// System level: the six systems' mean final against their mean
		// human rating.
		if c.System.Column != "system_id" || len(systems) != 6 {
			t.Fatalf("%s: system level on %q, %d systems here; want system_id and 6", c.Name, c.System.Column, len(systems))
		}
		names := make([]string, 0, len(systems))
		for k := range systems {
			names = append(names, k)
		}
		slices.Sort(names)
		var sj, sh []float64
		for _, k := range names {
			sj, sh = append(sj, refMean(systems[k][0])), append(sh, refMean(systems[k][1]))
		}
		sr := refPearson(sj, sh)
		near(c.Name+" system Pearson r", c.System.Pearson.Coef, sr, 1e-9)
		near(c.Name+" system Pearson p", c.System.Pearson.P, refTTestP(sr, 6), 1e-9)
		srho := refPearson(refRanks(sj), refRanks(sh))
		stau, _ := refKendall(sj, sh)
		near(c.Name+" system Spearman rho", c.System.Spearman.Coef, srho, 1e-12)
		near(c.Name+" system Kendall tau-b", c.System.Kendall.Coef, stau, 1e-12)
		pr, pt := refExactP(sj, sh, srho, stau)
		near(c.Name+" system Spearman p (exact)", c.System.Spearman.P, pr, 1e-12)
		near(c.Name+" system Kendall p (exact)", c.System.Kendall.P, pt, 1e-12)
	}
}

func refMean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func refConstant(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// refPearson is the two-pass Pearson correlation.
func refPearson(x, y []float64) float64 {
	mx, my := refMean(x), refMean(y)
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// refRanks gives 1-based ranks, tied values sharing their mean rank.
func refRanks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// refTTestP is the two-sided p-value of a correlation r on n pairs from
// Student's t with n-2 degrees of freedom.
func refTTestP(r, n float64) float64 {
	if math.Abs(r) == 1 {
		return 0
	}
	t := r * math.Sqrt((n-2)/(1-r*r))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 2}.CDF(-math.Abs(t))
}

// refKendall is tau-b over every pair, and the z statistic of the
// concordant-minus-discordant count with the tie-corrected variance
// (Kendall 1970, as in scipy.stats.kendalltau's asymptotic method).
func refKendall(x, y []float64) (tau, z float64) {
	n := len(x)
	var s, pairsX, pairsY float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			if dx != 0 {
				pairsX++
			}
			if dy != 0 {
				pairsY++
			}
			if dx*dy > 0 {
				s++
			} else if dx*dy < 0 {
				s--
			}
		}
	}
	tau = s / math.Sqrt(pairsX*pairsY)
	ties := func(v []float64) (a, b, c float64) {
		count := map[float64]float64{}
		for _, e := range v {
			count[e]++
		}
		for _, t := range count {
			a += t * (t - 1) * (2*t + 5)
			b += t * (t - 1)
			c += t * (t - 1) * (t - 2)
		}
		return a, b, c
	}
	nf := float64(n)
	ta, tb, tc := ties(x)
	ua, ub, uc := ties(y)
	v := (nf*(nf-1)*(2*nf+5)-ta-ua)/18 + tb*ub/(2*nf*(nf-1)) + tc*uc/(9*nf*(nf-1)*(nf-2))
	return tau, s / math.Sqrt(v)
}

// refExactP is the share of the orderings of y (x fixed) whose Spearman
// rho and Kendall tau-b are at least as far from 0 as rho and tau: the
// exact two-sided permutation p-values, for a handful of points.
func refExactP(x, y []float64, rho, tau float64) (pRho, pTau float64) {
	perm := slices.Clone(y)
	var total, farRho, farTau float64
	var walk func(k int)
	walk = func(k int) {
		if k == len(perm) {
			total++
			if math.Abs(refPearson(refRanks(x), refRanks(perm))) >= math.Abs(rho)-1e-12 {
				farRho++
			}
			if t, _ := refKendall(x, perm); math.Abs(t) >= math.Abs(tau)-1e-12 {
				farTau++
			}
			return
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			walk(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	walk(0)
	return farRho / total, farTau / total
}
