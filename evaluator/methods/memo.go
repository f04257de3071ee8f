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
type Memo struct {
	mu      sync.Mutex
	known   map[string]string
	probing map[string]chan struct{}
}

// NewMemo returns a memo that already knows known (e.g. facts stored with
// the run by an earlier execution).
func NewMemo(known map[string]string) *Memo {
	m := &Memo{known: map[string]string{}, probing: map[string]chan struct{}{}}
	maps.Copy(m.known, known)
	return m
}

// Await returns the known value of key. When nothing is known and no
// other unit is finding out, it returns "" and mine = true: the caller must
// then call Settle(key, ...) exactly once. Otherwise it waits for the unit
// that is finding out. It returns ctx's error if ctx ends first.
func (m *Memo) Await(ctx context.Context, key string) (value string, mine bool, err error) {
	for {
		m.mu.Lock()
		if v, ok := m.known[key]; ok {
			m.mu.Unlock()
			return v, false, nil
		}
		ch, busy := m.probing[key]
		if !busy {
			m.probing[key] = make(chan struct{})
			m.mu.Unlock()
			return "", true, nil
		}
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
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
}

// Known returns a copy of everything known.
func (m *Memo) Known() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.known)
}
