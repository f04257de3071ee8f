package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestRunsListReadsItsPage: in a workspace of many runs, the runs list,
// the project page, the projects list and the API's list of runs read the
// runs they show (a page and a few counts), not every run of the
// workspace, and still list and count them all. The old code read every
// run (its rubric, settings and judge decoded) on each view: about 0.1 s
// at 2,000 runs, growing with the workspace.
func TestRunsListReadsItsPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		old, err := env.db.ListRuns(ctx, env.ws.ID, 0, models.WithArchived())
		must(t, err)
		// 130 runs without scores (a finished run with scores would read
		// its summary, which is not what is counted here): failed and
		// cancelled in turn.
		const many = 130
		now := time.Now().UTC()
		var made []int64
		for i := range many {
			st := models.RunFailed
			if i%2 == 1 {
				st = models.RunCancelled
			}
			r := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, Name: fmt.Sprintf("many %03d", i),
				Method: models.MethodBatchEval, Status: st, RubricSnapshot: evaluator.Rubric{Task: d.rubric.Task, Fields: d.rubric.Fields, Criteria: d.rubric.Criteria}, CreatedAt: now, FinishedAt: &now}
			must(t, env.db.Gorm.Create(&r).Error)
			made = append(made, r.ID)
		}
		total := len(old) + many

		var mu sync.Mutex
		read := 0
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			must(t, g.Callback().Query().After("gorm:query").Register("test:count_run_rows", func(tx *gorm.DB) {
				if tx.Statement.Context == nil || tx.Statement.Context.Value(countedRequest{}) == nil || tx.Statement.Table != "runs" {
					return
				}
				mu.Lock()
				read += int(tx.Statement.RowsAffected)
				mu.Unlock()
			}))
			t.Cleanup(func() { _ = g.Callback().Query().Remove("test:count_run_rows") })
		}
		get := func(path string) (string, int) {
			t.Helper()
			mu.Lock()
			read = 0
			mu.Unlock()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body.String())
			}
			mu.Lock()
			defer mu.Unlock()
			return rec.Body.String(), read
		}
		listed := regexp.MustCompile(`<tr data-testid="run-row">\s*<td><a href="/runs/(\d+)"`)
		ids := func(body string) []int64 {
			var out []int64
			for _, m := range listed.FindAllStringSubmatch(body, -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				out = append(out, id)
			}
			return out
		}
		// Slack for the counts and the datasets' list, which read a row
		// each.
		const slack = 5
		tests := []struct {
			path  string
			shown int // runs the page lists
			want  []int64
			count string
		}{
			{"/runs", runsPerPage, []int64{made[many-1], made[many-2]}, fmt.Sprintf("%d of %d runs", total, total)},
			{"/runs?page=2", runsPerPage, []int64{made[many-1-runsPerPage]}, ""},
			{"/runs?status=failed&page=2", runsPerPage, []int64{made[many-2-2*runsPerPage]}, fmt.Sprintf("%d of %d runs", many/2, total)},
			{fmt.Sprintf("/runs?dataset=%d&status=cancelled&page=99", d.dataset.ID), (many / 2) % runsPerPage, []int64{made[1]}, fmt.Sprintf("%d of %d runs", many/2, total)},
			{fmt.Sprintf("/projects/%d", env.project.ID), 20, []int64{made[many-1]}, ""},
			{"/", 1, nil, ""},
		}
		for _, tc := range tests {
			body, n := get(tc.path)
			if n > tc.shown+slack {
				t.Errorf("GET %s read %d rows of runs for a page of %d (of %d runs)", tc.path, n, tc.shown, total)
			}
			got := ids(body)
			if tc.path != "/" && len(got) != tc.shown {
				t.Errorf("GET %s lists %d runs, want %d", tc.path, len(got), tc.shown)
			}
			for _, id := range tc.want {
				if !strings.Contains(body, fmt.Sprintf(`<a href="/runs/%d">`, id)) {
					t.Errorf("GET %s does not list run %d", tc.path, id)
				}
			}
			if tc.count != "" && !strings.Contains(body, tc.count) {
				t.Errorf("GET %s does not say %q", tc.path, tc.count)
			}
		}
		// The API's list, walked by cursor: every run once, in ascending
		// id, a page read at a time.
		var walked []int64
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > total {
				t.Fatal("the walk does not end")
			}
			body, n := get("/api/v1/runs?limit=40" + cursor)
			if n > 41+slack {
				t.Errorf("GET /api/v1/runs?limit=40%s read %d rows of runs", cursor, n)
			}
			var page struct {
				Items      []struct{ ID int64 }
				NextCursor string `json:"next_cursor"`
			}
			must(t, json.Unmarshal([]byte(body), &page))
			for _, it := range page.Items {
				walked = append(walked, it.ID)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = "&cursor=" + page.NextCursor
		}
		if len(walked) != total {
			t.Fatalf("the API's walk listed %d runs, want %d", len(walked), total)
		}
		for i := 1; i < len(walked); i++ {
			if walked[i] <= walked[i-1] {
				t.Fatalf("the API's walk lists run %d after %d", walked[i], walked[i-1])
			}
		}
	})
}
