package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestJudgeFormNamesEveryFieldError: the judge form named one invalid
// value a save (regression: base URL localhost:11434/v1 and temperature
// 0,2 together flagged only the temperature; fixing it showed the base
// URL's error on the next save). Every field is checked and every error
// is shown at once, each beside its input and named at the top; nothing
// is saved. One error alone reads as before.
func TestJudgeFormNamesEveryFieldError(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		existing := judgeFormValues("Existing judge", "https://llm.example/v1", "", "")
		if rec := env.postForm("/judges", existing); rec.Code != http.StatusSeeOther {
			t.Fatalf("create the judge to edit = %d", rec.Code)
		}
		j, _ := env.judgeNamed("Existing judge")
		for _, tc := range []struct {
			name, path string
			set        map[string]string
			// want is each field's id and a part of its message.
			want map[string]string
			// wantTop is in the top message; notTop must not be.
			wantTop, notTop string
		}{
			{name: "scheme left off and a decimal comma", path: "/judges",
				set:     map[string]string{"name": "Local", "base_url": "localhost:11434/v1", "temperature": "warm"},
				want:    map[string]string{"judge-base-url": "write http://localhost:11434/v1", "judge-temperature": "write decimals with a dot or a comma, e.g. 0.2 or 0,2"},
				wantTop: "2 values need correcting"},
			{name: "no name, no model, and bad numbers and limits", path: "/judges",
				set: map[string]string{"name": "", "model": "", "top_p": "2", "timeout_seconds": "0", "price_input": "<b>1</b>", "max_concurrency": "100", "requests_per_minute": "many", "slow_seconds": "soon", "context_tokens": "8k"},
				want: map[string]string{"judge-name": "needs a name", "judge-model": "needs a model name", "judge-top-p": "Top p must be", "judge-timeout": "timeout must be",
					"judge-price-in": "“&lt;b&gt;1&lt;/b&gt;” is not a number", "judge-concurrency": "from 1 to 64", "judge-rpm": "requests per minute must be",
					"judge-slow": "write decimals with a dot or a comma, e.g. 1.5 or 1,5", "judge-context": "“8k” is not a whole number"},
				wantTop: "9 values need correcting"},
			{name: "editing: both errors", path: fmt.Sprintf("/judges/%d", j.ID),
				set:     map[string]string{"name": "Existing judge", "base_url": "localhost:11434/v1", "temperature": "warm"},
				want:    map[string]string{"judge-base-url": "write http://localhost:11434/v1", "judge-temperature": "write decimals with a dot or a comma, e.g. 0.2 or 0,2"},
				wantTop: "2 values need correcting"},
			{name: "one error reads as before", path: "/judges",
				set:     map[string]string{"name": "One", "temperature": "warm"},
				want:    map[string]string{"judge-temperature": "write decimals with a dot or a comma, e.g. 0.2 or 0,2"},
				wantTop: "Not saved: the temperature “warm” is not a number", notTop: "need correcting"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				form := judgeFormValues("", "https://llm.example/v1", "", "")
				for k, v := range tc.set {
					form.Set(k, v)
				}
				rec := env.postForm(tc.path, form)
				body := rec.Body.String()
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("save = %d, want 422: %.400s", rec.Code, body)
				}
				if n := strings.Count(body, `class="field-error"`); n != len(tc.want) {
					t.Errorf("%d field errors shown, want %d", n, len(tc.want))
				}
				for id, part := range tc.want {
					input := strings.Index(body, `id="`+id+`"`)
					msg := strings.Index(body, `data-testid="field-error-`+id+`"`)
					if input < 0 || msg < input || strings.Contains(body[input:msg], "<label") {
						t.Errorf("no error beside %s (input at %d, error at %d)", id, input, msg)
						continue
					}
					line := body[msg:]
					line = line[:strings.Index(line, "</p>")]
					if !strings.Contains(line, part) {
						t.Errorf("%s's error %q lacks %q", id, line, part)
					}
					if !strings.Contains(body[input:msg], id+"-error") {
						t.Errorf("%s is not described by its error", id)
					}
				}
				top := body[strings.Index(body, `data-testid="form-error"`):]
				top = top[:strings.Index(top, "</p>")]
				if !strings.Contains(top, tc.wantTop) || (tc.notTop != "" && strings.Contains(top, tc.notTop)) {
					t.Errorf("top message %q: want %q, not %q", top, tc.wantTop, tc.notTop)
				}
				if strings.Contains(body, "<b>1</b>") {
					t.Errorf("a typed value is shown unescaped")
				}
			})
		}
		if _, ok := env.judgeNamed("Local"); ok {
			t.Errorf("a judge with invalid values was saved")
		}
		if got, _ := env.judgeNamed("Existing judge"); got.BaseURL != "https://llm.example/v1" || got.Temperature != 0.2 {
			t.Errorf("the edited judge changed: %q, %v", got.BaseURL, got.Temperature)
		}
	})
}
