package handlers

import (
	"os"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// TestMain opts this package's tests in to judges on loopback (their fake
// endpoints and the simulated judge listen on 127.0.0.1): the judge
// package refuses loopback addresses until a policy says otherwise, as a
// command does from the operator's settings. Password hashes cost the
// least argon2id allows here (a few hundred accounts are made and signed
// in); models' TestPasswordHash checks the production parameters.
func TestMain(m *testing.M) {
	judge.SetEgress(judge.Egress{AllowLoopback: true})
	models.CheapPasswordHashesInTests()
	os.Exit(m.Run())
}
