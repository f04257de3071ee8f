package handlers

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestJudgeFormErrorsBesideTheField: a refused value of the judge form is
// named beside its input, which points to the message with
// aria-describedby (QA: only "Not saved: ..." at the top), and a number
// that is not a number says to write decimals with a dot or a comma (a
// decimal comma is read: TestJudgeFormReadsDecimalComma). Timeout and "Slow above" have a help
// line each. A base URL without http:// or https:// ("localhost:11434/v1",
// which the browser's URL field lets through) is refused beside its field
// with the address to write (QA: it was saved, and every run failed).
func TestJudgeFormErrorsBesideTheField(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name, key, value string
			field, want      string
		}{
			{"price neither with a dot nor a comma", "price_input", "2;5", "judge-price-in", "is not a number of dollars (write decimals with a dot or a comma, e.g. 0.15 or 0,15"},
			{"price a thousand or one", "price_input", "1,000", "judge-price-in", "could be 1000 with a thousands separator or 1.000 with a decimal comma"},
			{"output price not a number", "price_output", "cheap", "judge-price-out", "“cheap” is not a number of dollars (write decimals with a dot or a comma, e.g. 0.15 or 0,15"},
			{"temperature a word", "temperature", "warm", "judge-temperature", "temperature “warm” is not a number (write decimals with a dot or a comma, e.g. 0.2 or 0,2"},
			{"temperature with a decimal comma out of range", "temperature", "2,5", "judge-temperature", "must be a number from 0 to 2"},
			{"top p too high", "top_p", "2", "judge-top-p", "at most 1"},
			{"timeout zero", "timeout_seconds", "0", "judge-timeout", "whole number of seconds"},
			{"slow threshold a word", "slow_seconds", "soon", "judge-slow", "“soon” is not a number (write decimals with a dot or a comma, e.g. 1.5 or 1,5"},
			{"requests per minute negative", "requests_per_minute", "-3", "judge-rpm", "whole number, 0 or more"},
			{"context window a word", "context_tokens", "big", "judge-context", "whole number of tokens"},
			{"base URL without its scheme", "base_url", "api.openai.com/v1", "judge-base-url", "must start with http:// or https://: write https://api.openai.com/v1"},
			{"local base URL without its scheme", "base_url", "localhost:11434/v1", "judge-base-url", "write http://localhost:11434/v1"},
			{"base URL with a misspelt scheme", "base_url", "htps://api.openai.com/v1", "judge-base-url", "not htps://"},
		}
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				form := judgeFormValues(fmt.Sprintf("Judge %d", i), "http://127.0.0.1:1/v1", "", "")
				form.Set(tc.key, tc.value)
				rec := env.postForm("/judges", form)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				beside := regexp.MustCompile(`id="` + tc.field + `-error"[^>]*>\s*<p[^>]*>([^<]*)<`).FindStringSubmatch(body)
				if beside == nil || !strings.Contains(html.UnescapeString(beside[1]), tc.want) {
					t.Errorf("no message beside %s saying %q: %v", tc.field, tc.want, beside)
				}
				input := regexp.MustCompile(`<input[^>]*id="` + tc.field + `"[^>]*>`).FindString(body)
				if !regexp.MustCompile(`aria-describedby="[^"]*\b` + tc.field + `-error\b`).MatchString(input) {
					t.Errorf("input %s does not point to its message: %s", tc.field, input)
				}
				if !strings.Contains(body, `data-testid="form-error">Not saved: `) {
					t.Error("the top of the form no longer says the judge was not saved")
				}
			})
		}

		body := env.get("/judges/new").Body.String()
		for _, help := range []string{"judge-timeout-help", "judge-slow-help"} {
			id := strings.TrimSuffix(help, "-help")
			if !strings.Contains(body, `id="`+help+`"`) ||
				!regexp.MustCompile(`<input[^>]*id="`+id+`"[^>]*aria-describedby="`+help+`"`).MatchString(body) {
				t.Errorf("the new judge form has no help line %s tied to its input", help)
			}
		}
	})
}
