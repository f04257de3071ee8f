package handlers

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestDatasetRatingSummaryRecomputed uploads the 125 FED dialogues as a
// CSV with their eleven human rating columns (every seventh Overall and
// every eleventh Depth left empty), maps them as ratings and recomputes
// the dataset page's "Human ratings" table from the file, by textbook
// formulas: per column the rows rated and missing, the mean, the sample
// standard deviation (n − 1), the lowest and the highest, each shown to
// two decimals.
func TestDatasetRatingSummaryRecomputed(t *testing.T) {
	fed := readFED(t, 125)
	cols := []string{"Coherent", "Error recovery", "Consistent", "Diverse", "Depth", "Likeable", "Understanding", "Flexible", "Informative", "Inquisitive", "Overall"}
	empty := func(col string, i int) bool {
		return (col == "Overall" && i%7 == 3) || (col == "Depth" && i%11 == 5)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	must(t, w.Write(append([]string{"id", "system", "context"}, cols...)))
	for i, r := range fed {
		rec := []string{r.ID, r.System, r.Context}
		for _, c := range cols {
			v := ""
			if !empty(c, i) {
				v = strconv.FormatFloat(r.Scores[c], 'g', -1, 64)
			}
			rec = append(rec, v)
		}
		must(t, w.Write(rec))
	}
	w.Flush()
	must(t, w.Error())

	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("fed.csv", buf.String())
		form := url.Values{"token": {token}, "name": {"FED"}, "id_column": {"id"}, "show_2": {"1"}, "label_2": {"Dialogue"}}
		for k := range cols {
			form.Set(fmt.Sprintf("rating_%d", 3+k), "1")
		}
		rec := env.postForm(env.mapPath(), form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import: %d %s", rec.Code, pageText(rec.Body.String()))
		}
		page := env.get(rec.Header().Get("Location")).Body.String()
		table := regexp.MustCompile(`(?s)data-testid="rating-summary">.*?</table>`).FindString(page)
		rows := regexp.MustCompile(`<tr><td>([^<]*)</td><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td></tr>`).FindAllStringSubmatch(table, -1)
		if len(rows) != len(cols) {
			t.Fatalf("%d rows in the rating summary, want %d:\n%s", len(rows), len(cols), table)
		}
		for _, m := range rows {
			col := m[1]
			if !slices.Contains(cols, col) {
				t.Errorf("the summary names a column %q the file does not have", col)
				continue
			}
			var xs []float64
			for i, r := range fed {
				if !empty(col, i) {
					xs = append(xs, r.Scores[col])
				}
			}
			n := float64(len(xs))
			var sum float64
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, x := range xs {
				sum += x
				lo, hi = min(lo, x), max(hi, x)
			}
			mean := sum / n
			var ss float64
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			sd := math.Sqrt(ss / (n - 1))
			if m[2] != strconv.Itoa(len(xs)) || m[3] != strconv.Itoa(len(fed)-len(xs)) {
				t.Errorf("%s: %s rated, %s missing; recomputed %d and %d", col, m[2], m[3], len(xs), len(fed)-len(xs))
			}
			shown(t, col+" mean", m[4], mean, 2)
			shown(t, col+" SD", m[5], sd, 2)
			shown(t, col+" min", m[6], lo, 2)
			shown(t, col+" max", m[7], hi, 2)
		}
	})
}
