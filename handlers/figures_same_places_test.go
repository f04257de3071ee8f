package handlers

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestRunFiguresSameInEveryPlace reads one run's figures in every place
// that shows them: the run page, its share link, its downloaded HTML
// report, the JSON export, the API's results and the command line's table.
// TestCorrelationsAgreeEverywhere covers the three coefficients; this test
// covers the rest of a criterion's figures: each coefficient's p-value,
// 95% interval, n and missing; the correlation within groups (the
// dataset's group column); the human ceiling; the entropy, the rounds
// table and the batch bias. Every HTML place must show the same text for
// each, the text must be the export's number as a reader rounds it
// (readerRounds, independent of web's formatting), and the API must give
// the export's bytes. A figure the export leaves null reads "undefined"
// in every place. With one sample a topic every group is skipped (fewer
// than 3 pairs), so the within-groups coefficients are undefined: the
// shared and downloaded reports wrote "—" there, where the run page and
// the export say undefined.
func TestRunFiguresSameInEveryPlace(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		demo := env.demo().dataset
		var oneEach []string
		for i := range 1000 { // more than the demo has rows
			oneEach = append(oneEach, fmt.Sprintf("topic %03d", i))
		}
		for _, tc := range []struct {
			name       string
			topics     []string
			defined    bool // the within-groups coefficients
			groupsUsed bool
		}{
			{"three topics", []string{"hobbies", "travel", "food"}, true, true},
			{"one sample a topic", oneEach, false, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ds := env.topicCopyOf(demo, "Dialogues, "+tc.name, tc.topics)
				// The dataset's own group column: the run page groups by it
				// unless asked otherwise, and the reports and exports use it.
				must(t, env.db.Gorm.Model(&models.Dataset{}).Where("id = ?", ds.ID).Update("group_column", "topic").Error)
				run := env.startRun(ds, "Figures "+tc.name, models.MethodBatchEval, func(r *models.Run) {
					r.Settings.BatchSize, r.Settings.Rounds = 5, 2
				})
				if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
					t.Fatalf("run %s (%s), want succeeded", got.Status, got.Error)
				}
				figuresSameInEveryPlace(t, env, run, tc.defined, tc.groupsUsed)
			})
		}
	})
}

// figuresSameInEveryPlace is TestRunFiguresSameInEveryPlace's check of
// one finished run whose dataset groups by its "topic" column: defined
// and groupsUsed say whether the within-topics coefficients are defined
// and whether any topic was used. A method that judges each sample once
// (no rounds) shows no rounds table nor batch bias, and exports no batch
// bias. It returns the JSON export's report.
func figuresSameInEveryPlace(t *testing.T, env *testEnv, run models.Run, defined, groupsUsed bool) []byte {
	t.Helper()
	return figuresSameInEveryPlaceOf(t, env, run, func(string) (bool, bool) { return defined, groupsUsed })
}

