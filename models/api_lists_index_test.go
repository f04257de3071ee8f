package models_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPIListsReadThroughTheirIndexes: the API's pages of projects,
// judges, tokens and a dataset's reviews (ids above a cursor, ascending,
// limited) find their rows through an index that gives them in id order
// (migration 00052), and the reviews of a page's samples
// (ListRowsCriteriaReviews) still through review_ratings_sample: asked for
// in id order, SQLite read them through review_ratings_dataset, every
// review of the dataset, once that index existed. SQLite's plan must SEARCH
// the named index without a sort; PostgreSQL's, with sequential scans
// priced out, must find the rows by an index condition on their leading
// column (the samples' reviews: on their samples).
func TestAPIListsReadThroughTheirIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		// Reviews of 200 samples, their table analyzed on PostgreSQL:
		// its plans for an empty table, never analyzed, take the smallest
		// index whatever it finds (SQLite's, without statistics, as the
		// product runs it, do not change with the table).
		w, ds := seedRatings(t, db, 200, 4000)
		if db.Dialect == models.Postgres {
			if _, err := db.SQL.Exec("ANALYZE review_ratings"); err != nil {
				t.Fatal(err)
			}
		}
		var first int64
		if err := db.Gorm.Raw("SELECT MIN(id) FROM dataset_rows WHERE dataset_id = ?", ds.ID).Scan(&first).Error; err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		stmts := map[string][]explained{}
		const hook = "test:explain_api_lists"
		take := func(tx *gorm.DB) {
			switch tx.Statement.Table {
			case "projects", "judges", "api_tokens", "review_ratings":
				mu.Lock()
				stmts[tx.Statement.Table] = append(stmts[tx.Statement.Table], explained{tx.Statement.SQL.String(), slices.Clone(tx.Statement.Vars)})
				mu.Unlock()
			}
		}
		if err := db.Gorm.Callback().Query().After("gorm:query").Register(hook, take); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Gorm.Callback().Query().Remove(hook) })
		read := func(table string, f func() error) []explained {
			t.Helper()
			mu.Lock()
			delete(stmts, table)
			mu.Unlock()
			if err := f(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(stmts[table]) == 0 {
				t.Fatalf("no statement on %s seen", table)
			}
			return stmts[table]
		}
		ws := w.ID
		tests := []struct {
			name, table string
			read        func() error
			sqlite      string // the index SQLite must search
			// pgColumn is the column of PostgreSQL's index condition; ""
			// any (the dataset's reviews are the whole table: its plan
			// may read them by id).
			pgColumn string
		}{
			{"projects", "projects", func() error { _, err := db.ListProjectsAfter(ctx, ws, 3, 51); return err },
				"projects_workspace (workspace_id=? AND id>?)", "workspace_id"},
			{"judges", "judges", func() error { _, err := db.ListJudgesAfter(ctx, ws, 3, 51); return err },
				"judges_workspace (workspace_id=? AND id>?)", "workspace_id"},
			{"a person's tokens", "api_tokens", func() error { _, err := db.ListAPITokensAfter(ctx, ws, 1, 3, 51); return err },
				"api_tokens_user (user_id=? AND workspace_id=? AND id>?)", "user_id|workspace_id"},
			{"a workspace's tokens", "api_tokens", func() error { _, err := db.ListWorkspaceAPITokensAfter(ctx, ws, 3, 51); return err },
				"api_tokens_workspace (workspace_id=? AND id>?)", "workspace_id"},
			{"a dataset's reviews", "review_ratings", func() error { _, err := db.ListReviewsAfter(ctx, ws, ds.ID, "", 3, 51); return err },
				"review_ratings_dataset (dataset_id=? AND id>?)", ""},
			{"a criterion's reviews", "review_ratings", func() error { _, err := db.ListReviewsAfter(ctx, ws, ds.ID, "coh", 3, 51); return err },
				"review_ratings_dataset (dataset_id=? AND id>?)", ""},
			{"the reviews of a sample", "review_ratings", func() error {
				_, err := db.ListRowsCriteriaReviews(ctx, ws, ds.ID, []string{"coh"}, []int64{first + 5})
				return err
			}, "review_ratings_sample (dataset_id=? AND criterion=? AND row_id=?)", "row_id"},
			{"the reviews of a page's samples", "review_ratings", func() error {
				_, err := db.ListRowsCriteriaReviews(ctx, ws, ds.ID, []string{"coh", "flu"}, []int64{first + 1, first + 2, first + 3})
				return err
			}, "review_ratings_sample (dataset_id=? AND criterion=? AND row_id=?)", "row_id"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				for _, s := range read(tc.table, tc.read) {
					plan := strings.Join(explainPlan(t, db, s), "; ")
					t.Logf("%s\n%s", s.sql, plan)
					switch db.Dialect {
					case models.SQLite:
						if !strings.Contains(plan, "SEARCH "+tc.table+" USING INDEX "+tc.sqlite) || strings.Contains(plan, "TEMP B-TREE") {
							t.Errorf("%s\nreads %s by %q, want through %s without a sort", s.sql, tc.table, plan, tc.sqlite)
						}
					case models.Postgres:
						if !regexp.MustCompile(`(Index|Recheck) Cond: \([^;]*\b(` + tc.pgColumn + `)`).MatchString(plan) {
							t.Errorf("%s\nreads %s by %q, not through an index on %s", s.sql, tc.table, plan, tc.pgColumn)
						}
					}
				}
			})
		}
	})
}
