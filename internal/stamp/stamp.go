// Package stamp writes the moments the product exports (run and
// experiment JSON, API answers) one way on every database.
//
// A moment is written in UTC to the microsecond, always with six digits
// ("2026-12-04T22:40:17.123400Z"). Microseconds because they are the
// finest both databases keep: PostgreSQL stores microseconds (pgx drops
// the rest on the way in), SQLite stores what Go gave it, nanoseconds. A
// moment exported as it was read said nanoseconds on SQLite and
// microseconds on PostgreSQL, so the same data exported from the two
// differed; cut to microseconds, they are the same bytes. Six digits
// always, never trimmed as RFC 3339 "nano" does, so that the exports of
// two moments have the same width and sort as they compare.
package stamp

import (
	"encoding/json"
	"fmt"
	"time"
)

// Layout is how a moment is written: RFC 3339 with six fractional digits.
// Go's formatting cuts the digits beyond six, never rounds them.
const Layout = "2006-01-02T15:04:05.000000Z07:00"

// Time is a moment as exports write it (see the package's comment).
type Time time.Time

// Of returns t to export.
func Of(t time.Time) Time { return Time(t.UTC().Truncate(time.Microsecond)) }

// OfPtr returns *t to export, nil for nil.
func OfPtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	s := Of(*t)
	return &s
}

// Time returns the moment.
func (s Time) Time() time.Time { return time.Time(s) }

// Equal reports whether s and u are the same moment.
func (s Time) Equal(u Time) bool { return time.Time(s).Equal(time.Time(u)) }

// String is the moment as exports write it.
func (s Time) String() string { return time.Time(s).UTC().Format(Layout) }

// MarshalJSON implements json.Marshaler.
func (s Time) MarshalJSON() ([]byte, error) {
	t := time.Time(s)
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("stamp: year %d outside [0, 9999]", y)
	}
	return []byte(`"` + s.String() + `"`), nil
}

// UnmarshalJSON implements json.Unmarshaler: any RFC 3339 moment.
func (s *Time) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return fmt.Errorf("a moment must be an RFC 3339 string: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return err
	}
	*s = Time(t)
	return nil
}
