package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
)

// TestLargeComparisonIsPairedInBackground: the first view of the
// comparison of two large finished runs does not read their stored scores
// in the request (0.5-1.4 s at 100,000 samples): it starts their pairing
// in the background and, while that has not ended, the compare page and
// the shared comparison say the samples are being paired and reload, the
// API answers 503 with Retry-After. Once paired, the view is the one the
// request used to compute itself.
func TestLargeComparisonIsPairedInBackground(t *testing.T) {
	parallelTest(t)
	const n = 240
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _, _, a, b := synthPair(t, db, "paired in background", n)
		for _, id := range []int64{a, b} {
			mustB(t, report.StoreStats(ctx, db, ws.ID, id))
		}
		log := slog.New(slog.DiscardHandler)
		r, err := runner.New(runner.Config{DB: db, Log: log})
		mustB(t, err)
		h, err := New(db, r, log, ws)
		mustB(t, err)
		h.LocalMode = true
		h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
		e := echo.New()
		h.Register(e)
		_, token, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: ws.ID, Kind: models.ShareCompare, RunID: a, OtherRunID: b})
		mustB(t, err)
		ctx = context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: ws, Role: models.RoleOwner})
		var cmp comparison
		cmp.a, err = db.FindRun(ctx, ws.ID, a)
		mustB(t, err)
		cmp.b, err = db.FindRun(ctx, ws.ID, b)
		mustB(t, err)
		cmp.dsA, _ = db.FindDataset(ctx, ws.ID, cmp.a.DatasetID)
		cmp.dsB = cmp.dsA
		cmp.critA, cmp.critB = cmp.a.RubricSnapshot.Criteria[0], cmp.b.RubricSnapshot.Criteria[0]

		// What the request computed itself, below the bound.
		h.reports = newReportCache()
		want, err := h.compareView(ctx, cmp, 0, 50, true)
		mustB(t, err)

		// Reads of the stored scores, counted while the background cannot
		// start: its slots are held.
		var mu sync.Mutex
		reads := 0
		for _, g := range []*gorm.DB{db.Gorm, db.Read} {
			if g == nil {
				continue
			}
			count := func(tx *gorm.DB) {
				if strings.Contains(tx.Statement.SQL.String(), "run_sample_results") {
					mu.Lock()
					reads++
					mu.Unlock()
				}
			}
			must(t, g.Callback().Query().After("gorm:query").Register("test:count_pair_reads", count))
			must(t, g.Callback().Row().After("gorm:row").Register("test:count_pair_reads", count))
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove("test:count_pair_reads")
				_ = g.Callback().Row().Remove("test:count_pair_reads")
			})
		}
		h.matchLiveSamples = n / 2
		for _, view := range []struct{ name, path, want string }{
			{"compare page", fmt.Sprintf("/compare?a=%d&b=%d", a, b), "being paired"},
			{"shared comparison", "/s/" + token, "being paired"},
			{"API", fmt.Sprintf("/api/v1/compare?a=%d&b=%d", a, b), "preparing"},
		} {
			h.reports = newReportCache()
			rc := h.reports
			for range cap(rc.slots) {
				rc.slots <- struct{}{}
			}
			mu.Lock()
			reads = 0
			mu.Unlock()
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, view.path, nil))
			mu.Lock()
			got := reads
			mu.Unlock()
			if got != 0 {
				t.Errorf("%s: the first view read the stored scores %d times in the request", view.name, got)
			}
			body := rec.Body.String()
			if view.name == "API" {
				if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "2" || !strings.Contains(body, view.want) {
					t.Errorf("%s: first view %d (Retry-After %q) %.300s, want 503 preparing with Retry-After 2", view.name, rec.Code, rec.Header().Get("Retry-After"), body)
				}
			} else if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="results-preparing"`) || !strings.Contains(body, view.want) ||
				!strings.Contains(body, `http-equiv="refresh" content="2"`) {
				t.Errorf("%s: first view %d, want the samples being paired and a reload in 2 s: %.2000s", view.name, rec.Code, body)
			}
			for range cap(rc.slots) {
				<-rc.slots
			}
			rc.settling.Wait()
			rec = httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, view.path, nil))
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) {
				t.Errorf("%s: once paired: %d %.300s, want the comparison", view.name, rec.Code, rec.Body.String())
			}
		}
		// Once paired in the background, the view is the one computed in
		// the request.
		h.reports = newReportCache()
		for range cap(h.reports.slots) {
			h.reports.slots <- struct{}{}
		}
		_, err = h.compareView(ctx, cmp, 0, 50, true)
		if p := preparingOf(err); p == nil || p.otherRunID != b {
			t.Fatalf("first view over the bound: %v, want it preparing the pairing", err)
		}
		for range cap(h.reports.slots) {
			<-h.reports.slots
		}
		h.reports.settling.Wait()
		got, err := h.compareView(ctx, cmp, 0, 50, true)
		mustB(t, err)
		mustSame(t, "comparison paired in the background", want, got)
	})
}
