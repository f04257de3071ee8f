package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRunSpendCapFlagIsChecked: `batcheval run --spend-cap-usd` takes a
// positive amount of US dollars and a judge with prices; anything else is
// refused naming the flag, before anything is stored.
func TestRunSpendCapFlagIsChecked(t *testing.T) {
	data, rubric := faultData(t, 4)
	judge := []string{"--judge-url", "http://127.0.0.1:9/v1", "--model", "m"}
	cases := []struct {
		name      string
		cap       string
		extra     []string
		wantParts []string
	}{
		{"zero", "0", append(judge, "--prices", "m=3:15"), []string{"--spend-cap-usd", `"0"`, "positive"}},
		{"negative", "-1", append(judge, "--prices", "m=3:15"), []string{"--spend-cap-usd", `"-1"`, "positive"}},
		{"not a number", "two dollars", append(judge, "--prices", "m=3:15"), []string{"--spend-cap-usd", `"two dollars"`, "2.50"}},
		{"NaN", "NaN", append(judge, "--prices", "m=3:15"), []string{"--spend-cap-usd", `"NaN"`}},
		{"infinite", "Inf", append(judge, "--prices", "m=3:15"), []string{"--spend-cap-usd", `"Inf"`}},
		{"too large to be a number", "1e400", append(judge, "--prices", "m=3:15"), []string{"--spend-cap-usd", `"1e400"`}},
		{"judge without prices", "2.50", judge, []string{"--spend-cap-usd", `model "m" has no prices`, "--prices m=INPUT:OUTPUT"}},
		{"prices of another model", "2.50", append(judge, "--prices", "other=3:15"), []string{"--spend-cap-usd", "--prices m="}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "t.db")
			args := append([]string{"run", "--data", data, "--rubric", rubric, "--spend-cap-usd", tc.cap, "--db", dbPath}, tc.extra...)
			_, stderr, err := runCLI(t, args...)
			if err == nil {
				t.Fatalf("--spend-cap-usd %q accepted; stderr:\n%s", tc.cap, stderr)
			}
			for _, part := range tc.wantParts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q lacks %q", err, part)
				}
			}
			if exitStatus(err) != 1 {
				t.Errorf("exit status %d for a refused flag, want 1", exitStatus(err))
			}
			if _, serr := os.Stat(dbPath); serr == nil {
				t.Errorf("a refused flag opened the database %s; it is checked before anything is stored", dbPath)
			}
		})
	}
}

// TestRunStopsAtItsSpendCap: `batcheval run --spend-cap-usd` stores the cap
// on the run as the launch form does; when the cap stops the run the
// command says so, how to resume, and exits with its own status; `batcheval
// resume` stops again at the same cap, and with a higher one finishes it.
func TestRunStopsAtItsSpendCap(t *testing.T) {
	sim, err := simjudge.Start(simjudge.Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	dsn := dbtest.DSN(t, models.SQLite)
	env := func(k string) string {
		return map[string]string{"BATCHEVAL_DB": dsn, "BATCHEVAL_LOG_LEVEL": "warn", "BATCHEVAL_JUDGE_ALLOW_LOOPBACK": "true"}[k]
	}
	data, rubric := faultData(t, 20)
	// One call at these prices costs far more than a micro-dollar: the
	// first call goes (nothing is known of a call's cost before it) and
	// the second would pass the cap. Four batches, one call at a time.
	const tinyCap = 0.000001
	args := []string{"run", "--data", data, "--rubric", rubric, "--judge-url", sim.URL, "--model", "m", "--prices", "m=3:15",
		"--rounds", "1", "--batch-size", "5", "--concurrency", "1", "--spend-cap-usd", "0.000001"}
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), args, env, &stdout, &stderr)
	if err == nil {
		t.Fatalf("run past its cap ended without an error; stderr:\n%s", stderr.String())
	}
	db := openDSN(t, dsn)
	capped := theRun(t, db, 0, models.Run.Finished)
	if got := capped.Settings.SpendCapUSD; got == nil || *got != tinyCap {
		t.Errorf("stored cap %v, want %g", got, tinyCap)
	}
	if capped.Status != models.RunFailed || capped.BatchesDone >= capped.BatchesTotal || capped.CostUSD == nil || *capped.CostUSD <= tinyCap {
		t.Fatalf("capped run %s, %d/%d batches, cost %v (%q); want failed at the cap with batches left", capped.Status, capped.BatchesDone, capped.BatchesTotal, capped.CostUSD, capped.Error)
	}
	for _, want := range []string{
		fmt.Sprintf("run %d stopped: spending cap reached: the run has spent $", capped.ID),
		// The cap as it was set, not rounded to $0.0000.
		"of its $0.000001 cap",
		fmt.Sprintf("batcheval resume --spend-cap-usd AMOUNT %d", capped.ID),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if got := exitStatus(err); got != exitSpendCap || got == 0 || got == 1 {
		t.Errorf("exit status %d, want %d (neither success nor another failure)", got, exitSpendCap)
	}

	// Resumed under the same cap: no call fits, and it says so again.
	stdout.Reset()
	err = run(context.Background(), []string{"resume", fmt.Sprint(capped.ID)}, env, &stdout, &stderr)
	if exitStatus(err) != exitSpendCap || !strings.Contains(fmt.Sprint(err), "batcheval resume --spend-cap-usd AMOUNT") {
		t.Errorf("resume under the same cap: %v (exit %d), want stopped at the cap (exit %d)", err, exitStatus(err), exitSpendCap)
	}
	// A bad new cap is refused naming the flag, and changes nothing.
	if err := run(context.Background(), []string{"resume", "--spend-cap-usd", "0", fmt.Sprint(capped.ID)}, env, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--spend-cap-usd") {
		t.Errorf("resume --spend-cap-usd 0: %v, want refused naming the flag", err)
	}
	// A higher cap: the run finishes.
	stdout.Reset()
	if err := run(context.Background(), []string{"resume", "--spend-cap-usd", "100", fmt.Sprint(capped.ID)}, env, &stdout, &stderr); err != nil {
		t.Fatalf("resume --spend-cap-usd 100: %v\n%s", err, stderr.String())
	}
	done := theRun(t, db, 0, models.Run.Finished)
	if done.Status != models.RunSucceeded || done.BatchesDone != done.BatchesTotal || done.Settings.SpendCapUSD == nil || *done.Settings.SpendCapUSD != 100 {
		t.Errorf("after resume with a cap of $100: %s, %d/%d batches, cap %v; want succeeded, every batch, cap 100", done.Status, done.BatchesDone, done.BatchesTotal, done.Settings.SpendCapUSD)
	}
}
