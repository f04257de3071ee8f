package handlers

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/batcheval/batcheval/report"
)

// The API and the JSON export give a figure at full precision (the float
// the product computed); every page, the standalone and shared reports and
// the command line's summary show it rounded to three decimals by one rule,
// the one a reader of the export follows: the number exported (the
// float's shortest decimal) rounded half away from zero (readerRounds,
// independent of web's stats.CoefDecimal), a figure just below zero shown
// as 0.000 (signed ±0.000 for a difference or an interval bound).
// TestCorrelationsAgreeEverywhere reads one experiment's figures in every
// place and fails when a place shows anything but the API's number
// rounded by that rule; it also recomputes the correlations
// and the compare page's paired figures from the exported scores, by their
// textbook formulas, independently of evaluator/stats.

// exportedCriterion is what this test reads of a criterion in the JSON export.
type exportedCriterion struct {
	Name                       string
	Pearson, Spearman, Kendall struct {
		Coef    *float64 `json:"coef"`
		N       int      `json:"n"`
		Missing int      `json:"missing"`
	}
	Samples []struct {
		ID    string   `json:"id"`
		Final *float64 `json:"final"`
		Human *float64 `json:"human"`
	}
}

func TestCorrelationsAgreeEverywhere(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		x := env.demoExperiment()
		a, b := x.batchEval, x.gEval
		getJSON := func(path string, v any) {
			t.Helper()
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
			}
			if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		page := func(path string) string {
			t.Helper()
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", path, rec.Code)
			}
			return rec.Body.String()
		}
		cells := func(body, testid string) []string {
			var out []string
			for _, m := range regexp.MustCompile(`data-testid="`+regexp.QuoteMeta(testid)+`"[^>]*>([^<]*)<`).FindAllStringSubmatch(body, -1) {
				out = append(out, m[1])
			}
			return out
		}
		coef := func(v *float64) string {
			if v == nil {
				return "undefined"
			}
			return readerRounds(*v, 3, false)
		}
		type export struct {
			Report struct {
				Criteria []exportedCriterion `json:"criteria"`
			} `json:"report"`
		}
		exports := map[int64][]exportedCriterion{}
		for _, r := range []int64{a.ID, b.ID} {
			var ex, api export
			getJSON(fmt.Sprintf("/runs/%d/export.json", r), &ex)
			getJSON(fmt.Sprintf("/api/v1/runs/%d/results", r), &api)
			crits := ex.Report.Criteria
			if len(crits) < 2 {
				t.Fatalf("run %d exports %d criteria", r, len(crits))
			}
			exports[r] = crits
			// Full precision in both, the same floats.
			for i, c := range crits {
				for _, pair := range [][2]*float64{{c.Pearson.Coef, api.Report.Criteria[i].Pearson.Coef}, {c.Spearman.Coef, api.Report.Criteria[i].Spearman.Coef},
					{c.Kendall.Coef, api.Report.Criteria[i].Kendall.Coef}} {
					if (pair[0] == nil) != (pair[1] == nil) || (pair[0] != nil && *pair[0] != *pair[1]) {
						t.Errorf("run %d %s: the export and the API's results differ: %v, %v", r, c.Name, pair[0], pair[1])
					}
				}
				if c.Pearson.Coef == nil {
					t.Fatalf("run %d %s: no Pearson r to compare", r, c.Name)
				}
				// The coefficient is the textbook one of the exported scores.
				var xs, ys []float64
				for _, s := range c.Samples {
					if s.Final != nil && s.Human != nil {
						xs, ys = append(xs, *s.Final), append(ys, *s.Human)
					}
				}
				if got := textbookPearson(xs, ys); math.Abs(got-*c.Pearson.Coef) > 1e-12 || c.Pearson.N != len(xs) ||
					c.Pearson.Missing != len(c.Samples)-len(xs) {
					t.Errorf("run %d %s: Pearson r %v on n %d (missing %d); the exported samples give %v on %d (missing %d)",
						r, c.Name, *c.Pearson.Coef, c.Pearson.N, c.Pearson.Missing, got, len(xs), len(c.Samples)-len(xs))
				}
			}
			// The run page, its downloaded report and its share link show
			// each coefficient (Pearson, Spearman, Kendall per criterion)
			// as the export's float rounded.
			var want []string
			for _, c := range crits {
				want = append(want, coef(c.Pearson.Coef), coef(c.Spearman.Coef), coef(c.Kendall.Coef))
			}
			link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(r)}, "expires": {"7d"}})
			for _, path := range []string{fmt.Sprintf("/runs/%d", r), fmt.Sprintf("/runs/%d/report.html", r), link} {
				if got := cells(page(path), "coef"); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s shows the coefficients %v; the export's, rounded: %v", path, got, want)
				}
			}
			// The command line's table (report.Report.CorrelationTable).
			rep, err := report.Build(env.localCtx(), env.db, env.ws.ID, r)
			must(t, err)
			sum := rep.CorrelationTable()
			for _, c := range crits {
				line := ""
				for _, l := range strings.Split(sum, "\n") {
					if strings.HasPrefix(l, c.Name+" ") {
						line = l
						break
					}
				}
				f := strings.Fields(line)
				if len(f) < 6 || f[1] != strings.ReplaceAll(coef(c.Pearson.Coef), "\u2212", "-") || f[3] != strings.ReplaceAll(coef(c.Spearman.Coef), "\u2212", "-") ||
					f[5] != strings.ReplaceAll(coef(c.Kendall.Coef), "\u2212", "-") {
					t.Errorf("run %d %s: the summary's line %q; the export's coefficients rounded are %s, %s, %s", r, c.Name, line,
						coef(c.Pearson.Coef), coef(c.Spearman.Coef), coef(c.Kendall.Coef))
				}
			}
		}

		// The experiment: the API's table and the page's cells.
		var apiExp APIExperiment
		getJSON(fmt.Sprintf("/api/v1/experiments/%d", x.exp.ID), &apiExp)
		expPage := page(fmt.Sprintf("/experiments/%d", x.exp.ID))
		expReport := page(fmt.Sprintf("/experiments/%d/report.html", x.exp.ID))
		expShared := page(env.createShareVia(url.Values{"kind": {"experiment"}, "experiment_id": {fmt.Sprint(x.exp.ID)}, "expires": {"7d"}}))
		var wantP, wantS, wantAvg []string
		for _, row := range apiExp.Runs {
			crits := exports[row.Run.ID]
			var sum float64
			for i := range apiExp.Criteria {
				p, s := row.Pearson[i], row.Spearman[i]
				if p == nil || *p != *crits[i].Pearson.Coef || s == nil || *s != *crits[i].Spearman.Coef {
					t.Errorf("the API's experiment gives run %d's %s as %v / %v; its export %v / %v", row.Run.ID, apiExp.Criteria[i], p, s,
						*crits[i].Pearson.Coef, *crits[i].Spearman.Coef)
					continue
				}
				wantP, wantS = append(wantP, coef(p)), append(wantS, coef(s))
				sum += *p
			}
			avg := sum / float64(len(apiExp.Criteria))
			if row.AveragePearson == nil || math.Abs(*row.AveragePearson-avg) > 1e-12 {
				t.Errorf("run %d: average_pearson %v, the mean of its criteria's %v", row.Run.ID, row.AveragePearson, avg)
			} else {
				wantAvg = append(wantAvg, coef(row.AveragePearson))
			}
		}
		for _, p := range []struct{ name, body string }{{"experiment page", expPage}, {"experiment report", expReport}, {"experiment share link", expShared}} {
			for _, c := range []struct {
				testid string
				want   []string
			}{{"pearson", wantP}, {"spearman", wantS}, {"avg-pearson", wantAvg}} {
				if got := cells(p.body, c.testid); strings.Join(got, " ") != strings.Join(c.want, " ") {
					t.Errorf("%s: %s cells %v; the API's, rounded: %v", p.name, c.testid, got, c.want)
				}
			}
		}

		// The comparison of the two runs on each criterion: the API's
		// paired figures against their textbook formulas, and the page
		// against the API's.
		for ci := range 2 {
			var cmp APIComparison
			getJSON(fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=%d", a.ID, b.ID, ci), &cmp)
			var ra, rb []float64
			for _, r := range cmp.Rows {
				if r.A != nil && r.B != nil {
					ra, rb = append(ra, float64(*r.A)), append(rb, float64(*r.B))
				}
			}
			d, rA, n := pearsonDifferenceRecomputed(t, ci, cmp)
			// A's own card and the API's A agree when every sample pairs.
			if ex := exports[a.ID][ci]; ex.Pearson.N == n && math.Abs(*ex.Pearson.Coef-rA) > 1e-12 {
				t.Errorf("criterion %d: A's export gives Pearson r %v, its paired figure %v on the same %d samples", ci, *ex.Pearson.Coef, rA, n)
			}
			body := page(fmt.Sprintf("/compare?a=%d&b=%d&criterion=%d", a.ID, b.ID, ci))
			// The two runs' agreement with each other.
			if cmp.Pearson.Coef == nil || math.Abs(*cmp.Pearson.Coef-textbookPearson(ra, rb)) > 1e-12 || cmp.Pearson.N != len(ra) {
				t.Errorf("criterion %d: the runs' Pearson r with each other %v on %d; recomputed %v on %d", ci, exportedOrNil(cmp.Pearson.Coef), cmp.Pearson.N,
					textbookPearson(ra, rb), len(ra))
			} else if got := cells(body, "runs-pearson"); len(got) != 1 || got[0] != readerRounds(*cmp.Pearson.Coef, 3, false) {
				t.Errorf("criterion %d: the compare page shows the runs' Pearson r as %v; the API's, rounded: %s", ci, got, readerRounds(*cmp.Pearson.Coef, 3, false))
			} else if ci == 0 {
				// The comparison's share link (on the first criterion).
				shared := page(env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {fmt.Sprint(a.ID)}, "other_run_id": {fmt.Sprint(b.ID)}, "expires": {"7d"}}))
				if got := cells(shared, "agreement-pearson"); len(got) != 1 || got[0] != readerRounds(*cmp.Pearson.Coef, 3, false) {
					t.Errorf("the comparison's share link shows the runs' Pearson r as %v; the API's, rounded: %s", got, readerRounds(*cmp.Pearson.Coef, 3, false))
				}
			}
			row := body[strings.Index(body, `data-testid="agreement-pearson"`):]
			row = row[:strings.Index(row, "</tr>")]
			nums := regexp.MustCompile(`<td class="num"[^>]*>([^<]*)<`).FindAllStringSubmatch(row, -1)
			want := []string{readerRounds(*d.A, 3, false), readerRounds(*d.B, 3, false), readerRounds(*d.Diff, 3, true),
				readerRounds(*d.CILow, 3, true) + " to " + readerRounds(*d.CIHigh, 3, true), fmt.Sprint(n)}
			var got []string
			for _, m := range nums {
				got = append(got, m[1])
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("criterion %d: the compare page's Pearson row %v; the API's, rounded: %v", ci, got, want)
			}
			// Which run the reading names: the sign of A − B decides, and
			// a winner is named only with p < 0.05 and an interval clear of 0.
			reading := *cmp.Agreement.Reading
			// The API's figures, which pearsonDifferenceRecomputed held to
			// the textbook's.
			rB, p, lo, hi := *d.B, *d.Tests[0].P, *d.CILow, *d.CIHigh
			switch {
			case p < 0.05 && (lo > 0 || hi < 0):
				better := a.Name
				if rA < rB {
					better = b.Name
				}
				if !strings.HasPrefix(reading, better+" agrees better with the humans") {
					t.Errorf("criterion %d: A − B %v (p %v, interval %v to %v), yet the reading is %q", ci, rA-rB, p, lo, hi, reading)
				}
			case p >= 0.05 && lo <= 0 && hi >= 0:
				if !strings.HasPrefix(reading, "The data cannot tell the two runs apart") {
					t.Errorf("criterion %d: p %v and an interval %v to %v across 0, yet the reading is %q", ci, p, lo, hi, reading)
				}
			}
			if !strings.Contains(body, templateText(signedAsOnPages(reading))) {
				t.Errorf("criterion %d: the compare page does not give the API's reading %q", ci, reading)
			}
		}
	})
}

