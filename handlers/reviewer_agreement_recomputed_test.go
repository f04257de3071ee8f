package handlers

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewerAgreementRecomputed: three browser reviewers rate eight
// samples of a run with ties and gaps (one sample rated once, so not
// pairable; others by two of the three), and the run is recomputed with
// the browser ratings. Every agreement figure the JSON export gives is
// recomputed here from the ratings and the exported finals by its
// definition, written independently of evaluator/stats: each sample's
// human rating (the mean of its reviewers' ratings), the judge's Pearson
// r, Spearman ρ (Pearson on mid-ranks) and Kendall τ-b (over all pairs)
// with the humans, with n and missing, and the human ceiling:
// Krippendorff's interval α (from its pair sums) and the mean leave-one-out
// Pearson r of each reviewer against the others' mean.
func TestReviewerAgreementRecomputed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := env.localCtx()
		x := env.demoExperiment()
		run := x.batchEval
		crit := run.RubricSnapshot.Criteria[0]
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		nan := math.NaN()
		// ratings[i][r]: reviewer r's rating of row i, NaN when none.
		ratings := [][]float64{
			{1, 1, nan},
			{2, 2, 3},
			{3, nan, 3},
			{2, 1, 2},
			{nan, 3, 3},
			{1, 2, nan},
			{2, nan, nan},
			{3, 3, 2},
		}
		reviewers := []string{"Ann", "Bob", "Cid"}
		for i, rs := range ratings {
			for r, v := range rs {
				if math.IsNaN(v) {
					continue
				}
				score := v
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: run.DatasetID, RowID: rows[i].ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: reviewers[r], Lo: crit.Lo, Hi: crit.Hi, Score: &score})
				must(t, err)
			}
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		var ex struct {
			Report struct {
				Criteria []struct {
					Name                       string
					Pearson, Spearman, Kendall struct {
						Coef    *float64 `json:"coef"`
						N       int      `json:"n"`
						Missing int      `json:"missing"`
					}
					HumanCeiling *struct {
						Annotators  int      `json:"annotators"`
						Items       int      `json:"items"`
						Alpha       *float64 `json:"krippendorff_alpha"`
						LeaveOneOut *float64 `json:"leave_one_out_pearson"`
					} `json:"human_ceiling"`
					Samples []struct {
						ID    string   `json:"id"`
						Final *float64 `json:"final"`
						Human *float64 `json:"human"`
					}
				}
			}
		}
		rec := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d", rec.Code)
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &ex))
		c := ex.Report.Criteria[0]
		if len(c.Samples) != len(rows) {
			t.Fatalf("%d samples exported, the dataset has %d rows", len(c.Samples), len(rows))
		}
		near := func(what string, got *float64, want float64) {
			t.Helper()
			if got == nil || math.Abs(*got-want) > 1e-9 {
				t.Errorf("%s: exported %v, recomputed %v", what, exportedOrNil(got), want)
			}
		}
		// Each sample's human rating: the mean of its reviewers' ratings.
		var judge, human []float64
		for i, s := range c.Samples {
			var sum float64
			k := 0
			if i < len(ratings) {
				for _, v := range ratings[i] {
					if !math.IsNaN(v) {
						sum += v
						k++
					}
				}
			}
			if k == 0 {
				if s.Human != nil {
					t.Errorf("sample %s: human %v, but no reviewer rated it", s.ID, *s.Human)
				}
				continue
			}
			near("sample "+s.ID+"'s human rating", s.Human, sum/float64(k))
			if s.Final != nil {
				judge, human = append(judge, *s.Final), append(human, sum/float64(k))
			}
		}
		n := len(judge)
		near("Pearson r", c.Pearson.Coef, textbookPearson(judge, human))
		near("Spearman ρ", c.Spearman.Coef, textbookPearson(midRanks(judge), midRanks(human)))
		near("Kendall τ-b", c.Kendall.Coef, kendallTauB(judge, human))
		for _, cc := range []struct {
			name       string
			n, missing int
		}{{"Pearson", c.Pearson.N, c.Pearson.Missing}, {"Spearman", c.Spearman.N, c.Spearman.Missing}, {"Kendall", c.Kendall.N, c.Kendall.Missing}} {
			if cc.n != n || cc.missing != len(rows)-n {
				t.Errorf("%s: n %d, missing %d; want %d and %d", cc.name, cc.n, cc.missing, n, len(rows)-n)
			}
		}
		// The human ceiling among the three reviewers.
		hc := c.HumanCeiling
		if hc == nil {
			t.Fatal("no human ceiling exported, with three reviewers")
		}
		items := 0
		for _, rs := range ratings {
			if pairable(rs) >= 2 {
				items++
			}
		}
		if hc.Annotators != 3 || hc.Items != items {
			t.Errorf("ceiling: %d annotators over %d items; want 3 over %d", hc.Annotators, hc.Items, items)
		}
		near("Krippendorff's alpha", hc.Alpha, alphaByPairs(ratings))
		near("leave-one-out Pearson", hc.LeaveOneOut, leaveOneOut(ratings))
	})
}

