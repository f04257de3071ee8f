package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// A compare address that names no comparable pair (QA: runs on different
// datasets, a=x, a run with itself) is no dead end: the page has a plain
// heading, a sentence starting with a capital that says what to do, and
// the way on — the runs the named run can be compared with, its page and
// its project's runs. A run compared with itself is refused (it showed
// ±0.000, p = 1.000 and "Steiger's z undefined"), on the page and by the
// API.
func TestCompareRefusalOffersTheWayOn(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 30)
		a := env.storedRun(d, "quality A", noisy(d.human, 0.4, 1), nil)
		b := env.storedRun(d, "quality B", noisy(d.human, 0.8, 2), nil)
		other := env.ratedDataset("Other", 10)
		elsewhere := env.storedRun(other, "elsewhere", noisy(other.human, 0.4, 3), nil)

		heading := regexp.MustCompile(`<h1>([^<]*)</h1>`)
		message := regexp.MustCompile(`data-testid="error-message">([^<]*)<`)
		picker := regexp.MustCompile(`(?s)<select id="compare-b".*?</select>`)
		for _, tc := range []struct {
			name, path string
			status     int
			heading    string
			says       string
			offers     []int64 // runs the picker offers; nil: no picker
			notOffered int64
		}{
			{"other dataset", fmt.Sprintf("/compare?a=%d&b=%d", a.ID, elsewhere.ID), http.StatusUnprocessableEntity,
				"These runs cannot be compared", "judged different datasets", []int64{b.ID}, elsewhere.ID},
			{"a run with itself", fmt.Sprintf("/compare?a=%d&b=%d", a.ID, a.ID), http.StatusUnprocessableEntity,
				"These runs cannot be compared", "cannot be compared with itself", []int64{b.ID}, a.ID},
			{"a run with itself, one sample", fmt.Sprintf("/compare/sample?a=%d&b=%d&row=%d", b.ID, b.ID, d.rowIDs[0]), http.StatusUnprocessableEntity,
				"These runs cannot be compared", "cannot be compared with itself", []int64{a.ID}, b.ID},
			{"a is not a number", fmt.Sprintf("/compare?a=x&b=%d", b.ID), http.StatusUnprocessableEntity,
				"Choose two runs to compare", "a=x in the address is not a run number", []int64{a.ID}, b.ID},
			{"nothing named", "/compare?a=x", http.StatusUnprocessableEntity,
				"Choose two runs to compare", "not a run number", nil, 0},
			{"unknown run", fmt.Sprintf("/compare?a=%d&b=999999", a.ID), http.StatusNotFound,
				"Choose two runs to compare", "does not exist", []int64{b.ID}, a.ID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.get(tc.path)
				body := rec.Body.String()
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d: %.300s", rec.Code, tc.status, body)
				}
				if m := heading.FindStringSubmatch(body); m == nil || m[1] != tc.heading {
					t.Errorf("heading %q, want %q", m, tc.heading)
				}
				m := message.FindStringSubmatch(body)
				if m == nil || !strings.Contains(m[1], tc.says) {
					t.Fatalf("message %q does not say %q", m, tc.says)
				}
				if first := m[1][:1]; first != strings.ToUpper(first) || !strings.HasSuffix(strings.TrimSpace(m[1]), ".") {
					t.Errorf("message %q is not a sentence", m[1])
				}
				sel := picker.FindString(body)
				if tc.offers == nil {
					if sel != "" || !strings.Contains(body, `href="/" data-testid="refused-project"`) {
						t.Errorf("no run named: want no picker and a link to the projects")
					}
					return
				}
				for _, id := range tc.offers {
					if !strings.Contains(sel, fmt.Sprintf(`value="%d"`, id)) {
						t.Errorf("picker does not offer run %d: %q", id, sel)
					}
				}
				if strings.Contains(sel, fmt.Sprintf(`value="%d"`, tc.notOffered)) {
					t.Errorf("picker offers run %d, which cannot be compared", tc.notOffered)
				}
				if !strings.Contains(body, fmt.Sprintf(`href="/projects/%d" data-testid="refused-project"`, env.project.ID)) {
					t.Error("no link to the project's runs")
				}
				if strings.Contains(body, "Unprocessable Entity") {
					t.Error("the page still says Unprocessable Entity")
				}
			})
		}

		// The API refuses a run compared with itself too.
		rec := env.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d", a.ID, a.ID))
		var e APIError
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusUnprocessableEntity ||
			!strings.Contains(e.Error.Message, "cannot be compared with itself") {
			t.Errorf("API, a run with itself: %d %s", rec.Code, rec.Body.String())
		}
	})
}
