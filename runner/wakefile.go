package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
	"github.com/riverqueue/river"

	"github.com/batcheval/batcheval/models"
)

// Waking the workers of other processes on SQLite.
//
// SQLite has no LISTEN/NOTIFY: a worker process learns of a run queued by
// another process (a `serve --no-worker` beside `batcheval worker`,
// `batcheval resume --queue-only`, a command-line run handed over) from
// its own poll, River's every PollInterval while awake and dueIn's while
// parked: up to a second before the run's first judge call. So a process
// that commits a job for the shared queue then writes one byte to a small
// file beside the database, "<database>-wake" (wakeOthers), and every
// worker of the shared queue on that database watches the file with
// inotify (fsnotify) and, on any change, wakes as a launch through it
// would (wakeHere: River's producer fetches at once, a parked worker
// starts its client). Every worker on the file wakes, the launching one
// too (one fetch more); River's locked fetch decides which takes the job,
// as a poll would. Waiting on inotify is a read blocked in Go's netpoller,
// so an idle worker's CPU is unchanged (BenchmarkIdleCPU), and its poll
// goes on as before: a backstop for jobs coming due (retries, snoozes) and
// for inserts that write no wake file. (Watching the database's own -wal
// file would wake every worker at every write of every run; PRAGMA
// data_version is a poll again.)
//
// The file holds one byte and means nothing but its changes: it is
// created with the database file's mode when first needed. Removed or
// renamed while watched, it is made again and watched again, and the
// worker wakes once, since a write made between the two would go unseen.
// Where it cannot be made or watched (a read-only folder without the file,
// no inotify, no instances left), the worker logs that once and keeps to
// its poll; a process that cannot write it logs that once, and its runs
// start at the workers' next poll. inotify sees the writes of this
// machine only, as SQLite's own locking needs anyway.

// wakeFile is a runner's wake file.
type wakeFile struct {
	// path is "<database>-wake"; empty on PostgreSQL and for a database
	// in memory, where there is no file to wake through.
	path string
	// mode is the database file's permission bits (0600 as the product
	// creates it): the wake file is created with them.
	mode fs.FileMode
	// warned is set once a failed write of the file has been logged.
	warned atomic.Bool
	// stop ends the watch started by Start; done is closed once it has
	// ended. Both nil when nothing is watched.
	stop context.CancelFunc
	done chan struct{}
}

// wakePathSuffix is added to the database file's path to name its wake
// file, as SQLite names its "-wal" and "-shm" files beside it.
const wakePathSuffix = "-wake"

// wakeFileOf names the wake file of db, and the mode to create it with:
// beside the file SQLite itself opened as the main database (not the path
// the process was given, so every process on the file agrees whatever its
// working folder). "" on PostgreSQL and for a database in memory.
func wakeFileOf(ctx context.Context, db *models.DB) (string, fs.FileMode, error) {
	if db.Dialect != models.SQLite {
		return "", 0, nil
	}
	file, err := mainDatabaseFile(ctx, db.SQL)
	if err != nil || file == "" {
		return "", 0, err
	}
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	return file + wakePathSuffix, mode, nil
}

// mainDatabaseFile is the file of SQLite's main database, "" for one in
// memory.
func mainDatabaseFile(ctx context.Context, db *sql.DB) (string, error) {
	rows, err := db.QueryContext(ctx, "PRAGMA database_list")
	if err != nil {
		return "", fmt.Errorf("read the database's file name: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		var name, file string
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", fmt.Errorf("read the database's file name: %w", err)
		}
		if name == "main" {
			return file, rows.Close()
		}
	}
	return "", rows.Err()
}

// wakeOthers tells the workers of other processes on this SQLite file
// that a job was queued in the shared queue. Call it after the commit.
func (r *Runner) wakeOthers() {
	if r.wake.path == "" {
		return
	}
	f, err := os.OpenFile(r.wake.path, os.O_WRONLY|os.O_CREATE, r.wake.mode)
	if err == nil {
		// One byte: a write of none is no change to inotify.
		_, err = f.WriteAt([]byte{'\n'}, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil && r.wake.warned.CompareAndSwap(false, true) {
		r.log.Warn("wake file: cannot write it; runs queued here start in other worker processes at their next poll (a second by default)",
			"path", r.wake.path, "err", err)
	}
}

// watchWakeFile starts watching the wake file (a worker of the shared
// queue on a SQLite file: a private queue's jobs are queued by its own
// process only); on failure it logs and leaves the runner to its poll.
func (r *Runner) watchWakeFile() {
	if r.wake.path == "" || r.fetch.wake == nil || r.cfg.Queue != river.QueueDefault {
		return
	}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = r.armWakeFile(w); err != nil {
			_ = w.Close()
		}
	}
	if err != nil {
		r.pollInstead(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.wake.stop, r.wake.done = cancel, make(chan struct{})
	go func() {
		defer close(r.wake.done)
		defer w.Close()
		r.wakeFileLoop(ctx, w)
	}()
}

// armWakeFile makes the wake file if it is absent and watches it.
func (r *Runner) armWakeFile(w *fsnotify.Watcher) error {
	f, err := os.OpenFile(r.wake.path, os.O_RDONLY|os.O_CREATE, r.wake.mode)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return w.Add(r.wake.path)
}

func (r *Runner) pollInstead(err error) {
	r.log.Warn("wake file: cannot watch it; runs queued by other processes start at this worker's next poll",
		"path", r.wake.path, "err", err, "poll", r.cfg.PollInterval)
}

// wakeFileLoop wakes this worker for each change of the wake file, until
// ctx ends or the file can no longer be watched. Changes that arrive
// together wake it once.
func (r *Runner) wakeFileLoop(ctx context.Context, w *fsnotify.Watcher) {
	for {
		var rearm bool
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			rearm = gone(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				// A read of the watch failed: it may fail again at
				// once, and a loop of wakes would cost more than the poll.
				r.pollInstead(err)
				r.wakeHere()
				return
			}
			// Events were lost (the queue overflowed); one may have been
			// a wake.
		}
		for more := true; more; {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				rearm = rearm || gone(ev)
			default:
				more = false
			}
		}
		if rearm {
			if err := r.armWakeFile(w); err != nil {
				r.pollInstead(err)
				r.wakeHere()
				return
			}
		}
		r.wakeHere()
	}
}

// gone says the watched file was removed or renamed: its watch has ended.
func gone(ev fsnotify.Event) bool { return ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) }

// stopWatchingWakeFile ends the watch and waits for it.
func (r *Runner) stopWatchingWakeFile() {
	if r.wake.stop == nil {
		return
	}
	r.wake.stop()
	<-r.wake.done
	r.wake.stop = nil
}