// figuresSameInEveryPlaceOf is figuresSameInEveryPlace with the
// within-topics expectations given per criterion (by its name): on awkward
// data one criterion's coefficients are defined where another's (a
// constant human column, too few pairs) are not.
func figuresSameInEveryPlaceOf(t *testing.T, env *testEnv, run models.Run, expect func(criterion string) (defined, groupsUsed bool)) []byte {
	t.Helper()
	hasRounds := methods.For(run.Method).Words().Round != ""
	get := func(path string) []byte {
		t.Helper()
		rec := env.get(path)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %.300s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.Bytes()
	}
	exported, _ := splitExport(t, get(fmt.Sprintf("/runs/%d/export.json", run.ID)))
	fromAPI, _ := splitExport(t, get(fmt.Sprintf("/api/v1/runs/%d/results", run.ID)))
	if !bytes.Equal(exported, fromAPI) {
		t.Errorf("the API's results and the JSON export differ:\n%s", firstDifference(string(exported), string(fromAPI)))
	}
	var ex struct {
		Criteria []placesCriterion `json:"criteria"`
	}
	must(t, json.Unmarshal(exported, &ex))

	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
	places := []struct{ name, body string }{
		{"run page", string(get(fmt.Sprintf("/runs/%d", run.ID)))},
		{"share link", string(get(link))},
		{"downloaded report", string(get(fmt.Sprintf("/runs/%d/report.html", run.ID)))},
	}
	rep, err := report.Build(env.localCtx(), env.db, env.ws.ID, run.ID)
	must(t, err)
	cli := rep.CorrelationTable()

	sawGrouped, sawCeiling := false, false
	for ci, ec := range ex.Criteria {
		if ec.Pearson.Coef == nil && ec.Pearson.N == 0 {
			continue // no human ratings: no table anywhere
		}
		// What every place must show, from the export.
		var corr [][]string
		for _, c := range []struct {
			name string
			c    placesCorrelation
		}{{"Pearson r", ec.Pearson}, {"Spearman ρ", ec.Spearman}, {"Kendall τ-b", ec.Kendall}} {
			corr = append(corr, []string{c.name, placesCoef(c.c.Coef), "", "", strconv.Itoa(c.c.N), strconv.Itoa(c.c.Missing)})
		}
		var grouped [][]string
		if ec.Grouped != nil {
			sawGrouped = true
			if ec.Grouped.Column != "topic" {
				t.Errorf("%s: exported as grouped by %q, want topic", ec.Name, ec.Grouped.Column)
			}
			defined, groupsUsed := expect(ec.Name)
			if (ec.Grouped.Pearson != nil) != defined || (ec.Grouped.Groups > 0) != groupsUsed {
				t.Fatalf("%s: within-groups Pearson %v over %d groups: the case does not hold (defined %v, groups used %v)", ec.Name, ec.Grouped.Pearson, ec.Grouped.Groups, defined, groupsUsed)
			}
			for _, g := range []struct {
				name      string
				all, with *float64
			}{{"Pearson r", ec.Pearson.Coef, ec.Grouped.Pearson}, {"Spearman ρ", ec.Spearman.Coef, ec.Grouped.Spearman}, {"Kendall τ-b", ec.Kendall.Coef, ec.Grouped.Kendall}} {
				grouped = append(grouped, []string{g.name, placesCoef(g.all), placesCoef(g.with), strconv.Itoa(ec.Grouped.Groups),
					strconv.Itoa(ec.Grouped.Skipped), strconv.Itoa(ec.Grouped.Ungrouped)})
			}
		}
		var ceiling []string
		if hc := ec.HumanCeiling; hc != nil {
			sawCeiling = true
			ceiling = []string{placesCoef(hc.Alpha), placesCoef(hc.LeaveOneOut)}
		}
		var rounds [][]string
		for _, r := range ec.Rounds {
			rounds = append(rounds, []string{strconv.Itoa(r.Round), placesRoundCoef(r.Single.Coef), placesRoundCoef(r.Ensemble.Coef), placesRoundCoef(r.BatchBias)})
		}
		entropy := "Entropy " + placesRounded(ec.Entropy, 2) + " bits"
		bias := "Average batch bias " + placesRounded(ec.MeanBatchBias, 3) + ":"
		wantText := []string{entropy, bias}
		if batched := methods.For(run.Method).Batched(); batched != (len(ec.Positions) > 0) {
			t.Errorf("%s: %d positions exported by a method that batches: %v", ec.Name, len(ec.Positions), batched)
		}
		if !hasRounds {
			// A method that judges each sample once: no rounds table nor
			// batch bias on any page, and no batch bias in the export.
			rounds, wantText = nil, []string{entropy}
			if ec.MeanBatchBias != nil {
				t.Errorf("%s: the export's mean batch bias %v; a method that judges each sample alone has none", ec.Name, *ec.MeanBatchBias)
			}
			for _, r := range ec.Rounds {
				if r.BatchBias != nil {
					t.Errorf("%s: the export's batch bias of round %d is %v; a method that judges each sample alone has none", ec.Name, r.Round, *r.BatchBias)
				}
			}
		}

		var first string // the run page's text of the criterion's figures
		for _, p := range places {
			cards := strings.Split(p.body, `data-testid="criterion-card"`)
			if len(cards) != len(ex.Criteria)+1 {
				t.Fatalf("%s: %d criterion cards, the export %d criteria", p.name, len(cards)-1, len(ex.Criteria))
			}
			card := cards[ci+1]
			what := fmt.Sprintf("%s, %s", p.name, ec.Name)
			rows := tableRows(t, card, `data-testid="correlations"`)
			if len(rows) != 3 {
				t.Fatalf("%s: %d rows in the correlations table, want 3", what, len(rows))
			}
			for i, row := range rows {
				c := []placesCorrelation{ec.Pearson, ec.Spearman, ec.Kendall}[i]
				if len(row) != 6 {
					t.Fatalf("%s: correlation row %v", what, row)
				}
				want := corr[i]
				for _, k := range []int{0, 1, 4, 5} {
					if row[k] != want[k] {
						t.Errorf("%s, %s: cell %d shows %q; the export's %q", what, row[0], k, row[k], want[k])
					}
				}
				placesP(t, what+", "+row[0]+" p-value", row[2], c.P)
				placesInterval(t, what+", "+row[0]+" interval", row[3], c.CILow, c.CIHigh)
			}
			var groupedRows [][]string
			if p.name == "run page" {
				groupedRows = tableRows(t, card, `data-testid="grouped-table"`)
			} else if i := strings.Index(card, "Correlation within each topic"); i >= 0 {
				groupedRows = tableRows(t, card[i:], `class="correlations"`)
			}
			if fmt.Sprint(groupedRows) != fmt.Sprint(grouped) {
				t.Errorf("%s: the correlation within topics shows %q; the export's %q", what, groupedRows, grouped)
			}
			var ceilingCells []string
			for _, id := range []string{"ceiling-alpha", "ceiling-loo"} {
				if m := regexp.MustCompile(`data-testid="` + id + `">([^<]*)<`).FindStringSubmatch(card); m != nil {
					ceilingCells = append(ceilingCells, m[1])
				}
			}
			if fmt.Sprint(ceilingCells) != fmt.Sprint(ceiling) {
				t.Errorf("%s: the human ceiling shows α and leave-one-out %q; the export's %q", what, ceilingCells, ceiling)
			}
			roundRows := tableRows(t, card, `data-testid="rounds"`)
			for _, r := range roundRows {
				for k, cell := range r {
					// A figure that cannot be measured: the dash, and why
					// in words ("— (fewer than 3 samples have ...)").
					if dash, why, ok := strings.Cut(cell, " ("); ok && dash == "—" && strings.HasSuffix(why, ")") {
						r[k] = dash
					}
				}
			}
			if fmt.Sprint(roundRows) != fmt.Sprint(rounds) {
				t.Errorf("%s: the rounds table shows %q; the export's %q", what, roundRows, rounds)
			}
			text := pageText(card)
			if !hasRounds && strings.Contains(text, "Average batch bias") {
				t.Errorf("%s: an average batch bias, for a method that judges each sample alone", what)
			}
			for _, w := range wantText {
				if !strings.Contains(text, w) {
					t.Errorf("%s: no %q", what, w)
				}
			}
			// The same text in every HTML place.
			figures := fmt.Sprint(rows, groupedRows, ceilingCells, roundRows)
			if first == "" {
				first = figures
			} else if figures != first {
				t.Errorf("%s shows other figures than the run page:\n%s\nvs\n%s", what, figures, first)
			}
		}

		// The command line's table: coefficients, p-values, n and missing.
		line := ""
		for _, l := range strings.Split(cli, "\n") {
			if strings.HasPrefix(l, ec.Name+" ") {
				line = l
			}
		}
		f := strings.Fields(line)
		if len(f) != 8 {
			t.Fatalf("%s: the command line's line %q", ec.Name, line)
		}
		for _, c := range []struct {
			name, cell string
			coef       *float64
		}{{"Pearson r", f[1], ec.Pearson.Coef}, {"Spearman ρ", f[3], ec.Spearman.Coef}, {"Kendall τ-b", f[5], ec.Kendall.Coef}} {
			if c.cell != placesCLICoef(c.coef) {
				t.Errorf("%s: the command line's %s %q; the export's rounded %q", ec.Name, c.name, c.cell, placesCLICoef(c.coef))
			}
		}
		placesP(t, ec.Name+": the command line's Pearson p", strings.Replace(f[2], "<", "< ", 1), ec.Pearson.P)
		placesP(t, ec.Name+": the command line's Spearman p", strings.Replace(f[4], "<", "< ", 1), ec.Spearman.P)
		if f[6] != strconv.Itoa(ec.Pearson.N) || f[7] != strconv.Itoa(ec.Pearson.Missing) {
			t.Errorf("%s: the command line says n %s, missing %s; the export %d, %d", ec.Name, f[6], f[7], ec.Pearson.N, ec.Pearson.Missing)
		}
		if hc := ec.HumanCeiling; hc != nil {
			want := fmt.Sprintf("human ceiling of %s: Krippendorff's alpha %s, leave-one-annotator-out pearson %s (%d annotators", ec.Name,
				placesCLICoef(hc.Alpha), placesCLICoef(hc.LeaveOneOut), hc.Annotators)
			if !strings.Contains(cli, want) {
				t.Errorf("the command line lacks %q:\n%s", want, cli)
			}
		}
	}
	// Each sample's human rating and final score: the CSV with four
	// decimals, the samples tables of the shared and downloaded
	// reports and (first criterion) of the run page with two.
	recs, err := csv.NewReader(strings.NewReader(string(get(fmt.Sprintf("/runs/%d/export.csv", run.ID))))).ReadAll()
	must(t, err)
	col := func(name string) int {
		i := slices.Index(recs[0], name)
		if i < 0 {
			t.Fatalf("the CSV has no column %q: %q", name, recs[0])
		}
		return i
	}
	for ci, ec := range ex.Criteria {
		hc, fc := col(ec.Name+" human"), col(ec.Name+" final")
		if len(recs)-1 != len(ec.Samples) {
			t.Fatalf("the CSV has %d samples, the export %d", len(recs)-1, len(ec.Samples))
		}
		for i, s := range ec.Samples {
			rec := recs[i+1]
			// The id as the CSV writes every text cell: a formula defused.
			if rec[0] != report.SafeCell(s.ID) || rec[hc] != placesDecimal(s.Human, 4, true) || rec[fc] != placesDecimal(s.Final, 4, true) {
				t.Errorf("%s, sample %s: the CSV gives %s (human %q, final %q); the export's rounded: human %q, final %q", ec.Name, s.ID, rec[0],
					rec[hc], rec[fc], placesDecimal(s.Human, 4, true), placesDecimal(s.Final, 4, true))
			}
		}
		for _, p := range places {
			var rows [][]string
			var h, f int // the cells of the human rating and the final
			switch {
			case p.name != "run page":
				rows, h, f = tableRows(t, p.body[strings.Index(p.body, `data-testid="samples"`):], `class="sample-table"`), 2+2*ci, 3+2*ci
			case ci == 0:
				rows, h, f = tableRows(t, p.body, `class="sample-table"`), 2, 3
			default:
				continue
			}
			if len(rows) != len(ec.Samples) {
				t.Fatalf("%s: %d sample rows, the export %d samples", p.name, len(rows), len(ec.Samples))
			}
			byID := map[string][]string{}
			for _, r := range rows {
				byID[r[0]] = r
			}
			for _, s := range ec.Samples {
				r := byID[s.ID]
				// A page writes a minus sign; a missing rating reads "not
				// rated" everywhere, the downloaded report included.
				wantH, wantF := pageMinus(placesDecimal(s.Human, 2, false)), pageMinus(placesDecimal(s.Final, 2, false))
				if r == nil || !strings.HasPrefix(r[h], cmp.Or(wantH, "not rated")) || !strings.HasPrefix(r[f], cmp.Or(wantF, "no score")) {
					t.Errorf("%s, %s, sample %s: row %q; the export's rounded: human %q, final %q", p.name, ec.Name, s.ID, r, wantH, wantF)
				}
			}
		}
	}
	// The sample pages, the run's and the share link's, of a few
	// samples: each criterion's human rating and final score.
	rowIDs := regexp.MustCompile(fmt.Sprintf(`/runs/%d/samples/(\d+)">([^<]*)<`, run.ID)).FindAllStringSubmatch(places[0].body, -1)
	if len(rowIDs) < 6 {
		t.Fatalf("the run page links %d samples", len(rowIDs))
	}
	for _, m := range rowIDs[:6] {
		for _, path := range []string{fmt.Sprintf("/runs/%d/samples/%s", run.ID, m[1]), link + "/samples/" + m[1]} {
			sections := strings.Split(string(get(path)), `data-testid="sample-criterion"`)[1:]
			if len(sections) != len(ex.Criteria) {
				t.Fatalf("%s: %d criteria, the export %d", path, len(sections), len(ex.Criteria))
			}
			for ci, ec := range ex.Criteria {
				i := slices.IndexFunc(ec.Samples, func(s placesSample) bool { return s.ID == html.UnescapeString(m[2]) })
				if i < 0 {
					t.Fatalf("sample %q is not in the export", m[2])
				}
				text := pageText(sections[ci])
				wantH, wantF := cmp.Or(pageMinus(placesDecimal(ec.Samples[i].Human, 2, false)), "not rated"), cmp.Or(pageMinus(placesDecimal(ec.Samples[i].Final, 2, false)), "—")
				if !strings.Contains(text, "Human rating "+wantH) || !strings.Contains(text, "final judge score "+wantF) {
					t.Errorf("%s, %s: %.300q; the export's rounded: human %s, final %s", path, ec.Name, text, wantH, wantF)
				}
			}
		}
	}
	if !sawGrouped || !sawCeiling {
		t.Fatalf("nothing exported as grouped (%v) or no human ceiling (%v): the test shows nothing", sawGrouped, sawCeiling)
	}
	return exported
}

