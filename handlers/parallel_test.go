package handlers

import (
	"strings"
	"sync"
	"testing"
)

// Most of this package's tests wait: for a run on the simulated judge, for
// the runner's poll, for PostgreSQL's round trips. So a top-level test
// that calls eachDB runs in parallel with the others (see parallelTest),
// each on databases and a server of its own; `go test -parallel` (one per
// core by default) bounds how many at once. Eight at once on two loaded
// cores made one test 80 times slower and the package slower as a whole
// (BENCHMARKS.md, tests44).
//
// A test that changes state shared by the whole package (a package-level
// variable, an environment variable, the default HTTP client) must say so
// with serialTest before it calls eachDB: it then runs alone, as before.
// A test that called t.Setenv first stays serial by itself.

// testMode remembers, per top-level test, whether it was made parallel or
// declared serial, so that a second eachDB in one test is harmless.
var testMode sync.Map // *testing.T -> string

// serialTest keeps t out of the parallel tests: call it first in a test
// that changes package-level state (and say which in a comment).
func serialTest(t *testing.T) {
	t.Helper()
	if mode, _ := testMode.Load(t); mode == "parallel" {
		t.Fatal("serialTest called after the test already runs in parallel: call it first")
	}
	testMode.Store(t, "serial")
	t.Cleanup(func() { testMode.Delete(t) })
}

// parallelTest marks t parallel unless it is a subtest (its siblings may
// share the parent's variables), was declared serial, is parallel already,
// or used t.Setenv (which the testing package refuses to mix with
// t.Parallel: its panic, raised before anything changes, is recovered).
func parallelTest(t *testing.T) {
	t.Helper()
	if strings.Contains(t.Name(), "/") {
		return
	}
	if _, seen := testMode.LoadOrStore(t, "parallel"); seen {
		return
	}
	t.Cleanup(func() { testMode.Delete(t) })
	defer func() {
		if r := recover(); r != nil {
			msg, _ := r.(string)
			if !strings.Contains(msg, "t.Parallel") && !strings.Contains(msg, "Setenv") && !strings.Contains(msg, "Chdir") {
				panic(r)
			}
			testMode.Store(t, "serial")
		}
	}()
	t.Parallel()
}
