package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestMissingHumanRatingOneWording: a sample without a human rating is
// shown in one wording, "not rated", in every place that shows one: the
// run page's table of samples, the sample's page, its batch's page, the
// review queue, a share link's table and sample page, and the standalone
// report (its table and the sample's section), downloaded from the run
// page or from the share link. The downloaded report wrote "— (not rated)"
// in its table and "human —" in its sections, and the sample pages, the
// batch page and the review queue a bare "—", where the tables wrote "not
// rated". The CSV and JSON exports give it as an empty cell and null, with
// no word of their own.
func TestMissingHumanRatingOneWording(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		row := rows[0]
		crit := d.rubric.Criteria[0]
		if crit.HumanColumn == "" {
			t.Fatal("the demo rubric's first criterion has no human column")
		}
		delete(row.Ratings, crit.HumanColumn)
		must(t, env.db.Gorm.Model(&models.DatasetRow{ID: row.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: row.Ratings}).Error)
		run := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s: %s", run.Status, run.Error)
		}
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		const why = "no human rating in the dataset for this sample"

		// rowOf is the row of body's table of samples that links the
		// sample (the first criterion's, shown first).
		rowOf := func(t *testing.T, place, body, href string) string {
			t.Helper()
			for _, tr := range strings.Split(body, "<tr")[1:] {
				tr, _, _ = strings.Cut(tr, "</tr>")
				if strings.HasPrefix(tr, ` data-testid="sample-row"`) && strings.Contains(tr, `href="`+href+`"`) {
					return tr
				}
			}
			t.Fatalf("%s: no table row links %s", place, href)
			return ""
		}
		get := func(t *testing.T, path string, shared bool) string {
			t.Helper()
			rec := env.get(path)
			if shared {
				rec = env.getAs(path)
			}
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
			return rec.Body.String()
		}
		first := func(re, s string) string {
			m := regexp.MustCompile(re).FindStringSubmatch(s)
			if m == nil {
				return "(absent)"
			}
			return strings.Join(strings.Fields(m[1]), " ")
		}
		tableCell := `data-testid="human-missing-short">([^<]*)<`
		samplePage := `Human rating <strong data-testid="human">([^<]*)</strong>`
		section := fmt.Sprintf(`(?s)id="sample-%d".*?<summary>\s*[^<]*?, human ([^<(]*?)\s*(?://[^\n]*\s*)*<span class="small muted" data-testid="human-missing">`, row.ID)
		runSample := fmt.Sprintf("/runs/%d/samples/%d", run.ID, row.ID)
		sampleBody := get(t, runSample, false)
		batch := first(fmt.Sprintf(`href="(/runs/%d/batches/\d+)"`, run.ID), sampleBody)
		queue := fmt.Sprintf("/datasets/%d/review?criterion=0&order=random&run=%d&seed=1&blind=off&sample=%d", d.dataset.ID, run.ID, row.ID)
		report := get(t, fmt.Sprintf("/runs/%d/report.html", run.ID), false)
		sharedReport := get(t, link+"/report.html", true)

		places := []struct{ name, got string }{
			{"run page's table", first(tableCell, rowOf(t, "run page", get(t, fmt.Sprintf("/runs/%d", run.ID), false), runSample))},
			{"sample page", first(samplePage, sampleBody)},
			{"batch page", first(fmt.Sprintf(`samples/%d">[^<]*</a></td><td class="num">[^<]*</td><td class="num" data-testid="batch-human">([^<]*)<`, row.ID), get(t, batch, false))},
			{"review queue", first(`data-testid="review-human" title="[^"]*">([^<]*)<`, get(t, queue, false))},
			{"share link's table", first(tableCell, rowOf(t, "share link", get(t, link, true), fmt.Sprintf("%s/samples/%d", link, row.ID)))},
			{"share link's sample page", first(samplePage, get(t, fmt.Sprintf("%s/samples/%d", link, row.ID), true))},
			{"report's table", first(tableCell, rowOf(t, "report", report, fmt.Sprintf("#sample-%d", row.ID)))},
			{"report's section", first(section, report)},
			{"shared report's table", first(tableCell, rowOf(t, "shared report", sharedReport, fmt.Sprintf("#sample-%d", row.ID)))},
			{"shared report's section", first(section, sharedReport)},
		}
		for _, p := range places {
			if p.got != "not rated" {
				t.Errorf("%s: a missing human rating reads %q, want \"not rated\"", p.name, p.got)
			}
		}
		// The reason is beside the word wherever it is shown.
		for name, body := range map[string]string{"sample page": sampleBody, "report": report} {
			if !strings.Contains(body, `data-testid="human-missing">(`+escapeText(why)+`)</span>`) {
				t.Errorf("%s: no reason %q beside the missing rating", name, why)
			}
		}
		for name, body := range map[string]string{"report": report, "shared report": sharedReport} {
			if strings.Contains(body, "(not rated)") || strings.Contains(body, "— (not rated") {
				t.Errorf("%s still writes the old \"(not rated)\"", name)
			}
		}

		// The exports: an empty cell and null, no word.
		records, err := csv.NewReader(strings.NewReader(get(t, fmt.Sprintf("/runs/%d/export.csv", run.ID), false))).ReadAll()
		must(t, err)
		col := -1
		for i, h := range records[0] {
			if h == crit.Name+" human" {
				col = i
			}
		}
		found := false
		for _, r := range records[1:] {
			if col >= 0 && r[0] == row.ExternalID {
				found = true
				if r[col] != "" {
					t.Errorf("CSV: the missing rating's cell reads %q, want it empty", r[col])
				}
			}
		}
		if !found {
			t.Errorf("CSV: no %q column with a row for sample %s", crit.Name+" human", row.ExternalID)
		}
		var exp struct {
			Report struct {
				Criteria []struct {
					Samples []struct {
						ID    string          `json:"id"`
						Human json.RawMessage `json:"human"`
					} `json:"samples"`
				} `json:"criteria"`
			} `json:"report"`
		}
		must(t, json.Unmarshal([]byte(get(t, fmt.Sprintf("/runs/%d/export.json", run.ID), false)), &exp))
		found = false
		for _, s := range exp.Report.Criteria[0].Samples {
			if s.ID == row.ExternalID {
				found = true
				if string(s.Human) != "null" {
					t.Errorf("JSON: the missing rating is %s, want null", s.Human)
				}
			}
		}
		if !found {
			t.Errorf("JSON: no sample %s", row.ExternalID)
		}
	})
}
