package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// everyScoreAlignCases is how the alignment page read its cases from a
// finished run's stored results before (kept here to compare): every
// sample's score, human rating and id (alignSamplesOf), the held-out ids
// and the calibration disagreements picked in Go.
func (h *Handlers) everyScoreAlignCases(ctx context.Context, run models.Run, a models.Alignment) ([]string, []align.Item, error) {
	as, err := h.alignSamplesOf(ctx, run, a.CriterionIndex, true, false, h.newRunReviews())
	if err != nil {
		return nil, nil, err
	}
	held, cal := idSet(a.HeldOutRowIDs), idSet(a.CalibrationRowIDs)
	var ids []string
	var items []align.Item
	for _, s := range as.scores {
		if held[s.RowID] {
			ids = append(ids, s.ExternalID)
		}
		if cal[s.RowID] && s.Final != nil && s.Human != nil {
			items = append(items, align.Item{RowID: s.RowID, SampleID: s.ExternalID, Judge: *s.Final, Human: *s.Human})
		}
	}
	worst := align.Disagreements(items)
	worst, err = withTexts(ctx, as, worst[:min(len(worst), align.DraftCases)])
	return ids, worst, err
}

// BenchmarkAlignmentPageFromRanks times, on SQLite, an alignment's page of
// a finished run of BATCHEVAL_BENCH_ALIGN samples (comma-separated sizes;
// 10,000 by default; synthesized as BenchmarkReviewQueueFromRanks does,
// its figures stored), split in half by the default share: in the same
// process, medians of three, its cases (held-out ids and the largest
// calibration disagreements with their text) read from every stored score
// (everyScoreAlignCases, the path before) and from the order by difference
// and one page of held-out ids (fillStoredCases); then the whole page the
// new way. Run with -benchtime=1x.
func BenchmarkAlignmentPageFromRanks(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_ALIGN"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_ALIGN=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		for _, n := range sizes {
			e, h, p := benchServer(b, models.SQLite)
			start := time.Now()
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			synthTook := time.Since(start)
			start = time.Now()
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			b.Logf("%d samples: synthesized in %v, summaries stored in %v", n, synthTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
			run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			plan, err := h.planAlignment(lctx, run, 0, 1, align.DefaultHeldOutShare, false)
			mustB(b, err)
			a := models.Alignment{ID: 1, WorkspaceID: p.WorkspaceID, SourceRunID: run.ID, Seed: 1, CalibrationRowIDs: plan.calibration,
				HeldOutRowIDs: plan.heldOut, BaseVersion: 1, Status: models.AlignmentDrafted, Draft: align.TemplateDraft(run.RubricSnapshot.Criteria[0], plan.worst)}
			median := func(fn func()) time.Duration {
				var took []time.Duration
				for range 3 {
					start := time.Now()
					fn()
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				return took[1]
			}
			var oldIDs []string
			var oldWorst []align.Item
			before := median(func() {
				oldIDs, oldWorst, err = h.everyScoreAlignCases(lctx, run, a)
				mustB(b, err)
			})
			view := func() web.AlignmentView {
				req := httptest.NewRequest(http.MethodGet, "/alignments/1", nil).WithContext(lctx)
				v, err := h.alignmentViewWith(e.NewContext(req, httptest.NewRecorder()), a, run, run.RubricSnapshot.Criteria[0], draftFormOf(a.Draft), nil, false)
				mustB(b, err)
				return v
			}
			var v web.AlignmentView
			after := median(func() {
				sum, err := h.storedResults(lctx, run, h.newRunReviews())
				mustB(b, err)
				req := httptest.NewRequest(http.MethodGet, "/alignments/1", nil).WithContext(lctx)
				v = web.AlignmentView{}
				mustB(b, h.fillStoredCases(e.NewContext(req, httptest.NewRecorder()), &v, sum, a))
			})
			if len(v.Worst) != len(oldWorst) || len(oldWorst) == 0 || !slices.Equal(v.HeldOutIDs, oldIDs[:min(len(oldIDs), heldOutPageSize)]) {
				b.Fatalf("%d worst cases and %d held-out ids from ranks, %d and %d from every score", len(v.Worst), len(v.HeldOutIDs), len(oldWorst), len(oldIDs))
			}
			for i, w := range oldWorst {
				if v.Worst[i].SampleID != w.SampleID {
					b.Fatalf("worst case %d: %s from ranks, %s from every score", i, v.Worst[i].SampleID, w.SampleID)
				}
			}
			var size int
			page := median(func() {
				var buf bytes.Buffer
				mustB(b, web.AlignmentPage(view()).Render(ctx, &buf))
				size = buf.Len()
			})
			ratio := float64(before) / float64(after)
			b.Logf("%d samples, %d held out: every score %v, ranks %v (%.0fx); the page %v, %d bytes (medians of 3)", n, len(plan.heldOut),
				before.Round(time.Microsecond), after.Round(time.Microsecond), ratio, page.Round(time.Microsecond), size)
			b.ReportMetric(ratio, fmt.Sprintf("%dk-before/after", n/1000))
			b.ReportMetric(float64(page.Microseconds())/1000, fmt.Sprintf("%dk-page-ms", n/1000))
		}
	}
}
