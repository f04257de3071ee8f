package models

import (
	"regexp"
	"strings"
)

// keyEnvName is what a judge's key variable may be called: an upper-case
// environment name ending in _KEY or _TOKEN (OPENAI_API_KEY,
// OPENROUTER_API_KEY, HF_TOKEN...). The dashboard lets people name the
// variable, and the key is sent to a URL they also choose: without this
// rule anyone with the dashboard could read DATABASE_URL or any other
// secret of the server by naming it and pointing the judge at themselves.
var keyEnvName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*(_KEY|_TOKEN)$`)

// ValidateKeyEnv reports whether name may be used as a judge's key variable.
func ValidateKeyEnv(name string) error {
	switch {
	case name == "":
		return nil
	case !keyEnvName.MatchString(name):
		return Errorf(EInvalid, "the key variable %q is not allowed: use an upper-case name ending in _KEY or _TOKEN, such as OPENAI_API_KEY", name)
	case strings.HasPrefix(name, "BATCHEVAL_"):
		return Errorf(EInvalid, "the key variable %q is one of the server's own settings, not an API key", name)
	}
	return nil
}

// KeyFromEnv reads a judge's API key from the environment variable it
// names, refusing names that are not key variables (see ValidateKeyEnv).
func KeyFromEnv(getenv func(string) string, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if err := ValidateKeyEnv(name); err != nil {
		return "", err
	}
	return getenv(name), nil
}
