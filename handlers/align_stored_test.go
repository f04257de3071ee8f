package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/web"
)

// renderAlignmentQuery is renderAlignment's stored path with a query.
func renderAlignmentQuery(t *testing.T, env *testEnv, a models.Alignment, run models.Run, query string) (web.AlignmentView, string) {
	t.Helper()
	path := fmt.Sprintf("/alignments/%d", a.ID)
	if query != "" {
		path += "?" + query
	}
	req := httptest.NewRequest(http.MethodGet, path, nil).WithContext(env.localCtx())
	c := env.e.NewContext(req, httptest.NewRecorder())
	v, err := env.h.alignmentViewWith(c, a, run, run.RubricSnapshot.Criteria[a.CriterionIndex], draftFormOf(a.Draft), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := web.AlignmentPage(v).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return v, buf.String()
}

// TestAlignmentPageReadsOnlyTheRowsItShows: an alignment's page found its
// largest calibration disagreements and its held-out ids by reading every
// stored score of the run's criterion (about 2 s at a million samples). It
// now walks the stored order by difference from the top and reads the
// held-out ids a page at a time. Every stored result below the smallest
// difference the page shows is given a judge score 50 points from its human
// rating (its stored difference and ranks left as they were): a page that
// reads every score shows those as the largest disagreements; this one
// must not change. The held-out list read in pages of 7 from the page's own
// next places is the whole list the full report gives, in order.
func TestAlignmentPageReadsOnlyTheRowsItShows(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 150
		ctx := env.localCtx()
		_, _, run := reviewedSynthRun(t, env, n)
		for ci := range run.RubricSnapshot.Criteria {
			for _, share := range []float64{0.2, 0.5, 0.9} {
				plan, err := env.h.planAlignment(ctx, run, ci, int64(ci+3), share, false)
				if err != nil {
					t.Fatal(err)
				}
				a := models.Alignment{ID: 1, WorkspaceID: env.ws.ID, SourceRunID: run.ID, CriterionIndex: ci, Seed: int64(ci + 3),
					CalibrationRowIDs: plan.calibration, HeldOutRowIDs: plan.heldOut, BaseVersion: 1, Status: models.AlignmentDrafted,
					Draft: align.TemplateDraft(run.RubricSnapshot.Criteria[ci], plan.worst)}
				vFull, full := renderAlignment(t, env, a, run, true)
				if len(vFull.Worst) != align.DraftCases {
					t.Fatalf("criterion %d, share %v: %d disagreements, want %d", ci, share, len(vFull.Worst), align.DraftCases)
				}
				_, stored := renderAlignmentQuery(t, env, a, run, "")
				if stored != full {
					t.Fatalf("criterion %d, share %v: the stored page differs from the full report's:\n%s", ci, share, firstDifference(full, stored))
				}

				// Held-out ids in pages of 7, from each page's next place.
				sum, err := env.h.storedResults(ctx, run, nil)
				if err != nil || sum == nil {
					t.Fatalf("no stored results: %v", err)
				}
				var paged []string
				for from, pages := 0, 0; from >= 0; pages++ {
					if pages > n {
						t.Fatal("the held-out pages do not end")
					}
					ids, next, err := env.h.storedHeldOutPage(ctx, sum, ci, rowSet(a.HeldOutRowIDs), from, 7)
					if err != nil {
						t.Fatal(err)
					}
					if len(ids) > 7 || (next >= 0 && len(ids) != 7) {
						t.Fatalf("a page of %d ids with next place %d", len(ids), next)
					}
					paged, from = append(paged, ids...), next
				}
				if !slices.Equal(paged, vFull.HeldOutIDs) {
					t.Fatalf("criterion %d, share %v: held-out ids in pages\n%v\nwant\n%v", ci, share, paged, vFull.HeldOutIDs)
				}

				// Below the smallest difference shown (the page's cases are
				// the plan's: the same split), make every score the largest
				// disagreement, without moving any rank.
				var shown []int64
				for _, w := range plan.worst {
					shown = append(shown, w.RowID)
				}
				type finalOf struct {
					RowID int64
					Final *float64
				}
				var finals []finalOf
				if err := env.db.Gorm.Raw("SELECT row_id, final FROM run_sample_results WHERE run_id = ? AND criterion_index = ?", run.ID, ci).Scan(&finals).Error; err != nil {
					t.Fatal(err)
				}
				var smallest float64
				if err := env.db.Gorm.Raw("SELECT MIN(abs_diff) FROM run_sample_results WHERE run_id = ? AND criterion_index = ? AND row_id IN ?",
					run.ID, ci, shown).Scan(&smallest).Error; err != nil {
					t.Fatal(err)
				}
				res := env.db.Gorm.Exec("UPDATE run_sample_results SET final = human + 50 WHERE run_id = ? AND criterion_index = ? AND abs_diff < ?",
					run.ID, ci, smallest)
				if res.Error != nil || res.RowsAffected == 0 {
					t.Fatalf("criterion %d: no stored result below the difference %v (%v)", ci, smallest, res.Error)
				}
				if _, after := renderAlignmentQuery(t, env, a, run, ""); after != stored {
					t.Errorf("criterion %d, share %v: the page changed with scores it does not show (it read every score):\n%s", ci, share, firstDifference(stored, after))
				}
				for _, f := range finals {
					if err := env.db.Gorm.Exec("UPDATE run_sample_results SET final = ? WHERE run_id = ? AND criterion_index = ? AND row_id = ?", f.Final, run.ID, ci, f.RowID).Error; err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	})
}

// TestAlignmentHeldOutListInPages: a split of more than heldOutPageSize
// held-out samples lists them a page at a time; the first page links the
// next, the next links back to the first, and the pages together are the
// whole list the full report gives, in dataset order.
func TestAlignmentHeldOutListInPages(t *testing.T) {
	parallelTest(t)
	if testing.Short() {
		t.Skip("synthesizes a run of 2,100 samples")
	}
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := env.localCtx()
	_, _, run := reviewedSynthRun(t, env, 2*heldOutPageSize+100)
	plan, err := env.h.planAlignment(ctx, run, 0, 11, 0.5, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.heldOut) <= heldOutPageSize {
		t.Fatalf("%d held out; the test needs more than a page", len(plan.heldOut))
	}
	a := models.Alignment{ID: 1, WorkspaceID: env.ws.ID, SourceRunID: run.ID, Seed: 11, CalibrationRowIDs: plan.calibration,
		HeldOutRowIDs: plan.heldOut, BaseVersion: 1, Status: models.AlignmentDrafted, Draft: align.TemplateDraft(run.RubricSnapshot.Criteria[0], plan.worst)}
	full, _ := renderAlignment(t, env, a, run, true)
	first, page := renderAlignmentQuery(t, env, a, run, "")
	if len(first.HeldOutIDs) != heldOutPageSize || first.HeldOutFirstURL != "" || first.HeldOutNextURL == "" ||
		!strings.Contains(page, `data-testid="held-out-next"`) || !strings.Contains(page, fmt.Sprintf("%d of the %d held-out samples", heldOutPageSize, len(plan.heldOut))) {
		t.Fatalf("first page: %d ids, first %q, next %q", len(first.HeldOutIDs), first.HeldOutFirstURL, first.HeldOutNextURL)
	}
	u, err := url.Parse(first.HeldOutNextURL)
	if err != nil || u.Path != "/alignments/1" {
		t.Fatalf("next page link %q", first.HeldOutNextURL)
	}
	second, page := renderAlignmentQuery(t, env, a, run, u.RawQuery)
	if second.HeldOutNextURL != "" || second.HeldOutFirstURL != "/alignments/1#held-out-ids" || !strings.Contains(page, `id="held-out-ids" open`) {
		t.Errorf("second page: next %q, first %q", second.HeldOutNextURL, second.HeldOutFirstURL)
	}
	if got := append(slices.Clone(first.HeldOutIDs), second.HeldOutIDs...); !slices.Equal(got, full.HeldOutIDs) {
		t.Errorf("the two pages hold %d ids, not the %d of the whole list in order", len(got), len(full.HeldOutIDs))
	}
	if !slices.Equal(first.Worst, full.Worst) {
		t.Errorf("disagreements %v, want %v", first.Worst, full.Worst)
	}
}
