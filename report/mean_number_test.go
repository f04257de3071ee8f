package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"
)

// TestMeanNumberDropsOnlyNoise: a mean is written as the shortest decimal
// within floating-point noise of it; a value with no such decimal keeps
// full precision, so that no figure changes.
func TestMeanNumberDropsOnlyNoise(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{(2.1 + 2.2) / 2, "2.15"},   // 2.1500000000000004
		{(1.01 + 2.63) / 2, "1.82"}, // 1.8199999999999998
		{1.8199999999999998, "1.82"},
		{3.0799999999999996, "3.08"},
		{0.1 + 0.2, "0.3"},
		{2.0000000000000004, "2"},
		{-0.7000000000000001, "-0.7"},
		{2.25, "2.25"},
		{0, "0"},
		{123.456, "123.456"},
		{2.3333333333333335, "2.3333333333333335"}, // a third: no shorter decimal
		{1.234567890123, "1.234567890123"},         // a real 12th decimal stays
		{1e-20, "1e-20"},                           // small is not noise
		{-3.3e-17, "-3.3e-17"},
		{1e21, "1e+21"},
	} {
		got := MeanNumber(tc.in)
		if got != tc.want {
			t.Errorf("MeanNumber(%v) = %q, want %q", tc.in, got, tc.want)
		}
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || math.Abs(back-tc.in) > 1e-14*math.Abs(tc.in) {
			t.Errorf("MeanNumber(%v) = %q reads back as %v: the figure changed", tc.in, got, back)
		}
	}
}

// TestFinalNumberIsTheRoundsMean: a final is written as the decimal mean
// of its rounds when the stored final is that mean but for noise; any
// other final is written as stored, to the last bit.
func TestFinalNumberIsTheRoundsMean(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name   string
		final  *float64
		rounds []*float64
		want   *float64
	}{
		{"mean of two with noise", p((1.01 + 2.63) / 2), []*float64{p(1.01), p(2.63)}, p(1.82)},
		{"mean of three", p((1.8 + 1.84 + 1.82) / 3), []*float64{p(1.8), p(1.84), p(1.82)}, p(1.82)},
		{"unreadable rounds left out", p((1.01 + 2.63) / 2), []*float64{p(1.01), nil, p(2.63)}, p(1.82)},
		{"one G-Eval round, many digits", p(1.6047085545001933), []*float64{p(1.6047085545001933)}, p(1.6047085545001933)},
		{"one round that is noise itself", p(3.0799999999999996), []*float64{p(3.0799999999999996)}, p(3.0799999999999996)},
		{"a third", p(5.0 / 3), []*float64{p(1), p(2), p(2)}, p(5.0 / 3)},
		{"a final that is not the rounds' mean", p(2.5), []*float64{p(1), p(2)}, p(2.5)},
		{"no final", nil, []*float64{nil}, nil},
	} {
		got := FinalNumber(tc.final, tc.rounds)
		switch {
		case (got == nil) != (tc.want == nil):
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		case got != nil && math.Float64bits(*got) != math.Float64bits(*tc.want):
			t.Errorf("%s: %.17g, want %.17g", tc.name, *got, *tc.want)
		}
	}
}

// TestExportFinalsWithoutNoise: the JSON export printed a final score, the
// mean of its rounds, with its floating-point noise (1.8199999999999998
// for the mean of 1.01 and 2.63), where the CSV and the pages read 1.82.
// It prints the mean's shortest decimal, the same as the CSV's.
func TestExportFinalsWithoutNoise(t *testing.T) {
	run, ds, rows, batches, scores := fixture()
	for i := range scores {
		if scores[i].RowID == 10 {
			v := map[int]float64{0: 1.01, 1: 2.63}[scores[i].Round]
			scores[i].Score = &v
		}
	}
	r := Compute(run, ds, rows, batches, scores)
	final := r.Criteria[0].Samples[0].Final
	if final == nil || *final != 1.8199999999999998 {
		t.Fatalf("sample a's final = %v, want the mean 1.8199999999999998 as computed", final)
	}
	raw, _ := exportJSON(t, r)
	if bytes.Contains(raw, []byte("1.8199999999999998")) || !bytes.Contains(raw, []byte(`"final": 1.82,`)) {
		t.Errorf("JSON export writes the final with its noise:\n%s", raw)
	}
	var doc JSONExport
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Report.Criteria[0].Samples[0]
	if got.ID != "a" || got.Final == nil || float64(*got.Final) != 1.82 || len(got.Rounds) != 2 || float64(*got.Rounds[1]) != 2.63 {
		t.Errorf("sample a in the JSON = %+v", got)
	}
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(recs[0], "Q final"); i < 0 || recs[1][i] != "1.82" {
		t.Errorf("CSV final of sample a = %v, want 1.82 as in the JSON", recs[1])
	}
}
