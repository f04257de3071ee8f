package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSharedPagesOpenWhileAnotherWriteHoldsTheLink: a share link's pages
// are read-only, but opening one notes when the link was opened. While
// another write held the database (SQLite's one write lock: a long import
// or launch) or the link's row (PostgreSQL), that note waited for it and
// the visitor's page answered 500 when the wait ran out (a flake of
// TestReadsChangeNothingAndWritesNeedThisSite under load, whose requests
// have 5 s each). The pages open all the same; the note is skipped.
func TestSharedPagesOpenWhileAnotherWriteHoldsTheLink(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		link, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		must(t, err)
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 1)
		must(t, err)
		// Another writer holds the lock (SQLite) and the link's row
		// (PostgreSQL) for the whole test.
		tx, err := env.db.SQL.BeginTx(ctx, nil)
		must(t, err)
		t.Cleanup(func() { _ = tx.Rollback() })
		q := "UPDATE share_links SET last_opened_at = NULL WHERE id = ?"
		if env.db.Dialect == models.Postgres {
			q = strings.Replace(q, "?", "$1", 1)
		}
		if _, err := tx.ExecContext(ctx, q, link.ID); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/s/" + token, fmt.Sprintf("/s/%s/samples/%d", token, rows[0].ID)} {
			// The deadline only ends a request that waits for ever.
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil).WithContext(rctx))
			cancel()
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), run.Name) && !strings.Contains(rec.Body.String(), "Sample ") {
				t.Errorf("GET %s while another write holds the link: %d, want 200 (%.300q)", path, rec.Code, rec.Body.String())
			}
		}
	})
}
