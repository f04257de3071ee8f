package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// TestCorrelationCountsWithoutRatings: a correlation's n and missing add
// up to the criterion's samples whether or not any sample has a human
// rating, as the export schema defines missing ("samples left out for
// lack of a score or a rating"). A criterion whose samples have no rating
// at all (no rating column, a column nobody filled in, a report on
// browser ratings before anyone rated) reported n 0 and missing 0, as if
// the run had no samples, in the JSON export, the API and the command
// line's table.
func TestCorrelationCountsWithoutRatings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		column string            // the criterion's human column
		rating map[int64]float64 // row id -> rating in that column
		n      int
	}{
		{name: "no rating column", column: ""},
		{name: "a column nobody rated", column: "nobody"},
		{name: "one sample rated", column: "one", rating: map[int64]float64{11: 2}, n: 1},
		{name: "every sample rated", column: "h", n: 3}, // d has no final score
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			run.RubricSnapshot.Criteria[0].HumanColumn = tc.column
			for i := range rows {
				if v, ok := tc.rating[rows[i].ID]; ok {
					rows[i].Ratings[tc.column] = f(v)
				}
			}
			c := Compute(run, ds, rows, batches, scores).Criteria[0]
			samples := len(c.Samples)
			for name, corr := range map[string]stats.Correlation{"pearson": c.Pearson, "spearman": c.Spearman, "kendall": c.Kendall} {
				if corr.N != tc.n || corr.N+corr.Missing != samples {
					t.Errorf("%s: n %d, missing %d; want n %d and missing %d (of %d samples)", name, corr.N, corr.Missing, tc.n, samples-tc.n, samples)
				}
			}
			for _, rs := range c.Rounds {
				for name, corr := range map[string]stats.Correlation{"single round": rs.Single, "ensemble": rs.Ensemble} {
					if corr.N+corr.Missing != samples {
						t.Errorf("round %d %s: n %d + missing %d, want %d samples", rs.Round, name, corr.N, corr.Missing, samples)
					}
				}
			}

			rep := Compute(run, ds, rows, batches, scores)
			var buf bytes.Buffer
			if err := rep.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var x struct {
				Report struct {
					Criteria []struct {
						Pearson struct{ N, Missing int }
					}
				}
			}
			if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
				t.Fatal(err)
			}
			if got := x.Report.Criteria[0].Pearson; got.N != tc.n || got.N+got.Missing != samples {
				t.Errorf("JSON export: pearson n %d, missing %d; want n %d, missing %d", got.N, got.Missing, tc.n, samples-tc.n)
			}
		})
	}
}
