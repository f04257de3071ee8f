package handlers

import (
	"context"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestSharedSampleQuotesNoJudgeDetails: a share link's sample page says
// why a score is missing in the judge client's own words, without its
// details (the address it called, this server's network), both for the
// batch's failed call and for a failed repair request; members still read
// the whole error on the run's own sample page. Before, the share link's
// page quoted "Details: Post \"http://10.20.30.40:8000/...\"" whole, while
// the run's reason on the same link left it out (Run.SharedError).
func TestSharedSampleQuotesNoJudgeDetails(t *testing.T) {
	const details = `Post "http://10.20.30.40:8000/v1/chat/completions": dial tcp 10.20.30.40:8000: connect: connection refused`
	const words = "could not reach the endpoint: check the base URL and that the server is running"
	cases := []struct {
		name, column, value string
	}{
		{"the batch's call failed", "error", words + ". Details: " + details + "; gave up after 3 attempts"},
		{"the repair request failed", "problems", `["no scores found in the answer","repair request failed: ` + strings.ReplaceAll(words+". Details: "+details, `"`, `\"`) + `"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				d := env.ratedDataset("failed batch", 10)
				run := env.storedRun(d, "failed batch", d.human, nil)
				if err := env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE run_id = ? AND row_id = ?`, run.ID, d.rowIDs[0]).Error; err != nil {
					t.Fatal(err)
				}
				q := `UPDATE run_batches SET ` + tc.column + ` = ?, repair_request = 'again' WHERE run_id = ?`
				if tc.column == "error" {
					q = `UPDATE run_batches SET error = ?, error_kind = 'network' WHERE run_id = ?`
				}
				if err := env.db.Gorm.Exec(q, tc.value, run.ID).Error; err != nil {
					t.Fatal(err)
				}
				_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
				if err != nil {
					t.Fatal(err)
				}
				shared := env.get(fmt.Sprintf("/s/%s/samples/%d", token, d.rowIDs[0]))
				if shared.Code != 200 {
					t.Fatalf("shared sample page: %d", shared.Code)
				}
				body := html.UnescapeString(shared.Body.String())
				if i := strings.Index(body, "10.20.30.40"); i >= 0 {
					t.Errorf("the share link's sample page quotes the judge client's details: ...%s...", body[max(0, i-200):min(len(body), i+60)])
				}
				for _, want := range []string{words, models.SharedJudgeDetailsNote} {
					if !strings.Contains(body, want) {
						t.Errorf("the share link's sample page does not say %q", want)
					}
				}
				member := html.UnescapeString(env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, d.rowIDs[0])).Body.String())
				if !strings.Contains(member, "10.20.30.40:8000") {
					t.Error("the run's own sample page no longer gives members the judge client's details")
				}
			})
		})
	}
}
