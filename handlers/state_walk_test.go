package handlers

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// dbState is every table's rows, one digest a table, leaving out the
// bookkeeping a read keeps: sessions (their expiry moves on use), the API's
// rate counts (a read counts against its token's limit), River's
// tables (the queue's own clock) and the "last used" and "last opened"
// times of tokens and share links.
func dbState(t *testing.T, env *testEnv) map[string]string {
	t.Helper()
	q := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if env.db.Gorm.Dialector.Name() == "postgres" {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	}
	var tables []string
	must(t, env.db.Gorm.Raw(q).Scan(&tables).Error)
	state := map[string]string{}
	for _, table := range tables {
		if table == "sessions" || table == "api_rate_limits" || strings.HasPrefix(table, "river_") {
			continue
		}
		rows, err := env.db.SQL.Query(`SELECT * FROM "` + table + `"`)
		must(t, err)
		cols, err := rows.Columns()
		must(t, err)
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			must(t, rows.Scan(ptrs...))
			for i, c := range cols {
				if c == "last_used_at" || c == "last_opened_at" {
					vals[i] = nil
				}
			}
			lines = append(lines, fmt.Sprintf("%v", vals))
		}
		must(t, rows.Err())
		must(t, rows.Close())
		slices.Sort(lines)
		state[table] = fmt.Sprintf("%d rows %x", len(lines), sha256.Sum256([]byte(strings.Join(lines, "\n"))))
	}
	return state
}

// TestReadsChangeNothingAndWritesNeedThisSite walks every registered
// route as workspace A's owner (their session for pages, their token for
// the API) and as the visitor of a share link. Every GET leaves the
// database as it was (bookkeeping aside: dbState); every other method,
// sent from a page of another site with the owner's session cookie,
// whether the browser says so (Sec-Fetch-Site) or only its Origin does,
// is refused with 403 and changes nothing. The product has no CSRF token
// in its forms: the same-origin check (crossOriginCheck) is the
// protection, for every route at once, and this is its proof route by
// route.
func TestReadsChangeNothingAndWritesNeedThisSite(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		f := newMatrixFixture(t, env)
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: f.run.ID})
		must(t, err)
		owner := env.sessionCookie(mustUser(t, env, f.owner.ID))
		send := func(req *http.Request) *httptest.ResponseRecorder {
			return serveWalk(ctx, env.e, req)
		}
		before := dbState(t, env)
		changed := func(what string) {
			t.Helper()
			after := dbState(t, env)
			for table, s := range after {
				if before[table] != s {
					t.Errorf("%s changed table %s (%s, was %s)", what, table, s, before[table])
				}
			}
			before = after
		}
		for _, r := range env.e.Routes() {
			req, _ := f.request(r.Method, r.Path)
			req.URL.Path = strings.Replace(req.URL.Path, "no-such-link-token", token, 1)
			what := r.Method + " " + req.URL.Path
			if r.Method == http.MethodGet {
				if strings.HasPrefix(r.Path, "/api/") {
					req.Header.Set("Authorization", "Bearer "+f.tokens[f.owner.ID])
				} else if !strings.HasPrefix(r.Path, "/s/") {
					req.AddCookie(owner)
				}
				if rec := send(req); rec.Code >= 500 {
					t.Errorf("%s: %d", what, rec.Code)
				}
				changed(what)
				continue
			}
			for _, from := range []map[string]string{
				{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
				{"Origin": "https://evil.example"},
			} {
				req, _ := f.request(r.Method, r.Path)
				req.AddCookie(owner)
				for k, v := range from {
					req.Header.Set(k, v)
				}
				if rec := send(req); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "Cross-site request refused") {
					t.Errorf("%s from another site (%v): %d, want 403 (%.200q)", what, from, rec.Code, rec.Body.String())
				}
				changed(what + " from another site")
			}
		}
	})
}
