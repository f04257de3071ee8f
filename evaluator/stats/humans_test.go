package stats

import (
	"math"
	"slices"
	"testing"
)

// krippendorffData is the reliability data of Krippendorff, "Computing
// Krippendorff's Alpha-Reliability" (2011), section C: 4 observers (A-D)
// code 12 units on a 1-5 scale, with missing values. Transposed here to
// one row per unit, one column per observer:
//
//	unit:  1 2 3 4 5 6 7 8 9 10 11 12
//	A:     1 2 3 3 2 1 4 1 2  .  .  .
//	B:     1 2 3 3 2 2 4 1 2  5  .  3
//	C:     . 3 3 3 2 3 4 2 2  5  1  .
//	D:     1 2 3 3 2 4 4 1 2  5  1  .
//
// The paper reports alpha = 0.849 for the interval metric (0.743 nominal,
// 0.815 ordinal, 0.797 ratio). Reproduced by hand with the formulas in
// KrippendorffAlphaInterval's comment:
//
//	Unit 12 has one value and is not pairable; the other 11 units hold
//	n = 40 pairable values: nine 1s, thirteen 2s, ten 3s, five 4s, three 5s.
//	Only three units disagree (2·m·SS/(m-1) each, SS about the unit mean):
//	  unit 2 {2,2,3,2}: SS = 0.75, 2·4·0.75/3 = 2
//	  unit 6 {1,2,3,4}: SS = 5,    2·4·5/3    = 40/3
//	  unit 8 {1,1,2,1}: SS = 0.75, 2·4·0.75/3 = 2
//	D_o = (2 + 40/3 + 2)/40 = 13/30.
//	All values: Σv = 100, mean 2.5, Σv² = 306, SS = 306 - 40·6.25 = 56,
//	D_e = 2·56/39 = 112/39.
//	alpha = 1 - (13/30)/(112/39) = 1 - 507/3360 = 2853/3360 = 0.849107.
func krippendorffData() [][]float64 {
	n := math.NaN()
	return [][]float64{
		{1, 1, n, 1},
		{2, 2, 3, 2},
		{3, 3, 3, 3},
		{3, 3, 3, 3},
		{2, 2, 2, 2},
		{1, 2, 3, 4},
		{4, 4, 4, 4},
		{1, 1, 2, 1},
		{2, 2, 2, 2},
		{n, 5, 5, 5},
		{n, n, 1, 1},
		{n, 3, n, n},
	}
}

func TestKrippendorffAlphaInterval(t *testing.T) {
	nan := math.NaN()
	// The paper's data with every value mapped x -> 10 - 2x: the interval
	// metric only sees differences relative to their spread, so a linear
	// change of scale must not change alpha.
	rescaled := krippendorffData()
	for _, row := range rescaled {
		for a := range row {
			row[a] = 10 - 2*row[a]
		}
	}
	tests := []struct {
		name    string
		ratings [][]float64
		want    float64
		tol     float64
	}{
		{"Krippendorff 2011, exact", krippendorffData(), 2853.0 / 3360, 1e-12},
		{"Krippendorff 2011, as published", krippendorffData(), 0.849, 0.0005},
		{"linear change of scale", rescaled, 2853.0 / 3360, 1e-12},
		{
			// By hand: item 3 has one rating and item 4 none, so n = 4
			// pairable values 1, 2, 3, 3. Only item 1 disagrees: the
			// ordered pairs (1,2) and (2,1) give 2·1²/(2-1) = 2, D_o = 2/4.
			// Over all values the unordered pairs' squared differences are
			// 1, 4, 4, 1, 1, 0 = 11, so D_e = 2·11/(4·3) = 11/6 and
			// alpha = 1 - (1/2)/(11/6) = 1 - 3/11 = 8/11.
			name:    "tiny by hand",
			ratings: [][]float64{{1, 2}, {3, 3}, {2, nan}, {nan, nan}},
			want:    8.0 / 11, tol: 1e-12,
		},
		{
			// Ragged rows: a short row is an annotator who stopped early.
			// Same data as above.
			name:    "ragged rows",
			ratings: [][]float64{{1, 2}, {3, 3}, {2}, {}},
			want:    8.0 / 11, tol: 1e-12,
		},
		{"perfect agreement", [][]float64{{1, 1, 1}, {2, 2, nan}, {5, 5, 5}}, 1, 1e-12},
		{
			// By hand: two items {1,2} and {2,1}. D_o = (2 + 2)/4 = 1 (each
			// item's ordered pairs give 2·1²). Values 1,2,2,1: unordered
			// squared differences 1,1,0,0,1,1 = 4, D_e = 2·4/12 = 2/3.
			// alpha = 1 - 1/(2/3) = -1/2: worse than chance.
			name: "systematic disagreement", ratings: [][]float64{{1, 2}, {2, 1}},
			want: -0.5, tol: 1e-12,
		},
		{"every value the same", [][]float64{{3, 3}, {3, 3, 3}}, nan, 0},
		{"nothing pairable", [][]float64{{1, nan}, {nan, 2}, {4}}, nan, 0},
		{"empty", nil, nan, 0},
		{"infinite counts as missing", [][]float64{{1, 2}, {3, 3}, {2, math.Inf(1)}}, 8.0 / 11, 1e-12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := KrippendorffAlphaInterval(tt.ratings)
			if math.IsNaN(tt.want) != math.IsNaN(got) || math.Abs(got-tt.want) > tt.tol {
				t.Errorf("alpha = %.15g, want %.15g (±%g)", got, tt.want, tt.tol)
			}
		})
	}
}

