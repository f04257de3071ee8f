package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
)

// TestKeyVariablesServeOnlyTheDefaultWorkspace: the operator's key
// variables (BATCHEVAL_JUDGE_KEY_VARS) are sent wherever a judge that names
// one points, and anyone signed in can make a workspace of their own and
// own it. So a viewer of the team's workspace made a workspace, a judge
// there reading OPENAI_API_KEY with a base URL of their own server, and
// pressed Test connection: the team's key went to them (and every run
// there spent it). The variables now serve the default workspace only,
// the one the operator set up: elsewhere a judge naming one is refused
// (page and API), and one stored before is never given the key.
func TestKeyVariablesServeOnlyTheDefaultWorkspace(t *testing.T) {
	const secret = "sk-team-0123456789abcdefXYZ"
	t.Setenv(models.KeyVarsSetting, "TEAM_OPENAI_KEY")
	t.Setenv("TEAM_OPENAI_KEY", secret)
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		var mu sync.Mutex
		var got []string // Authorization headers the endpoint received
		endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, r.Header.Get("Authorization"))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`))
		}))
		defer endpoint.Close()
		sawKey := func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, a := range got {
				if strings.Contains(a, secret) {
					return true
				}
			}
			return false
		}

		viewer := env.createUser(env.ws.ID, "viewer@team.test", models.RoleViewer)
		owner := env.createUser(env.ws.ID, "owner@team.test", models.RoleOwner)
		session := env.sessionCookie(viewer)
		if rec := env.send(http.MethodPost, "/workspaces", map[string][]string{"name": {"Mine"}}, "", session); rec.Code != http.StatusSeeOther {
			t.Fatalf("make a workspace: %d %.300s", rec.Code, rec.Body.String())
		}
		wss, err := env.db.ListUserWorkspaces(ctx, viewer.ID)
		must(t, err)
		var mine models.Workspace
		for _, w := range wss {
			if w.Workspace.ID != env.ws.ID {
				mine = w.Workspace
			}
		}
		if mine.ID == 0 {
			t.Fatal("the viewer's own workspace was not made")
		}

		// The judges page of the viewer's own workspace, and the API.
		form := judgeFormValues("Exfiltrate", endpoint.URL+"/v1", "", "")
		form.Set("api_key_env", "TEAM_OPENAI_KEY")
		rec := env.send(http.MethodPost, "/judges", form, "", session)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "default workspace") {
			t.Errorf("a judge reading the team's key variable in the viewer's own workspace: %d, want 422 naming the default workspace (%.300q)", rec.Code, rec.Body.String())
		}
		_, token := env.apiToken(mine.ID, viewer.ID)
		req := httptest.NewRequest(http.MethodPost, "/api/v1/judges", strings.NewReader(
			`{"name":"Exfiltrate by API","base_url":"`+endpoint.URL+`/v1","model":"m","api_key_env":"TEAM_OPENAI_KEY"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		api := httptest.NewRecorder()
		env.e.ServeHTTP(api, req)
		if api.Code != http.StatusUnprocessableEntity {
			t.Errorf("the same by the API: %d, want 422 (%.300q)", api.Code, api.Body.String())
		}
		js, err := env.db.ListJudges(ctx, mine.ID)
		must(t, err)
		for _, j := range js {
			if j.APIKeyEnv != "" {
				t.Errorf("judge %q of the viewer's workspace was stored reading %s", j.Name, j.APIKeyEnv)
			}
		}

		// A judge stored so before: Test connection does not send the key.
		old := models.Judge{WorkspaceID: mine.ID, Name: "Stored before", BaseURL: endpoint.URL + "/v1", Model: "m", APIKeyEnv: "TEAM_OPENAI_KEY",
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 1, TimeoutSeconds: 10}
		must(t, env.db.Gorm.Create(&old).Error)
		env.send(http.MethodPost, "/judges/"+strconv.FormatInt(old.ID, 10)+"/test", nil, "", session)
		if sawKey() {
			t.Errorf("Test connection of a judge of the viewer's workspace sent the team's key to its endpoint")
		}
		// Nor does a run of it (the runner reads the key for each call).
		proj, err := demo.Seed(ctx, env.db, mine)
		must(t, err)
		dss, err := env.db.ListDatasets(ctx, mine.ID, proj.ID)
		must(t, err)
		rubs, err := env.db.ListRubrics(ctx, mine.ID, proj.ID)
		must(t, err)
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 1, 10
		run := models.Run{WorkspaceID: mine.ID, ProjectID: proj.ID, DatasetID: dss[0].ID, RubricID: &rubs[0].ID, JudgeID: &old.ID, Name: "spends the team's key",
			Method: models.MethodBatchEval, Settings: s, RubricSnapshot: rubs[0].Evaluator(), JudgeSnapshot: old.Snapshot()}
		must(t, env.runner.Launch(ctx, &run))
		if done := env.waitRun(run.ID, 60*time.Second); done.Status != models.RunFailed || !strings.Contains(done.Error, "default workspace") {
			t.Errorf("a run of that judge: %s (%q), want failed saying the key variable serves the default workspace", done.Status, done.Error)
		}
		if sawKey() {
			t.Errorf("a run of a judge of the viewer's workspace sent the team's key to its endpoint")
		}

		// The default workspace's owner still uses the variable.
		ownerSession := env.sessionCookie(owner)
		form.Set("name", "Team judge")
		if rec := env.send(http.MethodPost, "/judges", form, "", ownerSession); rec.Code != http.StatusSeeOther {
			t.Fatalf("the default workspace's owner, a judge reading the key variable: %d %.300s", rec.Code, rec.Body.String())
		}
		team, ok := env.judgeNamed("Team judge")
		if !ok {
			t.Fatal("the team's judge was not stored")
		}
		env.send(http.MethodPost, "/judges/"+strconv.FormatInt(team.ID, 10)+"/test", nil, "", ownerSession)
		if !sawKey() {
			t.Errorf("the default workspace's judge no longer sends the key variable's key (got %q)", got)
		}
	})
}