// readerRounds is v as a reader of the JSON export rounds it to digits
// decimals: the number the export writes (the shortest decimal that reads
// back as v) rounded half away from zero, with a page's minus sign and no
// negative zero; signed, with "+" above zero and "±" for a figure shown as
// zero.
func readerRounds(v float64, digits int, signed bool) string {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok {
		return "not a number"
	}
	s := r.FloatString(digits) // halves away from zero
	zero := strings.Trim(s, "-0.") == ""
	if zero {
		s = strings.TrimPrefix(s, "-")
	}
	s = strings.ReplaceAll(s, "-", "−")
	switch {
	case !signed:
		return s
	case zero:
		return "±" + s
	case v > 0:
		return "+" + s
	}
	return s
}

// templateText is s as a templ page writes it.
func templateText(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

// textbookPearson is Pearson's r by its definition, two passes.
func textbookPearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// textbookWilliams is Williams' T2 (Steiger 1980, eq. 7) for r12 − r13,
// the human being variable 1: t and its two-sided p on n − 3 df.
func textbookWilliams(r12, r13, r23 float64, n int) (float64, float64) {
	detR := 1 - r12*r12 - r13*r13 - r23*r23 + 2*r12*r13*r23
	rbar := (r12 + r13) / 2
	nf := float64(n)
	t := (r12 - r13) * math.Sqrt((nf-1)*(1+r23)/(2*((nf-1)/(nf-3))*detR+rbar*rbar*math.Pow(1-r23, 3)))
	return t, 2 * (1 - distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nf - 3}.CDF(math.Abs(t)))
}

