package judge

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// hangingDialer is an HTTP client whose connections never open: each dial
// waits until its context ends (a judge whose TLS handshake or SYN never
// completes), telling dialing when it starts.
func hangingDialer(dialing chan<- struct{}) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		select {
		case dialing <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
}

// TestNeverSentOnlyWhenNothingWentOut: a call whose attempts never wrote
// their request out (nothing listens; cancelled while its connection was
// being opened) is marked NeverSent, and the answer cache does not log it
// as a paid call of the unit: the endpoint never saw it, so the run's
// calls must not count it (they did: a judge that was down added a failed
// paid call per unit). A call that reached the endpoint is not marked,
// and is logged as before: answered with an error status, or cancelled
// after its request was written.
func TestNeverSentOnlyWhenNothingWentOut(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the client config and a function that cancels
		// the call at the moment the case is about (nil: never).
		setup     func(t *testing.T) (Config, func(cancel context.CancelFunc))
		kind      ErrorKind
		neverSent bool
	}{
		{name: "nothing listens", kind: KindNetwork, neverSent: true, setup: func(t *testing.T) (Config, func(context.CancelFunc)) {
			f := newFake(t, ok)
			cfg := testConfig(f)
			cfg.MaxAttempts = 2
			f.srv.Close()
			return cfg, nil
		}},
		{name: "cancelled while connecting", kind: KindCancelled, neverSent: true, setup: func(t *testing.T) (Config, func(context.CancelFunc)) {
			f := newFake(t, ok)
			cfg := testConfig(f)
			dialing := make(chan struct{}, 1)
			cfg.HTTPClient = hangingDialer(dialing)
			return cfg, func(cancel context.CancelFunc) {
				<-dialing
				cancel()
			}
		}},
		{name: "cancelled once the request arrived", kind: KindCancelled, neverSent: false, setup: func(t *testing.T) (Config, func(context.CancelFunc)) {
			f := newFake(t, reply{status: 200, body: okBody("late"), delay: 5 * time.Second})
			return testConfig(f), func(cancel context.CancelFunc) {
				<-f.arrived
				cancel()
			}
		}},
		{name: "answered with an error status", kind: KindServer, neverSent: false, setup: func(t *testing.T) (Config, func(context.CancelFunc)) {
			f := newFake(t, reply{status: 500}, reply{status: 500})
			cfg := testConfig(f)
			cfg.MaxAttempts = 2
			return cfg, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, at := tc.setup(t)
			c := mustNew(t, cfg)
			log := &PaidLog{}
			ctx, cancel := context.WithCancel(WithUnit(context.Background(), Unit{ID: 1, Paid: log}))
			defer cancel()
			if at != nil {
				go at(cancel)
			}
			cache := NewCache(c, &memStore{answers: map[AnswerKey][]byte{}}, cfg.BaseURL, cfg.Model)
			_, err := cache.Complete(ctx, simpleRequest())
			e := judgeError(t, err)
			if e.Kind != tc.kind || e.Attempts == 0 {
				t.Fatalf("kind %q after %d attempts (%v), want %q after at least one", e.Kind, e.Attempts, err, tc.kind)
			}
			if e.NeverSent != tc.neverSent || NeverSentOf(err) != tc.neverSent {
				t.Errorf("NeverSent = %v, want %v (%v)", e.NeverSent, tc.neverSent, err)
			}
			// Logged as a failed paid call only when it reached the
			// endpoint and this process did not abandon it (sentFailure).
			wantPaid := 0
			if !tc.neverSent && ctx.Err() == nil {
				wantPaid = 1
			}
			if got := log.Calls(); len(got) != wantPaid {
				t.Errorf("paid calls logged %+v, want %d", got, wantPaid)
			}
		})
	}
}
