package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAPISharesReadItsPage: GET /api/v1/shares?limit=10 read every link of
// the workspace and the names of every run and experiment they open, then
// cut the page in Go (2,000 links read for 10 shown). It now reads the
// page's links and one more, and the names of what those links open only;
// the walk by cursor still lists every link once, oldest first, each with
// what it opens and whether its report is deleted.
func TestAPISharesReadItsPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Shared data", 3)
		const links = 30
		newRun := func(i int) int64 {
			r := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: fmt.Sprintf("run %02d", i), Method: models.MethodBatchEval,
				Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
					Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
			must(t, env.db.CreateRun(ctx, &r, nil))
			return r.ID
		}
		// Each link opens reports of its own, so that reading every
		// link's names reads as many rows as there are links: a run, an
		// experiment or a comparison of two runs, in turn.
		type made struct {
			id              int64
			kind            models.ShareKind
			run, other, exp int64
			label           string
		}
		var want []made
		for i := range links {
			n := models.NewShareLink{WorkspaceID: env.ws.ID, Label: fmt.Sprintf("link %02d", i)}
			switch i % 3 {
			case 0:
				n.Kind, n.RunID = models.ShareRun, newRun(i)
			case 1:
				e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: fmt.Sprintf("experiment %02d", i)}
				must(t, env.db.CreateExperiment(ctx, &e))
				n.Kind, n.ExperimentID = models.ShareExperiment, e.ID
			case 2:
				n.Kind, n.RunID, n.OtherRunID = models.ShareCompare, newRun(i), newRun(-i)
			}
			l, _, err := env.db.CreateShareLink(ctx, n)
			must(t, err)
			want = append(want, made{l.ID, n.Kind, n.RunID, n.OtherRunID, n.ExperimentID, n.Label})
		}
		// The experiment of link 13 goes to the trash: its link opens
		// nothing, and says so.
		if _, _, err := env.db.Trash(ctx, env.ws.ID, models.KindExperiment, want[13].exp, models.Actor{Label: "test"}); err != nil {
			t.Fatal(err)
		}

		// Rows of links read (a query), and ids of runs and experiments
		// whose names are read (ListRunNames and ListExperimentNames scan
		// rows by id: a statement without ids reads them all).
		idsIn := regexp.MustCompile(`\bid IN \(([^)]*)\)`)
		var mu sync.Mutex
		read := map[string]int{}
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			counted := func(tx *gorm.DB) bool {
				return tx.Statement.Context != nil && tx.Statement.Context.Value(countedRequest{}) != nil
			}
			const hook = "test:count_share_rows"
			must(t, g.Callback().Query().After("gorm:query").Register(hook, func(tx *gorm.DB) {
				if counted(tx) {
					mu.Lock()
					read[tx.Statement.Table] += int(tx.Statement.RowsAffected)
					mu.Unlock()
				}
			}))
			must(t, g.Callback().Row().After("gorm:row").Register(hook, func(tx *gorm.DB) {
				if !counted(tx) || (tx.Statement.Table != "runs" && tx.Statement.Table != "experiments") {
					return
				}
				ids := links * 3 // no ids: every one of the table
				if m := idsIn.FindStringSubmatch(tx.Statement.SQL.String()); m != nil {
					ids = strings.Count(m[1], ",") + 1
				}
				mu.Lock()
				read[tx.Statement.Table] += ids
				mu.Unlock()
			}))
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove(hook)
				_ = g.Callback().Row().Remove(hook)
			})
		}
		get := func(path string) (Page[APIShareLink], map[string]int) {
			t.Helper()
			mu.Lock()
			clear(read)
			mu.Unlock()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body.String())
			}
			var page Page[APIShareLink]
			must(t, json.Unmarshal(rec.Body.Bytes(), &page))
			mu.Lock()
			defer mu.Unlock()
			return page, maps.Clone(read)
		}

		tests := []struct {
			name       string
			query      string
			from, to   int  // the links of want the page lists
			nextCursor bool // a next page
		}{
			{"first page", "?limit=10", 0, 10, true},
			{"second page", "?limit=10&cursor=%d", 10, 20, true},
			{"last page, full", "?limit=10&cursor=%d", 20, 30, false},
			{"a page past a link", "?limit=7&cursor=%d", 6, 13, true},
			{"the default limit", "", 0, links, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				path := "/api/v1/shares" + tc.query
				if tc.from > 0 {
					path = fmt.Sprintf(path, want[tc.from-1].id)
				}
				page, n := get(path)
				var got []int64
				for _, it := range page.Items {
					got = append(got, it.ID)
				}
				var wantIDs []int64
				runs, exps := 0, 0
				for _, w := range want[tc.from:tc.to] {
					wantIDs = append(wantIDs, w.id)
					runs += map[models.ShareKind]int{models.ShareRun: 1, models.ShareCompare: 2}[w.kind]
					if w.kind == models.ShareExperiment {
						exps++
					}
				}
				if !slices.Equal(got, wantIDs) {
					t.Fatalf("GET %s lists links %v, want %v", path, got, wantIDs)
				}
				wantCursor := ""
				if tc.nextCursor {
					wantCursor = fmt.Sprint(want[tc.to-1].id)
				}
				if page.NextCursor != wantCursor {
					t.Errorf("GET %s: next_cursor %q, want %q", path, page.NextCursor, wantCursor)
				}
				for i, it := range page.Items {
					w := want[tc.from+i]
					if it.Kind != string(w.kind) || id64(it.RunID) != w.run || id64(it.OtherRunID) != w.other || id64(it.ExperimentID) != w.exp || it.Label != w.label {
						t.Errorf("link %d listed as %+v, want %+v", it.ID, it, w)
					}
					if deleted := tc.from+i == 13; it.ReportDeleted != deleted || it.Active == deleted {
						t.Errorf("link %d (%s): report_deleted %v, active %v; want report_deleted %v", it.ID, w.label, it.ReportDeleted, it.Active, deleted)
					}
				}
				// The page's links and one more; the names of what they
				// open (each once), nothing else.
				if n["share_links"] > tc.to-tc.from+1 || n["runs"] > runs || n["experiments"] > exps {
					t.Errorf("GET %s read %d links, %d runs and %d experiments for a page of %d links opening %d runs and %d experiments (of %d links)",
						path, n["share_links"], n["runs"], n["experiments"], tc.to-tc.from, runs, exps, links)
				}
			})
		}
	})
}
