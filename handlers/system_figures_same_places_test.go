package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSystemFiguresSameInEveryPlace: the system-level table (the
// correlation of the systems' mean judge scores with their mean human
// ratings) is written by the run page and, in a template of their own, by
// the shared and downloaded run reports; TestRunFiguresSameInEveryPlace
// left it out. Every system-level figure (coefficient, p-value, 95%
// interval, number of systems) and every note on a missing interval must
// read the same in the three places, and be the JSON export's number as a
// reader rounds it ("undefined" where the export has null). Eight systems
// give every coefficient an interval; three give Spearman's and Kendall's
// none (fewer than stats.RankBootstrapMin) and Pearson's none (below 4).
func TestSystemFiguresSameInEveryPlace(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		demo := env.demo().dataset
		for _, tc := range []struct {
			name    string
			systems int
		}{
			{"eight systems", 8},
			{"three systems", 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ds := env.systemCopyOf(demo, "Dialogues, "+tc.name, tc.systems)
				run := env.startRun(ds, "Systems, "+tc.name, models.MethodBatchEval, func(r *models.Run) {
					r.Settings.BatchSize, r.Settings.Rounds = 5, 2
				})
				if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
					t.Fatalf("run %s (%s), want succeeded", got.Status, got.Error)
				}
				get := func(path string) string {
					t.Helper()
					rec := env.get(path)
					if rec.Code != http.StatusOK {
						t.Fatalf("%s: %d %.300s", path, rec.Code, rec.Body.String())
					}
					return rec.Body.String()
				}
				exported, _ := splitExport(t, []byte(get(fmt.Sprintf("/runs/%d/export.json", run.ID))))
				var ex struct {
					Criteria []struct {
						Name        string
						SystemLevel *struct {
							Column                     string
							Pearson, Spearman, Kendall struct {
								Coef    *float64 `json:"coef"`
								P       *float64 `json:"p"`
								CILow   *float64 `json:"ci_low"`
								CIHigh  *float64 `json:"ci_high"`
								Systems int      `json:"systems"`
								Note    string   `json:"interval_note"`
							}
						} `json:"system_level"`
					} `json:"criteria"`
				}
				must(t, json.Unmarshal(exported, &ex))

				link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
				places := []struct{ name, body string }{
					{"run page", get(fmt.Sprintf("/runs/%d", run.ID))},
					{"share link", get(link)},
					{"downloaded report", get(fmt.Sprintf("/runs/%d/report.html", run.ID))},
				}
				noteRE := regexp.MustCompile(`data-testid="system-interval-note">([^<]*)<`)
				saw, sawInterval, sawNone := false, false, false
				for ci, ec := range ex.Criteria {
					sl := ec.SystemLevel
					if sl == nil {
						continue
					}
					saw = true
					if sl.Column != "system" {
						t.Errorf("%s: exported with systems in %q, want system", ec.Name, sl.Column)
					}
					var first string
					for _, p := range places {
						cards := strings.Split(p.body, `data-testid="criterion-card"`)
						if len(cards) != len(ex.Criteria)+1 {
							t.Fatalf("%s: %d criterion cards, the export %d criteria", p.name, len(cards)-1, len(ex.Criteria))
						}
						card := cards[ci+1]
						what := fmt.Sprintf("%s, %s", p.name, ec.Name)
						// Coefficient, systems' coefficient, interval, p, systems.
						var rows [][]string
						if p.name == "run page" {
							for _, r := range tableRows(t, card, `data-testid="system-table"`) {
								if len(r) != 7 {
									t.Fatalf("%s: system-level row %q", what, r)
								}
								rows = append(rows, []string{r[0], r[3], r[4], r[5], r[6]})
							}
						} else if i := strings.Index(card, `data-testid="report-system-level"`); i >= 0 {
							rows = tableRows(t, card[i:], `class="correlations"`)
						}
						if len(rows) != 3 {
							t.Fatalf("%s: %d rows in the system-level table, want 3: %q", what, len(rows), rows)
						}
						for i, c := range []struct {
							name string
							x    struct {
								Coef    *float64 `json:"coef"`
								P       *float64 `json:"p"`
								CILow   *float64 `json:"ci_low"`
								CIHigh  *float64 `json:"ci_high"`
								Systems int      `json:"systems"`
								Note    string   `json:"interval_note"`
							}
						}{{"Pearson r", sl.Pearson}, {"Spearman ρ", sl.Spearman}, {"Kendall τ-b", sl.Kendall}} {
							row := rows[i]
							if len(row) != 5 {
								t.Fatalf("%s: system-level row %q", what, row)
							}
							if row[0] != c.name || row[1] != placesCoef(c.x.Coef) || row[4] != strconv.Itoa(c.x.Systems) {
								t.Errorf("%s: system-level row %q; the export's %s %s over %d systems", what, row, c.name, placesCoef(c.x.Coef), c.x.Systems)
							}
							placesP(t, what+", "+c.name+" system-level p-value", row[3], c.x.P)
							placesInterval(t, what+", "+c.name+" system-level interval", row[2], c.x.CILow, c.x.CIHigh)
							if c.x.CILow != nil {
								sawInterval = true
							} else if c.x.Coef != nil {
								sawNone = true
							}
						}
						var notes []string
						for _, m := range noteRE.FindAllStringSubmatch(card, -1) {
							notes = append(notes, pageText(m[1]))
						}
						for _, c := range []struct {
							name, note string
						}{{"Pearson r", sl.Pearson.Note}, {"Spearman ρ", sl.Spearman.Note}, {"Kendall τ-b", sl.Kendall.Note}} {
							if c.note != "" && !strings.Contains(strings.Join(notes, "\n"), c.name+"'s interval: "+c.note) {
								t.Errorf("%s: no note on %s's missing interval (%q) among %q", what, c.name, c.note, notes)
							}
						}
						figures := fmt.Sprint(rows, notes)
						if first == "" {
							first = figures
						} else if figures != first {
							t.Errorf("%s shows other system-level figures than the run page:\n%s\nvs\n%s", what, figures, first)
						}
					}
				}
				if !saw {
					t.Fatalf("no criterion exported with a system-level correlation: the test shows nothing")
				}
				if tc.systems >= 8 && !sawInterval {
					t.Errorf("%d systems and no system-level interval: the case does not hold", tc.systems)
				}
				if tc.systems < 4 && !sawNone {
					t.Errorf("%d systems and every coefficient has an interval: the case does not hold", tc.systems)
				}
			})
		}
	})
}

// systemCopyOf copies the demo dataset with a "system" column (the
// column name the reports pick by default), its rows dealt to n systems
// in turn.
func (env *testEnv) systemCopyOf(demo models.Dataset, name string, n int) models.Dataset {
	env.t.Helper()
	ctx := context.Background()
	rows, err := env.db.ListDatasetRows(ctx, demo.ID, 0, 0)
	if err != nil {
		env.t.Fatal(err)
	}
	copies := make([]models.DatasetRow, len(rows))
	for i, r := range rows {
		data := map[string]string{"system": fmt.Sprintf("model-%c", 'A'+i%n)}
		for k, v := range r.Data {
			data[k] = v
		}
		copies[i] = models.DatasetRow{Position: r.Position, ExternalID: r.ExternalID, Data: data, Ratings: r.Ratings}
	}
	ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: name, SourceFilename: "systems.jsonl", Format: demo.Format,
		IDColumn: demo.IDColumn, Columns: append([]string{"system"}, demo.Columns...), Fields: demo.Fields, RatingColumns: demo.RatingColumns}
	if err := env.db.CreateDataset(ctx, &ds, copies); err != nil {
		env.t.Fatal(err)
	}
	return ds
}
