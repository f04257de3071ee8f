package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// TestLaunchWarnsWhenTheJudgesLastTestFailed: "Test connection" keeps its
// last outcome on the judge, and the launch form says beside the judge
// choice that the chosen judge's last test failed, when and why, with a
// link to the judge's page; it still launches. Before, the outcome was
// shown once and forgotten, and a run on a judge known not to answer was
// launched without a word.
func TestLaunchWarnsWhenTheJudgesLastTestFailed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		if rec := env.postForm("/judges", judgeFormValues("Offline <b>box</b>", closedPortURL(t), "", "")); rec.Code != http.StatusSeeOther {
			t.Fatalf("save judge: status %d: %s", rec.Code, rec.Body.String())
		}
		offline, _ := env.judgeNamed("Offline <b>box</b>")
		launchPage := func(judgeID int64) string {
			rec := env.get(fmt.Sprintf("/projects/%d/runs/new?judge=%d", env.project.ID, judgeID))
			if rec.Code != http.StatusOK {
				t.Fatalf("launch form: status %d", rec.Code)
			}
			return rec.Body.String()
		}
		test := func(judgeID int64) {
			if rec := env.postForm(fmt.Sprintf("/judges/%d/test", judgeID), nil); rec.Code != http.StatusSeeOther {
				t.Fatalf("test judge %d: status %d", judgeID, rec.Code)
			}
		}

		// Never tested: nothing to say.
		if body := launchPage(offline.ID); strings.Contains(body, `data-testid="launch-judge-test"`) {
			t.Errorf("an untested judge got a failed-test warning")
		}
		test(offline.ID)
		test(d.judge.ID) // the simulated judge answers

		stored, _ := env.judgeNamed("Offline <b>box</b>")
		if !stored.LastTestFailed() || stored.LastTestAt == nil {
			t.Fatalf("the failed test was not stored: at %v, error %q", stored.LastTestAt, stored.LastTestError)
		}
		if strings.Contains(stored.LastTestError, "\n") {
			t.Errorf("stored error is not one line: %q", stored.LastTestError)
		}
		tests := []struct {
			name    string
			judgeID int64
			want    []string
			warned  bool
		}{
			{"failed test", offline.ID, []string{
				"The last connection test of this judge failed (" + stored.LastTestAt.UTC().Format("2006-01-02 15:04 UTC") + ")",
				templ.EscapeString(strings.TrimSuffix(stored.LastTestError, ".")),
				fmt.Sprintf(`href="/judges/%d/edit"`, offline.ID),
				"can still be launched",
			}, true},
			{"answered test", d.judge.ID, nil, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				body := launchPage(tt.judgeID)
				if got := strings.Contains(body, `data-testid="launch-judge-test"`); got != tt.warned {
					t.Fatalf("warning shown = %v, want %v", got, tt.warned)
				}
				if !strings.Contains(body, `id="judge-test"`) {
					t.Errorf("no judge-test element for the judge select to refresh")
				}
				if missing := bodyLacks(body, tt.want...); len(missing) > 0 {
					t.Errorf("launch form lacks %q", missing)
				}
			})
		}

		// The judge's page tells the last outcome too.
		if missing := bodyLacks(env.get(fmt.Sprintf("/judges/%d/edit", offline.ID)).Body.String(),
			`data-testid="judge-last-test"`, "failed: "); len(missing) > 0 {
			t.Errorf("judge page lacks %q", missing)
		}

		// A warning, not a refusal: the launch goes through.
		f := d.launchForm("1", "10")
		f.Set("judge", strconv.FormatInt(offline.ID, 10))
		runID := env.launch(f)
		if rec := env.postForm(fmt.Sprintf("/runs/%d/cancel", runID), nil); rec.Code != http.StatusSeeOther {
			t.Errorf("cancel the run: status %d", rec.Code)
		}

		// The API's judge object tells it as well (validated against the
		// OpenAPI document by the client). Last: a first user turns sign-in on.
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner-lasttest@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		for _, tt := range []struct {
			id     int64
			failed bool
		}{{offline.ID, true}, {d.judge.ID, false}} {
			j := decode[APIJudge](t, a.get(fmt.Sprintf("/api/v1/judges/%d", tt.id), tok), http.StatusOK)
			if j.LastTestAt == nil || (j.LastTestError != "") != tt.failed {
				t.Errorf("API judge %d: last test at %v, error %q; want a test that failed = %v", tt.id, j.LastTestAt, j.LastTestError, tt.failed)
			}
			if tt.failed && j.LastTestError != stored.LastTestError {
				t.Errorf("API judge %d: last test error %q, stored %q", tt.id, j.LastTestError, stored.LastTestError)
			}
		}
	})
}
