package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/batcheval/batcheval/models/dbtest"
)

// TestCompareFiguresAreTheSameOnEitherDatabase: the same demo experiment,
// judged by the seeded simulated judge on SQLite and on PostgreSQL, gives
// the same comparison in the API to the last digit: the two runs'
// correlation, each sample's scores and differences, and the paired
// figures (coefficients, Zou's and the paired bootstrap's intervals, the
// Williams, Steiger and permutation p-values). The resampling is seeded
// and runs on the samples in a canonical order, so neither the database's
// row order nor its float storage may change a figure.
func TestCompareFiguresAreTheSameOnEitherDatabase(t *testing.T) {
	parallelTest(t)
	type figures struct {
		Pearson   json.RawMessage `json:"pearson"`
		Spearman  json.RawMessage `json:"spearman"`
		Agreement struct {
			Status      string          `json:"status"`
			Differences json.RawMessage `json:"differences"`
		} `json:"agreement"`
		Rows []struct {
			SampleID string          `json:"sample_id"`
			Human    json.RawMessage `json:"human"`
			A        json.RawMessage `json:"a"`
			B        json.RawMessage `json:"b"`
			UnitA    json.RawMessage `json:"unit_a"`
			UnitB    json.RawMessage `json:"unit_b"`
			Diff     json.RawMessage `json:"unit_difference"`
		} `json:"rows"`
	}
	got := map[string][]string{}
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			env := newTestEnv(t, dbtest.Open(t, d))
			x := env.demoExperiment()
			for criterion := range len(x.batchEval.RubricSnapshot.Criteria) {
				rec := env.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=%d", x.batchEval.ID, x.gEval.ID, criterion))
				if rec.Code != http.StatusOK {
					t.Fatalf("criterion %d: %d %.300s", criterion, rec.Code, rec.Body)
				}
				var f figures
				if err := json.Unmarshal(rec.Body.Bytes(), &f); err != nil {
					t.Fatal(err)
				}
				if f.Agreement.Status != AgreementComputed || len(f.Rows) == 0 {
					t.Fatalf("criterion %d: agreement %q, %d rows; want computed figures", criterion, f.Agreement.Status, len(f.Rows))
				}
				out, err := json.Marshal(f)
				if err != nil {
					t.Fatal(err)
				}
				got[string(d)] = append(got[string(d)], string(out))
			}
		})
	}
	if len(got) < len(dbtest.Dialects) {
		t.Skipf("compared on %d of the %d databases (PostgreSQL needs TEST_DATABASE_URL)", len(got), len(dbtest.Dialects))
	}
	first := got[string(dbtest.Dialects[0])]
	for _, d := range dbtest.Dialects[1:] {
		other := got[string(d)]
		if len(other) != len(first) {
			t.Fatalf("%s gave %d criteria, %s %d", d, len(other), dbtest.Dialects[0], len(first))
		}
		for k := range first {
			if other[k] != first[k] {
				t.Errorf("criterion %d differs:\n%s: %.2000s\n%s: %.2000s", k, dbtest.Dialects[0], first[k], d, other[k])
			}
		}
	}
}
