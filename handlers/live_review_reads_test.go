package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRunningRunReviewPagesReadRatingsOnlyWhenTheyChange: the review queue
// and a sample's page of a running run read every current browser rating
// of its criteria at each view (criterionReport loaded them before asking
// for the shared figures), though the figures' key is proved current
// without them since liveratings49. Now they are read on demand: a view
// reads none while nothing changed. On both databases.
func TestRunningRunReviewPagesReadRatingsOnlyWhenTheyChange(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run, d := env.runningRunWithRatings(t)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		pages := []struct{ name, path, shows string }{
			{"review queue", fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0&blind=off", d.dataset.ID, run.ID), `data-testid="review-form"`},
			{"sample page", fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[1].ID), `data-testid="sample-text"`},
		}
		var mu sync.Mutex
		var reads []string
		env.onRequestQueries(t, "count_live_review_page_reads", func(q string) {
			if readsCurrentOfAll(q, len(d.rubric.Criteria)) {
				mu.Lock()
				reads = append(reads, q)
				mu.Unlock()
			}
		})
		for _, p := range pages {
			for view := range 3 {
				mu.Lock()
				reads = nil
				mu.Unlock()
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, p.path, nil)
				env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), p.shows) {
					t.Fatalf("%s, view %d: GET %s: %d, want the page (%s)\n%.500s", p.name, view+1, p.path, rec.Code, p.shows, rec.Body.String())
				}
				mu.Lock()
				got := slices.Clone(reads)
				mu.Unlock()
				if view > 0 && len(got) != 0 {
					t.Errorf("%s, view %d: read the current ratings of every criterion %d times while nothing changed, want none:\n%s",
						p.name, view+1, len(got), strings.Join(got, "\n"))
				}
			}
		}
	})
}
