package models

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// On a SQLite file a launch of held-out runs also holds a lock of the
// operating system's while it works: a byte of the file "<database>-heldout",
// the alignment's id its offset, locked (an open file description lock,
// fcntl F_OFD_SETLK) from before its claim until it ends. The kernel lets
// it go when the process ends, however it ends. Its lease alone could not
// tell a live launch from a dead one there: SQLite has one writer, and a
// copy that holds the write lock longer than the lease (two minutes, a few
// million samples) leaves the renewals waiting, its lease lapses, and
// another process could take the launch over once the copy committed (the
// first then stopped and rolled back its runs: never two copies, but a
// takeover and a "stopped" page for a launch that was working). So on
// SQLite a lease that lapsed is taken over, and said to have stopped, only
// when nobody holds the alignment's lock; a launch whose process ended is
// still seen stopped once its lease lapses. Processes on one SQLite file
// share its machine, as SQLite needs anyway. PostgreSQL has no such wait
// (the renewal writes a row the copy does not hold), and no file.

// heldOutLocks are the held-out launch locks this handle holds, by owner.
type heldOutLocks struct {
	mu   sync.Mutex
	held map[string]*os.File
	// path is the lock file ("" when there is none: PostgreSQL, a
	// database in memory), once found; mode the database file's.
	found bool
	path  string
	mode  os.FileMode
}

// heldOutLockSuffix is added to the database file's path to name the
// lock file, as SQLite names its "-wal" and "-shm" files beside it.
const heldOutLockSuffix = "-heldout"

// heldOutLockFile names the lock file, and the mode to make it with (the
// database file's).
func (db *DB) heldOutLockFile(ctx context.Context) (string, os.FileMode, error) {
	l := &db.heldOut
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.found {
		return l.path, l.mode, nil
	}
	if db.Dialect == SQLite && heldOutLocking {
		var file string
		if err := db.SQL.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
			return "", 0, fmt.Errorf("read the database's file name: %w", err)
		}
		if file != "" {
			l.path, l.mode = file+heldOutLockSuffix, 0o600
			if st, err := os.Stat(file); err == nil {
				l.mode = st.Mode().Perm()
			}
		}
	}
	l.found = true
	return l.path, l.mode, nil
}

// lockHeldOutLaunch takes alignment id's launch lock for owner: false when
// another launch holds it (in this process or another). True, holding
// nothing, where there is no lock file.
func (db *DB) lockHeldOutLaunch(ctx context.Context, id int64, owner string) (bool, error) {
	path, mode, err := db.heldOutLockFile(ctx)
	if err != nil || path == "" {
		return err == nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, mode)
	if err != nil {
		return false, fmt.Errorf("open the held-out launches' lock file: %w", err)
	}
	ok, err := lockByte(f, id)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return false, fmt.Errorf("lock the held-out launch of alignment %d: %w", id, err)
		}
		return false, nil
	}
	db.heldOut.mu.Lock()
	defer db.heldOut.mu.Unlock()
	if db.heldOut.held == nil {
		db.heldOut.held = map[string]*os.File{}
	}
	db.heldOut.held[owner] = f
	return true, nil
}

// unlockHeldOutLaunch lets owner's launch lock go, if this handle holds it.
func (db *DB) unlockHeldOutLaunch(owner string) {
	db.heldOut.mu.Lock()
	f := db.heldOut.held[owner]
	delete(db.heldOut.held, owner)
	db.heldOut.mu.Unlock()
	if f != nil {
		f.Close() // closing the description releases its lock
	}
}

// unlockAllHeldOut lets every launch lock of this handle go (Close).
func (db *DB) unlockAllHeldOut() {
	db.heldOut.mu.Lock()
	held := db.heldOut.held
	db.heldOut.held = nil
	db.heldOut.mu.Unlock()
	for _, f := range held {
		f.Close()
	}
}

// heldOutLaunchLocked says whether a launch (of any process) holds
// alignment id's launch lock: false where there is no lock file.
func (db *DB) heldOutLaunchLocked(ctx context.Context, id int64) (bool, error) {
	path, _, err := db.heldOutLockFile(ctx)
	if err != nil || path == "" {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return false, nil // no launch ever locked
	}
	if err != nil {
		return false, fmt.Errorf("open the held-out launches' lock file: %w", err)
	}
	defer f.Close()
	locked, err := byteLocked(f, id)
	if err != nil {
		return false, fmt.Errorf("look at the held-out launch lock of alignment %d: %w", id, err)
	}
	return locked, nil
}