// placesCorrelation is a correlation as the JSON export writes it.
type placesCorrelation struct {
	Coef    *float64 `json:"coef"`
	P       *float64 `json:"p"`
	N       int      `json:"n"`
	Missing int      `json:"missing"`
	CILow   *float64 `json:"ci_low"`
	CIHigh  *float64 `json:"ci_high"`
}

// placesCriterion is what TestRunFiguresSameInEveryPlace reads of a
// criterion in the JSON export.
type placesCriterion struct {
	Name                       string
	Pearson, Spearman, Kendall placesCorrelation
	Entropy                    *float64 `json:"entropy_bits"`
	MeanBatchBias              *float64 `json:"mean_batch_bias"`
	Rounds                     []struct {
		Round     int               `json:"round"`
		Single    placesCorrelation `json:"single_round_pearson"`
		Ensemble  placesCorrelation `json:"ensemble_pearson"`
		BatchBias *float64          `json:"batch_bias"`
	} `json:"rounds"`
	Grouped *struct {
		Column                     string
		Pearson, Spearman, Kendall *float64
		Groups                     int
		Skipped                    int `json:"skipped_groups"`
		Ungrouped                  int `json:"samples_without_group"`
	} `json:"grouped"`
	HumanCeiling *struct {
		Annotators  int
		Alpha       *float64 `json:"krippendorff_alpha"`
		LeaveOneOut *float64 `json:"leave_one_out_pearson"`
	} `json:"human_ceiling"`
	// Positions is the position effect (only a method that batches has one).
	Positions []json.RawMessage `json:"position_effect"`
	// Samples keep the numbers as the export writes them.
	Samples []placesSample `json:"samples"`
}