func exportedOrNil(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func pairable(rs []float64) int {
	k := 0
	for _, v := range rs {
		if !math.IsNaN(v) {
			k++
		}
	}
	return k
}

// midRanks ranks xs from 1, ties sharing the mean of their ranks.
func midRanks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	out := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			out[idx[k]] = float64(i+j+1) / 2 // mean of ranks i+1..j
		}
		i = j
	}
	return out
}

// kendallTauB is (concordant − discordant) / sqrt((n0 − n1)(n0 − n2)) over
// all pairs, n1 and n2 the pairs tied in x and in y.
func kendallTauB(x, y []float64) float64 {
	var con, dis, tx, ty, n0 float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			n0++
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				tx++
				ty++
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx*dy > 0:
				con++
			default:
				dis++
			}
		}
	}
	return (con - dis) / math.Sqrt((n0-tx)*(n0-ty))
}

// alphaByPairs is Krippendorff's interval alpha from its definition:
// D_o = Σ_u Σ_{i≠j in u} (v_i − v_j)² / (m_u − 1) / n and D_e = Σ_{i≠j}
// (v_i − v_j)² over all pairable values / (n(n − 1)).
func alphaByPairs(ratings [][]float64) float64 {
	var all []float64
	var do float64
	for _, rs := range ratings {
		var vs []float64
		for _, v := range rs {
			if !math.IsNaN(v) {
				vs = append(vs, v)
			}
		}
		if len(vs) < 2 {
			continue
		}
		var s float64
		for i := range vs {
			for j := range vs {
				if i != j {
					s += (vs[i] - vs[j]) * (vs[i] - vs[j])
				}
			}
		}
		do += s / float64(len(vs)-1)
		all = append(all, vs...)
	}
	n := float64(len(all))
	do /= n
	var de float64
	for i := range all {
		for j := range all {
			if i != j {
				de += (all[i] - all[j]) * (all[i] - all[j])
			}
		}
	}
	de /= n * (n - 1)
	return 1 - do/de
}

// leaveOneOut is the mean over reviewers of Pearson's r between a
// reviewer's ratings and the mean of the others' on the items both have.
func leaveOneOut(ratings [][]float64) float64 {
	var sum float64
	k := 0
	for a := range ratings[0] {
		var own, others []float64
		for _, rs := range ratings {
			if math.IsNaN(rs[a]) {
				continue
			}
			var s float64
			m := 0
			for b, v := range rs {
				if b != a && !math.IsNaN(v) {
					s += v
					m++
				}
			}
			if m > 0 {
				own, others = append(own, rs[a]), append(others, s/float64(m))
			}
		}
		if len(own) >= 3 {
			if r := textbookPearson(own, others); !math.IsNaN(r) {
				sum += r
				k++
			}
		}
	}
	return sum / float64(k)
}
