package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRunSaysWhenItsRunIsPaused: a `batcheval run` whose run is paused
// from the dashboard while it waits says so, with how to continue it, and
// exits with its own status. It used to wait on silently for a run that
// only a Continue in the dashboard moves on (and then on the dashboard's
// workers, not this process).
func TestRunSaysWhenItsRunIsPaused(t *testing.T) {
	// Slow answers: the run is still going when it is paused.
	sim, err := simjudge.Start(simjudge.Options{Seed: 4, Latency: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	dsn := dbtest.DSN(t, models.SQLite)
	env := func(k string) string {
		return map[string]string{"BATCHEVAL_DB": dsn, "BATCHEVAL_LOG_LEVEL": "warn", "BATCHEVAL_JUDGE_ALLOW_LOOPBACK": "true", "BATCHEVAL_LEASE": "2s"}[k]
	}
	data, rubric := faultData(t, 40)
	args := []string{"run", "--data", data, "--rubric", rubric, "--judge-url", sim.URL, "--model", "m",
		"--rounds", "1", "--batch-size", "5", "--concurrency", "1"}
	var stdout, stderr bytes.Buffer
	ended := make(chan error, 1)
	go func() { ended <- run(context.Background(), args, env, &stdout, &stderr) }()

	db := openDSN(t, dsn)
	running := theRun(t, db, 30*time.Second, func(r models.Run) bool { return r.Status == models.RunRunning && r.BatchesDone >= 1 })
	if _, err := db.RequestPause(context.Background(), running.WorkspaceID, running.ID); err != nil {
		t.Fatalf("pause: %v", err)
	}
	var runErr error
	select {
	case runErr = <-ended:
	case <-time.After(30 * time.Second):
		t.Fatalf("batcheval run still waits 30 s after its run was paused; stderr:\n%s", stderr.String())
	}
	paused := theRun(t, db, 10*time.Second, models.Run.Paused)
	if got := exitStatus(runErr); got != exitPaused || got == 0 || got == 1 {
		t.Errorf("exit status %d (%v), want %d (neither success nor another failure)", got, runErr, exitPaused)
	}
	for _, want := range []string{
		fmt.Sprintf("run %d was paused", paused.ID),
		"press Continue on the run's page",
		fmt.Sprintf("POST /api/v1/runs/%d/continue", paused.ID),
	} {
		if !strings.Contains(fmt.Sprint(runErr), want) {
			t.Errorf("error %q lacks %q", runErr, want)
		}
	}
	if paused.BatchesDone >= paused.BatchesTotal {
		t.Errorf("the paused run has %d of %d batches: it was meant to pause halfway", paused.BatchesDone, paused.BatchesTotal)
	}
}
