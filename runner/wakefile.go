package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

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
// so it costs no CPU while nothing changes, and it lets a parked worker
// look for due jobs every 5 s instead of every second (parkedPoll): its
// poll is then a backstop for jobs coming due (retries, snoozes) and for
// inserts that write no wake file. An awake worker's River keeps its own
// poll (PollInterval). (Watching the database's own -wal
// file would wake every worker at every write of every run; PRAGMA
// data_version is a poll again.)
//
// The file holds one byte and means nothing but its changes: it is
// created with the database file's mode when first needed. Removed or
// renamed while watched, it is made again and watched again, and the
// worker wakes once, since a write made between the two would go unseen.
// Where it cannot be made or watched (a read-only folder without the file,
// no inotify, none of the user's instances left: the log line says which
// limit and how to raise it), the worker logs that once and keeps to its
// 1 s poll, parked too; a process that cannot write it logs that once, and
// its runs start at the workers' next poll. One process opens one inotify
// instance, shared by its runners (wakeWatch). inotify sees the writes of this
// machine only, as SQLite's own locking needs anyway.
//
// Mail has a wake file of its own, "<database>-wake-mail" (mailWakeSuffix),
// written when mail is queued: a mail-only process (`serve --no-worker`
// with the SMTP settings) watches that one only, so the runs, webhook
// deliveries and other jobs queued for the workers no longer wake it
// (before, with one file for every queue, each such job started its
// parked River client for a fetch that found nothing). A worker watches
// both: it works the mail queue when it has the mail settings.

// wakeFile is a runner's wake file.
type wakeFile struct {
	// path is "<database>-wake"; empty on PostgreSQL and for a database
	// in memory, where there is no file to wake through.
	path string
	// mailPath is "<database>-wake-mail", written for mail only; empty
	// where path is.
	mailPath string
	// mode is the database file's permission bits (0600 as the product
	// creates it): the wake file is created with them.
	mode fs.FileMode
	// warned is set once a failed write of the file has been logged.
	warned atomic.Bool
	// watched is set while this worker watches the file (wakeWatch): its
	// poll while parked is then only a backstop (parkedPoll).
	watched atomic.Bool
}

// wakePathSuffix is added to the database file's path to name its wake
// file, as SQLite names its "-wal" and "-shm" files beside it.
const wakePathSuffix = "-wake"

// mailWakeSuffix is added to the wake file's path to name mail's.
const mailWakeSuffix = "-mail"

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
func (r *Runner) wakeOthers() { r.writeWakeFile(r.wake.path) }

// wakeMailOthers tells the processes on this SQLite file that work the
// mail queue (workers with mail settings, mail-only processes) that mail
// was queued. Call it after the commit.
func (r *Runner) wakeMailOthers() { r.writeWakeFile(r.wake.mailPath) }

