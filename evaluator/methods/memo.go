package methods

import (
	"context"
	"maps"
	"sync"
)

// Memo remembers, for one run, what a method has learned about the
// endpoint, so the discovery is made once and not once per sample. Units
// run concurrently: while one unit finds a fact out, the others that need
// it wait for the answer instead of each sending a probe of their own.
//
// Which unit finds out first is fixed when the runner names a lead unit
// (StartLead, Unit.Lead): the first pending unit of the run's first pass.
// Otherwise it would be whichever unit asked first, and an identical
// re-run could probe with another sample's request than the run that paid
// for the answers, one the answer cache does not hold.
type Memo struct {
	mu      sync.Mutex
	known   map[string]string
	probing map[string]chan struct{}
	// leading is open while the lead unit has yet to find out (StartLead
	// to EndLead); nil when there is no lead.
	leading chan struct{}
	// settled is closed at the next Settle, for the units waiting for
	// the lead (nil when none waits).
	settled chan struct{}
}

// NewMemo returns a memo that already knows known (e.g. facts stored with
// the run by an earlier execution).
func NewMemo(known map[string]string) *Memo {
	m := &Memo{known: map[string]string{}, probing: map[string]chan struct{}{}}
	maps.Copy(m.known, known)
	return m
}

// StartLead makes the units that are not the lead (Unit.Lead) wait, for
// anything not yet known, until EndLead: the lead unit finds out first.
// The runner must call EndLead once the lead unit has judged, or as soon
// as it knows that it will not (no such unit is pending, the run stops).
func (m *Memo) StartLead() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leading == nil {
		m.leading = make(chan struct{})
	}
}

// EndLead ends StartLead's wait; calling it again does nothing.
func (m *Memo) EndLead() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leading != nil && !isClosed(m.leading) {
		close(m.leading)
	}
}

// Await returns the known value of key, for a unit that is not the lead.
func (m *Memo) Await(ctx context.Context, key string) (value string, mine bool, err error) {
	return m.AwaitAs(ctx, key, false)
}

// AwaitAs returns the known value of key. When nothing is known and no
// other unit is finding out, it returns "" and mine = true: the caller must
// then call Settle(key, ...) exactly once. Otherwise it waits for the unit
// that is finding out, or, while the lead unit has yet to judge (StartLead)
// and the caller is not it (lead), for the lead unit. It returns ctx's
// error if ctx ends first.
func (m *Memo) AwaitAs(ctx context.Context, key string, lead bool) (value string, mine bool, err error) {
	for {
		m.mu.Lock()
		if v, ok := m.known[key]; ok {
			m.mu.Unlock()
			return v, false, nil
		}
		wait, busy := m.probing[key]
		var leading chan struct{}
		if !busy {
			if !lead && m.leading != nil && !isClosed(m.leading) {
				// The lead unit finds out first: wait until a key is
				// settled, or the lead unit has judged.
				if m.settled == nil {
					m.settled = make(chan struct{})
				}
				wait, leading = m.settled, m.leading
			} else {
				m.probing[key] = make(chan struct{})
				m.mu.Unlock()
				return "", true, nil
			}
		}
		m.mu.Unlock()
		select {
		case <-wait:
		case <-leading: // nil, never ready, unless waiting for the lead
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Settle ends the caller's finding out of key: value becomes known, or,
// when value is "", the question stays open for the next unit to try
// (the probe failed for a reason that says nothing about the endpoint).
func (m *Memo) Settle(key, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if value != "" {
		m.known[key] = value
	}
	if ch, ok := m.probing[key]; ok {
		close(ch)
		delete(m.probing, key)
	}
	if m.settled != nil {
		close(m.settled)
		m.settled = nil
	}
}

// Known returns a copy of everything known.
func (m *Memo) Known() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.known)
}
