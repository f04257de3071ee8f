package handlers

import (
	"context"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestSharedFailedRunQuotesNoJudgeDetails: a failed run's reason quotes
// the judge client's details (the address it could not connect to, the
// server's network settings). A share link's page and the downloadable
// report showed it whole to whoever holds the link, though the events
// there quote no error for that reason. They now give the product's own
// words only; the run's page keeps the details for members.
func TestSharedFailedRunQuotesNoJudgeDetails(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("failed", 10)
		run := env.storedRun(d, "failed run", d.human, nil)
		const reason = "the run stopped, since no call can succeed until the judge's settings are corrected: " +
			"this server does not call judges at that address. Details: connecting to 10.20.30.40:8000 is not allowed: " +
			"private-network addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private)"
		if err := env.db.Gorm.Exec(`UPDATE runs SET status = ?, error = ? WHERE id = ?`, models.RunFailed, reason, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/s/" + token, "/s/" + token + "/report.html", fmt.Sprintf("/runs/%d/report.html", run.ID)} {
			body := env.get(path).Body.String()
			if !strings.Contains(body, "this server does not call judges at that address (the judge&#39;s own message is on the run&#39;s page") {
				t.Errorf("%s does not say why the run failed in the product's words", path)
			}
			for _, secret := range []string{"10.20.30.40", "BATCHEVAL_JUDGE_ALLOW_PRIVATE"} {
				if strings.Contains(body, secret) {
					t.Errorf("%s quotes the judge client's details (%q)", path, secret)
				}
			}
		}
		// The run's page, read by members, keeps them.
		if body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String(); !strings.Contains(body, "10.20.30.40:8000") {
			t.Errorf("the run's page lost the judge client's details")
		}
	})
}

// TestSharedFailedRunQuotesNoInternalError: a run that failed outside the
// judge client (its dataset could not be read, the database failed)
// showed its raw error on its share link and in the downloadable report:
// a file path, SQL, the database's address and ids, to whoever holds the
// link. They now say the run stopped on an internal error, and while
// doing what; the run's page, read by members, keeps the error whole.
func TestSharedFailedRunQuotesNoInternalError(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("failed", 10)
		for _, tc := range []struct {
			name, stored, shared string
			secrets              []string
		}{
			{"database", `load dataset rows: failed to connect to ` + "`host=db.internal user=batcheval database=batcheval`" + `: dial error (dial tcp 10.1.2.3:5432: connect: connection refused)`,
				"the run stopped on an internal error while reading its dataset (the error itself is on the run's page, for members of its workspace)",
				[]string{"db.internal", "10.1.2.3", "batcheval database"}},
			{"file and SQL", `open /var/lib/batcheval/uploads/ws-4/rubric-77.json: no such file or directory; SELECT * FROM rubrics WHERE id = 77`,
				"the run stopped on an internal error (the error itself is on the run's page, for members of its workspace)",
				[]string{"/var/lib", "rubric-77", "SELECT"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, d.human, nil)
				if err := env.db.Gorm.Exec(`UPDATE runs SET status = ?, error = ? WHERE id = ?`, models.RunFailed, tc.stored, run.ID).Error; err != nil {
					t.Fatal(err)
				}
				_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
				if err != nil {
					t.Fatal(err)
				}
				for _, path := range []string{"/s/" + token, "/s/" + token + "/report.html", fmt.Sprintf("/runs/%d/report.html", run.ID)} {
					body := html.UnescapeString(env.get(path).Body.String())
					if !strings.Contains(body, "This run failed: "+tc.shared) {
						t.Errorf("%s does not say %q", path, "This run failed: "+tc.shared)
					}
					for _, secret := range tc.secrets {
						if strings.Contains(body, secret) {
							t.Errorf("%s quotes the run's internal error (%q)", path, secret)
						}
					}
				}
				if body := html.UnescapeString(env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()); !strings.Contains(body, tc.stored) {
					t.Errorf("the run's page lost the error")
				}
			})
		}
	})
}
