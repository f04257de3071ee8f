package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
)

// TestComparePreparingCardsDoNotDenyHumans: while a large comparison is
// being prepared, the compare page's run cards do not say "No human
// ratings for this criterion" of runs whose dataset has them (the cards
// were drawn from an empty view then): they say the agreement is shown
// once ready; once ready they show it.
func TestComparePreparingCardsDoNotDenyHumans(t *testing.T) {
	parallelTest(t)
	const n = 240
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _, _, a, b := synthPair(t, db, "preparing cards", n)
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
		h.matchLiveSamples = n / 2
		h.reports = newReportCache()
		rc := h.reports
		for range cap(rc.slots) {
			rc.slots <- struct{}{}
		}
		path := fmt.Sprintf("/compare?a=%d&b=%d", a, b)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		body := rec.Body.String()
		card := regexp.MustCompile(`data-testid="human-agreement-([ab])"[^>]*>([^<]*)`)
		cards := card.FindAllStringSubmatch(body, -1)
		if rec.Code != http.StatusOK || len(cards) != 2 {
			t.Fatalf("preparing: %d, %d agreement lines on the cards, want 2: %.2000s", rec.Code, len(cards), body)
		}
		for _, c := range cards {
			if c[2] != "Agreement with the humans: shown once the figures below are ready." {
				t.Errorf("card %s while preparing says %q, want that the agreement is not ready yet", c[1], c[2])
			}
		}
		for range cap(rc.slots) {
			<-rc.slots
		}
		rc.settling.Wait()
		rec = httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		body = rec.Body.String()
		cards = card.FindAllStringSubmatch(body, -1)
		if len(cards) != 2 {
			t.Fatalf("ready: %d agreement lines on the cards, want 2", len(cards))
		}
		for _, c := range cards {
			if c[2] != "\n\t\t\tWith the humans: Pearson r " && c[2] != "With the humans: Pearson r " {
				t.Errorf("card %s once ready says %q, want its agreement with the humans", c[1], c[2])
			}
		}
	})
}
