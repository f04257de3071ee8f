//go:build !linux

package models

import (
	"errors"
	"os"
)

// heldOutLocking says this system has the held-out launch locks: not
// here (the lease alone decides, as on PostgreSQL).
const heldOutLocking = false

func lockByte(*os.File, int64) (bool, error) {
	return false, errors.New("no held-out launch locks on this system")
}

func byteLocked(*os.File, int64) (bool, error) {
	return false, errors.New("no held-out launch locks on this system")
}
