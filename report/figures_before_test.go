package report

import (
	"fmt"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestFiguresMatchTheCodeBefore: BuildFigures (each criterion's scores
// and batch layout read when it is computed, as spans of values; a
// criterion's temporaries at their size) gives every figure and sample of
// the code before livemem45 (buildFiguresBefore, a test file's since livemem46), for every run shape of
// the stream tests, as stored and then running with a failed call, a unit
// read from too few answers (a sampling method's) and a call not yet
// answered; and it stores the figures of the same criteria (those whose
// every call has come back) with the same inputs. Both databases.
func TestFiguresMatchTheCodeBefore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		wsID, ds, rows := streamDataset(t, db)
		compare := func(t *testing.T, what string, runID int64, opt Options) {
			t.Helper()
			stored := func() []string {
				var ss []models.RunStats
				must(t, db.Gorm.Where("run_id = ?", runID).Order("criterion_index, variant").Find(&ss).Error)
				out := make([]string, len(ss))
				for i, s := range ss {
					out[i] = fmt.Sprintf("%d/%s/%s", s.CriterionIndex, s.Variant, s.InputHash)
				}
				must(t, db.Gorm.Where("run_id = ?", runID).Delete(&models.RunStats{}).Error)
				return out
			}
			stored()
			want, err := buildFiguresBefore(ctx, db, wsID, runID, opt)
			must(t, err)
			storedBefore := stored()
			got, err := BuildFigures(ctx, db, wsID, runID, opt)
			must(t, err)
			storedNow := stored()
			if len(got.Criteria) == 0 {
				t.Fatalf("%s: no criteria to compare", what)
			}
			assertSameValue(t, what, *got, *want)
			if !slices.Equal(storedNow, storedBefore) {
				t.Errorf("%s: stored figures %v, before %v", what, storedNow, storedBefore)
			}
		}
		shapes := map[string]bool{}
		for _, tc := range streamCases {
			t.Run(tc.name, func(t *testing.T) {
				run := storeStreamRun(t, db, wsID, ds, rows, tc)
				compare(t, "as stored", run.ID, Options{})
				compare(t, "no system column", run.ID, Options{SystemColumn: NoSystem})

				// Running: criterion 0's first call failed, the last
				// criterion's first round was read from too few answers
				// (counted for methods that sample), its last call is
				// still out.
				var bs []models.RunBatch
				must(t, db.Gorm.Where("run_id = ?", run.ID).Order("criterion_index, round, batch_index").Find(&bs).Error)
				last := len(tc.criteria) - 1
				for _, b := range bs {
					switch {
					case b.CriterionIndex == 0 && b.Round == 0:
						must(t, db.Gorm.Model(&models.RunBatch{}).Where("id = ?", b.ID).Update("status", models.BatchFailed).Error)
					case b.CriterionIndex == last && b.Round == 0:
						must(t, db.Gorm.Model(&models.RunBatch{}).Where("id = ?", b.ID).Update("details", `{"too_few_readable":true}`).Error)
					}
				}
				lastBatch := bs[len(bs)-1]
				must(t, db.Gorm.Model(&models.RunBatch{}).Where("id = ?", lastBatch.ID).Update("status", models.BatchPending).Error)
				share := 0.5
				run.MethodSettings.MinReadableShare = &share
				run.Status, run.FinishedAt = models.RunRunning, nil
				must(t, db.Gorm.Model(&run).Select("Status", "FinishedAt", "MethodSettings").Updates(&run).Error)
				compare(t, "running", run.ID, Options{})
				rep, err := BuildFigures(ctx, db, wsID, run.ID, Options{})
				must(t, err)
				for _, cr := range rep.Criteria {
					shapes[fmt.Sprintf("no answer %v", cr.NoAnswer > 0)] = true
					shapes[fmt.Sprintf("too few %v", cr.TooFew > 0)] = true
				}
			})
		}
		// The cases cover what they claim: failed calls and units read
		// from too few answers counted somewhere, not everywhere.
		for _, want := range []string{"no answer true", "no answer false", "too few true", "too few false"} {
			if !shapes[want] {
				t.Errorf("no criterion with %s: the cases miss a shape", want)
			}
		}
	})
}

// TestRowPlaces: a row's place is found by its id as a map of the rows
// finds it, whether the ids follow the rows' order (searched, no map) or
// not (a map), in any order of asking, and an id of no row is not found.
func TestRowPlaces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ids    []int64
		mapped bool
	}{
		{"none", nil, false},
		{"one", []int64{5}, false},
		{"increasing with gaps", []int64{2, 3, 7, 8, 20, 21, 22}, false},
		{"not increasing", []int64{9, 3, 7, 1}, true},
		{"a repeated id", []int64{1, 2, 2, 3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := make([]models.DatasetRow, len(tc.ids))
			want := map[int64]int{}
			for i, id := range tc.ids {
				rows[i].ID = id
				want[id] = i
			}
			p := placesOf(rows)
			if (p.by != nil) != tc.mapped {
				t.Fatalf("mapped %v, want %v", p.by != nil, tc.mapped)
			}
			asks := []int64{0, 4, 100, -1}
			asks = append(asks, tc.ids...)
			for i := len(tc.ids) - 1; i >= 0; i-- {
				asks = append(asks, tc.ids[i], tc.ids[i]+1)
			}
			for _, id := range asks {
				k, ok := p.find(id)
				w, wok := want[id]
				if ok != wok || ok && k != w {
					t.Fatalf("find(%d) = %d, %v; want %d, %v", id, k, ok, w, wok)
				}
			}
		})
	}
}
