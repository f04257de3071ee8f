//go:build !unix

package proccpu

// Read reports nothing outside unix.
func Read() (Usage, bool) { return Usage{}, false }
