//go:build !unix

package evaluator

import "time"

// processCPU is not measured outside unix.
func processCPU() (time.Duration, bool) { return 0, false }
