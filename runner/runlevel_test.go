package runner

import (
	"errors"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestRunLevel: which judge failures stop or pause the whole run, and
// which only fail one batch. A refused address (egress policy, redirect)
// used to fail every batch one by one while the run went on.
func TestRunLevel(t *testing.T) {
	for _, tc := range []struct {
		kind      judge.ErrorKind
		stop      bool // the run stops (an error that is not a rate limit)
		rateLimit bool
	}{
		{judge.KindAuth, true, false},
		{judge.KindNotFound, true, false},
		{judge.KindRefused, true, false},
		{judge.KindRateLimited, false, true},
		{judge.KindTimeout, false, false},
		{judge.KindServer, false, false},
		{judge.KindBadRequest, false, false},
	} {
		err := runLevel(&judge.Error{Kind: tc.kind, RetryAfter: time.Second})
		var rl *rateLimited
		gotRate := errors.As(err, &rl)
		gotStop := err != nil && !gotRate
		if gotStop != tc.stop || gotRate != tc.rateLimit {
			t.Errorf("%s: runLevel = %v; want stop %v, rate limit %v", tc.kind, err, tc.stop, tc.rateLimit)
		}
	}
}
