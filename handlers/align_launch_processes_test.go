package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/runner"
)

// serverProcess is another server process on env's database: a store of
// its own on the same database, an insert-only runner (the runs' jobs are
// worked by env's) and handlers with their own memory.
type serverProcess struct {
	db *models.DB
	h  *Handlers
	e  *echo.Echo
}

func newServerProcess(t *testing.T, env *testEnv, dsn string) *serverProcess {
	t.Helper()
	db := openStore(t, dsn)
	r, err := runner.New(runner.Config{DB: db, Log: slog.New(slog.DiscardHandler), SimulatedURL: env.sim.URL})
	if err != nil {
		t.Fatal(err)
	}
	h, e := newTestHandlers(t, db, r, env.ws, env.sim.URL)
	return &serverProcess{db: db, h: h, e: e}
}

func (p *serverProcess) do(t *testing.T, method, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	if method == http.MethodPost {
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
	}
	rec := httptest.NewRecorder()
	p.e.ServeHTTP(rec, req)
	return rec
}

// holdSlots takes every background slot of h, so that a launch in the
// background waits (its claim made, its lease renewed) until release.
func holdSlots(h *Handlers) (release func()) {
	rc := h.reports
	for range cap(rc.slots) {
		rc.slots <- struct{}{}
	}
	return func() {
		for range cap(rc.slots) {
			<-rc.slots
		}
	}
}

// startAlignment starts an alignment of run src (half held out) and reads it.
func startAlignment(t *testing.T, env *testEnv, src models.Run, seed int) models.Alignment {
	t.Helper()
	rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {strconv.Itoa(seed)}, "held_out_percent": {"50"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("start: %d %.400s", rec.Code, rec.Body.String())
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
	a, err := env.db.FindAlignment(context.Background(), env.ws.ID, id)
	mustB(t, err)
	return a
}

// heldOutSection is the held-out part of an alignment's page.
func heldOutSection(body string) string {
	if i := strings.Index(body, `data-testid="before-after"`); i >= 0 {
		return body[i:]
	}
	return body
}

// TestHeldOutPreparingSeenByEveryProcess: two server processes share one
// database. While the first prepares an alignment's held-out runs in the
// background (its copy waiting for a background slot), the second's page
// says they are being prepared and reloads itself, offering no launch, and
// a launch again through the second is refused with a message saying so,
// rather than making a second copy: one dataset and one pair of runs in
// the end, which both processes' pages show. The state lived in the first
// process's memory: the second showed "Launch" and a click made a second
// copy, the later one recorded.
func TestHeldOutPreparingSeenByEveryProcess(t *testing.T) {
	parallelTest(t)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			env := newTestEnv(t, openStore(t, dsn))
			second := newServerProcess(t, env, dsn)
			src := alignDemoRun(t, env, "browser")
			env.h.heldOutInline, second.h.heldOutInline = 0, 0

			a := startAlignment(t, env, src, 11)
			datasets := env.countDatasets()
			release := holdSlots(env.h)
			rec := env.postForm(fmt.Sprintf("/alignments/%d/accept", a.ID), draftFormValues(a.Draft, "New high."))
			if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "are being prepared") {
				release()
				t.Fatalf("accept in the first process: %d, flash %q", rec.Code, flashOf(rec))
			}
			page := fmt.Sprintf("/alignments/%d", a.ID)
			launchButton := fmt.Sprintf(`action="/alignments/%d/heldout"`, a.ID)
			body := second.do(t, http.MethodGet, page, nil).Body.String()
			if !strings.Contains(body, "Preparing the held-out runs") || !strings.Contains(body, `http-equiv="refresh"`) || strings.Contains(body, launchButton) {
				t.Errorf("the second process's page does not say the held-out runs are being prepared (or offers to launch them):\n%.2000s", heldOutSection(body))
			}
			rec = second.do(t, http.MethodPost, page+"/heldout", url.Values{})
			if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "are being prepared") || !strings.Contains(flashOf(rec), "not launched twice") {
				t.Errorf("launch again through the second process while the first prepares: %d, flash %q", rec.Code, flashOf(rec))
			}
			second.h.reports.settling.Wait()
			release()
			env.h.reports.settling.Wait()

			a, err := env.db.FindAlignment(ctx, env.ws.ID, a.ID)
			mustB(t, err)
			if a.BeforeRunID == nil || a.AfterRunID == nil {
				t.Fatalf("no held-out runs after the first process's launch: %+v", a)
			}
			if n := env.countDatasets(); n != datasets+1 {
				t.Errorf("%d held-out copies made, want 1", n-datasets)
			}
			for _, p := range []*serverProcess{{db: env.db, h: env.h, e: env.e}, second} {
				if body := p.do(t, http.MethodGet, page, nil).Body.String(); strings.Contains(body, "Preparing the held-out runs") || !strings.Contains(body, fmt.Sprintf("/runs/%d", *a.AfterRunID)) {
					t.Errorf("a page still says preparing, or does not link the after run %d:\n%.2000s", *a.AfterRunID, heldOutSection(body))
				}
			}
			for _, id := range []int64{*a.BeforeRunID, *a.AfterRunID} {
				env.waitRun(id, 60*time.Second)
			}
		})
	}
}

