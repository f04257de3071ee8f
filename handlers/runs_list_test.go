package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestRunsListColumnsAndFilters: the runs list names methods as people
// do, shows each finished run's agreement with the humans and its cost,
// and filters by status, method and dataset through the query string.
func TestRunsListColumnsAndFilters(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		be := env.launch(d.launchForm("1", "10"))
		env.waitRun(be, 30*time.Second)
		ge := env.startRun(d.dataset, "G-Eval run", models.MethodGEval, nil)
		env.waitRun(ge.ID, 60*time.Second)
		// The G-Eval run set back to running, to filter on status.
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, ge.ID).Error)

		rowOf := func(body string, id int64) string {
			i := strings.Index(body, fmt.Sprintf(`<a href="/runs/%d">`, id))
			if i < 0 {
				return ""
			}
			end := strings.Index(body[i:], "</tr>")
			return body[i : i+end]
		}
		tests := []struct {
			query   string
			listed  []int64
			missing []int64
		}{
			{"", []int64{be, ge.ID}, nil},
			{"?status=succeeded", []int64{be}, []int64{ge.ID}},
			{"?status=running", []int64{ge.ID}, []int64{be}},
			{"?method=geval", []int64{ge.ID}, []int64{be}},
			{"?method=batcheval&status=running", nil, []int64{be, ge.ID}},
			{fmt.Sprintf("?dataset=%d", d.dataset.ID), []int64{be, ge.ID}, nil},
			{"?dataset=999999", nil, []int64{be, ge.ID}},
		}
		for _, tt := range tests {
			body := env.get("/runs" + tt.query).Body.String()
			for _, id := range tt.listed {
				if rowOf(body, id) == "" {
					t.Errorf("/runs%s does not list run %d", tt.query, id)
				}
			}
			for _, id := range tt.missing {
				if rowOf(body, id) != "" {
					t.Errorf("/runs%s lists run %d", tt.query, id)
				}
			}
			if len(tt.listed) == 0 && !strings.Contains(body, `data-testid="runs-none"`) {
				t.Errorf("/runs%s does not say no run matches", tt.query)
			}
		}

		rep, err := env.h.buildReport(env.localCtx(), be, "")
		if err != nil {
			t.Fatal(err)
		}
		// The runs page and the project's "Recent runs" show the same row.
		for _, path := range []string{"/runs", fmt.Sprintf("/projects/%d", env.project.ID)} {
			body := env.get(path).Body.String()
			row := rowOf(body, be)
			for _, want := range []string{
				`data-testid="run-method">BatchEval<`,
				fmt.Sprintf(`data-testid="run-agreement">r = %s<`, fmt.Sprintf("%.2f", averagePearson(rep))),
				`data-testid="run-list-cost">$0 (simulated judge)<`,
				fmt.Sprintf(`<td>%s</td>`, d.dataset.Name),
			} {
				if !strings.Contains(row, want) {
					t.Errorf("%s: finished run's line lacks %q:\n%s", path, want, row)
				}
			}
			if g := rowOf(body, ge.ID); !strings.Contains(g, `data-testid="run-method">G-Eval<`) || !strings.Contains(g, `data-testid="run-agreement">—<`) {
				t.Errorf("%s: running G-Eval line: want its method label and no agreement yet:\n%s", path, g)
			}
		}
		if !strings.Contains(env.get("/runs?method=geval").Body.String(), `<option value="geval" selected>G-Eval</option>`) {
			t.Errorf("the method filter does not keep its choice")
		}
	})
}
