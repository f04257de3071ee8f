package handlers

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// judgeFormNodes parses a judge form page into its elements by id.
func judgeFormNodes(t *testing.T, body string) map[string]*html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*html.Node{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if id := judgeAttr(n, "id"); id != "" {
				if _, dup := byID[id]; dup {
					t.Errorf("id %q is used twice", id)
				}
				byID[id] = n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return byID
}

func judgeAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func judgeNodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// judgeFormInputs are the ids of the judge form's inputs whose value the
// save can refuse (handlers' judgeFieldErrorf and judgeFieldError).
var judgeFormInputs = []string{
	"judge-name", "judge-base-url", "judge-model", "judge-key-header", "judge-token-limit",
	"judge-reasoning-effort", "judge-temperature", "judge-top-p", "judge-timeout", "judge-context",
	"judge-price-in", "judge-price-out", "judge-shared-concurrency", "judge-rpm", "judge-tpm",
	"judge-slow", "judge-concurrency",
}

// TestJudgeFormRefusedFieldIsInvalidAndTied: each value the judge form
// refuses marks its input aria-invalid="true" (regression: the judge form
// had its own copy of the field-error markup, which never set it, unlike
// every other form) and ties it by aria-describedby to the message beside
// it, keeping its help line; no other input is marked; the typed value is
// kept, escaped; every id aria-describedby names exists.
func TestJudgeFormRefusedFieldIsInvalidAndTied(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for i, tc := range []struct {
			key, typed, field string
			// help is the input's help line, still named (""; none).
			help, want string
			// kept: the input shows the typed value back (a select
			// shows its choices instead).
			kept bool
		}{
			{"name", "", "judge-name", "", "needs a name", true},
			{"base_url", "<b>x</b>.example/v1", "judge-base-url", "", "must start with http:// or https://", true},
			{"model", "", "judge-model", "", "needs a model name", true},
			{"key_header", "x-api-key", "judge-key-header", "judge-key-header-help", "bearer", false},
			{"token_limit", "max_output_tokens", "judge-token-limit", "judge-reasoning-help", "max_completion_tokens", false},
			{"reasoning_effort", "<b>x</b>", "judge-reasoning-effort", "judge-reasoning-help", "low, medium and high", false},
			{"temperature", "<b>warm</b>", "judge-temperature", "judge-temperature-help", "is not a number", true},
			{"top_p", "2", "judge-top-p", "judge-top-p-help", "at most 1", true},
			{"timeout_seconds", "0", "judge-timeout", "judge-timeout-help", "whole number of seconds", true},
			{"context_tokens", "<i>8k</i>", "judge-context", "judge-context-help", "is not a whole number of tokens", true},
			{"price_input", "<b>1</b>", "judge-price-in", "judge-price-help", "is not a number of dollars", true},
			{"price_output", "cheap & good", "judge-price-out", "judge-price-help", "is not a number of dollars", true},
			{"shared_concurrency", "-1", "judge-shared-concurrency", "", "whole number, 0 or more", true},
			{"requests_per_minute", "many", "judge-rpm", "", "whole number, 0 or more", true},
			{"tokens_per_minute", "-5", "judge-tpm", "", "whole number, 0 or more", true},
			{"slow_seconds", "<b>soon</b>", "judge-slow", "judge-slow-help", "is not a number", true},
			{"max_concurrency", "100", "judge-concurrency", "judge-concurrency-help", "from 1 to 64", true},
		} {
			t.Run(tc.field, func(t *testing.T) {
				form := judgeFormValues(fmt.Sprintf("Invalid %d", i), "https://llm.example/v1", "", "")
				form.Set(tc.key, tc.typed)
				rec := env.postForm("/judges", form)
				body := rec.Body.String()
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("save = %d, want 422: %.300s", rec.Code, body)
				}
				if strings.Contains(body, "<b>") || strings.Contains(body, "<i>8k") {
					t.Errorf("a typed value is shown unescaped")
				}
				nodes := judgeFormNodes(t, body)
				for _, id := range judgeFormInputs {
					in := nodes[id]
					if in == nil {
						t.Fatalf("no input %s", id)
					}
					invalid := judgeAttr(in, "aria-invalid")
					if id != tc.field {
						if invalid != "" {
							t.Errorf("%s is marked aria-invalid=%q though only %s was refused", id, invalid, tc.field)
						}
						continue
					}
					if invalid != "true" {
						t.Errorf("%s: aria-invalid=%q, want \"true\"", id, invalid)
					}
					described := strings.Fields(judgeAttr(in, "aria-describedby"))
					if !slices.Contains(described, id+"-error") {
						t.Errorf("%s: aria-describedby %q does not name %s-error", id, described, id)
					}
					if tc.help != "" && !slices.Contains(described, tc.help) {
						t.Errorf("%s: aria-describedby %q lost its help line %s", id, described, tc.help)
					}
					for _, ref := range described {
						if nodes[ref] == nil {
							t.Errorf("%s: aria-describedby names %s, which is not on the page", id, ref)
						}
					}
					msg := nodes[id+"-error"]
					if msg == nil {
						t.Fatalf("no message %s-error", id)
					}
					if got := judgeNodeText(msg); !strings.Contains(got, tc.want) {
						t.Errorf("%s's message %q lacks %q", id, got, tc.want)
					}
					if tc.kept && judgeAttr(in, "value") != tc.typed {
						t.Errorf("%s shows %q, want the typed %q kept", id, judgeAttr(in, "value"), tc.typed)
					}
				}
			})
		}
	})
}