func TestLeaveOneOutCorrelation(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		m       Method
		ratings [][]float64
		want    float64
		per     []float64
	}{
		{
			// Annotators A = 1,2,3,4, B = 2,1,4,3, C = 1,2,3,4 (columns).
			// A against mean(B, C) = 1.5,1.5,3.5,3.5: dx = -1.5,-.5,.5,1.5,
			// dy = -1,-1,1,1, Sxy = 4, Sxx = 5, Syy = 4, r = 4/√20 = 2/√5.
			// C is the same as A: 2/√5.
			// B against mean(A, C) = 1,2,3,4: dx = -.5,-1.5,1.5,.5,
			// dy = -1.5,-.5,.5,1.5, Sxy = .75+.75+.75+.75 = 3,
			// Sxx = Syy = 5, r = 3/5.
			// Mean = (2/√5 + 3/5 + 2/√5)/3 = (4/√5 + 0.6)/3 = 0.796285.
			name: "pearson by hand", m: MethodPearson,
			ratings: [][]float64{{1, 2, 1}, {2, 1, 2}, {3, 4, 3}, {4, 3, 4}},
			want:    (4/math.Sqrt(5) + 0.6) / 3,
			per:     []float64{2 / math.Sqrt(5), 0.6, 2 / math.Sqrt(5)},
		},
		{
			// Kendall on the same data. A against 1.5,1.5,3.5,3.5: of the 6
			// pairs, (1,2) and (3,4) are tied in y only, the other 4 are
			// concordant: tau-b = 4/√(6·4) = 2/√6. B against 1,2,3,4:
			// (1,2) and (3,4) discordant, the other 4 concordant:
			// tau = (4-2)/6 = 1/3. Mean = (4/√6 + 1/3)/3.
			name: "kendall by hand", m: MethodKendall,
			ratings: [][]float64{{1, 2, 1}, {2, 1, 2}, {3, 4, 3}, {4, 3, 4}},
			want:    (4/math.Sqrt(6) + 1.0/3) / 3,
			per:     []float64{2 / math.Sqrt(6), 1.0 / 3, 2 / math.Sqrt(6)},
		},
		{
			// Annotators A = 1,2,3; B = 2,3,5; C rated only item 1 (3).
			// A against others 2.5, 3, 5: mean y = 3.5, dx = -1,0,1,
			// dy = -1,-.5,1.5, Sxy = 2.5, Sxx = 2, Syy = 3.5,
			// r = 2.5/√7 = 5/(2√7).
			// B against others mean(1,3) = 2, 2, 3: dx = -4/3,-1/3,5/3,
			// dy = -1/3,-1/3,2/3, Sxy = 15/9, Sxx = 42/9, Syy = 6/9,
			// r = 15/√252 = 5/(2√7).
			// C has one item: undefined, left out of the mean.
			name: "missing ratings", m: MethodPearson,
			ratings: [][]float64{{1, 2, 3}, {2, 3, nan}, {3, 5}},
			want:    5 / (2 * math.Sqrt(7)),
			per:     []float64{5 / (2 * math.Sqrt(7)), 5 / (2 * math.Sqrt(7)), nan},
		},
		{
			// An item rated by one annotator only has no "others" and is
			// not used: item 4 below changes nothing (compare case one).
			name: "item with a single rating", m: MethodPearson,
			ratings: [][]float64{{1, 2, 1}, {2, 1, 2}, {3, 4, 3}, {4, 3, 4}, {5, nan, nan}},
			want:    (4/math.Sqrt(5) + 0.6) / 3,
			per:     []float64{2 / math.Sqrt(5), 0.6, 2 / math.Sqrt(5)},
		},
		{"one annotator", MethodPearson, [][]float64{{1}, {2}, {3}}, nan, []float64{nan}},
		{"no ratings", MethodPearson, nil, nan, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, per := LeaveOneOutCorrelation(tt.m, tt.ratings)
			if math.IsNaN(tt.want) != math.IsNaN(got) || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("mean = %.15g, want %.15g", got, tt.want)
			}
			if len(per) != len(tt.per) {
				t.Fatalf("perAnnotator = %v, want %v", per, tt.per)
			}
			for a := range per {
				if math.IsNaN(tt.per[a]) != math.IsNaN(per[a]) || math.Abs(per[a]-tt.per[a]) > 1e-12 {
					t.Errorf("perAnnotator[%d] = %.15g, want %.15g", a, per[a], tt.per[a])
				}
			}
		})
	}
}

