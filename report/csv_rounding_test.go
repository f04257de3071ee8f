package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readerRounds4 is how a reader rounds a number of the JSON export to the
// CSV's four decimals: the decimal as exported, halves away from zero,
// trailing zeros dropped. Written from the rule, not from HumanNumber.
func readerRounds4(exported string) string {
	r, ok := new(big.Rat).SetString(exported)
	if !ok {
		return "not a number: " + exported
	}
	s := r.FloatString(4) // halves away from zero
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// TestCSVRoundsScoresAsTheJSONReads: the CSV's final score is the JSON
// export's final rounded to four decimals as a reader (and every page)
// rounds it, half away from zero. The CSV rounded the binary float
// instead: a final of 1.00125 (the mean of 1 and 1.0025; the JSON writes
// 1.00125) was 1.0012 in the CSV, 1.00105 was 1.001, where the reader of
// the JSON, and the rule of the pages (web.Decimal), read 1.0013 and
// 1.0011.
func TestCSVRoundsScoresAsTheJSONReads(t *testing.T) {
	for _, tc := range []struct {
		rounds    [2]float64
		wantFinal string // the JSON's final
		wantCSV   string
	}{
		{[2]float64{1, 1.0025}, "1.00125", "1.0013"},
		{[2]float64{1, 1.0021}, "1.00105", "1.0011"},
		{[2]float64{1, 1.0001}, "1.00005", "1.0001"},
		{[2]float64{2.9999, 3}, "2.99995", "3"},
		{[2]float64{1.01, 2.63}, "1.82", "1.82"},
		{[2]float64{1.00001, 1.00002}, "1.000015", "1"},
		{[2]float64{1, 1.00013}, "1.000065", "1.0001"},
	} {
		run, ds, rows, batches, scores := fixture()
		for i := range scores {
			if scores[i].RowID == 10 {
				v := tc.rounds[scores[i].Round]
				scores[i].Score = &v
			}
		}
		r := Compute(run, ds, rows, batches, scores)
		raw, _ := exportJSON(t, r)
		var doc struct {
			Report struct {
				Criteria []struct {
					Samples []struct {
						ID    string          `json:"id"`
						Final json.RawMessage `json:"final"`
					} `json:"samples"`
				} `json:"criteria"`
			} `json:"report"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		exported := string(doc.Report.Criteria[0].Samples[0].Final)
		if exported != tc.wantFinal {
			t.Errorf("rounds %v: the JSON's final is %s, want %s", tc.rounds, exported, tc.wantFinal)
		}
		var buf bytes.Buffer
		if err := r.WriteCSV(&buf); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(recs[0], "Q final")
		if got := recs[1][i]; got != tc.wantCSV || got != readerRounds4(exported) {
			t.Errorf("rounds %v: the CSV's final is %s; the JSON's %s rounded is %s (want %s)", tc.rounds, got, exported, readerRounds4(exported), tc.wantCSV)
		}
	}
}

// TestHumanNumberRoundsTheExportedDecimal sweeps the means of two
// four-decimal scores (half of them lie half-way at the fifth decimal)
// and negative figures: HumanNumber writes each as readerRounds4 rounds
// the decimal the JSON export writes for it.
func TestHumanNumberRoundsTheExportedDecimal(t *testing.T) {
	bad := 0
	// Carries, signs, zeros and figures of every length.
	for _, v := range []float64{0, -0.0, 2.99996, 2.99995, 9.99995, -9.99995, 0.00004, -0.00004, -0.00005, 0.00005, 1e-9, -1e-9,
		2.3333333333333335, 3.0799999999999996, 2.1500000000000004, 123456.78905, 5, 1, 0.5} {
		if got, want := HumanNumber(v), readerRounds4(MeanNumber(v)); got != want {
			t.Errorf("HumanNumber(%v) = %s; the exported %s rounded is %s", v, got, MeanNumber(v), want)
		}
	}
	rng := rand.New(rand.NewPCG(48, 48))
	for range 20000 {
		v := (rng.Float64() - 0.5) * 20
		if got, want := HumanNumber(v), readerRounds4(MeanNumber(v)); got != want && bad < 10 {
			t.Errorf("HumanNumber(%v) = %s; the exported %s rounded is %s", v, got, MeanNumber(v), want)
			bad++
		}
	}
	for i := 10000; i < 12000; i += 7 {
		for j := i; j < i+60; j++ {
			a, b := float64(i)/10000, float64(j)/10000
			for _, m := range []float64{(a + b) / 2, -(a + b) / 2, (a+b)/2 - 1} {
				exported := MeanNumber(m)
				if _, err := strconv.ParseFloat(exported, 64); err != nil {
					t.Fatalf("MeanNumber(%v) = %q", m, exported)
				}
				if got, want := HumanNumber(m), readerRounds4(exported); got != want && bad < 10 {
					t.Errorf("HumanNumber(%v) = %s; the exported %s rounded is %s", m, got, exported, want)
					bad++
				}
			}
		}
	}
}
