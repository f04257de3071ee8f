package paper

import (
	"os"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestMain opts this package's tests in to judges on loopback (their fake
// endpoints and the simulated judge listen on 127.0.0.1): the judge
// package refuses loopback addresses until a policy says otherwise, as a
// command does from the operator's settings.
func TestMain(m *testing.M) {
	judge.SetEgress(judge.Egress{AllowLoopback: true})
	os.Exit(m.Run())
}
