package handlers

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
)

// TestBackgroundAgreementOutlivesItsRequest: the compare page's agreement
// of a large pair is computed in the background after the request that
// started it has ended (net/http cancels a request's context when its
// handler returns). When the pairing is cached but the agreement is not
// (the agreement cache starts again empty past pairCacheSize, or a
// previous attempt failed), the background computation read the runs
// with the ended request's context: it failed every time, and the page
// said "the previous attempt failed" for as long as the pairing stayed
// cached.
func TestBackgroundAgreementOutlivesItsRequest(t *testing.T) {
	parallelTest(t)
	const n = 240
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _, _, a, b := synthPair(t, db, "background agreement", n)
		for _, id := range []int64{a, b} {
			mustB(t, report.StoreStats(ctx, db, ws.ID, id))
		}
		r, err := runner.New(runner.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
		mustB(t, err)
		h, err := New(db, r, slog.New(slog.DiscardHandler), ws)
		mustB(t, err)
		ctx = context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: ws, Role: models.RoleOwner})
		h.pairLiveSamples = n / 2

		var cmp comparison
		cmp.a, err = db.FindRun(ctx, ws.ID, a)
		mustB(t, err)
		cmp.b, err = db.FindRun(ctx, ws.ID, b)
		mustB(t, err)
		cmp.dsA, _ = db.FindDataset(ctx, ws.ID, cmp.a.DatasetID)
		cmp.dsB = cmp.dsA
		cmp.critA, cmp.critB = cmp.a.RubricSnapshot.Criteria[0], cmp.b.RubricSnapshot.Criteria[0]

		h.reports = newReportCache()
		rc := h.reports
		first, err := h.compareView(ctx, cmp, 0, 50, true)
		mustB(t, err)
		if first.AgreementPending == nil {
			t.Fatal("the first view of a large pair computed its agreement in the request")
		}
		rc.settling.Wait()
		rc.mu.Lock()
		matched, agreements := len(rc.matched), len(rc.criterionPairs)
		// The agreement cache starts again empty (putBounded); the pairing
		// stays.
		clear(rc.criterionPairs)
		rc.mu.Unlock()
		if matched != 1 || agreements != 1 {
			t.Fatalf("%d pairings and %d agreements cached, want 1 and 1", matched, agreements)
		}

		// A request whose context ends, as net/http's does, when the page
		// is sent; the background computation starts after that (both
		// background slots are held until then).
		for range cap(rc.slots) {
			rc.slots <- struct{}{}
		}
		rctx, cancel := context.WithCancel(ctx)
		second, err := h.compareView(rctx, cmp, 0, 50, true)
		cancel()
		for range cap(rc.slots) {
			<-rc.slots
		}
		mustB(t, err)
		if second.AgreementPending == nil {
			t.Fatal("the agreement was not left to the background")
		}
		done := make(chan struct{})
		go func() { rc.settling.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the background agreement did not end")
		}

		third, err := h.compareView(ctx, cmp, 0, 50, true)
		mustB(t, err)
		if third.AgreementPending != nil || len(third.Agreement) == 0 {
			t.Fatalf("after the background computation: pending %+v, %d differences; want the agreement", third.AgreementPending, len(third.Agreement))
		}
	})
}
