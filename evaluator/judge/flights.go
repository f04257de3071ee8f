package judge

import (
	"context"
	"sync"
	"time"
)

// Flights lets the Caches of one process share the calls they make: when
// several runs send the same request at the same time ("Launch all
// methods" starts runs whose first rounds are identical), the store has
// no answer for any of them yet, and each would pay for the call. With
// Flights, the first asks the judge and the others wait for its answer,
// which they get as from the store: free, counted as cached. Each then
// replays the same answer when run again, where otherwise the store kept
// whichever answer was written first and a re-run of the others read an
// answer they never had.
//
// An answer stays shared for a little while after it arrives (flightKeep),
// until the store surely has it: a run that asks just after would find
// the store without it (it is written with the next group commit).
//
// Calls are shared within one process only; workers in other processes
// may still each pay for one.
type Flights struct {
	mu sync.Mutex
	m  map[flightKey]*flight
}

// flightKeep is how long a finished call's answer stays shared.
const flightKeep = 30 * time.Second

type flightKey struct {
	scope      string // the store's (a workspace's answers)
	hash       string
	occurrence int
}

type flight struct {
	done  chan struct{}
	resp  Response
	err   error
	ended time.Time // zero while the call is under way
}

// NewFlights returns an empty registry of shared calls.
func NewFlights() *Flights { return &Flights{m: map[flightKey]*flight{}} }

// join returns the flight of k and whether the caller leads it (makes the
// call and must end it).
func (fs *Flights) join(k flightKey) (*flight, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	now := time.Now()
	if f, ok := fs.m[k]; ok && (f.ended.IsZero() || now.Sub(f.ended) < flightKeep) {
		return f, false
	}
	if len(fs.m) > 4096 {
		// Sweep the finished flights now and then rather than on a timer.
		for key, f := range fs.m {
			if !f.ended.IsZero() && now.Sub(f.ended) >= flightKeep {
				delete(fs.m, key)
			}
		}
	}
	f := &flight{done: make(chan struct{})}
	fs.m[k] = f
	return f, true
}

// end records the leader's outcome and wakes the waiters. A failed call
// is not kept: the next asker makes its own.
func (fs *Flights) end(k flightKey, f *flight, resp Response, err error) {
	fs.mu.Lock()
	f.resp, f.err, f.ended = resp, err, time.Now()
	if err != nil && fs.m[k] == f {
		delete(fs.m, k)
	}
	fs.mu.Unlock()
	close(f.done)
}

// paid is what the leader's call cost; read once wait has returned true.
func (f *flight) paid() Hit {
	return Hit{PromptTokens: f.resp.PromptTokens, CompletionTokens: f.resp.CompletionTokens}
}

// wait returns the answer of a flight led by another caller; ok is false
// when that call failed (the caller then asks the judge itself).
func (f *flight) wait(ctx context.Context) (Response, bool, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return Response{}, false, context.Cause(ctx)
	}
	if f.err != nil || len(f.resp.Choices) == 0 {
		return Response{}, false, nil
	}
	return Response{Choices: f.resp.Choices, Model: f.resp.Model}, true, nil
}