// crashTestLease is the lease of the launch whose process crashes in
// TestHeldOutPreparationStoppedWithItsProcess (two minutes in
// production): the test waits about two of them.
const crashTestLease = 5 * time.Second

// waitPastFirstLease waits until the database's clock has passed the end
// of the lease alignment id's launch held when called, so a launch still
// preparing then was renewed.
func waitPastFirstLease(t *testing.T, db *models.DB, id int64) {
	t.Helper()
	ctx := context.Background()
	l, ok, err := db.FindHeldOutLaunch(ctx, id)
	mustB(t, err)
	if !ok || l.LeaseUntil == nil {
		t.Fatalf("no launch of alignment %d under way: %+v", id, l)
	}
	end := *l.LeaseUntil
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		l, _, err := db.FindHeldOutLaunch(ctx, id)
		mustB(t, err)
		if l.Now.After(end) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database's clock (%s) did not pass %s in a minute", l.Now, end)
		}
	}
}

// TestHeldOutPreparationStoppedWithItsProcess: a server process that
// prepares an alignment's held-out runs ends mid-preparation (its database
// connections closed, as at a crash: its lease is renewed no more and its
// end never written). Another process's page says they are being prepared
// until the lease lapses, then that the preparation stopped, with the
// launch button; launching again there makes the one copy and the runs.
// The crashed process's preparation, when it runs on, makes nothing. The
// state lived in the crashed process's memory: the other process never
// said they were being prepared.
func TestHeldOutPreparationStoppedWithItsProcess(t *testing.T) {
	parallelTest(t)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			// The two databases side by side: each waits about two
			// leases, with nothing to share.
			t.Parallel()
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			env := newTestEnv(t, openStore(t, dsn))
			crashing := newServerProcess(t, env, dsn)
			// Short, so the test waits seconds for the lapse, not minutes;
			// renewed every quarter of it, so only a renewal held up for
			// three quarters of it (a machine truly stuck) looks stopped.
			crashing.h.heldOutLease = crashTestLease
			src := alignDemoRun(t, env, "browser")
			env.h.heldOutInline, crashing.h.heldOutInline = 0, 0

			a := startAlignment(t, env, src, 5)
			datasets := env.countDatasets()
			release := holdSlots(crashing.h)
			page := fmt.Sprintf("/alignments/%d", a.ID)
			rec := crashing.do(t, http.MethodPost, page+"/accept", draftFormValues(a.Draft, "New high."))
			if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "are being prepared") {
				release()
				t.Fatalf("accept in the crashing process: %d, flash %q", rec.Code, flashOf(rec))
			}
			launchButton := fmt.Sprintf(`action="/alignments/%d/heldout"`, a.ID)
			if body := env.get(page).Body.String(); !strings.Contains(body, "Preparing the held-out runs") || strings.Contains(body, launchButton) {
				t.Errorf("the other process's page does not say the held-out runs are being prepared:\n%.2000s", heldOutSection(body))
			}
			// Renewed while its process lives: still preparing once its
			// first lease has ended, by the database's clock.
			waitPastFirstLease(t, env.db, a.ID)
			if body := env.get(page).Body.String(); !strings.Contains(body, "Preparing the held-out runs") {
				t.Errorf("a live preparation looks stopped after one lease:\n%.2000s", heldOutSection(body))
			}
			// The crash.
			crashing.db.Close()
			deadline := time.Now().Add(time.Minute) // the lease lapses within crashTestLease; a loaded machine notices later
			var body string
			for {
				body = env.get(page).Body.String()
				if !strings.Contains(body, "Preparing the held-out runs") || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if !strings.Contains(body, "stopped before they were launched") || !strings.Contains(body, launchButton) || strings.Contains(body, `http-equiv="refresh"`) {
				t.Fatalf("the preparation of a crashed process is not said to have stopped, or no launch is offered:\n%.2000s", heldOutSection(body))
			}
			if rec := env.postForm(page+"/heldout", url.Values{}); rec.Code != http.StatusSeeOther || strings.Contains(flashOf(rec), "could not") {
				t.Fatalf("launch again: %d, flash %q", rec.Code, flashOf(rec))
			}
			env.h.reports.settling.Wait()
			// The crashed process's preparation runs on, on a closed store.
			release()
			crashing.h.reports.settling.Wait()

			a, err := env.db.FindAlignment(ctx, env.ws.ID, a.ID)
			mustB(t, err)
			if a.BeforeRunID == nil || a.AfterRunID == nil {
				t.Fatalf("launch again made no runs: %+v", a)
			}
			if n := env.countDatasets(); n != datasets+1 {
				t.Errorf("%d held-out copies made, want 1", n-datasets)
			}
			if body := env.get(page).Body.String(); strings.Contains(body, "stopped before") || strings.Contains(body, "Preparing the held-out runs") {
				t.Errorf("the page still speaks of the stopped preparation once launched:\n%.2000s", heldOutSection(body))
			}
			for _, id := range []int64{*a.BeforeRunID, *a.AfterRunID} {
				env.waitRun(id, 60*time.Second)
			}
		})
	}
}

