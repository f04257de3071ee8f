package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCSVExportRefusesAnUnknownExcelVariant: the run's and the dataset's
// CSV exports in the browser sent the plain file for ?excel=2 or
// ?excel=yes, as if the parameter were left out, so a mistyped link gave a
// file Excel misreads with no word of it. Such a value is refused now (422,
// naming the values it takes); the three variants still download.
func TestCSVExportRefusesAnUnknownExcelVariant(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		runID := env.launch(d.launchForm("1", "10"))
		env.waitRun(runID, 60*time.Second)
		for _, base := range []string{fmt.Sprintf("/runs/%d/export.csv", runID), fmt.Sprintf("/datasets/%d/export.csv", d.dataset.ID)} {
			for _, tc := range []struct {
				query string
				code  int
			}{{"", http.StatusOK}, {"?excel=1", http.StatusOK}, {"?excel=semicolon", http.StatusOK},
				{"?excel=2", http.StatusUnprocessableEntity}, {"?excel=yes", http.StatusUnprocessableEntity}} {
				rec := env.get(base + tc.query)
				if rec.Code != tc.code {
					t.Errorf("GET %s%s: %d, want %d", base, tc.query, rec.Code, tc.code)
					continue
				}
				body := rec.Body.String()
				if tc.code == http.StatusOK {
					if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
						t.Errorf("GET %s%s: %s, want a CSV file", base, tc.query, rec.Header().Get("Content-Type"))
					}
					continue
				}
				if !strings.Contains(body, "is not a file this export makes") || !strings.Contains(body, "excel=semicolon") {
					t.Errorf("GET %s%s: %.300s, want the values excel takes named", base, tc.query, body)
				}
			}
		}
	})
}
