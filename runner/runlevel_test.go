package runner

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
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
		// Out of credits (OpenRouter's 402): every later batch is refused
		// the same way until the account is topped up.
		{judge.KindPayment, true, false},
		// A base URL that answers with a web page (a chat front end's
		// own address, a sign-in page) answers every batch so.
		{judge.KindNotAPI, true, false},
		{judge.KindMalformed, false, false},
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
		if gotStop {
			// The run's error, as its page shows it: the judge's settings,
			// not the code path ("stopping the run: judge: ..."), and still
			// the judge's error underneath.
			var je *judge.Error
			if msg := err.Error(); !strings.HasPrefix(msg, "the run stopped, since no call can succeed until the judge's settings are corrected: ") ||
				strings.Contains(msg, "judge: ") || !errors.As(err, &je) || je.Kind != tc.kind {
				t.Errorf("%s: stop error %q (judge error %v)", tc.kind, msg, je)
			}
		}
	}
}

// TestRateLimitWaitSaysWhoChoseIt: the wait a rate-limited run shows says
// how long, until when, and whether the judge named that time or the run
// chose it (a 429 without Retry-After waits a minute).
func TestRateLimitWaitSaysWhoChoseIt(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		want       []string
		wantNot    string
	}{
		{"judge named the wait", 5 * time.Minute, []string{"HTTP 429). The run waits 5m0s (as the judge asked), sending nothing, and goes on by itself at 2026-03-01 10:05:00 UTC."}, "named no time"},
		{"no Retry-After", 0, []string{"waits 1m0s (the judge named no time)", "at 2026-03-01 10:01:00 UTC"}, "as the judge asked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rl *rateLimited
			if !errors.As(runLevel(&judge.Error{Kind: judge.KindRateLimited, Status: 429, RetryAfter: tc.retryAfter}), &rl) {
				t.Fatal("a 429 is not a rate limit")
			}
			got := rl.waiting(now)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
			if strings.Contains(got, tc.wantNot) {
				t.Errorf("%q says %q", got, tc.wantNot)
			}
		})
	}
}

// TestJudgeRefusedByTheNetworkPolicyStopsTheRun: a judge call the network
// policy refuses (the dialer's refusal, under a net.OpError) stops the run
// with the refusal; it was taken for a lost database connection, and the
// run paused and resumed forever. A database connection that drops still
// pauses the run.
func TestJudgeRefusedByTheNetworkPolicyStopsTheRun(t *testing.T) {
	refusal := &judge.EgressError{Addr: netip.MustParseAddrPort("127.0.0.1:11434"), Reason: "loopback addresses are off on this server"}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: refusal}
	stop := runLevel(&judge.Error{Kind: judge.KindRefused, Message: refusal.Error(), Err: &url.Error{Op: "Post", URL: "http://127.0.0.1:11434/v1/chat/completions", Err: dial}})
	if stop == nil {
		t.Fatal("a refused judge address does not stop the run")
	}
	if pausesForDatabase(stop) {
		t.Errorf("a refused judge address pauses the run as if the database were down: %v", stop)
	}
	if !pausesForDatabase(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}) {
		t.Error("a dropped database connection no longer pauses the run")
	}
}
