package handlers

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPISharesSayTheirMakerLeft: the Share links page marks a link whose
// maker is no longer a member of the workspace ("(no longer a member)");
// GET /api/v1/shares gave the same link with created_by alone, as if its
// maker were still there. It now says created_by_left, true for the link
// of the removed editor only, in the list and in the answer to a revoke;
// every answer is checked against the OpenAPI document.
func TestAPISharesSayTheirMakerLeft(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		api := newAPIClient(t, env)
		run := env.startRun(env.demoDataset(), "shared run", models.MethodBatchEval, nil)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		made := map[string]int64{}
		for _, by := range []models.User{owner, editor} {
			l, _, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID,
				Label: "by " + by.Email, CreatedBy: &by.ID, CreatedByName: by.Name})
			if err != nil {
				t.Fatal(err)
			}
			made[by.Email] = l.ID
		}
		if _, err := env.db.RemoveMember(ctx, env.ws.ID, editor.ID, false); err != nil {
			t.Fatal(err)
		}
		_, token := env.apiToken(env.ws.ID, owner.ID)
		rec := api.call(http.MethodGet, "/api/v1/shares", token, nil, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /api/v1/shares = %d: %.300s", rec.Code, rec.Body)
		}
		var page struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{owner.Email: false, editor.Email: true}
		if len(page.Items) != len(want) {
			t.Fatalf("%d links listed, want %d: %s", len(page.Items), len(want), rec.Body)
		}
		for _, it := range page.Items {
			email := it["label"].(string)[len("by "):]
			if left, ok := it["created_by_left"].(bool); !ok || left != want[email] {
				t.Errorf("link made by %s: created_by_left = %v (present %v), want %v", email, it["created_by_left"], ok, want[email])
			}
		}
		// The revoke's answer is the same link, said the same way.
		rec = api.call(http.MethodPost, "/api/v1/shares/"+strconv.FormatInt(made[editor.Email], 10)+"/revoke", token, nil, "")
		var revoked map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &revoked); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("revoke = %d %v: %.300s", rec.Code, err, rec.Body)
		}
		if revoked["created_by_left"] != true {
			t.Errorf("revoked link of the removed editor: created_by_left = %v, want true", revoked["created_by_left"])
		}
	})
}
