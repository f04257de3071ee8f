package handlers

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSampleAndBatchPages: a sample links the samples before and after it
// in the dataset, offers its batch's whole answer, and lists its batch
// mates with their scores and human ratings; the batch page shows each
// sample's human rating beside its score.
func TestSampleAndBatchPages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		runID := env.launch(d.launchForm("1", "5"))
		run := env.waitRun(runID, 30*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		if err != nil || len(rows) < 3 {
			t.Fatalf("rows: %v (%d)", err, len(rows))
		}
		human := run.RubricSnapshot.Criteria[0].HumanColumn
		if human == "" {
			t.Fatalf("the demo's first criterion has no human column")
		}
		samplePath := func(id int64) string { return fmt.Sprintf("/runs/%d/samples/%d", runID, id) }
		tests := []struct {
			name       string
			at         int
			prev, next bool
		}{
			{"first", 0, false, true},
			{"middle", 1, true, true},
			{"last", len(rows) - 1, true, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				row := rows[tt.at]
				body := env.get(samplePath(row.ID)).Body.String()
				prev := fmt.Sprintf(`href="%s" rel="prev"`, samplePath(rows[max(tt.at-1, 0)].ID))
				next := fmt.Sprintf(`href="%s" rel="next"`, samplePath(rows[min(tt.at+1, len(rows)-1)].ID))
				if got := strings.Contains(body, prev); got != tt.prev {
					t.Errorf("link to the previous sample %v, want %v", got, tt.prev)
				}
				if got := strings.Contains(body, next); got != tt.next {
					t.Errorf("link to the next sample %v, want %v", got, tt.next)
				}
				if !strings.Contains(body, `data-testid="batch-answer"`) {
					t.Errorf("no expandable whole answer of the batch")
				}
				// Every mate of the first criterion's batch shows its rating.
				scores, err := env.db.ListRowScores(ctx, runID, row.ID)
				if err != nil || len(scores) == 0 {
					t.Fatalf("scores: %v", err)
				}
				b, err := env.db.FindBatch(ctx, runID, scores[0].BatchID)
				if err != nil {
					t.Fatal(err)
				}
				mates, err := env.db.FindDatasetRows(ctx, run.DatasetID, b.RowIDs)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range b.RowIDs {
					if id == row.ID {
						continue
					}
					r := mates[id]
					h := r.Ratings[human]
					if h == nil {
						continue
					}
					want := fmt.Sprintf(`data-testid="mate">%s</a></td><td class="num" data-testid="mate-score">`, r.ExternalID)
					if !strings.Contains(body, want) {
						t.Errorf("mate %s is not listed with its score", r.ExternalID)
					}
					cell := fmt.Sprintf(`data-testid="mate-human">%s<`, strconv.FormatFloat(*h, 'f', 2, 64))
					if !strings.Contains(body, cell) {
						t.Errorf("mate %s: human rating %s not shown", r.ExternalID, cell)
					}
				}

				page := env.get(fmt.Sprintf("/runs/%d/batches/%d", runID, b.ID)).Body.String()
				if got, want := strings.Count(page, `data-testid="batch-human"`), len(b.RowIDs); got != want {
					t.Errorf("batch page shows %d human ratings, want %d", got, want)
				}
				if h := row.Ratings[human]; h != nil && !strings.Contains(page, fmt.Sprintf(`data-testid="batch-human">%s<`, strconv.FormatFloat(*h, 'f', 2, 64))) {
					t.Errorf("batch page lacks the sample's human rating")
				}
			})
		}
	})
}