// textbookZou is Zou's (2007) 95% interval of r12 − r13 for overlapping
// correlations (his example 2's formulas).
func textbookZou(r12, r13, r23 float64, n int) (float64, float64) {
	z := 1.959963984540054 / math.Sqrt(float64(n-3))
	l1, u1 := math.Tanh(math.Atanh(r12)-z), math.Tanh(math.Atanh(r12)+z)
	l2, u2 := math.Tanh(math.Atanh(r13)-z), math.Tanh(math.Atanh(r13)+z)
	c := ((r23-r12*r13/2)*(1-r12*r12-r13*r13-r23*r23) + r23*r23*r23) / ((1 - r12*r12) * (1 - r13*r13))
	lo := r12 - r13 - math.Sqrt((r12-l1)*(r12-l1)+(u2-r13)*(u2-r13)-2*c*(r12-l1)*(u2-r13))
	hi := r12 - r13 + math.Sqrt((u1-r12)*(u1-r12)+(r13-l2)*(r13-l2)-2*c*(u1-r12)*(r13-l2))
	return lo, hi
}

// signedAsOnPages is a reading sentence as pages print it: each number
// signed with a true minus sign (web's ReadingText, unexported for tests).
func signedAsOnPages(s string) string {
	return regexp.MustCompile(`(^|[\s(])-([0-9])`).ReplaceAllString(s, "${1}\u2212${2}")
}

