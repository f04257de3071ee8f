package models

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// KeyVarsSetting is the environment variable in which the operator lists,
// comma-separated, the environment variables a judge may read its API key
// from (e.g. "OPENAI_API_KEY,OPENROUTER_API_KEY").
//
// Unset, the list is empty: no judge reads a key from the environment. A
// judge's key is sent to a URL the person editing the judge chooses, so
// every variable a judge may name is a variable anyone who can edit judges
// can read. That must be an operator's deliberate choice, name by name,
// never a pattern such as *_KEY (which matched AWS_SECRET_ACCESS_KEY...).
const KeyVarsSetting = "BATCHEVAL_JUDGE_KEY_VARS"

// envName is the shape of a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedKeyVar reports names that hold the server's own settings and
// secrets, which no list may hand to a judge.
func reservedKeyVar(name string) bool {
	return strings.HasPrefix(name, "BATCHEVAL_") || name == "DATABASE_URL" || name == "TEST_DATABASE_URL"
}

// ParseKeyVars reads the operator's list (the value of KeyVarsSetting),
// refusing names that are malformed or that hold the server's own settings.
func ParseKeyVars(list string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			continue
		case !envName.MatchString(n):
			return nil, fmt.Errorf("%s: %q is not an environment variable name", KeyVarsSetting, n)
		case reservedKeyVar(n):
			return nil, fmt.Errorf("%s: %q holds one of the server's own settings, not a judge's API key", KeyVarsSetting, n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// ValidateKeyEnv reports whether a judge may read its key from the
// environment variable name: only names listed in KeyVarsSetting (read
// through getenv) are allowed; "" (no variable) always is.
func ValidateKeyEnv(getenv func(string) string, name string) error {
	if name == "" {
		return nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	allowed, err := ParseKeyVars(getenv(KeyVarsSetting))
	if err != nil {
		return Errorf(EInvalid, "the server's list of key variables is broken: %v", err)
	}
	if !slices.Contains(allowed, name) {
		listed := "it lists none"
		if len(allowed) > 0 {
			listed = "it lists " + strings.Join(allowed, ", ")
		}
		return Errorf(EInvalid, "the key variable %q is not allowed: the server's operator must list it in %s first (%s); or store the key with the judge instead", name, KeyVarsSetting, listed)
	}
	return nil
}

// KeyFromEnv reads a judge's API key from the environment variable it
// names, refusing names the operator has not listed (see ValidateKeyEnv).
func KeyFromEnv(getenv func(string) string, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if err := ValidateKeyEnv(getenv, name); err != nil {
		return "", err
	}
	return getenv(name), nil
}

// errKeyEnvOutsideDefault refuses a key variable to a judge of a workspace
// other than the default one (KeyEnvAllowedIn).
var errKeyEnvOutsideDefault = Errorf(EInvalid, "a judge reads its key from the server's environment ("+KeyVarsSetting+
	") only in the default workspace, which the server's operator set up: anyone signed in can make a workspace of their own, "+
	"and the operator's key would go wherever its judges point. Store the key with the judge instead (API key)")

// KeyEnvAllowedIn reports whether judges of workspace wsID may read their
// key from an environment variable: only the default workspace's. The
// variables are the operator's, and anyone signed in can make a workspace
// of their own and own it: outside the default workspace a key variable
// would hand the operator's key to the endpoint of anyone's choosing.
func (db *DB) KeyEnvAllowedIn(ctx context.Context, wsID int64) error {
	var ws Workspace
	if err := db.Reader(ctx).Select("id", "slug").Where("id = ?", wsID).First(&ws).Error; err != nil {
		return notFound(err, "workspace", wsID)
	}
	if ws.Slug != DefaultWorkspaceSlug {
		return errKeyEnvOutsideDefault
	}
	return nil
}
