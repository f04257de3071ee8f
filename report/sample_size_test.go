package report

import (
	"testing"
	"unsafe"
)

// TestSampleResultSize: a running run's figures hold one SampleResult a
// sample and criterion, a million at the live bound, so its size is the
// largest part of what they keep (livemem45's BENCHMARKS.md section:
// 128 MiB of 183 held). livemem45b made the position and the counts int32:
// 112 bytes, not 128. Fails on the code before (128).
func TestSampleResultSize(t *testing.T) {
	cases := []struct {
		what string
		got  uintptr
		max  uintptr
	}{
		{"SampleResult", unsafe.Sizeof(SampleResult{}), 112},
		{"its position", unsafe.Sizeof(SampleResult{}.Position), 4},
		{"its counts", unsafe.Sizeof(SampleResult{}.Missing) + unsafe.Sizeof(SampleResult{}.NoAnswer) + unsafe.Sizeof(SampleResult{}.TooFew), 12},
	}
	for _, c := range cases {
		if c.got > c.max {
			t.Errorf("%s takes %d bytes, want at most %d", c.what, c.got, c.max)
		}
	}
}