// pearsonDifferenceRecomputed checks the comparison's Pearson difference on
// criterion ci (A and B with the humans, A − B, its interval and Williams'
// test, on the samples both runs and the humans scored) against the
// textbook formulas, and returns it, A's r with the humans and that n.
func pearsonDifferenceRecomputed(t *testing.T, ci int, cmp APIComparison) (d *APIAgreementDifference, rA float64, n int) {
	t.Helper()
	var ha, hb, hh []float64
	for _, r := range cmp.Rows {
		if r.A != nil && r.B != nil && r.Human != nil {
			ha, hb, hh = append(ha, float64(*r.A)), append(hb, float64(*r.B)), append(hh, float64(*r.Human))
		}
	}
	for i := range cmp.Agreement.Differences {
		if cmp.Agreement.Differences[i].Method == "pearson" {
			d = &cmp.Agreement.Differences[i]
		}
	}
	if d == nil || d.A == nil || d.B == nil || d.Diff == nil || d.CILow == nil || d.CIHigh == nil || len(d.Tests) == 0 || d.Tests[0].P == nil {
		t.Fatalf("criterion %d: the API's comparison has no complete Pearson difference: %+v", ci, cmp.Agreement)
	}
	rA, rB, rAB := textbookPearson(ha, hh), textbookPearson(hb, hh), textbookPearson(ha, hb)
	n = len(hh)
	tt, p := textbookWilliams(rA, rB, rAB, n)
	lo, hi := textbookZou(rA, rB, rAB, n)
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"A with humans", *d.A, rA}, {"B with humans", *d.B, rB}, {"A − B", *d.Diff, rA - rB}, {"interval low", *d.CILow, lo},
		{"interval high", *d.CIHigh, hi}, {"Williams' p", *d.Tests[0].P, p}} {
		if math.Abs(f.got-f.want) > 1e-9 {
			t.Errorf("criterion %d: %s is %v; recomputed %v (t %v, n %d)", ci, f.name, f.got, f.want, tt, n)
		}
	}
	if d.N != n || d.Tests[0].Name != "Williams' t" {
		t.Errorf("criterion %d: n %d, first test %q; want n %d, Williams' t", ci, d.N, d.Tests[0].Name, n)
	}
	return d, rA, n
}
