package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestJudgedAlongsideSaysWhyAValueIsMissing: a sample page's "Judged
// alongside" table says why a batch mate has no score in that batch or no
// human rating, as the run page's samples table says it ("no score", "not
// rated" with the reason beside it), the judge's words escaped. QA: both
// cells showed a bare "—".
func TestJudgedAlongsideSaysWhyAValueIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		runID := env.launch(env.demo().launchForm("1", "5"))
		run := env.waitRun(runID, 30*time.Second)
		human := run.RubricSnapshot.Criteria[0].HumanColumn
		if human == "" {
			t.Fatalf("the demo's first criterion has no human column")
		}
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 1)
		if err != nil || len(rows) == 0 {
			t.Fatalf("rows: %v (%d)", err, len(rows))
		}
		row := rows[0]
		scores, err := env.db.ListRowScores(ctx, runID, row.ID)
		if err != nil || len(scores) == 0 {
			t.Fatalf("scores: %v", err)
		}
		var own models.RunScore
		for _, s := range scores {
			if s.CriterionIndex == 0 {
				own = s
				break
			}
		}
		batchScores, err := env.db.ListBatchScores(ctx, runID, own.BatchID)
		if err != nil {
			t.Fatal(err)
		}
		var mate models.RunScore
		for _, ms := range batchScores {
			if ms.RowID != row.ID && ms.CriterionIndex == own.CriterionIndex {
				mate = ms
				break
			}
		}
		if mate.ID == 0 {
			t.Fatalf("the sample's batch has no other sample")
		}
		// The mate's score in the batch could not be read, and it has no
		// human rating in the dataset.
		if err := env.db.Gorm.Model(&models.RunScore{}).Where("id = ?", mate.ID).Update("score", nil).Error; err != nil {
			t.Fatal(err)
		}
		problems := models.RunBatch{Problems: []string{fmt.Sprintf("Sample%d: given 2 different scores (<b>2</b>, 3); none kept", mate.Label)}}
		if err := env.db.Gorm.Model(&models.RunBatch{ID: mate.BatchID}).Select("problems").Updates(problems).Error; err != nil {
			t.Fatal(err)
		}
		mrows, err := env.db.FindDatasetRows(ctx, run.DatasetID, []int64{mate.RowID})
		if err != nil {
			t.Fatal(err)
		}
		mr := mrows[mate.RowID]
		mr.Ratings[human] = nil
		if err := env.db.Gorm.Model(&models.DatasetRow{ID: mr.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: mr.Ratings}).Error; err != nil {
			t.Fatal(err)
		}

		body := env.get(fmt.Sprintf("/runs/%d/samples/%d", runID, row.ID)).Body.String()
		link := fmt.Sprintf(`<a href="/runs/%d/samples/%d" data-testid="mate">`, runID, mate.RowID)
		at := strings.Index(body, link)
		if at < 0 {
			t.Fatalf("the mate is not listed:\n%s", body)
		}
		cells := body[at:]
		cells = cells[:strings.Index(cells, "</tr>")]
		why := "not readable: given 2 different scores (&lt;b&gt;2&lt;/b&gt;, 3); none kept"
		wantScore := `<span class="small muted" title="` + why + `" data-testid="mate-score-missing">no score<span class="sr-only"> (` + why + `)</span></span>`
		if !strings.Contains(cells, wantScore) {
			t.Errorf("the mate's missing score does not say why (want %s):\n%s", wantScore, cells)
		}
		hwhy := "no human rating in the dataset for this sample"
		wantHuman := `title="` + hwhy + `" data-testid="mate-human-missing">not rated<span class="sr-only"> (` + hwhy + `)</span>`
		if !strings.Contains(cells, wantHuman) {
			t.Errorf("the mate's missing human rating does not say why (want %s):\n%s", wantHuman, cells)
		}
		if strings.Contains(cells, "—") || strings.Contains(body, "<b>2</b>") {
			t.Errorf("a bare dash or the judge's unescaped words:\n%s", cells)
		}
	})
}
