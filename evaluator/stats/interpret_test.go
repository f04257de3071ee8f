package stats

import (
	"math"
	"strings"
	"testing"
)

func TestStrength(t *testing.T) {
	tests := []struct {
		coef float64
		want string
	}{
		{0, "negligible"}, {0.099, "negligible"}, {-0.1, "weak"}, {0.29, "weak"},
		{0.3, "moderate"}, {-0.49, "moderate"}, {0.5, "strong"}, {0.69, "strong"},
		{0.7, "very strong"}, {-1, "very strong"}, {math.NaN(), "undefined"},
	}
	for _, tt := range tests {
		if got := Strength(tt.coef); got != tt.want {
			t.Errorf("Strength(%g) = %q, want %q", tt.coef, got, tt.want)
		}
	}
}

func TestInterpret(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		c    Correlation
		want string
	}{
		{"too few", Correlation{Coef: nan, P: nan, N: 2, CILow: nan, CIHigh: nan},
			"Too few samples to say (n = 2)."},
		{"constant", Correlation{Coef: nan, P: nan, N: 12, CILow: nan, CIHigh: nan},
			"Agreement cannot be measured: one side gave the same score to all 12 samples."},
		{"wide interval", Correlation{Coef: 0.62, P: 0.00002, N: 40, CILow: 0.38, CIHigh: 0.78},
			"Strong agreement (Pearson r = 0.62), but with 40 samples the 95% interval is wide: 0.38 to 0.78."},
		{"narrow interval", Correlation{Coef: 0.79, P: 1e-40, N: 360, CILow: 0.74, CIHigh: 0.83},
			"Very strong agreement (Pearson r = 0.79) over 360 samples, 95% interval 0.74 to 0.83."},
		{"chance", Correlation{Coef: 0.16, P: 0.31, N: 42, CILow: nan, CIHigh: nan},
			"Weak agreement (Pearson r = 0.16), likely not different from chance (p = 0.31)."},
		{"negative significant", Correlation{Coef: -0.45, P: 0.004, N: 50, CILow: nan, CIHigh: nan},
			"Moderate disagreement (Pearson r = -0.45) over 50 samples, unlikely to be chance (p = 0.004)."},
		{"negligible negative with missing", Correlation{Coef: -0.03, P: 0.8, N: 100, Missing: 3, CILow: nan, CIHigh: nan},
			"Negligible agreement (Pearson r = -0.03), likely not different from chance (p = 0.80); 3 samples without both scores were left out."},
		{"tiny p", Correlation{Coef: 0.5, P: 1e-9, N: 200, CILow: nan, CIHigh: nan},
			"Strong agreement (Pearson r = 0.50) over 200 samples, unlikely to be chance (p < 0.001)."},
		// A band named beside "not different from chance" is the sample's
		// noise: three samples of 0-10 ratings read "Very strong
		// disagreement (Pearson r = -0.81), likely not different from chance".
		{"three samples, large p", Correlation{Coef: -0.8125, P: 0.397, N: 3, CILow: nan, CIHigh: nan},
			"Too few samples to tell (3 samples; Pearson r = -0.81, p = 0.40)."},
		{"three samples, small p", Correlation{Coef: 0.9999, P: 0.009, N: 3, Missing: 1, CILow: nan, CIHigh: nan},
			"Too few samples to tell (3 samples; Pearson r = 1.00, p = 0.009); 1 sample without both scores was left out."},
		{"moderate, not different from chance", Correlation{Coef: 0.45, P: 0.14, N: 12, CILow: -0.2, CIHigh: 0.85},
			"Too few samples to tell (12 samples; Pearson r = 0.45, 95% interval -0.20 to 0.85, p = 0.14)."},
		{"just moderate as printed", Correlation{Coef: -0.2996, P: 0.2, N: 20, CILow: nan, CIHigh: nan},
			"Too few samples to tell (20 samples; Pearson r = -0.30, p = 0.20)."},
		{"weak, not different from chance on four", Correlation{Coef: 0.29, P: 0.7, N: 4, CILow: -1, CIHigh: 1},
			"Weak agreement (Pearson r = 0.29), likely not different from chance (p = 0.70)."},
		{"very strong on four, significant", Correlation{Coef: 0.99, P: 0.01, N: 4, CILow: 0.9, CIHigh: 1},
			"Very strong agreement (Pearson r = 0.99) over 4 samples, 95% interval 0.90 to 1.00."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Interpret(MethodPearson, tt.c); got != tt.want {
				t.Errorf("Interpret =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

// TestInterpretNamesItsCoefficient: a reading printed its figure bare,
// "Strong agreement (0.62), …" or "Too few samples to tell (8 samples;
// 0.65, …)", under a table of three coefficients, and a newcomer could not
// tell which one 0.62 was. Each sentence that reads a coefficient now names
// it as the tables head it, for each kind; the two that read none (too few
// to compute, one side constant) stay as they were.
func TestInterpretNamesItsCoefficient(t *testing.T) {
	nan := math.NaN()
	wide := Correlation{Coef: 0.62, P: 0.00002, N: 40, CILow: 0.38, CIHigh: 0.78}
	chance := Correlation{Coef: -0.16, P: 0.31, N: 42, CILow: nan, CIHigh: nan}
	tooFew := Correlation{Coef: 0.65, P: 0.14, N: 8, CILow: -0.1, CIHigh: 0.92}
	significant := Correlation{Coef: 0.5, P: 1e-9, N: 200, CILow: nan, CIHigh: nan}
	tests := []struct {
		m    Method
		c    Correlation
		want string
	}{
		{MethodPearson, wide, "Strong agreement (Pearson r = 0.62), but with 40 samples the 95% interval is wide: 0.38 to 0.78."},
		{MethodSpearman, wide, "Strong agreement (Spearman ρ = 0.62), but with 40 samples the 95% interval is wide: 0.38 to 0.78."},
		{MethodKendall, wide, "Strong agreement (Kendall τ-b = 0.62), but with 40 samples the 95% interval is wide: 0.38 to 0.78."},
		{MethodPearson, chance, "Weak disagreement (Pearson r = -0.16), likely not different from chance (p = 0.31)."},
		{MethodSpearman, chance, "Weak disagreement (Spearman ρ = -0.16), likely not different from chance (p = 0.31)."},
		{MethodKendall, chance, "Weak disagreement (Kendall τ-b = -0.16), likely not different from chance (p = 0.31)."},
		{MethodPearson, tooFew, "Too few samples to tell (8 samples; Pearson r = 0.65, 95% interval -0.10 to 0.92, p = 0.14)."},
		{MethodSpearman, tooFew, "Too few samples to tell (8 samples; Spearman ρ = 0.65, 95% interval -0.10 to 0.92, p = 0.14)."},
		{MethodKendall, tooFew, "Too few samples to tell (8 samples; Kendall τ-b = 0.65, 95% interval -0.10 to 0.92, p = 0.14)."},
		{MethodSpearman, significant, "Strong agreement (Spearman ρ = 0.50) over 200 samples, unlikely to be chance (p < 0.001)."},
		{MethodKendall, Correlation{Coef: 0.79, P: 1e-40, N: 360, CILow: 0.74, CIHigh: 0.83},
			"Very strong agreement (Kendall τ-b = 0.79) over 360 samples, 95% interval 0.74 to 0.83."},
		{MethodKendall, Correlation{Coef: nan, P: nan, N: 2, CILow: nan, CIHigh: nan}, "Too few samples to say (n = 2)."},
		{MethodSpearman, Correlation{Coef: nan, P: nan, N: 12, CILow: nan, CIHigh: nan},
			"Agreement cannot be measured: one side gave the same score to all 12 samples."},
	}
	for _, tt := range tests {
		t.Run(string(tt.m)+" "+tt.want[:12], func(t *testing.T) {
			if got := Interpret(tt.m, tt.c); got != tt.want {
				t.Errorf("Interpret(%s) =\n  %q\nwant\n  %q", tt.m, got, tt.want)
			}
		})
	}
}

// TestMethodLabel: the names the readings give each coefficient are the
// tables' headings.
func TestMethodLabel(t *testing.T) {
	for _, tt := range []struct {
		m    Method
		want string
	}{{MethodPearson, "Pearson r"}, {MethodSpearman, "Spearman ρ"}, {MethodKendall, "Kendall τ-b"}, {"other", "other"}} {
		if got := tt.m.Label(); got != tt.want {
			t.Errorf("%q.Label() = %q, want %q", tt.m, got, tt.want)
		}
	}
}

// TestCeilingReadingNamesItsCoefficient: the human ceiling's reading
// printed its two figures bare, "(0.71 vs 0.68)", beside readings that
// name theirs ("Strong agreement (Pearson r = 0.71)"); it now names the
// coefficient as Interpret does, in every sentence it writes, and the
// figure reads exactly as in Interpret's sentence on the same value.
func TestCeilingReadingNamesItsCoefficient(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name                  string
		m                     Method
		judge, ceiling, alpha float64
		want                  string
	}{
		{"compared", MethodPearson, 0.714, 0.676, 0.6,
			"The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.71 vs 0.68)."},
		{"compared, Spearman", MethodSpearman, 0.752, 0.568, 0.6,
			"The judge agrees with the average human better than one human agrees with the others (Spearman ρ = 0.75 vs 0.57)."},
		{"compared, Kendall, negative", MethodKendall, -0.2, 0.4, 0.6,
			"The judge agrees with the average human less well than one human agrees with the others (Kendall τ-b = -0.20 vs 0.40)."},
		{"judge undefined", MethodPearson, nan, 0.68, 0.6,
			"The judge cannot be compared with the humans: its agreement could not be measured (humans agree with each other at Pearson r = 0.68)."},
		{"humans undefined", MethodPearson, 0.71, nan, nan,
			"The judge cannot be compared with the humans: their agreement with each other could not be measured (it needs several ratings per sample; the judge's agreement is Pearson r = 0.71)."},
		{"alpha only", MethodPearson, 0.31, nan, 0.571,
			"The judge cannot be compared with the humans yet: the humans agree with each other at Krippendorff's α = 0.57 over 2 samples rated by two or more, but the figure set against the judge's (Pearson r = 0.31) is one human's correlation with the others, and that needs at least 3 such samples with ratings that vary."},
		{"no minus zero", MethodPearson, -0.001, -0.002, 0.6,
			"The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.00 vs 0.00)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := InterpretCeilingWithAlpha(tt.m, tt.judge, tt.ceiling, tt.alpha, 2)
			if got != tt.want {
				t.Errorf("got\n  %q\nwant\n  %q", got, tt.want)
			}
			// The judge's figure as Interpret writes it on the same value.
			if !math.IsNaN(tt.judge) {
				reading := Interpret(tt.m, Correlation{Coef: tt.judge, P: 1e-9, N: 500, CILow: nan, CIHigh: nan})
				figure := namedCoef(tt.m, tt.judge)
				if !strings.Contains(reading, "("+figure+")") || !strings.Contains(got, figure) {
					t.Errorf("the ceiling's %q and Interpret's %q do not share the figure %q", got, reading, figure)
				}
			}
		})
	}
}
