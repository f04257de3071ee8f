package report

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// synthBatchSize is B for synthesized runs, as in the paper.
const synthBatchSize = 10

// synthChunk bounds the rows per INSERT: under SQLite's limit on bound
// variables for the widest row written here.
const synthChunk = 500

// synthRun stores a finished BatchEval run of n samples, two criteria with
// human ratings and two rounds, straight into db (no judge): a dataset
// with a system column, batches with realistic prompts and answers, and
// one score per sample, criterion and round (every 50th unreadable).
func synthRun(tb testing.TB, db *models.DB, n int) (wsID, runID int64) {
	tb.Helper()
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now().UTC()
	p := models.Project{WorkspaceID: ws.ID, Name: fmt.Sprintf("synth %d", n), CreatedAt: now, UpdatedAt: now}
	must(tb, db.Gorm.Create(&p).Error)
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: p.Name, Format: "jsonl", RowCount: n, IDColumn: "id",
		Columns:       []string{"id", "context", "response", "system", "coherence", "fluency"},
		Fields:        []evaluator.Field{{Column: "context", Label: "Context"}, {Column: "response", Label: "Response"}},
		RatingColumns: []string{"coherence", "fluency"}, CreatedAt: now}
	must(tb, db.Gorm.Create(&ds).Error)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 8)
	rows := make([]models.DatasetRow, 0, synthChunk)
	var ids []int64
	truth := make([]float64, 0, n)
	flush := func() {
		if len(rows) == 0 {
			return
		}
		must(tb, db.Gorm.CreateInBatches(&rows, synthChunk).Error)
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		rows = rows[:0]
	}
	for i := range n {
		q := 1 + 4*rng.Float64()
		truth = append(truth, q)
		c, f := q+rng.NormFloat64()*0.5, q+rng.NormFloat64()*0.7
		rows = append(rows, models.DatasetRow{DatasetID: ds.ID, Position: i, ExternalID: fmt.Sprintf("s%d", i),
			Data:    map[string]string{"context": fmt.Sprintf("Dialogue %d: %s", i, filler), "response": "A reply " + filler, "system": fmt.Sprintf("sys%d", i%8)},
			Ratings: map[string]*float64{"coherence": &c, "fluency": &f}})
		if len(rows) == synthChunk {
			flush()
		}
	}
	flush()

	rub := evaluator.Rubric{Task: "dialogue", Fields: ds.Fields, Criteria: []evaluator.Criterion{
		{Name: "Coherence", Lo: 1, Hi: 5, HumanColumn: "coherence"}, {Name: "Fluency", Lo: 1, Hi: 5, HumanColumn: "fluency"}}}
	s := evaluator.DefaultSettings()
	s.Rounds, s.BatchSize = 2, synthBatchSize
	cost := 0.0
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, Name: p.Name, Method: models.MethodBatchEval,
		Status: models.RunSucceeded, Settings: s, RubricSnapshot: rub, JudgeSnapshot: models.JudgeSnapshot{Name: "synth", Model: "synth"},
		CreatedAt: now, StartedAt: &now, FinishedAt: &now, CostUSD: &cost}
	must(tb, db.Gorm.Create(&run).Error)

	prompt := strings.Repeat("Rate each sample below on the criterion. "+filler, 5)
	answer := strings.Repeat("Analysis: the reply is coherent. Score: 3.5\n", 10)
	var batches []models.RunBatch
	var scores []models.RunScore
	flushScores := func() {
		if len(batches) > 0 {
			must(tb, db.Gorm.CreateInBatches(&batches, 100).Error)
			for _, b := range batches {
				for k, id := range b.RowIDs {
					var v *float64
					if (int(id)+k+b.Round)%50 != 0 {
						x := min(5, max(1, truth[b.BatchIndex*synthBatchSize+k]+rng.NormFloat64()*0.6))
						v = &x
					}
					scores = append(scores, models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: b.CriterionIndex,
						Round: b.Round, RowID: id, Label: k + 1, Score: v})
				}
			}
			must(tb, db.Gorm.CreateInBatches(&scores, synthChunk).Error)
		}
		batches, scores = batches[:0], scores[:0]
	}
	for ci := range rub.Criteria {
		for round := range s.Rounds {
			for b := 0; b*synthBatchSize < n; b++ {
				batch := models.RunBatch{RunID: run.ID, CriterionIndex: ci, Round: round, BatchIndex: b,
					RowIDs: ids[b*synthBatchSize : min(n, (b+1)*synthBatchSize)], Status: models.BatchDone,
					Request: prompt, Response: answer, Problems: []string{}, Details: map[string]any{}, Calls: 1, Attempts: 1, DoneAt: &now}
				batches = append(batches, batch)
				if len(batches) == 100 {
					flushScores()
				}
			}
		}
	}
	flushScores()
	return ws.ID, run.ID
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