// TestHeldOutLaunchClaimedOnce: launches of one alignment's held-out runs
// claimed at once from two server processes (two stores on one database)
// are one claim: the others are refused as under way. A claim whose lease
// lapsed after its process ended (its store closed) is taken over, after
// which its first owner neither renews nor ends it; one ended is claimed
// again.
func TestHeldOutLaunchClaimedOnce(t *testing.T) {
	parallelTest(t)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			env := newTestEnv(t, openStore(t, dsn))
			stores := []*models.DB{env.db, openStore(t, dsn)}
			a := startAlignment(t, env, alignDemoRun(t, env, "imported"), 3)

			const claimants = 8
			errs := make(chan error, claimants)
			for i := range claimants {
				go func() {
					errs <- stores[i%2].ClaimHeldOutLaunch(ctx, a, fmt.Sprintf("owner-%d", i), time.Minute)
				}()
			}
			won := 0
			for range claimants {
				switch err := <-errs; {
				case err == nil:
					won++
				case !errors.Is(err, models.ErrHeldOutPreparing):
					t.Errorf("a refused claim: %v, want %v", err, models.ErrHeldOutPreparing)
				}
			}
			if won != 1 {
				t.Fatalf("%d of %d claims at once won, want 1", won, claimants)
			}
			l, ok, err := env.db.FindHeldOutLaunch(ctx, a.ID)
			mustB(t, err)
			if !ok || !l.Preparing() || l.Stopped() {
				t.Fatalf("the claim is not under way: %+v", l)
			}

			// Ended by its own process (on SQLite that lets its lock go).
			var winner int
			if _, err := fmt.Sscanf(l.Owner, "owner-%d", &winner); err != nil {
				t.Fatalf("owner %q: %v", l.Owner, err)
			}
			mustB(t, stores[winner%2].EndHeldOutLaunch(ctx, a.ID, l.Owner, ""))
			// A lease that lapses, its process gone: taken over.
			crashed := openStore(t, dsn)
			mustB(t, crashed.ClaimHeldOutLaunch(ctx, a, "first", time.Second))
			crashed.Close()
			// Seen stopped once the second has passed (by the database's
			// clock), not after a fixed sleep.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
				l, _, err := env.db.FindHeldOutLaunch(ctx, a.ID)
				mustB(t, err)
				if l.Stopped() {
					break
				}
				if l.Preparing() && l.LeaseUntil != nil && l.Now.After(l.LeaseUntil.Add(time.Second)) || time.Now().After(deadline) {
					t.Fatalf("a lapsed lease is not seen stopped: %+v", l)
				}
			}
			mustB(t, stores[1].ClaimHeldOutLaunch(ctx, a, "second", time.Minute))
			if held, err := env.db.RenewHeldOutLaunch(ctx, a.ID, "first", time.Minute); err != nil || held {
				t.Errorf("the first owner renewed a claim taken over: %v %v", held, err)
			}
			mustB(t, env.db.EndHeldOutLaunch(ctx, a.ID, "first", "it failed"))
			if l, _, err := env.db.FindHeldOutLaunch(ctx, a.ID); err != nil || l.Owner != "second" || !l.Preparing() || l.Failed != "" {
				t.Errorf("the first owner ended a claim taken over: %+v %v", l, err)
			}
			mustB(t, stores[1].EndHeldOutLaunch(ctx, a.ID, "second", "the judge is gone"))
			if l, _, err := env.db.FindHeldOutLaunch(ctx, a.ID); err != nil || l.Preparing() || l.Stopped() || l.Failed != "the judge is gone" {
				t.Errorf("an ended launch: %+v %v", l, err)
			}
			mustB(t, env.db.ClaimHeldOutLaunch(ctx, a, "third", time.Minute))
		})
	}
}

