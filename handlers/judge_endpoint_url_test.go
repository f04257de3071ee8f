package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestJudgeSaveShortensAPastedEndpoint: a whole endpoint pasted as the
// base URL (Azure's .../openai/deployments/D/chat/completions?api-version=
// as its portal shows it, OpenAI's .../v1/chat/completions) was saved as
// typed, and every call then went to .../chat/completions/chat/completions
// and failed with 404 until Test connection named the fix. Saving now
// drops the suffix, keeping the query string, and says so: the form's
// saved message and the API's base_url_note, on creation and on update.
// A base URL without it is saved as typed, with no note.
func TestJudgeSaveShortensAPastedEndpoint(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct{ name, typed, saved, suffix string }{
			{"Azure deployment", "https://res1.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
				"https://res1.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21", "/chat/completions"},
			{"OpenAI", "https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1", "/chat/completions"},
			{"trailing slash", "https://llm.example/v1/chat/completions/", "https://llm.example/v1", "/chat/completions"},
			{"capitals", "https://llm.example/V1/Chat/Completions", "https://llm.example/V1", "/Chat/Completions"},
			{"legacy completions", "https://llm.example/v1/completions", "https://llm.example/v1", "/completions"},
			{"base URL", "https://llm.example/v1", "https://llm.example/v1", ""},
			{"base URL with a query", "https://res1.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21",
				"https://res1.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21", ""},
		}
		wantNote := func(tc struct{ name, typed, saved, suffix string }) string {
			return fmt.Sprintf("The base URL ended in %s, which every call adds itself: it was shortened to %s.", tc.suffix, tc.saved)
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				// The form, creating and then updating (from another address).
				name := "endpoint form judge " + itoa(int64(i))
				rec := env.postForm("/judges", judgeFormValues(name, tc.typed, "", ""))
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("form: %d %.400s, want 303", rec.Code, rec.Body)
				}
				j, ok := env.judgeNamed(name)
				if !ok || j.BaseURL != tc.saved {
					t.Fatalf("form saved base URL %q, want %q", j.BaseURL, tc.saved)
				}
				flash := flashText(t, rec)
				if tc.suffix != "" && !strings.Contains(flash, wantNote(tc)) {
					t.Errorf("form's saved message %q lacks %q", flash, wantNote(tc))
				}
				if tc.suffix == "" && strings.Contains(flash, "shortened") {
					t.Errorf("form's saved message %q speaks of shortening an address that was not", flash)
				}
				if err := env.db.Gorm.Exec("UPDATE judges SET base_url = ? WHERE id = ?", "https://other.example/v1", j.ID).Error; err != nil {
					t.Fatal(err)
				}
				rec = env.postForm(fmt.Sprintf("/judges/%d", j.ID), judgeFormValues(name, tc.typed, "", ""))
				if j, _ = env.judgeNamed(name); rec.Code != http.StatusSeeOther || j.BaseURL != tc.saved {
					t.Errorf("form update: %d, base URL %q, want 303 and %q", rec.Code, j.BaseURL, tc.saved)
				}
				if flash := flashText(t, rec); tc.suffix != "" && !strings.Contains(flash, wantNote(tc)) {
					t.Errorf("form update's saved message %q lacks %q", flash, wantNote(tc))
				}

				// The API, creating and then updating.
				body, _ := json.Marshal(map[string]any{"name": "endpoint api judge " + itoa(int64(i)), "base_url": tc.typed, "model": "m"})
				rec = env.do(http.MethodPost, "/api/v1/judges", bytes.NewReader(body), echo.MIMEApplicationJSON)
				var created APIJudge
				if err := json.Unmarshal(rec.Body.Bytes(), &created); rec.Code != http.StatusCreated || err != nil {
					t.Fatalf("API: %d %.400s, want 201", rec.Code, rec.Body)
				}
				if tc.suffix == "" {
					wantNoteAPI(t, "API create", created, tc.saved, "")
				} else {
					wantNoteAPI(t, "API create", created, tc.saved, wantNote(tc))
				}
				rec = env.do(http.MethodPut, fmt.Sprintf("/api/v1/judges/%d", created.ID), bytes.NewReader(body), echo.MIMEApplicationJSON)
				var updated APIJudge
				if err := json.Unmarshal(rec.Body.Bytes(), &updated); rec.Code != http.StatusOK || err != nil {
					t.Fatalf("API update: %d %.400s, want 200", rec.Code, rec.Body)
				}
				if tc.suffix == "" {
					wantNoteAPI(t, "API update", updated, tc.saved, "")
				} else {
					wantNoteAPI(t, "API update", updated, tc.saved, wantNote(tc))
				}
				// Read back, the note is not repeated: it says what one save did.
				var read APIJudge
				_ = json.Unmarshal(env.get(fmt.Sprintf("/api/v1/judges/%d", created.ID)).Body.Bytes(), &read)
				wantNoteAPI(t, "API read", read, tc.saved, "")
			})
		}
	})
}

func wantNoteAPI(t *testing.T, what string, j APIJudge, baseURL, note string) {
	t.Helper()
	if j.BaseURL != baseURL || j.BaseURLNote != note {
		t.Errorf("%s: base_url %q, base_url_note %q; want %q and %q", what, j.BaseURL, j.BaseURLNote, baseURL, note)
	}
}