// TestSampleShowsWhyAScoreIsMissing: a round score the judge's answer did
// not yield shows the batch's reason beside its "—" on the sample page
// (QA: only the batch page said "Sample1: no score found"), escaped like
// all the judge's text.
func TestSampleShowsWhyAScoreIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		runID := env.launch(d.launchForm("1", "5"))
		run := env.waitRun(runID, 30*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 1)
		if err != nil || len(rows) == 0 {
			t.Fatalf("rows: %v (%d)", err, len(rows))
		}
		scores, err := env.db.ListRowScores(ctx, runID, rows[0].ID)
		if err != nil || len(scores) == 0 {
			t.Fatalf("scores: %v", err)
		}
		s := scores[0]
		if err := env.db.Gorm.Model(&models.RunScore{}).Where("id = ?", s.ID).Update("score", nil).Error; err != nil {
			t.Fatal(err)
		}
		label := fmt.Sprintf("Sample%d", s.Label)
		other := fmt.Sprintf("Sample%d", s.Label+1) // another sample's problem is not this one's reason
		tests := []struct {
			name     string
			batch    models.RunBatch
			want     string
			unwanted string
		}{
			{"no score, repair answered empty",
				models.RunBatch{Problems: []string{label + ": no score found", other + ": 7 is outside [1, 5]"}, RepairRequest: "Give the missing scores"},
				"(not readable: no score found; the repair request did not recover it)", "7 is outside"},
			{"the judge's words are escaped",
				models.RunBatch{Problems: []string{label + ": given 2 different scores (<b>2</b>, 3); none kept"}},
				"(not readable: given 2 different scores (&lt;b&gt;2&lt;/b&gt;, 3); none kept)", "<b>2</b>"},
			{"repair failed",
				models.RunBatch{Problems: []string{"no scores found in the answer", "repair request failed: timeout"}, RepairRequest: "Give the missing scores"},
				"(not readable: no scores found in the answer; repair request failed: timeout)", "did not recover"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := env.db.Gorm.Model(&models.RunBatch{ID: s.BatchID}).Select("problems", "repair_request").Updates(tt.batch).Error; err != nil {
					t.Fatal(err)
				}
				body := env.get(fmt.Sprintf("/runs/%d/samples/%d", runID, rows[0].ID)).Body.String()
				if !strings.Contains(body, `data-testid="unreadable">`+tt.want+`</span>`) {
					t.Errorf("the sample page lacks %q beside the missing score:\n%s", tt.want, body)
				}
				if strings.Contains(body, tt.unwanted) {
					t.Errorf("the sample page shows %q", tt.unwanted)
				}
			})
		}
	})
}

// TestSampleNamesItsBatchMatesAsTheAnswerDoes: the judge's whole answer
// names a batch's samples Sample1, Sample2…, so the sample page (and the
// shared one) gives each batch mate that name beside its id. QA: the
// mates were listed by id only, and a reader could not tell which part of
// the answer was about which neighbour.
func TestSampleNamesItsBatchMatesAsTheAnswerDoes(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		runID := env.launch(env.demo().launchForm("1", "5"))
		run := env.waitRun(runID, 30*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 1)
		if err != nil || len(rows) == 0 {
			t.Fatalf("rows: %v (%d)", err, len(rows))
		}
		row := rows[0]
		scores, err := env.db.ListRowScores(ctx, runID, row.ID)
		if err != nil || len(scores) == 0 {
			t.Fatalf("scores: %v", err)
		}
		batchScores, err := env.db.ListBatchScores(ctx, runID, scores[0].BatchID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := env.db.FindBatch(ctx, runID, scores[0].BatchID)
		if err != nil {
			t.Fatal(err)
		}
		mates, err := env.db.FindDatasetRows(ctx, run.DatasetID, b.RowIDs)
		if err != nil {
			t.Fatal(err)
		}
		share := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runID, 10)}, "expires": {"7d"}})
		live := env.get(fmt.Sprintf("/runs/%d/samples/%d", runID, row.ID)).Body.String()
		shared := env.get(fmt.Sprintf("%s/samples/%d", share, row.ID)).Body.String()
		checked := 0
		for _, ms := range batchScores {
			if ms.RowID == row.ID || ms.CriterionIndex != scores[0].CriterionIndex {
				continue
			}
			checked++
			ext := mates[ms.RowID].ExternalID
			wantLive := fmt.Sprintf(`data-testid="mate-label">Sample%d</td><td><a href="/runs/%d/samples/%d" data-testid="mate">%s</a>`, ms.Label, runID, ms.RowID, ext)
			if !strings.Contains(live, wantLive) {
				t.Errorf("sample page: mate %s is not named Sample%d as in the answer", ext, ms.Label)
			}
			wantShared := fmt.Sprintf(`data-testid="mate">%s</a> <span class="muted" data-testid="mate-label">(Sample%d)</span>`, ext, ms.Label)
			if !strings.Contains(shared, wantShared) {
				t.Errorf("shared sample page: mate %s is not named Sample%d as in the answer", ext, ms.Label)
			}
		}
		if checked == 0 {
			t.Fatalf("the sample's first batch has no other samples to check")
		}
	})
}
