package web

import "math"

// IsMissing says whether a score or rating is missing: nil, or NaN (a
// value that could not be read is missing, never 0).
func IsMissing(v *float64) bool { return v == nil || math.IsNaN(*v) }
