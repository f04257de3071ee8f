package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
)

// TestAPIListsReadTheirPage: GET /api/v1/projects, /judges, /tokens and
// /datasets/{id}/reviews read every row of their list (every project,
// judge or token of the workspace, every review of the dataset) and cut the
// page in Go. They now read the page's rows and one more (is there a next
// page?) in the database, and still list what the old lists listed, once,
// in ascending ids, with next_cursor the last id listed and none on the
// last page.
func TestAPIListsReadTheirPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const many = 23
		owner := env.createUser(env.ws.ID, "owner@lists.test", models.RoleOwner)
		member := env.createUser(env.ws.ID, "member@lists.test", models.RoleEditor)
		_, ownerToken := env.apiToken(env.ws.ID, owner.ID)
		_, memberToken := env.apiToken(env.ws.ID, member.ID)
		d := env.ratedDataset("Reviewed", many)
		other := env.ratedDataset("Other reviewed", 3)
		for i := range many {
			p := models.Project{WorkspaceID: env.ws.ID, Name: fmt.Sprintf("Project %02d", i)}
			must(t, env.db.CreateProject(ctx, &p))
			j := models.Judge{WorkspaceID: env.ws.ID, Name: fmt.Sprintf("Judge %02d", i), BaseURL: "http://127.0.0.1:9/v1", Model: "m", TimeoutSeconds: 5, MaxConcurrency: 1}
			must(t, env.db.SaveJudge(ctx, &j))
			switch i {
			case 4: // archived: the lists keep active ones
				_, err := env.db.SetArchived(ctx, env.ws.ID, models.KindProject, p.ID, true)
				must(t, err)
				_, err = env.db.SetArchived(ctx, env.ws.ID, models.KindJudge, j.ID, true)
				must(t, err)
			case 9: // in the trash
				_, _, err := env.db.Trash(ctx, env.ws.ID, models.KindProject, p.ID, models.Actor{Label: "test"})
				must(t, err)
				_, _, err = env.db.Trash(ctx, env.ws.ID, models.KindJudge, j.ID, models.Actor{Label: "test"})
				must(t, err)
			}
			who := owner
			if i%3 == 0 {
				who = member
			}
			_, _, err := env.db.CreateAPIToken(ctx, env.ws.ID, who.ID, fmt.Sprintf("token %02d", i))
			must(t, err)
			// Two criteria in turn, and reviews of another dataset
			// between them.
			for k, crit := range []string{"Quality", "Fluency"} {
				v := float64(1 + (i+k)%5)
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.ds.ID, RowID: d.rowIDs[i],
					Criterion: crit, HumanColumn: "q", Reviewer: "Ann", Score: &v, Lo: 1, Hi: 5, Comment: fmt.Sprintf("note %d", i)})
				must(t, err)
			}
			_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: other.ds.ID, RowID: other.rowIDs[i%3],
				Criterion: "Quality", HumanColumn: "q", Reviewer: "Bob", Lo: 1, Hi: 5, Comment: "elsewhere"})
			must(t, err)
		}

		// What each list lists: the whole lists, in ascending ids.
		ids := func(n int, idOf func(int) int64) []int64 {
			out := make([]int64, n)
			for i := range n {
				out[i] = idOf(i)
			}
			slices.Sort(out)
			return out
		}
		ps, err := env.db.ListProjects(ctx, env.ws.ID)
		must(t, err)
		js, err := env.db.ListJudges(ctx, env.ws.ID)
		must(t, err)
		all, err := env.db.ListDatasetReviews(ctx, env.ws.ID, d.ds.ID)
		must(t, err)
		quality, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.ds.ID, "Quality", 0)
		must(t, err)
		wsTokens, err := env.db.ListWorkspaceAPITokens(ctx, env.ws.ID)
		must(t, err)
		mine, err := env.db.ListAPITokens(ctx, env.ws.ID, member.ID)
		must(t, err)
		sample := map[int64]string{} // review id: the sample id listed
		for _, r := range all {
			sample[r.ID] = fmt.Sprintf("s%03d", slices.Index(d.rowIDs, r.RowID))
		}

		// Rows read by the request, by table; a statement GORM does not
		// count (a Scan) reads every row of its table unless limited.
		var mu sync.Mutex
		read := map[string]int{}
		tables := map[string]int{"projects": len(ps) + 2, "judges": len(js) + 2, "review_ratings": 3 * many, "api_tokens": many + 2}
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			counted := func(tx *gorm.DB) bool {
				_, listed := tables[tx.Statement.Table]
				return listed && tx.Statement.Context != nil && tx.Statement.Context.Value(countedRequest{}) != nil
			}
			const hook = "test:count_api_list_rows"
			must(t, g.Callback().Query().After("gorm:query").Register(hook, func(tx *gorm.DB) {
				if counted(tx) {
					mu.Lock()
					read[tx.Statement.Table] += int(tx.Statement.RowsAffected)
					mu.Unlock()
				}
			}))
			must(t, g.Callback().Row().After("gorm:row").Register(hook, func(tx *gorm.DB) {
				if counted(tx) && !strings.Contains(strings.ToUpper(tx.Statement.SQL.String()), "LIMIT") {
					mu.Lock()
					read[tx.Statement.Table] += tables[tx.Statement.Table]
					mu.Unlock()
				}
			}))
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove(hook)
				_ = g.Callback().Row().Remove(hook)
			})
		}
		type item struct {
			ID       int64  `json:"id"`
			SampleID string `json:"sample_id"`
		}
		get := func(path, token string) (Page[item], map[string]int) {
			t.Helper()
			mu.Lock()
			clear(read)
			mu.Unlock()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body.String())
			}
			var page Page[item]
			must(t, json.Unmarshal(rec.Body.Bytes(), &page))
			mu.Lock()
			defer mu.Unlock()
			return page, maps.Clone(read)
		}

		reviews := fmt.Sprintf("/api/v1/datasets/%d/reviews", d.ds.ID)
		tests := []struct {
			name, path, token string
			table             string
			want              []int64
			// auth is the rows of table the token's check reads.
			auth int
		}{
			{"projects", "/api/v1/projects", ownerToken, "projects", ids(len(ps), func(i int) int64 { return ps[i].ID }), 0},
			{"judges", "/api/v1/judges", ownerToken, "judges", ids(len(js), func(i int) int64 { return js[i].ID }), 0},
			{"a dataset's reviews", reviews, ownerToken, "review_ratings", ids(len(all), func(i int) int64 { return all[i].ID }), 0},
			{"a criterion's reviews", reviews + "?criterion=Quality", ownerToken, "review_ratings", ids(len(quality), func(i int) int64 { return quality[i].ID }), 0},
			{"an owner's tokens: the workspace's", "/api/v1/tokens", ownerToken, "api_tokens", ids(len(wsTokens), func(i int) int64 { return wsTokens[i].ID }), 1},
			{"a member's tokens: their own", "/api/v1/tokens", memberToken, "api_tokens", ids(len(mine), func(i int) int64 { return mine[i].ID }), 1},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if len(tc.want) < 8 {
					t.Fatalf("%d listed: too few for pages of 5", len(tc.want))
				}
				for _, limit := range []int{5, len(tc.want)} {
					var got []int64
					cursor := ""
					for range len(tc.want) + 1 {
						path := tc.path + map[bool]string{false: "?", true: "&"}[strings.Contains(tc.path, "?")] + fmt.Sprintf("limit=%d", limit)
						if cursor != "" {
							path += "&cursor=" + cursor
						}
						page, n := get(path, tc.token)
						for _, it := range page.Items {
							got = append(got, it.ID)
							if tc.table == "review_ratings" && it.SampleID != sample[it.ID] {
								t.Errorf("GET %s: review %d of sample %q, want %q", path, it.ID, it.SampleID, sample[it.ID])
							}
						}
						if n[tc.table] > len(page.Items)+1+tc.auth {
							t.Errorf("GET %s read %d rows of %s for a page of %d (of %d listed)", path, n[tc.table], tc.table, len(page.Items), len(tc.want))
						}
						last := len(got) == len(tc.want)
						switch {
						case last && page.NextCursor != "":
							t.Errorf("GET %s: next_cursor %q on the last page", path, page.NextCursor)
						case !last && page.NextCursor != fmt.Sprint(got[len(got)-1]):
							t.Fatalf("GET %s: next_cursor %q, want the last id listed (%d)", path, page.NextCursor, got[len(got)-1])
						}
						if page.NextCursor == "" {
							break
						}
						cursor = page.NextCursor
					}
					if !slices.Equal(got, tc.want) {
						t.Errorf("%s in pages of %d: %v, want %v", tc.path, limit, got, tc.want)
					}
				}
			})
		}
	})
}
