package models

import (
	"strings"
	"testing"
)

// TestKeyFromEnv: only the names the operator lists in
// BATCHEVAL_JUDGE_KEY_VARS can be read, whatever they look like; a name
// that merely looks like a key (the old *_KEY pattern) is refused.
func TestKeyFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY": "sk-1", "DATABASE_URL": "postgres://secret", "HF_TOKEN": "hf",
		"AWS_SECRET_ACCESS_KEY": "aws", "GITHUB_TOKEN": "gh", "MY_LLM": "llm",
	}
	for _, tc := range []struct {
		list, name, want string
		ok               bool
		msg              string // part of the refusal
	}{
		{"OPENAI_API_KEY", "OPENAI_API_KEY", "sk-1", true, ""},
		{" OPENAI_API_KEY , MY_LLM ", "MY_LLM", "llm", true, ""},
		{"", "", "", true, ""},
		{"", "OPENAI_API_KEY", "", false, "it lists none"},
		{"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "", false, "must list it in BATCHEVAL_JUDGE_KEY_VARS"},
		{"OPENAI_API_KEY", "GITHUB_TOKEN", "", false, "it lists OPENAI_API_KEY"},
		{"OPENAI_API_KEY", "HF_TOKEN", "", false, "not allowed"},
		{"OPENAI_API_KEY", "DATABASE_URL", "", false, "not allowed"},
		{"DATABASE_URL", "DATABASE_URL", "", false, "server's own settings"},
		{"BATCHEVAL_SECRET_KEY", "BATCHEVAL_SECRET_KEY", "", false, "server's own settings"},
	} {
		getenv := func(k string) string {
			if k == KeyVarsSetting {
				return tc.list
			}
			return env[k]
		}
		got, err := KeyFromEnv(getenv, tc.name)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("list %q: KeyFromEnv(%q) = %q, %v; want %q, ok=%v", tc.list, tc.name, got, err, tc.want, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(ErrorMessage(err), tc.msg) {
			t.Errorf("list %q: KeyFromEnv(%q) says %q, want it to mention %q", tc.list, tc.name, ErrorMessage(err), tc.msg)
		}
	}
}

func TestParseKeyVars(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{"A_KEY,B,A_KEY", []string{"A_KEY", "B"}, true},
		{"X; rm -rf", nil, false},
		{"BATCHEVAL_ADDR", nil, false},
	} {
		got, err := ParseKeyVars(tc.list)
		if (err == nil) != tc.ok || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ParseKeyVars(%q) = %v, %v; want %v ok=%v", tc.list, got, err, tc.want, tc.ok)
		}
	}
}
