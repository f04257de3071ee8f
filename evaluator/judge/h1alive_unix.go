//go:build unix

package judge

import (
	"net"
	"syscall"
)

// connAlive reports whether a kept connection is still open: a peek at
// its socket that does not wait. The endpoint may have closed it while it
// was kept (vLLM's server, for one, closes connections idle for 5 s); a
// call written to it would fail after reaching nobody, and be counted as
// a failed attempt. Data waiting unasked for means the connection is out
// of step: not reused either.
func connAlive(raw net.Conn) bool {
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && alive
}
