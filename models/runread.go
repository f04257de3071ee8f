package models

import "context"

// batchLayoutColumns are what reports need of a batch: where it sits and
// which samples it held, not its prompts, answers or problems (which are
// most of a batch's bytes and are shown only on the batch's own page).
var batchLayoutColumns = []string{"id", "run_id", "criterion_index", "round", "batch_index", "row_ids", "status"}

// scoreValueColumns are a score without the judge's analysis text.
var scoreValueColumns = []string{"id", "run_id", "batch_id", "criterion_index", "round", "row_id", "label", "score"}

// ListBatchLayout returns every batch of a run in order with only its
// layout (ids, criterion, round, index, samples, status): the prompts and
// answers are left in the database.
func (db *DB) ListBatchLayout(ctx context.Context, runID int64) ([]RunBatch, error) {
	var bs []RunBatch
	err := db.Reader(ctx).Select(batchLayoutColumns).Where("run_id = ?", runID).
		Order("criterion_index, round, batch_index").Find(&bs).Error
	return bs, err
}

// ListScoreValues returns every score of a run, as ListScores does, but
// without the judge's analysis text.
func (db *DB) ListScoreValues(ctx context.Context, runID int64) ([]RunScore, error) {
	var ss []RunScore
	err := db.Reader(ctx).Select(scoreValueColumns).Where("run_id = ?", runID).
		Order("criterion_index, round, row_id").Find(&ss).Error
	return ss, err
}
