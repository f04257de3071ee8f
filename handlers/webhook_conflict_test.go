package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestWebhookFormRefusesSavingOverALaterSave: the webhook settings form
// carries the revision of what it was opened on, and a save applies only
// over it. Another owner's save, removal or first webhook made meanwhile
// is not replaced silently: the form comes back (409) with the person's
// settings kept, what the other owner left stored, and the new revision,
// with which saving again replaces it. A form shown again to fix a field
// keeps the revision it was opened with; a delivery is no change.
// (Before, the save replaced the address and events unconditionally: two
// owners editing at once, the last one won without a word.)
func TestWebhookFormRefusesSavingOverALaterSave(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const (
			first  = "https://hooks.example.test/first"
			theirs = "https://hooks.example.test/theirs"
			mine   = "https://hooks.example.test/mine"
		)
		cases := []struct {
			name string
			// before is the webhook stored when the page opens ("": none).
			before string
			// meanwhile is what happens elsewhere before the save.
			meanwhile func(t *testing.T)
			// want is the save's answer; stored the address then stored
			// ("": none); shows a phrase of the answer.
			want          int
			stored, shows string
		}{
			{"another owner saved", first, func(t *testing.T) { setWebhook(t, env, theirs, false) }, http.StatusConflict, theirs, "another owner saved the webhook"},
			{"another owner removed it", first, func(t *testing.T) {
				if err := env.db.DeleteWebhook(ctx, env.ws.ID); err != nil {
					t.Fatal(err)
				}
			}, http.StatusConflict, "", "another owner removed the webhook"},
			{"another owner set the first one", "", func(t *testing.T) { setWebhook(t, env, theirs, true) }, http.StatusConflict, theirs, "another owner saved the webhook"},
			{"a delivery was recorded", first, func(t *testing.T) {
				if err := env.db.RecordWebhookDelivery(ctx, env.ws.ID, "200 OK"); err != nil {
					t.Fatal(err)
				}
			}, http.StatusSeeOther, mine, ""},
			{"nothing happened", "", func(t *testing.T) {}, http.StatusSeeOther, mine, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if err := env.db.DeleteWebhook(ctx, env.ws.ID); err != nil {
					t.Fatal(err)
				}
				if tc.before != "" {
					setWebhook(t, env, tc.before, true)
				}
				opened := revisionIn(env.get("/settings/webhook").Body.String())
				if opened == "" {
					t.Fatal("the settings form carries no revision")
				}
				tc.meanwhile(t)
				form := func(address, revision string) url.Values {
					return url.Values{"url": {address}, "base_url": {"https://eval.example.test"}, "on_failed": {"1"}, "revision": {revision}}
				}

				// A field to fix: shown again with the revision it was opened on.
				rec := env.postForm("/settings/webhook", form("ftp://not.http.test/", opened))
				if rec.Code != http.StatusUnprocessableEntity || revisionIn(rec.Body.String()) != opened {
					t.Fatalf("a bad address = %d with revision %q, want 422 keeping %q", rec.Code, revisionIn(rec.Body.String()), opened)
				}

				rec = env.postForm("/settings/webhook", form(mine, opened))
				body := rec.Body.String()
				if rec.Code != tc.want {
					t.Fatalf("save = %d, want %d: %.600s", rec.Code, tc.want, body)
				}
				if got := storedWebhookURL(t, env); got != tc.stored {
					t.Errorf("stored %q after the save, want %q", got, tc.stored)
				}
				if tc.want != http.StatusConflict {
					return
				}
				if !strings.Contains(body, tc.shows) || !strings.Contains(body, `value="`+mine+`"`) ||
					strings.Contains(body, `name="on_finished" value="1" checked`) {
					t.Errorf("the conflict page does not say %q with my settings (failed runs only) kept in the form: %.1500s", tc.shows, body)
				}
				if saved := strings.Contains(body, `data-testid="saved-meanwhile"`); saved != (tc.stored != "") ||
					(saved && !strings.Contains(body[strings.Index(body, `data-testid="saved-meanwhile"`):], theirs)) {
					t.Errorf("what they saved shown: %v, want %v with %s", saved, tc.stored != "", theirs)
				}
				again := revisionIn(body)
				if again == "" || again == opened {
					t.Fatalf("the conflict page's revision %q: want the stored state's, not %q", again, opened)
				}
				if rec := env.postForm("/settings/webhook", form(mine, again)); rec.Code != http.StatusSeeOther {
					t.Fatalf("saving again over what was shown = %d, want 303", rec.Code)
				}
				if got := storedWebhookURL(t, env); got != mine {
					t.Errorf("stored %q after saving again, want mine", got)
				}
			})
		}
	})
}

