package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestResumeCommand: `batcheval run` ends with a batch the judge refused;
// `batcheval resume RUN_ID` sends that batch only, and the run is complete.
func TestResumeCommand(t *testing.T) {
	dsn := dbtest.DSN(t, models.SQLite)
	var refusing atomic.Bool
	refusing.Store(true)
	var mu sync.Mutex
	target := ""
	fj := newFaultJudge(t, func(w http.ResponseWriter, r *http.Request, n int, rq request) bool {
		mu.Lock()
		if target == "" && !rq.probe {
			target = rq.key
		}
		hit := rq.key == target
		mu.Unlock()
		if hit && refusing.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"error":{"message":"refused"}}`)
			return true
		}
		return false
	})
	env := func(k string) string {
		return map[string]string{"BATCHEVAL_DB": dsn, "BATCHEVAL_LOG_LEVEL": "warn"}[k]
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), runArgs(t, fj.URL()), env, &out, &errOut); err != nil {
		t.Fatalf("batcheval run: %v\n%s", err, errOut.String())
	}
	db := openDSN(t, dsn)
	first := theRun(t, db, 0, models.Run.Finished)
	if first.BatchesFailed != 1 || !first.Resumable() {
		t.Fatalf("first pass: %d failed batches, resumable %v; want one gap", first.BatchesFailed, first.Resumable())
	}
	refusing.Store(false)
	sentBefore := len(fj.requests(false))
	out.Reset()
	if err := run(context.Background(), []string{"resume", fmt.Sprint(first.ID)}, env, &out, &errOut); err != nil {
		t.Fatalf("batcheval resume: %v\n%s", err, errOut.String())
	}
	if want := fmt.Sprintf("run %d succeeded: %d/%d batches, 0 failed, 0 scores missing", first.ID, faultBatches, faultBatches); !strings.Contains(out.String(), want) {
		t.Errorf("resume printed %q, want %q", out.String(), want)
	}
	if sent := len(fj.requests(false)) - sentBefore; sent != 1 {
		t.Errorf("resume sent %d requests, want 1 (the gap)", sent)
	}
	wantComplete(t, theRun(t, db, 0, models.Run.Finished))
	if err := run(context.Background(), []string{"resume", fmt.Sprint(first.ID)}, env, &out, &errOut); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resume of a complete run: %v, want it refused", err)
	}
}
