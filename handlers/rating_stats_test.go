package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestDatasetPagesReadNoRowRatings: the dataset page (its rating
// summary), the rubric editor and the launch form (their check of ratings
// outside a criterion's scale) read the dataset's stored summary of its
// ratings, not every row: on the old code each read and decoded every
// row's ratings (3.4 s, 2.7 s and 1.9 s at 1,000,000 rows). A dataset
// stored before the summaries existed is counted once, by the first page
// that needs it, with the same figures, and stored for the next.
func TestDatasetPagesReadNoRowRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		// Uploaded and mapped through the forms (the streamed import).
		token := env.uploadToken("qa.csv", goodCSV)
		form := url.Values{"token": {token}, "name": {"Quiz answers"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}}
		rec := env.postForm(env.mapPath(), form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d: %s", rec.Code, rec.Body)
		}
		dsID, err := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/datasets/"), 10, 64)
		if err != nil {
			t.Fatalf("import went to %q", rec.Header().Get("Location"))
		}
		rubric := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Quality", Task: "An answer to judge.",
			Criteria: []evaluator.Criterion{{Name: "Quality", Description: "Good.", Lo: 1, Hi: 5, HumanColumn: "quality"}}}
		must(t, env.db.SaveRubric(ctx, &rubric))

		var mu sync.Mutex
		var whole []string // statements reading dataset_rows without a limit
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			name := "test:count_whole_dataset_reads"
			count := func(tx *gorm.DB) {
				if tx.Statement.Context == nil || tx.Statement.Context.Value(countedRequest{}) == nil {
					return
				}
				q := strings.ToLower(tx.Statement.SQL.String())
				if strings.Contains(q, "from `dataset_rows`") || strings.Contains(q, `from "dataset_rows"`) || strings.Contains(q, "from dataset_rows") {
					if !strings.Contains(q, "limit") {
						mu.Lock()
						whole = append(whole, q)
						mu.Unlock()
					}
				}
			}
			must(t, g.Callback().Query().After("gorm:query").Register(name, count))
			must(t, g.Callback().Row().After("gorm:row").Register(name, count))
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove(name)
				_ = g.Callback().Row().Remove(name)
			})
		}
		view := func(t *testing.T, path string) (string, []string) {
			t.Helper()
			mu.Lock()
			whole = nil
			mu.Unlock()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d: %.300s", path, rec.Code, rec.Body)
			}
			mu.Lock()
			defer mu.Unlock()
			return rec.Body.String(), append([]string(nil), whole...)
		}
		// quality: 2 rated, 1 missing, mean 3.00, sd 1.41, min 2.00, max 4.00
		const summary = `<td class="num">2</td><td class="num">1</td><td class="num">3.00</td><td class="num">1.41</td><td class="num">2.00</td><td class="num">4.00</td>`
		pages := []struct{ name, path, shows string }{
			{"dataset page", fmt.Sprintf("/datasets/%d", dsID), summary},
			{"rubric editor", fmt.Sprintf("/rubrics/%d/edit", rubric.ID), `name="criteria[0].human"`},
			{"launch form", fmt.Sprintf("/projects/%d/runs/new?dataset=%d&rubric=%d", env.project.ID, dsID, rubric.ID), `data-testid="criterion-choice"`},
		}
		for _, stage := range []struct {
			name   string
			before func(t *testing.T)
			reads  int // whole reads of the dataset's rows by the first page
		}{
			{"imported with its summary", func(t *testing.T) {}, 0},
			{"stored before summaries", func(t *testing.T) {
				must(t, env.db.Gorm.Exec("UPDATE datasets SET rating_stats = NULL WHERE id = ?", dsID).Error)
			}, 1},
		} {
			t.Run(stage.name, func(t *testing.T) {
				stage.before(t)
				for k, p := range pages {
					body, reads := view(t, p.path)
					if !strings.Contains(body, p.shows) {
						t.Errorf("%s lacks %q", p.name, p.shows)
					}
					want := 0
					if k == 0 {
						want = stage.reads
					}
					if len(reads) != want {
						t.Errorf("%s read the dataset's rows whole %d times, want %d: %q", p.name, len(reads), want, reads)
					}
				}
				ds, err := env.db.FindDataset(ctx, env.ws.ID, dsID)
				must(t, err)
				if c := ds.RatingStats.Column("quality"); c.N != 2 || c.Min != 2 || c.Max != 4 {
					t.Errorf("stored summary of quality = %+v, want 2 ratings from 2 to 4", c)
				}
			})
		}
	})
}
