package web

import (
	"testing"
	"time"
)

func TestTokenExpiryWordsHowSoon(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	day := 24 * time.Hour
	for _, c := range []struct {
		expires *time.Time
		want    string
	}{
		{nil, "never expires"},
		{at(-time.Second), "expired 2026-12-04"},
		{at(0), "expired 2026-12-04"},
		{at(time.Minute), "expires 2026-12-04, in under a day"},
		{at(day), "expires 2026-12-05, in 1 day"},
		{at(3*day + time.Hour), "expires 2026-12-07, in 3 days"},
		{at(7 * day), "expires 2026-12-11, in 7 days"},
		{at(7*day + time.Second), "expires 2026-12-11"},
		{at(30 * day), "expires 2027-01-03"},
	} {
		if got := TokenExpiry(c.expires, now); got != c.want {
			t.Errorf("TokenExpiry(%v) = %q, want %q", c.expires, got, c.want)
		}
	}
}
