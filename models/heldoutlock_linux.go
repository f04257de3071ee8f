package models

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// heldOutLocking says this system has the held-out launch locks.
const heldOutLocking = true

// lockByte write-locks byte off of f for f's open file description (not
// the process: two descriptions in one process conflict too): false when
// another holds it.
func lockByte(f *os.File, off int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: off, Len: 1}
	err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return false, nil
	}
	return err == nil, err
}

// byteLocked says whether another open file description holds a lock on
// byte off of f.
func byteLocked(f *os.File, off int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: off, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false, err
	}
	return lk.Type != unix.F_UNLCK, nil
}
