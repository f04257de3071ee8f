package models

import "testing"

func TestKeyFromEnv(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-1", "DATABASE_URL": "postgres://secret", "HF_TOKEN": "hf", "BATCHEVAL_API_KEY": "x"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"OPENAI_API_KEY", "sk-1", true},
		{"HF_TOKEN", "hf", true},
		{"", "", true},
		{"DATABASE_URL", "", false},
		{"HOME", "", false},
		{"openai_api_key", "", false},
		{"BATCHEVAL_API_KEY", "", false},
		{"X_KEY; rm", "", false},
	} {
		got, err := KeyFromEnv(getenv, tc.name)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("KeyFromEnv(%q) = %q, %v; want %q, ok=%v", tc.name, got, err, tc.want, tc.ok)
		}
	}
}