// TestHeldOutLaunchLiveAfterItsLeaseLapses: on a SQLite file a launch
// whose lease lapsed unrenewed while its process lives (its renewals
// waiting, as they do while its copy holds SQLite's write lock for longer
// than the lease) is still under way: the pages of every process say it
// is being prepared, not that it stopped, and a launch from another
// process is refused rather than taking it over; its owner renews it
// again. Once its process ends (its store closed), the lapsed lease is
// seen stopped and taken over. Before, the second process took it over as
// soon as the lease lapsed. A 300 ms lease here (2 minutes in production).
func TestHeldOutLaunchLiveAfterItsLeaseLapses(t *testing.T) {
	parallelTest(t)
	ctx := context.Background()
	dsn := dbtest.DSN(t, models.SQLite)
	env := newTestEnv(t, openStore(t, dsn))
	other := openStore(t, dsn)
	a := startAlignment(t, env, alignDemoRun(t, env, "imported"), 3)
	const lease = 300 * time.Millisecond

	// Claimed by this process, which then holds SQLite's write lock past
	// the lease (a long copy): no renewal can be written meanwhile. The
	// pages read the launch meanwhile, and once the copy has committed.
	mustB(t, env.db.ClaimHeldOutLaunch(ctx, a, "working", lease))
	tx, err := env.db.SQL.BeginTx(ctx, nil)
	mustB(t, err)
	_, err = tx.ExecContext(ctx, "UPDATE heldout_launches SET failed = '' WHERE alignment_id = ?", a.ID)
	mustB(t, err)
	time.Sleep(3 * lease)
	for _, when := range []string{"during the copy", "after it"} {
		if when == "after it" {
			mustB(t, tx.Commit())
		}
		for i, st := range []*models.DB{env.db, other} {
			l, ok, err := st.FindHeldOutLaunch(ctx, a.ID)
			mustB(t, err)
			if !ok || !l.Preparing() || l.Stopped() || l.Now.Before(*l.LeaseUntil) {
				t.Errorf("%s, process %d: a live launch whose lease lapsed: preparing %v, stopped %v (%+v), want preparing", when, i+1, l.Preparing(), l.Stopped(), l)
			}
		}
	}
	if err := other.ClaimHeldOutLaunch(ctx, a, "taker", time.Minute); !errors.Is(err, models.ErrHeldOutPreparing) {
		t.Fatalf("another process's claim of a live launch whose lease lapsed: %v, want %v", err, models.ErrHeldOutPreparing)
	}
	if held, err := env.db.RenewHeldOutLaunch(ctx, a.ID, "working", lease); err != nil || !held {
		t.Fatalf("the live launch's renewal after its lease lapsed: held %v, %v; want held", held, err)
	}

	// Its process ends without ending it: stopped once the lease lapses,
	// and taken over. Its runner stops first, as with the process: a
	// runner left working on a closed store spent its whole stop bound
	// (7 of the test's 9 s) in the cleanup.
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	mustB(t, env.runner.Stop(sctx))
	mustB(t, env.db.Close())
	time.Sleep(2 * lease)
	l, _, err := other.FindHeldOutLaunch(ctx, a.ID)
	mustB(t, err)
	if !l.Stopped() || l.Preparing() {
		t.Errorf("a launch whose process ended: preparing %v, stopped %v, want stopped", l.Preparing(), l.Stopped())
	}
	mustB(t, other.ClaimHeldOutLaunch(ctx, a, "taker", time.Minute))
	mustB(t, other.EndHeldOutLaunch(ctx, a.ID, "taker", ""))
}
