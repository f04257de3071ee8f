package stamp

import (
	"encoding/json"
	"testing"
	"time"
)

func TestStampWritesMicrosecondsInUTC(t *testing.T) {
	east := time.FixedZone("east", 2*3600)
	cases := []struct {
		name string
		in   time.Time
		want string
	}{
		{"nanoseconds are cut, not rounded", time.Date(2026, 3, 4, 5, 6, 7, 123456999, time.UTC), `"2026-03-04T05:06:07.123456Z"`},
		{"microseconds as they are", time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC), `"2026-03-04T05:06:07.123456Z"`},
		{"trailing zeros kept", time.Date(2026, 3, 4, 5, 6, 7, 100000000, time.UTC), `"2026-03-04T05:06:07.100000Z"`},
		{"a whole second", time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), `"2026-03-04T05:06:07.000000Z"`},
		{"another zone in UTC", time.Date(2026, 3, 4, 7, 6, 7, 5000, east), `"2026-03-04T05:06:07.000005Z"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range []Time{Of(tc.in), Time(tc.in)} {
				b, err := json.Marshal(s)
				if err != nil || string(b) != tc.want {
					t.Errorf("%v: %s, %v; want %s", tc.in, b, err, tc.want)
				}
				var back Time
				if err := json.Unmarshal(b, &back); err != nil || !back.Time().Equal(tc.in.Truncate(time.Microsecond)) {
					t.Errorf("read back %v, %v; want %v", back.Time(), err, tc.in.Truncate(time.Microsecond))
				}
			}
		})
	}
	if OfPtr(nil) != nil {
		t.Error("OfPtr(nil) is not nil")
	}
	if _, err := json.Marshal(Time(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))); err == nil {
		t.Error("a year past 9999 was written")
	}
}