func TestRatingsMatrix(t *testing.T) {
	nan := math.NaN()
	items, annotators, ratings := RatingsMatrix(
		[]string{"s2", "s1", "s2", "s1", "s3", "s2", "s4"},
		[]string{"ann", "bob", "bob", "ann", "ann", "ann", "cid"},
		// ann rates s2 twice (3 and 5: averaged to 4); cid's only value
		// is missing, so cid's column and s4's row are all NaN.
		[]float64{3, 1, 2, 4, 5, 5, nan},
	)
	if want := []string{"s2", "s1", "s3", "s4"}; !slices.Equal(items, want) {
		t.Errorf("items = %v, want %v", items, want)
	}
	if want := []string{"ann", "bob", "cid"}; !slices.Equal(annotators, want) {
		t.Errorf("annotators = %v, want %v", annotators, want)
	}
	want := [][]float64{
		{4, 2, nan},
		{4, 1, nan},
		{5, nan, nan},
		{nan, nan, nan},
	}
	if len(ratings) != len(want) {
		t.Fatalf("ratings has %d rows, want %d", len(ratings), len(want))
	}
	for i := range want {
		if len(ratings[i]) != len(want[i]) {
			t.Fatalf("row %d = %v, want %v", i, ratings[i], want[i])
		}
		for a := range want[i] {
			got := ratings[i][a]
			if math.IsNaN(want[i][a]) != math.IsNaN(got) || math.Abs(got-want[i][a]) > 1e-12 {
				t.Errorf("ratings[%d][%d] = %g, want %g", i, a, got, want[i][a])
			}
		}
	}
	// The long form of Krippendorff's data gives back the matrix and alpha.
	var itemIDs, annIDs []string
	var values []float64
	for u, row := range krippendorffData() {
		for a, v := range row {
			if !math.IsNaN(v) {
				itemIDs = append(itemIDs, string(rune('a'+u)))
				annIDs = append(annIDs, string(rune('A'+a)))
				values = append(values, v)
			}
		}
	}
	_, _, m := RatingsMatrix(itemIDs, annIDs, values)
	if got := KrippendorffAlphaInterval(m); math.Abs(got-2853.0/3360) > 1e-12 {
		t.Errorf("alpha of the long form = %.15g, want %.15g", got, 2853.0/3360)
	}
}