// setWebhook stores a webhook as another owner's save does.
func setWebhook(t *testing.T, env *testEnv, address string, onFinished bool) {
	t.Helper()
	if _, err := env.db.SaveWebhook(context.Background(), models.Webhook{WorkspaceID: env.ws.ID, URL: address, OnFinished: onFinished, OnFailed: true}); err != nil {
		t.Fatal(err)
	}
}

// storedWebhookURL is the workspace's stored webhook address ("": none).
func storedWebhookURL(t *testing.T, env *testEnv) string {
	t.Helper()
	wh, err := env.db.FindWebhook(context.Background(), env.ws.ID)
	if models.ErrorCode(err) == models.ENotFound {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return wh.URL
}

// TestWebhookRemovalChecksItsRevision: "Remove the webhook" posts the
// revision its page was opened on, and removes only that webhook. When
// another owner saved new settings meanwhile, nothing is removed: the
// page comes back (409) showing what they saved, with its revision, so
// that removing again removes it knowingly. A webhook already removed
// meanwhile is simply gone. (Before, removal was unconditional while
// saving checked the revision: an owner removing an old address deleted
// the new one another owner had just set.)
func TestWebhookRemovalChecksItsRevision(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const (
			first  = "https://hooks.example.test/first"
			theirs = "https://hooks.example.test/theirs"
		)
		cases := []struct {
			name      string
			meanwhile func(t *testing.T)
			want      int
			stored    string // the address stored after the removal ("": none)
		}{
			{"nothing happened", func(t *testing.T) {}, http.StatusSeeOther, ""},
			{"a delivery was recorded", func(t *testing.T) {
				if err := env.db.RecordWebhookDelivery(ctx, env.ws.ID, "200 OK"); err != nil {
					t.Fatal(err)
				}
			}, http.StatusSeeOther, ""},
			{"another owner saved", func(t *testing.T) { setWebhook(t, env, theirs, false) }, http.StatusConflict, theirs},
			{"another owner removed it", func(t *testing.T) {
				if err := env.db.DeleteWebhook(ctx, env.ws.ID); err != nil {
					t.Fatal(err)
				}
			}, http.StatusSeeOther, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				setWebhook(t, env, first, true)
				page := env.get("/settings/webhook").Body.String()
				remove := page[max(strings.Index(page, `action="/settings/webhook/remove"`), 0):]
				opened := revisionIn(remove)
				if opened == "" {
					t.Fatal("the remove form carries no revision")
				}
				tc.meanwhile(t)
				rec := env.postForm("/settings/webhook/remove", url.Values{"revision": {opened}})
				if rec.Code != tc.want {
					t.Fatalf("remove = %d, want %d: %.600s", rec.Code, tc.want, rec.Body.String())
				}
				if got := storedWebhookURL(t, env); got != tc.stored {
					t.Errorf("stored %q after the removal, want %q", got, tc.stored)
				}
				if tc.want != http.StatusConflict {
					return
				}
				body := rec.Body.String()
				if !strings.Contains(body, "Not removed: another owner saved the webhook after you opened this page") ||
					!strings.Contains(body, `data-testid="saved-meanwhile"`) {
					t.Errorf("the conflict page does not say why nor show what they saved: %.1500s", body)
				}
				again := revisionIn(body[max(strings.Index(body, `action="/settings/webhook/remove"`), 0):])
				if again == "" || again == opened {
					t.Fatalf("the conflict page's remove form has revision %q: want the stored state's, not %q", again, opened)
				}
				if rec := env.postForm("/settings/webhook/remove", url.Values{"revision": {again}}); rec.Code != http.StatusSeeOther {
					t.Fatalf("removing again over what was shown = %d, want 303", rec.Code)
				}
				if got := storedWebhookURL(t, env); got != "" {
					t.Errorf("stored %q after removing again, want none", got)
				}
			})
		}
	})
}
