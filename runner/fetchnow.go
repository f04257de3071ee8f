package runner

import (
	"context"
	"sync"

	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// Fetching a run launched through this process at once, on SQLite.
//
// River (v0.51.2) has a worker fetch a job at once after the job's insert
// only through LISTEN/NOTIFY, or, on a client without a listener, after
// its own inserts outside a transaction (Client.Insert wakes the client's
// producer for the job's queue). A job inserted in the caller's
// transaction (InsertTx) waits for the producer's next poll, since River
// cannot know when that transaction commits. A run's job is queued in the
// run's own transaction (nothing half-written), and SQLite has no
// LISTEN/NOTIFY (sqliteDriver), so an awake worker started a run launched
// through it up to a second (PollInterval) after the launch.
//
// River hands that same wake to a pilot, to be called "when a client knows
// that a job has become available and the transaction that committed it
// has finished" (riverpilot.PilotInitParams.NotifyNonTxJobInsert), and
// takes the pilot from the driver when the driver offers one
// (PluginInit and PluginPilot, River's driverPlugin). sqliteDriver offers
// fetchPilot: River's standard pilot, which also keeps that function. After
// the commit, wakeUp calls it for the runner's queue: this process's
// producer fetches through its own fetch limiter (at most once every
// FetchCooldown), with River's own query and locking, so which worker
// takes a job is decided exactly as before. This wakes this process's
// producer only (River ignores the call in a client without workers, an
// insert-only `serve`); the workers of other processes on the file are
// woken through the wake file (wakefile.go), whose watch calls this same
// path. On PostgreSQL the driver has a listener, River's insert
// notification wakes every worker, and no pilot is installed.
//
// River marks the pilot API unstable: an upgrade that changes it fails to
// compile here, or TestLaunchFetchesAtOnce fails.

// fetchPilot is River's standard pilot that keeps the function waking the
// client's producers.
type fetchPilot struct {
	riverpilot.StandardPilot
	notify func(ctx context.Context, res []*rivertype.JobInsertResult)
}

func (p *fetchPilot) PilotInit(a *baseservice.Archetype, params *riverpilot.PilotInitParams) {
	p.StandardPilot.PilotInit(a, params)
	p.notify = params.NotifyNonTxJobInsert
}

// PluginInit and PluginPilot make River take the driver's pilot (River's
// driverPlugin interface); a driver without one gets River's standard pilot.
func (sqliteDriver) PluginInit(*baseservice.Archetype) {}

func (d sqliteDriver) PluginPilot() riverpilot.Pilot {
	if d.pilot == nil {
		return nil // not a nil *fetchPilot in an interface: River would call it
	}
	return d.pilot
}

// fetching guards the producers' wake against River's client starting:
// River sets a producer's fetch limiter as the producer starts, unguarded,
// and the wake reads it.
type fetching struct {
	// starting is held (to write) while River's client starts.
	starting sync.RWMutex
	// wake wakes this process's producer for the runner's queue; nil when
	// River wakes it itself (PostgreSQL), or the runner works no jobs.
	wake func(ctx context.Context)
}

// fetchNow asks this process's River producer to look for jobs now rather
// than at its next poll. Call it after the transaction that queued a job
// has committed. While River's client is starting it does nothing: the
// start's own first fetch comes after the commit, and sees the job.
func (r *Runner) fetchNow() {
	if r.fetch.wake == nil || !r.fetch.starting.TryRLock() {
		return
	}
	defer r.fetch.starting.RUnlock()
	r.fetch.wake(context.Background())
}

// startRiver starts River's client (Start, and each wake from parking).
func (r *Runner) startRiver() error {
	r.fetch.starting.Lock()
	defer r.fetch.starting.Unlock()
	return r.river.Start(r.riverCtx)
}
