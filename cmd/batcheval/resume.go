package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

const resumeUsage = `Usage: batcheval resume [flags] RUN_ID

Resumes a finished run that has gaps (it failed, or some of its batches
have no answer): only those batches, and any round never reached, are sent
again; stored answers are kept. By default this process works the run to
its end and prints a summary; with --queue-only it leaves the run to the
` + "`serve` and `worker`" + ` processes sharing the database.

A run stopped by its spending cap is resumed with a higher one:
--spend-cap-usd sets the run's new cap first.

Exit status as for ` + "`batcheval run`" + `: 0 finished, 1 an error, 3 stopped by the
spending cap, 4 paused, 130 interrupted by Ctrl-C, 143 by SIGTERM.

Flags:
`

// resume implements `batcheval resume`.
func resume(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("resume", getenv, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, resumeUsage); printFlags(stderr, fs) }
	queueOnly := fs.Bool("queue-only", false, "queue the run for the serve and worker processes and exit")
	spendCap := fs.String("spend-cap-usd", "", "the run's new spending cap in `USD`, e.g. 5, set before it resumes (absent: the run keeps its own)")
	if err := c.parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the usage was printed, as asked (it used to end in an error)
		}
		return err
	}
	if later := flagsAmong(fs.Args()); fs.NArg() > 1 && len(later) > 0 {
		// The flag package stops at the run id: flags after it were
		// refused as "give the id of the run to resume", with the id given.
		return fmt.Errorf("put the flags before the run id: batcheval resume %s %s (the flags after it, %s, were not read)",
			strings.Join(fs.Args()[1:], " "), fs.Arg(0), strings.Join(later, " "))
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("give the id of the run to resume")
	}
	runID, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || runID <= 0 {
		return fmt.Errorf("%q is not a run id: give the run's number, as its page and the run list show it (e.g. batcheval resume 12)", fs.Arg(0))
	}
	capUSD, err := parseSpendCap(*spendCap)
	if err != nil {
		return err
	}
	// The runner logs from its own goroutines while the progress is
	// written: both go through the progress's lock, as in `batcheval run`.
	prog := newProgress(stderr)
	log := c.logger(prog.logs())
	db, ws, err := openWorkspace(ctx, c, log)
	if err != nil {
		return err
	}
	defer db.Close()
	// As the run page's resume form does: the new cap is saved with the
	// resume, so a refused resume leaves the run's cap as it was.
	req := models.Requeue{SpendCapUSD: capUSD}

	rc, err := c.runnerConfig()
	if err != nil {
		return err
	}
	rc.DB, rc.Log, rc.Getenv = db, log, getenv
	// The run keeps its judge settings (its snapshot): a refusal's hint
	// says so, and how to start a new run, where "press Test connection"
	// or "run again with --token-limit" could only lead to the same
	// failure.
	rc.JudgeSettingsAt = judge.SettingsKeptByRun
	if *queueOnly {
		r, err := runner.New(rc)
		if err != nil {
			return err
		}
		run, err := r.Resume(ctx, ws.ID, runID, req)
		if err != nil {
			return resumeRefusal(c, run, err)
		}
		fmt.Fprintf(stdout, "run %d queued: %d of %d batches to send; `batcheval serve` or `batcheval worker` finishes it\n", run.ID, run.BatchesTotal-run.BatchesDone, run.BatchesTotal)
		return nil
	}
	sim, err := simjudge.Start(simjudge.Options{Seed: 1, Latency: c.SimLatency})
	if err != nil {
		return err
	}
	defer sim.Close()
	// The judge network policy, as serve and run apply it: without it the
	// run's judge (a URL typed in the dashboard) could reach any address.
	if err := c.applyJudgeEgress(sim.URL, db); err != nil {
		return err
	}
	rc.Webhooks.ShowAddrs = addrsShownTo(c.LocalMode(), db)
	// A private queue, as `batcheval run` uses: this process works this run only.
	rc.Work, rc.MaxRuns, rc.SimulatedURL = true, 1, sim.URL
	rc.PollInterval, rc.Queue = 100*time.Millisecond, fmt.Sprintf("cli_%d_%d", os.Getpid(), time.Now().UnixNano())
	r, err := runner.New(rc)
	if err != nil {
		return err
	}
	run, err := r.Resume(ctx, ws.ID, runID, req)
	if err != nil {
		return resumeRefusal(c, run, err)
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(prog.logs(), "run %d resumed: %d of %d batches to send\n", run.ID, run.BatchesTotal-run.BatchesDone, run.BatchesTotal)
	final, werr := waitFinished(ctx, db, ws.ID, run.ID, prog)
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownGrace)
	defer cancel()
	_ = r.Stop(sctx)
	if werr != nil {
		if herr := r.HandOver(context.WithoutCancel(ctx), ws.ID, run.ID); herr != nil {
			log.Warn("hand the run over to the shared queue", "run", run.ID, "err", herr)
		}
		return interruptedError(context.WithoutCancel(ctx), db, ws.ID, run.ID, werr)
	}
	if final.Paused() {
		return &pausedError{run: final}
	}
	// The same summary as `batcheval run` (calls, tokens and cost), where
	// run prints it; then the line of batches scripts read.
	fmt.Fprintln(stderr, runSummaryLine(final))
	fmt.Fprintf(stdout, "run %d %s: %d/%d batches, %d failed, %d scores missing, %d judge retries%s\n",
		final.ID, final.Status, final.BatchesDone, final.BatchesTotal, final.BatchesFailed, final.MissingScores, final.Retries, shortScoresNote(final))
	if why, capped := runner.SpendCapStop(final); capped {
		return &spendCapStopError{runID: final.ID, why: why}
	}
	if final.Status != models.RunSucceeded {
		return fmt.Errorf("run %d %s: %s", final.ID, final.Status, final.Error)
	}
	return nil
}

// resumeRefusal is the model's refusal of a resume (models.ReopenRun),
// with what the command line can do where the model's words are the
// dashboard's: a run not finished (one `batcheval run` handed over when
// interrupted) is finished by a worker, not by resume; a paused one is
// continued from its page or the API.
func resumeRefusal(c *Config, run models.Run, err error) error {
	if models.ErrorCode(err) == models.ENotFound {
		// A mistyped --db opens (and makes) an empty database: say which
		// one was searched.
		return fmt.Errorf("%w, in %s", err, c.databaseShown())
	}
	if models.ErrorCode(err) != models.EConflict || run.ID == 0 {
		return err
	}
	switch {
	case run.Paused():
		return fmt.Errorf("%w (press Continue on the run's page, or POST /api/v1/runs/%d/continue; `batcheval worker` or `batcheval serve` then finishes it)", err, run.ID)
	case !run.Finished():
		return fmt.Errorf("%w once `batcheval worker` or `batcheval serve` works this database: start either if none is running "+
			"(its %d answered batches are kept; only the others are sent)", err, run.BatchesDone-run.BatchesFailed)
	}
	return err
}

// databaseShown names the database the command opened, for a message: the
// SQLite file, or PostgreSQL's host and database (never the URL, which
// may hold a password).
func (c *Config) databaseShown() string {
	dsn := c.DSN()
	if !models.IsPostgresURL(dsn) {
		return fmt.Sprintf("the SQLite file %s (--db or BATCHEVAL_DB; DATABASE_URL for PostgreSQL)", dsn)
	}
	if u, err := url.Parse(dsn); err == nil {
		return fmt.Sprintf("the PostgreSQL database %s on %s (DATABASE_URL)", strings.TrimPrefix(u.Path, "/"), u.Host)
	}
	return "the PostgreSQL database of DATABASE_URL"
}