// writeWakeFile changes the wake file at path, waking its watchers.
func (r *Runner) writeWakeFile(path string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, r.wake.mode)
	if err == nil {
		// One byte: a write of none is no change to inotify.
		_, err = f.WriteAt([]byte{'\n'}, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil && r.wake.warned.CompareAndSwap(false, true) {
		r.log.Warn("wake file: cannot write it; runs queued here start in other worker processes at their next poll (a second by default; up to 5 s in a parked worker)",
			"path", path, "err", err)
	}
}

// watchWakeFile starts watching the wake file (a worker of the shared
// queue on a SQLite file: a private queue's jobs are queued by its own
// process only); on failure it logs and leaves the runner to its poll.
func (r *Runner) watchWakeFile() {
	if r.wake.path == "" || r.fetch.wake == nil || r.cfg.Queue != river.QueueDefault {
		return
	}
	if err := processWakeWatch.add(r); err != nil {
		r.pollInstead(err)
	}
}

// wakePaths are the wake files this runner watches: mail's alone for a
// mail-only process, both for a worker (which works mail once it has the
// mail settings, possibly set after it started).
func (r *Runner) wakePaths() []string {
	if r.wake.path == "" {
		return nil
	}
	if r.mailOnly() {
		return []string{r.wake.mailPath}
	}
	return []string{r.wake.path, r.wake.mailPath}
}

// stopWatchingWakeFile ends this runner's watch: no wake from the wake
// file reaches it once this returns.
func (r *Runner) stopWatchingWakeFile() { processWakeWatch.remove(r) }

// processWakeWatch is this process's one watcher of wake files.
var processWakeWatch wakeWatch

// wakeWatch watches the wake files of a process's workers through one
// inotify instance (an fsnotify.Watcher) that all of its runners share,
// whatever files they are on: a user may open only
// fs.inotify.max_user_instances of them (128 by default), across all of
// its processes, and a worker that finds none left keeps to its 1 s poll.
// (A process has one worker runner; tests make many.) The watcher is
// opened for the first runner and closed after the last.
type wakeWatch struct {
	mu sync.Mutex
	// w is the watcher, nil while no runner watches; subs holds the
	// runners woken by each watched wake file.
	w    *fsnotify.Watcher
	subs map[string]map[*Runner]struct{}
	// done is closed when w's loop has ended.
	done chan struct{}
}

// add starts waking r at each change of its wake files (wakePaths): all
// of them, or none and an error.
func (ww *wakeWatch) add(r *Runner) error {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.w == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return err
		}
		ww.start(w)
	}
	paths := r.wakePaths()
	for i, path := range paths {
		subs := ww.subs[path]
		if subs == nil {
			if err := armWakeFile(ww.w, path, r.wake.mode); err != nil {
				for _, done := range paths[:i] {
					ww.unsubscribeLocked(r, done)
				}
				ww.closeIfUnusedLocked()
				return err
			}
			subs = map[*Runner]struct{}{}
			ww.subs[path] = subs
		}
		subs[r] = struct{}{}
	}
	r.wake.watched.Store(true)
	return nil
}

// unsubscribeLocked stops waking r at changes of path, and stops watching
// path once no runner is woken by it. ww.mu is held.
func (ww *wakeWatch) unsubscribeLocked(r *Runner, path string) {
	subs := ww.subs[path]
	if _, in := subs[r]; !in {
		return
	}
	delete(subs, r)
	if len(subs) == 0 {
		delete(ww.subs, path)
		// Fails when the file is gone, its watch with it.
		_ = ww.w.Remove(path)
	}
}

// start makes w the watcher and starts its loop. ww.mu is held (or ww is
// not shared yet).
func (ww *wakeWatch) start(w *fsnotify.Watcher) {
	ww.w, ww.subs, ww.done = w, map[string]map[*Runner]struct{}{}, make(chan struct{})
	go ww.loop(w, ww.done)
}

// remove stops waking r; the watcher is closed after its last runner.
func (ww *wakeWatch) remove(r *Runner) {
	ww.mu.Lock()
	if ww.w == nil {
		ww.mu.Unlock()
		return
	}
	for _, path := range r.wakePaths() {
		ww.unsubscribeLocked(r, path)
	}
	r.wake.watched.Store(false)
	done := ww.closeIfUnusedLocked()
	ww.mu.Unlock()
	if done != nil {
		<-done
	}
}

// closeIfUnusedLocked closes the watcher when no file is watched any
// more, and returns what its loop closes when it ends (nil when nothing
// was closed). ww.mu is held.
func (ww *wakeWatch) closeIfUnusedLocked() chan struct{} {
	if ww.w == nil || len(ww.subs) > 0 {
		return nil
	}
	_ = ww.w.Close()
	done := ww.done
	ww.w, ww.subs, ww.done = nil, nil, nil
	return done
}

// loop wakes the runners of each wake file that changes, until w is
// closed or can no longer be read. Changes that arrive together wake each
// runner once.
func (ww *wakeWatch) loop(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	for {
		changed, rearm := map[string]bool{}, map[string]bool{}
		var all bool
		var failed error
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			changed[ev.Name], rearm[ev.Name] = true, gone(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost (the queue overflowed); any may have
				// been a wake.
				all = true
			} else {
				// A read of the watch failed: it may fail again at once,
				// and a loop of wakes would cost more than the poll.
				failed = err
			}
		}
		for more := true; more; {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				changed[ev.Name], rearm[ev.Name] = true, rearm[ev.Name] || gone(ev)
			default:
				more = false
			}
		}
		if !ww.dispatch(w, changed, rearm, all, failed) {
			return
		}
	}
}

