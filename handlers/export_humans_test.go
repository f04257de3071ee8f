package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/stamp"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// exportedHumans is what a test reads back from a run's exports: the JSON
// export's human_ratings, one criterion's sample human ratings and
// Pearson n, and the CSV's "human ratings used" cell.
type exportedHumans struct {
	source, label  string
	browserRatings int
	asOf           *stamp.Time
	humans         []*float64
	pearsonN       int
	csvUsed        string
}

// readExportedHumans reads criterion ci's human side from the JSON export
// (page or API, the same document) and the CSV export.
func readExportedHumans(t *testing.T, env *testEnv, jsonBody, csvBody string, ci int) exportedHumans {
	t.Helper()
	var doc report.JSONExport
	if err := json.Unmarshal([]byte(jsonBody), &doc); err != nil {
		t.Fatalf("JSON export: %v\n%.400s", err, jsonBody)
	}
	hr := doc.Report.Provenance.HumanRatings
	out := exportedHumans{source: hr.Source, label: hr.Label, browserRatings: hr.BrowserRatings, asOf: hr.AsOf,
		pearsonN: doc.Report.Criteria[ci].Pearson.N}
	for _, s := range doc.Report.Criteria[ci].Samples {
		out.humans = append(out.humans, (*float64)(s.Human))
	}
	recs, err := csv.NewReader(strings.NewReader(csvBody)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("CSV export: %d records, %v", len(recs), err)
	}
	head := recs[0]
	col := -1
	for i, h := range head {
		if h == "human ratings used" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("CSV export has no \"human ratings used\" column: %q", head)
	}
	for _, r := range recs[1:] {
		if r[col] != recs[1][col] {
			t.Errorf("CSV \"human ratings used\" differs between lines: %q and %q", recs[1][col], r[col])
		}
	}
	out.csvUsed = recs[1][col]
	return out
}

// TestExportsSayWhichHumanRatings: the JSON and CSV exports and the API's
// run report say the imported column was used until someone recomputes
// with browser ratings; then they say browser (or both), count the
// ratings read, and their human figures follow the browser ratings.
func TestExportsSayWhichHumanRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		session := env.sessionCookie(owner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)

		exports := func() exportedHumans {
			t.Helper()
			page := env.send(http.MethodGet, fmt.Sprintf("/runs/%d/export.json", run.ID), nil, "", session)
			csvRec := env.send(http.MethodGet, fmt.Sprintf("/runs/%d/export.csv", run.ID), nil, "", session)
			apiRec := api.get(fmt.Sprintf("/api/v1/runs/%d/results", run.ID), token)
			if page.Code != http.StatusOK || csvRec.Code != http.StatusOK || apiRec.Code != http.StatusOK {
				t.Fatalf("exports: JSON %d, CSV %d, API %d", page.Code, csvRec.Code, apiRec.Code)
			}
			got := readExportedHumans(t, env, page.Body.String(), csvRec.Body.String(), 1)
			fromAPI := readExportedHumans(t, env, apiRec.Body.String(), csvRec.Body.String(), 1)
			if fromAPI.source != got.source || fromAPI.browserRatings != got.browserRatings || fromAPI.pearsonN != got.pearsonN {
				t.Errorf("the API's report says %+v, the JSON export %+v", fromAPI, got)
			}
			return got
		}

		before := exports()
		if before.source != "imported" || before.label != "imported column" || before.browserRatings != 0 || before.asOf != nil ||
			before.csvUsed != "imported column" {
			t.Errorf("before recompute: %+v; want imported, no browser ratings, no time, CSV \"imported column\"", before)
		}

		// Ann rates the first six samples of Coherent (1..3) at the low
		// end of the scale, unlike the imported ratings.
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		crit := run.RubricSnapshot.Criteria[1]
		const rated = 6
		for _, r := range rows[:rated] {
			v := crit.Lo
			if _, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: r.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann", Score: &v, Lo: crit.Lo, Hi: crit.Hi, RunID: &run.ID}); err != nil {
				t.Fatal(err)
			}
		}
		// Stored ratings change nothing until someone recomputes.
		if again := exports(); again.source != "imported" || fmt.Sprint(deref(again.humans)) != fmt.Sprint(deref(before.humans)) {
			t.Errorf("a new browser rating changed the export silently: %+v", again)
		}

		cases := []struct {
			source   string
			label    string
			wantN    func(n int) bool
			wantHums func(h []*float64) string // "" when right
		}{
			{"browser", "browser ratings", func(n int) bool { return n <= rated }, func(h []*float64) string {
				for i, v := range h {
					switch {
					case i < rated && (v == nil || *v != crit.Lo):
						return fmt.Sprintf("sample %d: human %v, want Ann's %g", i, deref1(v), crit.Lo)
					case i >= rated && v != nil:
						return fmt.Sprintf("sample %d: human %v, want none (not rated in the browser)", i, *v)
					}
				}
				return ""
			}},
			{"both", "imported column and browser ratings", func(n int) bool { return n == before.pearsonN }, func(h []*float64) string {
				changed := 0
				for i, v := range h {
					if v == nil {
						return fmt.Sprintf("sample %d lost its human rating", i)
					}
					if i >= rated && *v != *before.humans[i] {
						return fmt.Sprintf("sample %d not rated in the browser changed: %g, was %g", i, *v, *before.humans[i])
					}
					if i < rated && *v != *before.humans[i] {
						changed++
					}
				}
				if changed == 0 {
					return "no human rating changed with Ann's ratings averaged in"
				}
				return ""
			}},
		}
		for _, tc := range cases {
			rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {tc.source}}, "", session)
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("recompute with %s: %d %s", tc.source, rec.Code, rec.Body.String())
			}
			after := exports()
			if after.source != tc.source || after.label != tc.label || after.browserRatings != rated || after.asOf == nil {
				t.Errorf("after recompute with %s: %+v; want that source, %d browser ratings and the time", tc.source, after, rated)
			}
			if want := fmt.Sprintf("%s (%d browser ratings made up to ", tc.label, rated); !strings.HasPrefix(after.csvUsed, want) {
				t.Errorf("CSV after recompute with %s says %q, want it to start %q", tc.source, after.csvUsed, want)
			}
			if !tc.wantN(after.pearsonN) {
				t.Errorf("%s: Pearson n = %d (imported: %d)", tc.source, after.pearsonN, before.pearsonN)
			}
			if msg := tc.wantHums(after.humans); msg != "" {
				t.Errorf("%s: %s", tc.source, msg)
			}
		}
	})
}

func deref1(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func deref(vs []*float64) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = deref1(v)
	}
	return out
}
