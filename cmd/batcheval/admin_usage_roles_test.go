package main

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAdminUsageNamesEveryRole: create-user's usage lists every role an
// account can be given (it left out reviewer when that role came).
func TestAdminUsageNamesEveryRole(t *testing.T) {
	var names []string
	for _, r := range models.Roles {
		names = append(names, string(r))
	}
	line := ""
	for _, l := range strings.Split(adminUsage, "\n") {
		if strings.Contains(l, "create-user") && strings.Contains(l, "--role") {
			line = l
		}
	}
	for _, name := range names {
		if !strings.Contains(line, name) {
			t.Errorf("create-user's usage %q does not name the role %q", line, name)
		}
	}
}
