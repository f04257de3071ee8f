package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/handlers"
	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/runner"
)

// defaultShutdownGrace is how long a stopping process waits for judge calls
// already sent: a batch answer from a slow model can take a minute or two,
// and a paid answer is worth waiting for. Calls still out after it are
// abandoned and their runs handed back (their answers were not paid for
// twice: they are simply sent again by the next worker).
const defaultShutdownGrace = 2 * time.Minute

// serve runs the dashboard with embedded workers (web=true) or workers
// alone (web=false), until ctx ends; then it shuts down gracefully.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, web bool) error {
	name := "serve"
	if !web {
		name = "worker"
	}
	fs, c := newCommand(name, getenv, stderr)
	noWork := fs.Bool("no-worker", false, "serve only; leave the runs to separate `batcheval worker` processes")
	baseFlag := fs.String("base-url", getenv("BATCHEVAL_BASE_URL"), "the address people open the dashboard at, e.g. https://batcheval.example.com: every mailed link starts with it (env BATCHEVAL_BASE_URL)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		// A stray word started the server all the same.
		return err
	}
	rc, err := c.runnerConfig() // refuses bad worker settings before anything starts
	if err != nil {
		return err
	}
	log := c.logger(stderr)
	if _, err := models.ParseKeyVars(getenv(models.KeyVarsSetting)); err != nil {
		return err
	}
	metricsToken, err := c.MetricsBearer()
	if err != nil {
		return err
	}
	mailer, err := mail.FromEnv(getenv) // refused before the database opens
	if err != nil {
		return err
	}
	baseURL, err := checkBaseURL(*baseFlag)
	if err != nil {
		return err
	}
	if web && mailer != nil && baseURL == "" && !c.LocalMode() {
		// A mailed link must not take the Host a request named: anyone can
		// have a reset or confirmation link mailed to someone else.
		return errors.New("BATCHEVAL_SMTP_URL is set but BATCHEVAL_BASE_URL is not: set it (or --base-url) to the address people open the dashboard at, " +
			"e.g. https://batcheval.example.com; every mailed invite, reset and confirmation link starts with it, never with the host name a request named")
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
	// Every process runs its own simulated judge on a loopback port, so
	// runs on it work whichever worker picks them up.
	sim, err := simjudge.Start(simjudge.Options{Seed: 1, Latency: c.SimLatency})
	if err != nil {
		return fmt.Errorf("start simulated judge: %w", err)
	}
	defer sim.Close()
	if err := c.applyJudgeEgress(sim.URL, db); err != nil {
		return err
	}
	rc.Webhooks.ShowAddrs = addrsShownTo(c.LocalMode(), db)

	work := !web || !*noWork
	rc.DB, rc.Log, rc.Work, rc.SimulatedURL, rc.Getenv = db, log, work, sim.URL, getenv
	// A dashboard that leaves runs to workers still sends the mail it
	// has the settings for: otherwise an invite or reset it queues waits
	// for a worker started with the same SMTP settings, which nothing
	// guarantees (and nothing would tell anyone).
	rc.WorkMail = !work && mailer != nil
	r, err := runner.New(rc)
	if err != nil {
		return err
	}
	switch {
	case mailer != nil:
		// Mail is sent by jobs on a queue of their own (runner/mail.go),
		// worked only by processes with these settings.
		if err := r.SetMail(mailer); err != nil {
			return err
		}
		if !work {
			log.Info("mail: this process works the mail queue (" + runner.MailQueue + ") but no runs (--no-worker); workers with " + mail.EnvURL + " send mail too")
		}
	case work:
		log.Info("mail: no " + mail.EnvURL + ", so this process sends no mail; mail queued by others waits for a process that has the setting")
	}
	if web && c.SeedDemo {
		// A fresh demo comes with a finished result: its first run, queued
		// with it in one transaction, is judged by the simulated judge as
		// soon as a worker is free.
		_, created, err := demo.SeedProject(ctx, db, ws, r)
		if err != nil {
			return fmt.Errorf("seed demo project: %w", err)
		}
		if created {
			// Workers in other processes (`serve --no-worker` beside
			// `batcheval worker`) take the first run at once.
			r.Queued()
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	go sweepUploads(ctx, db, log, uploadSweepInterval)
	var stopOnce sync.Once
	stopRunner := func() {
		stopOnce.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownGrace)
			defer cancel()
			if err := r.Stop(sctx); err != nil {
				log.Warn("stopping workers", "err", err)
			}
		})
	}
	// Every return from here stops the workers, a failed start too (a busy
	// address, a bad setting): they would otherwise go on taking runs, and
	// watching the wake file, after serve has said it failed.
	defer stopRunner()
	if !web {
		if c.MetricsAddr != "" {
			stopMetrics, err := serveMetrics(c.MetricsAddr, metricsToken, r, log, stdout)
			if err != nil {
				stopRunner()
				return err
			}
			defer stopMetrics()
		}
		log.Info("worker started", "id", r.ID(), "tag", r.Tag(), "database", string(db.Dialect))
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
	// Running runs' figures nobody views are dropped for as long as the
	// server serves (stopped before the database closes).
	liveCtx, stopLive := context.WithCancel(ctx)
	liveDone := make(chan struct{})
	go func() {
		defer close(liveDone)
		h.RunLiveFiguresJanitor(liveCtx, handlers.LiveFiguresSweepEvery)
	}()
	defer func() { stopLive(); <-liveDone }()
	h.LocalMode = c.LocalMode()
	h.SecureCookies = c.SecureCookies
	h.MetricsToken = metricsToken
	if h.Prices, err = parsePrices(c.Prices); err != nil {
		return err
	}
	h.MaxUploadBytes = int64(c.MaxUploadMB) << 20
	h.MaxUploadRows = c.MaxUploadRows
	h.PageConcurrency = c.PageConcurrency
	h.APIRateLimit, h.APILaunchRateLimit = c.APIRateLimit, c.APILaunchRateLimit
	h.UploadQuotaBytes = int64(max(c.UploadQuotaMB, 0)) << 20
	if h.Network, err = c.NetworkPolicy(); err != nil {
		return err
	}
	setMailer(h, mailer, log)
	h.MailBaseURL = baseURL
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	h.Network.Apply(e)
	h.Register(e)

	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return listenError(c.Addr, err)
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("dashboard ready", "url", "http://"+ln.Addr().String(), "database", string(db.Dialect), "workers", work, "tag", r.Tag())
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
	// Failed sign-ins answered are written to the audit log before the
	// database closes.
	h.WaitSignInAudits()
	stopRunner()
	return nil
}

// serveMetrics serves the runner's /metrics on its own listener (a worker
// has no dashboard), behind the metrics token when one is set; the
// returned func stops it.
func serveMetrics(addr, token string, r *runner.Runner, log *slog.Logger, stdout io.Writer) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", handlers.RequireMetricsToken(token, r.Metrics().Handler()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics listener", "err", err)
		}
	}()
	fmt.Fprintf(stdout, "metrics at http://%s/metrics\n", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// listenError says why the dashboard could not listen on addr and, when
// another program holds the address (a second `make run`, another server
// on 8080), how to start on the next port instead.
func listenError(addr string, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	next := "127.0.0.1:8081"
	if host, port, perr := net.SplitHostPort(addr); perr == nil {
		if p, aerr := strconv.Atoi(port); aerr == nil && p > 0 && p < 65535 {
			next = net.JoinHostPort(host, strconv.Itoa(p+1))
		}
	}
	return fmt.Errorf("listen on %s: another program (perhaps another BatchEval) already uses this address. "+
		"Stop it, or start on another port: batcheval serve --addr %s, or with make: BATCHEVAL_ADDR=%s make run (%w)", addr, next, next, err)
}
