package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIRunInTrashSaysSo (tryout46): every endpoint of one run answered
// a run in the trash with "run N does not exist", so a script's author
// looked for a typo while the run waited on the Trash page. For a member
// of the workspace the answer (still 404, code not_found) now says the
// run is in the trash, with what (the run itself, or the dataset it went
// with), and how to restore it, with error.trash naming the entry; for a
// token of another workspace it stays the answer of a run that never
// existed, byte for byte but the id. Every answer is checked against the
// OpenAPI document. A live run (before, and after the restore) is the
// control.
func TestAPIRunInTrashSaysSo(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		api := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@x.test", models.RoleEditor)
		_, token := env.apiToken(env.ws.ID, editor.ID)
		outsider := env.createUser(env.ws.ID, "outsider@x.test", models.RoleViewer)
		other, err := env.db.CreateWorkspace(ctx, "Elsewhere", outsider.ID)
		must(t, err)
		_, err = env.db.RemoveMember(ctx, env.ws.ID, outsider.ID, false)
		must(t, err)
		_, outsiderToken := env.apiToken(other.ID, outsider.ID)

		d := env.ratedDataset("trashed data", 6)
		alone := env.storedRun(d, "Run <b>alone</b>", d.human, nil)
		d2 := env.ratedDataset("dataset in the trash", 6)
		withDataset := env.storedRun(d2, "run of the dataset", d2.human, nil)
		const missing = 987654

		endpoints := []struct{ method, path string }{
			{http.MethodGet, "/api/v1/runs/%d"},
			{http.MethodGet, "/api/v1/runs/%d/results"},
			{http.MethodGet, "/api/v1/runs/%d/export.csv"},
			{http.MethodGet, "/api/v1/runs/%d/export.json"},
			{http.MethodGet, "/api/v1/runs/%d/events"},
			{http.MethodPost, "/api/v1/runs/%d/cancel"},
			{http.MethodPost, "/api/v1/runs/%d/pause"},
			{http.MethodPost, "/api/v1/runs/%d/continue"},
		}
		call := func(method, path string, id int64, tok string) (int, string) {
			t.Helper()
			rec := api.call(method, fmt.Sprintf(path, id), tok, nil, "")
			return rec.Code, rec.Body.String()
		}

		if code, body := call(http.MethodGet, "/api/v1/runs/%d", alone.ID, token); code != http.StatusOK {
			t.Fatalf("a live run: %d %.300s", code, body)
		}
		_, _, err = env.db.Trash(ctx, env.ws.ID, models.KindRun, alone.ID, models.Actor{Label: "someone"})
		must(t, err)
		_, _, err = env.db.Trash(ctx, env.ws.ID, models.KindDataset, d2.ds.ID, models.Actor{Label: "someone"})
		must(t, err)
		entryAlone := env.trashEntryOf(models.KindRun, alone.ID)
		entryDataset := env.trashEntryOf(models.KindDataset, d2.ds.ID)

		for _, tc := range []struct {
			name    string
			run     models.Run
			entry   models.TrashEntry
			sayings []string
		}{
			{"trashed alone", alone, entryAlone, []string{fmt.Sprintf("run %d (“Run <b>alone</b>”) is in the trash", alone.ID)}},
			{"trashed with its dataset", withDataset, entryDataset, []string{fmt.Sprintf("run %d (“run of the dataset”) is in the trash: it went with dataset “dataset in the trash”", withDataset.ID)}},
		} {
			for _, ep := range endpoints {
				what := fmt.Sprintf("%s, %s %s", tc.name, ep.method, fmt.Sprintf(ep.path, tc.run.ID))
				code, body := call(ep.method, ep.path, tc.run.ID, token)
				if code != http.StatusNotFound {
					t.Errorf("%s: %d, want 404: %.300s", what, code, body)
					continue
				}
				var got struct {
					Error struct {
						Code    string        `json:"code"`
						Message string        `json:"message"`
						Trash   *APITrashNote `json:"trash"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					t.Fatalf("%s: %v: %.300s", what, err, body)
				}
				if got.Error.Code != models.ENotFound {
					t.Errorf("%s: code %q, want not_found", what, got.Error.Code)
				}
				for _, w := range append(tc.sayings, "restore it on the Trash page, /trash", fmt.Sprintf("trash entry %d", tc.entry.ID)) {
					if !strings.Contains(got.Error.Message, w) {
						t.Errorf("%s: message does not say %q: %s", what, w, got.Error.Message)
					}
				}
				if strings.Contains(got.Error.Message, "does not exist") {
					t.Errorf("%s: message still says the run does not exist: %s", what, got.Error.Message)
				}
				n := got.Error.Trash
				if n == nil {
					t.Errorf("%s: no error.trash: %.300s", what, body)
					continue
				}
				if n.EntryID != tc.entry.ID || n.Kind != string(tc.entry.Kind) || n.Name != tc.entry.Name || !n.Restorable || n.Page != "/trash" {
					t.Errorf("%s: error.trash %+v, want entry %d (%s %q), restorable, page /trash", what, *n, tc.entry.ID, tc.entry.Kind, tc.entry.Name)
				}

				// Outside the workspace, a trashed run answers as one that
				// never existed: same status, same body but the id.
				oc, ob := call(ep.method, ep.path, tc.run.ID, outsiderToken)
				mc, mb := call(ep.method, ep.path, missing, outsiderToken)
				if oc != mc || strings.ReplaceAll(ob, fmt.Sprintf("run %d ", tc.run.ID), "run N ") != strings.ReplaceAll(mb, fmt.Sprintf("run %d ", missing), "run N ") {
					t.Errorf("%s: another workspace's token tells the trashed run (%d %s) from a missing one (%d %s)", what, oc, ob, mc, mb)
				}
				if strings.Contains(ob, "trash") {
					t.Errorf("%s: another workspace's token hears of the trash: %s", what, ob)
				}
			}
		}
		// A member asking for a run that never existed hears the plain
		// answer, without a trash note.
		if code, body := call(http.MethodGet, "/api/v1/runs/%d", missing, token); code != http.StatusNotFound || strings.Contains(body, "trash") {
			t.Errorf("a missing run: %d %.300s", code, body)
		}
		_, err = env.db.Restore(ctx, env.ws.ID, entryAlone.ID)
		must(t, err)
		if code, body := call(http.MethodGet, "/api/v1/runs/%d", alone.ID, token); code != http.StatusOK {
			t.Errorf("the restored run: %d %.300s", code, body)
		}
	})
}
