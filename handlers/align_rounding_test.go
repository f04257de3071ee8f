package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestAlignmentScoresRoundAsTheRunPage: the alignment page's table of the
// largest disagreements rounded a sample's final score by itself
// (math.Round(x·100)/100): a final of (1 + 3.35) / 2, exported as
// 2.175, showed 2.17 there and 2.18 on the run page (web.Decimal), and
// its gap beside it (+0.18 from a human 2, web.Signed) did not add up.
// Judge and human now show as the run page shows them.
func TestAlignmentScoresRoundAsTheRunPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := env.localCtx()
		ds, ids, _ := reviewedSynthRun(t, env, 30)
		run, err := env.db.FindRun(ctx, env.ws.ID, synthRunOn(t, env.db, env.project, ds, ids, 0))
		must(t, err)
		// Every criterion-0 final is the mean of 1 and 3.35.
		must(t, env.db.Gorm.Model(&models.RunScore{}).Where("run_id = ? AND criterion_index = 0 AND round = 0", run.ID).
			Update("score", 1.0).Error)
		must(t, env.db.Gorm.Model(&models.RunScore{}).Where("run_id = ? AND criterion_index = 0 AND round = 1", run.ID).
			Update("score", 3.35).Error)
		final := (1 + 3.35) / 2
		if got, want := web.Decimal(final, 2), "2.18"; got != want {
			t.Fatalf("web.Decimal(%v, 2) = %s, want %s", final, got, want)
		}
		plan, err := env.h.planAlignment(ctx, run, 0, 7, 0.5, false)
		must(t, err)
		a := models.Alignment{ID: 1, WorkspaceID: env.ws.ID, SourceRunID: run.ID, Seed: 7, CalibrationRowIDs: plan.calibration,
			HeldOutRowIDs: plan.heldOut, BaseVersion: 1, Status: models.AlignmentDrafted}
		v, page, err := alignmentPage(env, a, run, false)
		must(t, err)
		if len(v.Worst) == 0 {
			t.Fatal("the alignment page lists no disagreement")
		}
		for _, w := range v.Worst {
			if w.Judge != "2.18" {
				t.Errorf("sample %s: judge %s on the alignment page, the run page shows %s", w.SampleID, w.Judge, web.Decimal(final, 2))
			}
			if !strings.Contains(w.Human, ".") || len(w.Human) != 4 {
				t.Errorf("sample %s: human %q, want two decimals as on the run page", w.SampleID, w.Human)
			}
		}
		// The run page shows the same final.
		body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if !strings.Contains(body, ">2.18<") || strings.Contains(body, ">2.17<") {
			t.Errorf("the run page does not show the final as 2.18")
		}
		if strings.Contains(page, ">2.17<") {
			t.Errorf("the alignment page shows a final as 2.17")
		}
	})
}
