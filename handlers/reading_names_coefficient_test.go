package handlers

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestReadingNamesItsCoefficient: the reading under a criterion's
// correlations said "Strong agreement (0.62), …" beside a table of three
// coefficients, and a newcomer could not tell which one 0.62 was. Every
// place that shows it (run page, share link, report download, JSON export)
// now says the same sentence naming the figure as the table heads it
// ("Pearson r = …"), as does the compare page's reading of two runs'
// scores, which is a Pearson r too.
func TestReadingNamesItsCoefficient(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("named reading", 30)
		finals := make([]float64, len(d.human))
		other := make([]float64, len(d.human))
		for i, h := range d.human {
			finals[i] = h + float64(i%3)*0.5
			other[i] = h - float64(i%4)*0.4
		}
		run := env.storedRun(d, "named", finals, nil)
		second := env.storedRun(d, "named too", other, nil)

		var exp struct {
			Report struct {
				Criteria []struct {
					Reading string `json:"reading"`
				} `json:"criteria"`
			} `json:"report"`
		}
		rec := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID))
		if rec.Code != 200 {
			t.Fatalf("export.json: %d", rec.Code)
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &exp))
		if len(exp.Report.Criteria) != 1 {
			t.Fatalf("export has %d criteria, want 1", len(exp.Report.Criteria))
		}
		reading := exp.Report.Criteria[0].Reading
		if !strings.Contains(reading, " (Pearson r = ") {
			t.Fatalf("JSON export's reading %q does not name its coefficient", reading)
		}

		share := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		// The pages sign numbers with the true minus; the sentence here
		// (Pearson r, an interval) has no hyphen other than a sign.
		want := templ.EscapeString(strings.ReplaceAll(reading, "-", "\u2212"))
		for _, path := range []string{fmt.Sprintf("/runs/%d", run.ID), share, fmt.Sprintf("/runs/%d/report.html", run.ID)} {
			rec := env.get(path)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("%s lacks the export's reading %q", path, want)
			}
		}

		rec = env.get(fmt.Sprintf("/compare?a=%d&b=%d", run.ID, second.ID))
		if rec.Code != 200 {
			t.Fatalf("compare: %d", rec.Code)
		}
		body := rec.Body.String()
		i := strings.Index(body, `data-testid="runs-reading"`)
		if i < 0 {
			t.Fatalf("compare page has no reading of the two runs' scores")
		}
		if line := body[i:min(i+400, len(body))]; !strings.Contains(line, "final scores: ") ||
			!strings.Contains(line, " (Pearson r = ") {
			t.Errorf("compare page's reading does not name its coefficient: %q", line)
		}
	})
}
