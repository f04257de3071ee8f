package main

// SQLite's disk full or made read-only under a running `batcheval run`:
// the answers the judge has already given (paid for) must be stored once
// the disk takes writes again, or at least counted, never dropped
// silently; and the run must say what happened.

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// smallDisk is a small file system of the test's own (tmpfs), which it can
// fill or make read-only. It needs root (mount); skipped otherwise.
type smallDisk struct {
	t   *testing.T
	dir string
}

func newSmallDisk(t *testing.T, size string) *smallDisk {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system here (needs root): %v %s", err, bytes.TrimSpace(out))
	}
	// Registered before the processes are started, so it runs after they
	// are killed.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v %s", dir, err, out)
		}
	})
	return &smallDisk{t: t, dir: dir}
}

// fill writes a file until the disk is full.
func (d *smallDisk) fill() {
	d.t.Helper()
	f, err := os.Create(filepath.Join(d.dir, "filler"))
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				d.t.Fatalf("fill the disk: %v", err)
			}
			// The last few bytes too, so no page fits.
			for _, n := range []int{4096, 512, 1} {
				for {
					if _, err := f.Write(chunk[:n]); err != nil {
						break
					}
				}
			}
			return
		}
	}
}

func (d *smallDisk) free() {
	d.t.Helper()
	if err := os.Remove(filepath.Join(d.dir, "filler")); err != nil {
		d.t.Fatal(err)
	}
}

func (d *smallDisk) remount(opt string) {
	d.t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+opt, d.dir).CombinedOutput(); err != nil {
		d.t.Fatalf("remount %s: %v %s", opt, err, out)
	}
}

// TestFaultSQLiteDiskFull: the SQLite file's disk fills up with judge
// calls out, and space is freed a while later: shorter than the writes'
// retries (--db-retry-for), and longer. Either way the run finishes
// complete and asks the judge once per batch: an answer that came back
// while the disk was full is stored once it has room, not asked again.
// Before, past the retries that answer was dropped, and the run's resume
// paid for it a second time (17 requests for 16 batches, 16 counted).
func TestFaultSQLiteDiskFull(t *testing.T) {
	binary(t)
	cases := []struct {
		name     string
		retryFor string
		hold     time.Duration
		kept     bool // the answer outlived the retries: kept, then stored
	}{
		// Longer than the lease (2 s): its renewals cannot be written, so
		// the run is paused and resumed by the same process once the
		// disk has room. Its job used to be moved to the shared queue
		// meanwhile, where `batcheval run` never took it again.
		{"shorter than the retries", "30s", faultLease + 500*time.Millisecond, false},
		{"longer than the retries", "500ms", faultLease, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			disk := newSmallDisk(t, "32m")
			dsn := filepath.Join(disk.dir, "batcheval.db")
			var flight inFlight
			var fj *faultJudge
			fj = newFaultJudge(t, func(w http.ResponseWriter, r *http.Request, n int, rq request) bool {
				flight.add("", 1)
				defer flight.add("", -1)
				fj.inner.ServeHTTP(w, r)
				return true
			})
			db := openDSN(t, dsn)
			cli := startWith(t, "run", dsn, []string{"BATCHEVAL_DB_RETRY_FOR=" + tc.retryFor}, runArgs(t, fj.URL())...)
			theRun(t, db, 60*time.Second, func(r models.Run) bool { return r.BatchesDone >= 3 })
			// Filled with calls out: their answers come back to a full disk.
			waitInFlight(t, &flight, "")
			disk.fill()
			time.Sleep(tc.hold)
			disk.free()
			if err := cli.wait(60 * time.Second); err != nil {
				t.Errorf("batcheval run through a full disk: %v", err)
			}
			run := theRun(t, db, time.Second, models.Run.Finished)
			wantComplete(t, run)
			sent := len(fj.requests(false))
			t.Logf("run: calls %d, retries %d; the judge saw %d requests", run.Calls, run.Retries, sent)
			for key, n := range fj.batchRequests() {
				if n != 1 {
					t.Errorf("batch %s requested %d times, want 1: an answer paid for while the disk was full was asked again", key, n)
				}
			}
			if run.Calls != sent {
				t.Errorf("run counts %d calls, the judge answered %d requests", run.Calls, sent)
			}
			// The operator's log says what happened to the answer.
			out := cli.out.String()
			if tc.kept && (!strings.Contains(out, "kept to store again before the run resumes") || !strings.Contains(out, "stored judge answers kept through a database outage")) {
				t.Errorf("the log does not say that an answer was kept through the full disk and stored after:\n%s", out)
			}
		})
	}
}