// placesSample is a sample of the export, its numbers as written.
type placesSample struct {
	ID           string
	Final, Human *json.Number
}

// placesDecimal is an exported number (its text) rounded to digits
// decimals as a reader rounds it, halves away from zero; with trim,
// trailing zeros dropped (the CSV's way). A missing one is "".
func placesDecimal(n *json.Number, digits int, trim bool) string {
	if n == nil {
		return ""
	}
	r, ok := new(big.Rat).SetString(string(*n))
	if !ok {
		return "not a number: " + string(*n)
	}
	s := r.FloatString(digits)
	if trim && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// pageMinus is a number as a page writes it: a minus sign, not a hyphen.
func pageMinus(s string) string { return strings.ReplaceAll(s, "-", "−") }

// placesCoef is an exported coefficient as every page shows it: rounded
// to three decimals by a reader of the export, "undefined" when null.
func placesCoef(v *float64) string {
	if v == nil {
		return "undefined"
	}
	return readerRounds(*v, 3, false)
}

// placesCLICoef is placesCoef as a terminal writes it (an ASCII minus).
func placesCLICoef(v *float64) string {
	return strings.ReplaceAll(placesCoef(v), "−", "-")
}

// placesRoundCoef is a figure of the rounds table: three decimals, a dash
// when missing (the table says why in the cell's title).
func placesRoundCoef(v *float64) string {
	if v == nil {
		return "—"
	}
	return readerRounds(*v, 3, false)
}

// placesRounded is v rounded to digits decimals, a dash when null.
func placesRounded(v *float64, digits int) string {
	if v == nil {
		return "—"
	}
	return readerRounds(*v, digits, false)
}

// placesP checks a p-value cell against the exported p: "undefined" for
// null, "< 0.001" below it, three decimals below 0.1, two from there.
func placesP(t *testing.T, what, text string, p *float64) {
	t.Helper()
	if p == nil {
		if text != "undefined" {
			t.Errorf("%s: %q; the export has none", what, text)
		}
		return
	}
	if *p < 0.001 {
		if text != "< 0.001" {
			t.Errorf("%s: %q; the export's p is %v", what, text, *p)
		}
		return
	}
	shownP(t, what, text, *p)
}

// placesInterval checks a 95% interval cell ("lo to hi", each bound with
// three decimals or more and its sign) against the exported bounds:
// "undefined" when either is null.
func placesInterval(t *testing.T, what, text string, lo, hi *float64) {
	t.Helper()
	text, _, _ = strings.Cut(text, " from ") // "from 963 of 1000 resamples"
	if lo == nil || hi == nil {
		if text != "undefined" {
			t.Errorf("%s: %q; the export has no interval", what, text)
		}
		return
	}
	a, b, ok := strings.Cut(text, " to ")
	if !ok {
		t.Errorf("%s: %q, want \"lo to hi\"", what, text)
		return
	}
	for _, x := range []struct {
		text string
		want float64
	}{{a, *lo}, {b, *hi}} {
		s := strings.NewReplacer("−", "-", "+", "").Replace(x.text)
		got, err := strconv.ParseFloat(s, 64)
		digits := len(s) - strings.IndexByte(s, '.') - 1
		if err != nil || digits < 3 || math.Abs(got-x.want) > 0.5*math.Pow(10, -float64(digits))+1e-12 ||
			(x.want > 0 && got != 0 && !strings.HasPrefix(x.text, "+")) {
			t.Errorf("%s: bound %q; the export's %v", what, x.text, x.want)
		}
	}
}

// tableRows is the text of each body row's cells of the first table
// whose opening tag holds marker, in page.
func tableRows(t *testing.T, page, marker string) [][]string {
	t.Helper()
	i := strings.Index(page, marker)
	if i < 0 {
		return nil
	}
	table := page[i:]
	table = table[:strings.Index(table, "</table>")]
	if j := strings.Index(table, "<tbody>"); j >= 0 {
		table = table[j:]
	}
	var rows [][]string
	for _, tr := range strings.Split(table, "<tr")[1:] {
		var cells []string
		for _, td := range strings.Split(tr, "<td")[1:] {
			td = td[strings.IndexByte(td, '>')+1:]
			td = td[:strings.Index(td, "</td>")]
			cells = append(cells, pageText(td))
		}
		rows = append(rows, cells)
	}
	return rows
}
