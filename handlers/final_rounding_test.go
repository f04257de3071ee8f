package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestFinalScoreShowsOneWayWhateverTheRoundOrder: two samples judged 2.1,
// 2.2, 2.2, 2.2 in four rounds, in two orders, have the same final, 2.175,
// as the JSON export writes it. Summed in floating point in round order one
// mean is 2.1750000000000003 and the other 2.175 (just below), and the pages
// rounded those floats: the run page, the sample pages, the downloaded
// report and the share link showed 2.18 for one and 2.17 for the other. A
// final of exactly 2.125 showed 2.12 beside 2.375 as 2.38 (halves to even).
// Every page now rounds the exported decimal half away from zero.
func TestFinalScoreShowsOneWayWhateverTheRoundOrder(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Rounding", 4)
		rounds := [][]float64{ // per sample, its four round scores
			{2.1, 2.2, 2.2, 2.2},
			{2.2, 2.2, 2.1, 2.2},
			{2.25, 2, 2.25, 2},
			{2.5, 2.25, 2.5, 2.25},
		}
		want := []string{"2.18", "2.18", "2.13", "2.38"}

		s := evaluator.DefaultSettings()
		s.Rounds = len(rounds[0])
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Rounding run", Method: models.MethodBatchEval,
			Settings: s, Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
				Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
		must(t, env.db.CreateRun(ctx, &run, nil))
		for r := range s.Rounds {
			bs, err := env.db.CreateRoundBatches(ctx, run.ID, 0, r, [][]int64{d.rowIDs})
			must(t, err)
			b := bs[0]
			b.Status = models.BatchDone
			scores := make([]models.RunScore, len(rounds))
			for i := range rounds {
				v := rounds[i][r]
				scores[i] = models.RunScore{RunID: run.ID, BatchID: b.ID, Round: r, RowID: d.rowIDs[i], Label: i + 1, Score: &v}
			}
			must(t, env.db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: scores}))
		}
		must(t, env.db.FinishRun(ctx, run.ID, models.RunSucceeded, ""))

		// The export's finals, the figure every page rounds.
		var exp struct {
			Report struct {
				Criteria []struct {
					Samples []struct {
						ID    string   `json:"id"`
						Final *float64 `json:"final"`
					} `json:"samples"`
				} `json:"criteria"`
			} `json:"report"`
		}
		must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &exp))
		for i, smp := range exp.Report.Criteria[0].Samples {
			if smp.Final == nil {
				t.Fatalf("sample %s has no final in the export", smp.ID)
			}
			if got := strconv.FormatFloat(*smp.Final, 'g', -1, 64); got != []string{"2.175", "2.175", "2.125", "2.375"}[i] {
				t.Errorf("export final of %s = %s", smp.ID, got)
			}
		}

		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		// A sample's final shows in two tables: the scatter chart's data
		// (its first figure) and the samples table (its one bold figure).
		strong := regexp.MustCompile(`<strong>([0-9.−-]+)</strong>`)
		firstNum := regexp.MustCompile(`<td class="num">([0-9.−-]+)</td>`)
		for _, page := range []string{fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/runs/%d/report.html", run.ID), link, link + "/report.html"} {
			body := env.get(page).Body.String()
			for i := range rounds {
				id := fmt.Sprintf("s%03d", i)
				rows := strings.Split(body, ">"+id+"<")[1:]
				if len(rows) < 2 {
					t.Errorf("%s: sample %s is in %d tables, want the chart's and the samples'", page, id, len(rows))
				}
				for _, row := range rows {
					if end := strings.Index(row, "</tr>"); end >= 0 {
						row = row[:end]
					}
					m := strong.FindStringSubmatch(row)
					if m == nil {
						m = firstNum.FindStringSubmatch(row)
					}
					if m == nil {
						t.Errorf("%s: no final in a row of %s: %.300s", page, id, row)
					} else if m[1] != want[i] {
						t.Errorf("%s: the final of %s (rounds %v) shows %s, want %s", page, id, rounds[i], m[1], want[i])
					}
				}
			}
		}
		for i, rowID := range d.rowIDs {
			body := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, rowID)).Body.String()
			if !strings.Contains(body, "final judge score <strong>"+want[i]+"</strong>") {
				t.Errorf("the sample page of s%03d does not show final judge score %s", i, want[i])
			}
		}
	})
}
