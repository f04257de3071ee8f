package main

import (
	"os"
	"strings"
	"testing"
)

// TestMakeRunStampsTheVersion: `make run` builds with the version stamp
// `make build` uses, so the reports of a newcomer's runs name the commit
// they came from (they said "product version: dev": `go run` records no
// version of its own).
func TestMakeRunStampsTheVersion(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "run:") {
			continue
		}
		for _, recipe := range lines[i+1:] {
			if !strings.HasPrefix(recipe, "\t") {
				break
			}
			if strings.Contains(recipe, " run ") && strings.Contains(recipe, "./cmd/batcheval") {
				if !strings.Contains(recipe, `-ldflags "$(LDFLAGS)"`) {
					t.Errorf("make run builds without the version stamp: %q", recipe)
				}
				return
			}
		}
	}
	t.Fatal("no run target that runs ./cmd/batcheval in the Makefile")
}
