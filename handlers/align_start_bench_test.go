package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkAlignmentStart times, on SQLite, starting an alignment of a
// finished run of BATCHEVAL_BENCH_ALIGNSTART samples (comma-separated
// sizes; 10,000 by default; synthesized as BenchmarkAlignmentPageFromRanks
// does, its figures stored, given a stored rubric), half held out. In the
// same process, medians of three: the start's plan (split, rated counts,
// the draft's disagreements with their text) from every stored score
// (planFromScores, the path before) and from the ids and the orders by
// human rating and by difference (planAlignment); then the whole start
// served through the Echo app (POST /runs/:id/align: the plan, the draft
// and the alignment stored) and the alignment's page it redirects to. Run
// with -benchtime=1x.
func BenchmarkAlignmentStart(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_ALIGNSTART"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_ALIGNSTART=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
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
	for b.Loop() {
		for _, n := range sizes {
			e, h, p := benchServer(b, models.SQLite)
			start := time.Now()
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			rub := models.Rubric{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, Name: "synth", Task: run.RubricSnapshot.Task,
				Fields: run.RubricSnapshot.Fields, Criteria: run.RubricSnapshot.Criteria}
			mustB(b, h.DB.SaveRubric(ctx, &rub))
			mustB(b, h.DB.Gorm.Exec("UPDATE runs SET rubric_id = ?, rubric_version = 1, simulated = ? WHERE id = ?", rub.ID, true, src).Error)
			synthTook := time.Since(start)
			start = time.Now()
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			b.Logf("%d samples: synthesized in %v, summaries stored in %v", n, synthTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			run, err = h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})

			var old, plan alignmentPlan
			before := median(func() {
				old, err = h.planFromScores(lctx, run, 0, 1, align.DefaultHeldOutShare, false, h.newRunReviews())
				mustB(b, err)
			})
			after := median(func() {
				plan, err = h.planAlignment(lctx, run, 0, 1, align.DefaultHeldOutShare, false)
				mustB(b, err)
			})
			if !slices.Equal(plan.calibration, old.calibration) || !slices.Equal(plan.heldOut, old.heldOut) || !reflect.DeepEqual(plan.worst, old.worst) ||
				len(plan.worst) != align.DraftCases {
				b.Fatalf("the plans differ: %d/%d calibration, %d/%d held out, worst %v and %v", len(plan.calibration), len(old.calibration),
					len(plan.heldOut), len(old.heldOut), plan.worst, old.worst)
			}
			split := median(func() { align.Split(plan.calibration, 1, align.DefaultHeldOutShare) })
			var pageURL string
			post := median(func() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/runs/%d/align", src),
					strings.NewReader(url.Values{"criterion": {"0"}, "seed": {"1"}, "held_out_percent": {"50"}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				e.ServeHTTP(rec, req)
				if rec.Code != http.StatusSeeOther {
					b.Fatalf("POST /runs/%d/align = %d: %.500s", src, rec.Code, rec.Body)
				}
				pageURL = rec.Header().Get("Location")
			})
			page := median(func() {
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, pageURL, nil))
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "held-out") {
					b.Fatalf("GET %s = %d: %.500s", pageURL, rec.Code, rec.Body)
				}
			})
			ratio := float64(before) / float64(after)
			b.Logf("%d samples, %d held out: plan from every score %v, from ids and ranks %v (%.1fx; the split alone %v); the start served %v, its page %v (medians of 3)",
				n, len(plan.heldOut), before.Round(time.Microsecond), after.Round(time.Microsecond), ratio, split.Round(time.Microsecond),
				post.Round(time.Microsecond), page.Round(time.Microsecond))
			b.ReportMetric(ratio, fmt.Sprintf("%dk-before/after", n/1000))
			b.ReportMetric(float64(post.Microseconds())/1000, fmt.Sprintf("%dk-start-ms", n/1000))
		}
	}
}
