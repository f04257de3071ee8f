package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/handlers"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/runner"
)

// shutdownGrace is how long a stopping process waits for judge calls already
// sent: a batch answer from a slow model can take a minute or two, and a
// paid answer is worth waiting for.
const shutdownGrace = 2 * time.Minute

// serve runs the dashboard with embedded workers (web=true) or workers
// alone (web=false), until ctx ends; then it shuts down gracefully.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, web bool) error {
	name := "serve"
	if !web {
		name = "worker"
	}
	fs, c := newCommand(name, getenv, stderr)
	noWork := fs.Bool("no-worker", false, "serve only; leave the runs to separate `batcheval worker` processes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := c.logger(stderr)
	if _, err := models.ParseKeyVars(getenv(models.KeyVarsSetting)); err != nil {
		return err
	}
	db, ws, err := openWorkspace(ctx, c, log)
	if err != nil {
		return err
	}
	defer db.Close()
	db.Getenv = getenv
	if web && !c.LocalMode() {
		exist, err := db.HasUsers(ctx)
		if err != nil {
			return err
		}
		if !exist {
			return fmt.Errorf("refusing to listen on %s: it is reachable from the network and no account exists yet, so anyone could use the dashboard. "+
				"Create the first owner with `batcheval admin create-user --email you@example.com --name \"Your Name\" --role owner` (same database settings), "+
				"or listen on loopback (--addr 127.0.0.1:8080) and open /setup", c.Addr)
		}
	}
	if web && c.SeedDemo {
		if _, err := demo.Seed(ctx, db, ws); err != nil {
			return fmt.Errorf("seed demo project: %w", err)
		}
	}
	// Every process runs its own simulated judge on a loopback port, so
	// runs on it work whichever worker picks them up.
	sim, err := simjudge.Start(simjudge.Options{Seed: 1, Latency: c.SimLatency})
	if err != nil {
		return fmt.Errorf("start simulated judge: %w", err)
	}
	defer sim.Close()
	egress, err := c.Egress(sim.URL)
	if err != nil {
		return err
	}
	judge.SetEgress(egress)

	work := !web || !*noWork
	r, err := runner.New(runner.Config{DB: db, Log: log, Work: work, MaxRuns: c.MaxRuns, SimulatedURL: sim.URL, Getenv: getenv,
		Webhooks: runner.WebhookConfig{AllowLoopback: c.LocalMode(), AllowPrivate: c.WebhookAllowPrivate}})
	if err != nil {
		return err
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	go sweepUploads(ctx, db, log, uploadSweepInterval)
	stopRunner := func() {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := r.Stop(sctx); err != nil {
			log.Warn("stopping workers", "err", err)
		}
	}
	if !web {
		log.Info("worker started", "id", r.ID(), "database", string(db.Dialect))
		<-ctx.Done()
		log.Info("worker stopping: letting calls in flight finish")
		stopRunner()
		return nil
	}

	// The trash keeps deleted objects for models.TrashRetention; the web
	// process empties what is older (stopped before the database closes).
	sweepCtx, stopSweep := context.WithCancel(ctx)
	sweepDone := make(chan struct{})
	go func() {
		defer close(sweepDone)
		db.RunTrashSweeper(sweepCtx, models.TrashSweepInterval, time.Now, log)
	}()
	defer func() { stopSweep(); <-sweepDone }()

	h, err := handlers.New(db, r, log, ws)
	if err != nil {
		return err
	}
	h.SimulatedURL = sim.URL
	h.LocalMode = c.LocalMode()
	h.SecureCookies = c.SecureCookies
	if h.Prices, err = parsePrices(c.Prices); err != nil {
		return err
	}
	h.MaxUploadBytes = int64(c.MaxUploadMB) << 20
	h.UploadQuotaBytes = int64(max(c.UploadQuotaMB, 0)) << 20
	if h.Network, err = c.NetworkPolicy(); err != nil {
		return err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	h.Network.Apply(e)
	h.Register(e)

	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("dashboard ready", "url", "http://"+ln.Addr().String(), "database", string(db.Dialect), "workers", work)
	fmt.Fprintf(stdout, "BatchEval is running at http://%s\n", ln.Addr().String())

	select {
	case err := <-errc:
		stopRunner()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: letting calls in flight finish")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", err)
	}
	stopRunner()
	return nil
}