func TestMeanRatings(t *testing.T) {
	nan := math.NaN()
	got := MeanRatings([][]float64{{1, 2, 4}, {nan, 3, 4}, {nan, nan}, {}, {5}})
	// (1+2+4)/3 = 7/3; (3+4)/2 = 3.5; nobody; nobody; 5.
	want := []float64{7.0 / 3, 3.5, nan, nan, 5}
	if len(got) != len(want) {
		t.Fatalf("MeanRatings = %v, want %v", got, want)
	}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("MeanRatings[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}

func TestInterpretCeiling(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name           string
		judge, ceiling float64
		want           string
	}{
		{"about as well", 0.71, 0.68,
			"The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.71 vs 0.68)."},
		// The gap is judged on the printed figures: 0.73 - 0.68 = 0.05 is
		// inside the band however the binary values fall.
		{"edge of the band", 0.73, 0.68,
			"The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.73 vs 0.68)."},
		{"edge below", 0.63, 0.68,
			"The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.63 vs 0.68)."},
		// The paper's Topical-Chat figures: BatchEval .752 against human
		// inter-annotator .568.
		{"better", 0.752, 0.568,
			"The judge agrees with the average human better than one human agrees with the others (Pearson r = 0.75 vs 0.57)."},
		{"less well", 0.41, 0.68,
			"The judge agrees with the average human less well than one human agrees with the others (Pearson r = 0.41 vs 0.68)."},
		{"just outside", 0.74, 0.68,
			"The judge agrees with the average human better than one human agrees with the others (Pearson r = 0.74 vs 0.68)."},
		{"no minus zero", -0.001, 0.02,
			"The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.00 vs 0.02)."},
		{"judge undefined", nan, 0.68,
			"The judge cannot be compared with the humans: its agreement could not be measured (humans agree with each other at Pearson r = 0.68)."},
		{"ceiling undefined", 0.71, nan,
			"The judge cannot be compared with the humans: their agreement with each other could not be measured (it needs several ratings per sample; the judge's agreement is Pearson r = 0.71)."},
		{"both undefined", nan, nan,
			"The judge cannot be compared with the humans: neither the judge's agreement nor the agreement among humans could be measured."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InterpretCeiling(MethodPearson, tt.judge, tt.ceiling); got != tt.want {
				t.Errorf("InterpretCeiling(%g, %g) =\n  %q\nwant\n  %q", tt.judge, tt.ceiling, got, tt.want)
			}
		})
	}
}

// The reading beside Krippendorff's alpha: when alpha is measured but the
// leave-one-out correlation is not (too few samples rated twice), it
// names alpha instead of saying the humans' agreement was not measured.
func TestInterpretCeilingWithAlpha(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name                  string
		judge, ceiling, alpha float64
		items                 int
		want                  string
	}{
		{"both measured: as InterpretCeiling", 0.71, 0.68, 0.6, 30,
			"The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.71 vs 0.68)."},
		{"nothing of the humans", 0.71, nan, nan, 0,
			"The judge cannot be compared with the humans: their agreement with each other could not be measured (it needs several ratings per sample; the judge's agreement is Pearson r = 0.71)."},
		{"alpha without ceiling", 0.31, nan, 0.571, 2,
			"The judge cannot be compared with the humans yet: the humans agree with each other at Krippendorff's α = 0.57 over 2 samples rated by two or more, but the figure set against the judge's (Pearson r = 0.31) is one human's correlation with the others, and that needs at least 3 such samples with ratings that vary."},
		{"alpha, judge undefined", nan, nan, 0.571, 2,
			"The judge cannot be compared with the humans: its agreement could not be measured (the humans agree with each other at Krippendorff's α = 0.57)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InterpretCeilingWithAlpha(MethodPearson, tt.judge, tt.ceiling, tt.alpha, tt.items); got != tt.want {
				t.Errorf("got\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}
