package report

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestStoredCeilingReadingNamesItsCoefficient: the human ceiling's
// reading is stored with a finished run's summary. It now names its
// coefficient ("(Pearson r = 0.71 vs 0.68)", stats.InterpretCeiling); a
// summary stored by summary-18, whose reading printed the figures bare
// ("(0.71 vs 0.68)"), is not served but computed again. Fails on the old
// code: under summary-18 the old row's key is the current one and its
// bare reading is served.
func TestStoredCeilingReadingNamesItsCoefficient(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 40)
		// Coherence read as two annotators' ratings (the file's
		// coherence and fluency columns), so it has a human ceiling.
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		run.RubricSnapshot.Criteria[0].AnnotatorColumns = []string{"coherence", "fluency"}
		must(t, db.Gorm.Model(&models.Run{ID: runID}).Select("RubricSnapshot").Updates(&run).Error)

		check := func(when string, rep *Report) {
			t.Helper()
			c := rep.Criteria[0]
			if c.Ceiling == nil || math.IsNaN(c.Pearson.Coef) || math.IsNaN(c.Ceiling.LeaveOneOut) {
				t.Fatalf("%s: no human ceiling compared with the judge: %+v", when, c.Ceiling)
			}
			// The run's own figures, each to two decimals, the judge's
			// named as its reading names it.
			want := "(Pearson r = " + stats.CoefDecimal(c.Pearson.Coef, 2) + " vs " + stats.CoefDecimal(c.Ceiling.LeaveOneOut, 2) + ")."
			if !strings.HasSuffix(c.Ceiling.Reading, want) {
				t.Errorf("%s: the ceiling reads %q, want it to end %q", when, c.Ceiling.Reading, want)
			}
			if !strings.Contains(c.Reading, "(Pearson r = "+stats.CoefDecimal(c.Pearson.Coef, 2)) {
				t.Errorf("%s: the criterion's reading %q and the ceiling's %q name the judge's figure apart", when, c.Reading, c.Ceiling.Reading)
			}
			if j := rep.Export().Report.Criteria[0].HumanCeiling; j == nil || j.Reading != c.Ceiling.Reading {
				t.Errorf("%s: the JSON export's ceiling reading %+v, want %q", when, j, c.Ceiling.Reading)
			}
		}
		sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		check("stored summary", sum)

		// A summary-18 row: the same figures, the reading printed bare.
		look, err := LookupSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		row, found, err := db.FindRunSummary(ctx, runID, summaryVariant(Options{}))
		must(t, err)
		if !found || look.Stored == nil {
			t.Fatalf("no summary stored")
		}
		old, err := decodeSummary(row.Summary)
		must(t, err)
		c := &old.Criteria[0]
		bare := "The judge agrees with the average human about as well as one human agrees with the others (" +
			stats.CoefDecimal(c.Pearson.Coef, 2) + " vs " + stats.CoefDecimal(c.Ceiling.LeaveOneOut, 2) + ")."
		c.Ceiling.Reading = bare
		enc, err := encodeSummary(old)
		must(t, err)
		oldKey := summaryKeyAt("summary-18", statsVersion, look.Run, look.choice, look.ratings, look.ds, Options{})
		must(t, db.Gorm.Model(&models.RunSummary{}).Where("run_id = ?", runID).
			Updates(map[string]any{"input_key": oldKey, "summary": enc}).Error)
		sum, err = LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		check("after a summary-18 row", sum)
		row, _, err = db.FindRunSummary(ctx, runID, summaryVariant(Options{}))
		must(t, err)
		if row.InputKey == oldKey {
			t.Errorf("the summary-18 row was not stored again")
		}
	})
}