// dispatch wakes the runners of the changed files (of all files when all
// is set), watching again the files in rearm first; when failed is set
// the watch has ended, and every runner is woken once and left to its
// poll. False when w is no longer the watcher.
func (ww *wakeWatch) dispatch(w *fsnotify.Watcher, changed, rearm map[string]bool, all bool, failed error) bool {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.w != w {
		return false // closed after its last runner left
	}
	if failed != nil {
		told := map[*Runner]bool{} // a worker watching both files says it once
		for path, subs := range ww.subs {
			ww.dropLocked(path, subs, failed, told)
		}
		_ = w.Close()
		ww.w, ww.subs, ww.done = nil, nil, nil
		return false
	}
	for path, subs := range ww.subs {
		if !all && !changed[path] {
			continue
		}
		if rearm[path] {
			var mode fs.FileMode
			for r := range subs {
				mode = r.wake.mode
				break
			}
			if err := armWakeFile(w, path, mode); err != nil {
				ww.dropLocked(path, subs, err, map[*Runner]bool{})
				continue
			}
		}
		for r := range subs {
			r.wakeHere()
		}
	}
	return true
}

// dropLocked stops watching path for its runners after err: each says so,
// and wakes once (a change may have gone unseen), unless told holds it
// already (dropped from another file for the same err). ww.mu is held.
func (ww *wakeWatch) dropLocked(path string, subs map[*Runner]struct{}, err error, told map[*Runner]bool) {
	delete(ww.subs, path)
	_ = ww.w.Remove(path)
	for r := range subs {
		r.wake.watched.Store(false)
		if told[r] {
			continue
		}
		told[r] = true
		r.pollInstead(err)
		r.wakeHere()
	}
}

// armWakeFile makes the wake file if it is absent and watches it.
func armWakeFile(w *fsnotify.Watcher, path string, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, mode)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return w.Add(path)
}

// gone says the watched file was removed or renamed: its watch has ended.
func gone(ev fsnotify.Event) bool { return ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) }

// pollInstead says that this worker cannot watch its wake file, why, and,
// when a limit of inotify's stood in the way, how to raise it.
func (r *Runner) pollInstead(err error) {
	msg := "wake file: cannot watch it; runs queued by other processes start at this worker's next poll"
	if why, fix := watchLimit(err); why != "" {
		msg = "wake file: cannot watch it: " + why + "; runs queued by other processes start at this worker's next poll. " + fix
	}
	r.log.Warn(msg, "path", r.wake.path, "err", err, "poll", r.cfg.PollInterval)
}

// inotifyLimits is where Linux shows inotify's per-user limits.
const inotifyLimits = "/proc/sys/fs/inotify/"

// watchLimit names the inotify limit behind err, if one is, with its
// current value, and how to raise it; "" otherwise.
func watchLimit(err error) (why, fix string) {
	var name, what string
	switch {
	case errors.Is(err, syscall.EMFILE):
		// inotify_init1: the user's instances, or this process's files.
		name, what = "max_user_instances", "this user's inotify instances are all in use (at most %s, across all of the user's processes) or this process has as many files open as it may (ulimit -n)"
	case errors.Is(err, syscall.ENOSPC):
		// inotify_add_watch: the user's watches.
		name, what = "max_user_watches", "this user's inotify watches are all in use (at most %s, across all of the user's processes)"
	default:
		return "", ""
	}
	limit := "?"
	if b, err := os.ReadFile(inotifyLimits + name); err == nil {
		limit = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf(what, limit), fmt.Sprintf("To raise the limit, as root: `sysctl -w fs.inotify.%s=<higher>` (and a line `fs.inotify.%s = <higher>` in /etc/sysctl.d/ to keep it after a restart), then restart this worker", name, name)
}
