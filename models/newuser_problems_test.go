package models_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestNewUserProblems (forms45): every refused field of a new account is
// named at once, each with its own message, so a form can show them all
// beside their fields; a good account has none.
func TestNewUserProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    models.NewUser
		want map[string]string // field: part of its message
	}{
		{"all fine", models.NewUser{Email: " Ada@A.test ", Name: "Ada", Password: "a long passphrase"}, nil},
		{"address and password", models.NewUser{Email: "ada", Name: "Ada", Password: "short"},
			map[string]string{"email": `"ada" is not an email address`, "password": "at least 10 characters"}},
		{"all three", models.NewUser{Email: "a b@c.d", Name: "  ", Password: strings.Repeat("x", models.MaxPasswordLen+1)},
			map[string]string{"email": "is not an email address", "name": "a name is needed", "password": "too long"}},
		{"name on two lines", models.NewUser{Email: "ada@a.test", Name: "Ada\nLovelace", Password: "a long passphrase"},
			map[string]string{"name": "line"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.n.Problems()
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want))) {
				t.Fatalf("problems %v, want fields %v", got, slices.Sorted(maps.Keys(tc.want)))
			}
			for f, w := range tc.want {
				if !strings.Contains(got[f], w) {
					t.Errorf("%s: %q, want %q", f, got[f], w)
				}
			}
		})
	}
}
