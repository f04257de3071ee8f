package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestLeaseNewsRules: what a fence may take instead of a read of its own:
// a write's read at most leaseNewsFresh old; the read of a write under
// way when it begins after the fence asked (waiting for it); nothing when
// that read began earlier, when the write ends without reading, or when
// it has not read within leaseNewsFresh.
func TestLeaseNewsRules(t *testing.T) {
	ctx := context.Background()
	at := func(t0 time.Time) models.LeaseState {
		return models.LeaseState{Owner: "w1", Status: models.RunRunning, Began: t0}
	}

	var none *leaseNews
	if _, ok := none.lease(ctx, time.Now()); ok {
		t.Error("an execution without news took a lease read")
	}

	n := &leaseNews{}
	if _, ok := n.lease(ctx, time.Now()); ok {
		t.Error("a fence took a read when no write has read the lease")
	}
	read := time.Now()
	n.expect().tell(at(read))
	if st, ok := n.lease(ctx, read.Add(leaseNewsFresh/2)); !ok || !st.Began.Equal(read) {
		t.Errorf("a read %v old: took %v (%v), want it", leaseNewsFresh/2, ok, st.Began)
	}
	if _, ok := n.lease(ctx, read.Add(2*leaseNewsFresh)); ok {
		t.Errorf("a read %v old was taken", 2*leaseNewsFresh)
	}

	// A read showing the run cancelled is kept over a later one showing
	// it running (a write that began earlier saw the cancel).
	stopped := &leaseNews{}
	stopped.note(models.LeaseState{Owner: "w1", Status: models.RunCancelled, Began: read})
	stopped.note(at(read.Add(time.Millisecond)))
	if st, ok := stopped.lease(ctx, read.Add(time.Millisecond)); !ok || st.Status != models.RunCancelled {
		t.Errorf("after a cancelled read and a later running one, the fence took %q (%v), want cancelled", st.Status, ok)
	}

	// A write under way: the fence waits for its read, which begins after
	// the fence asked. The wait is long here: with leaseNewsFresh (5 ms) a
	// loaded machine could let the fence's timer run out before the write
	// tells, and the check failed about once a full suite under load.
	asked := read.Add(time.Hour)
	n = &leaseNews{wait: time.Minute}
	w := n.expect()
	got := make(chan models.LeaseState, 1)
	go func() {
		st, ok := n.lease(ctx, asked)
		if !ok {
			st = models.LeaseState{}
		}
		got <- st
	}()
	select {
	case st := <-got:
		t.Fatalf("the fence did not wait for the write under way (got %v)", st.Began)
	case <-time.After(leaseNewsFresh / 5):
	}
	later := asked.Add(time.Millisecond)
	w.tell(at(later))
	if st := <-got; !st.Began.Equal(later) {
		t.Errorf("the fence took %v, want the write's read at %v", st.Began, later)
	}
	w.end() // after tell: counts once
	n.mu.Lock()
	if n.writing != 0 {
		t.Errorf("%d writes still counted after the write told and ended", n.writing)
	}
	n.mu.Unlock()

	// A write whose read began before the fence asked (beyond the
	// window), and one that ends without reading: the fence reads itself.
	for _, tc := range []struct {
		name string
		end  func(*leaseWrite)
	}{
		{"read before the fence asked", func(w *leaseWrite) { w.tell(at(asked.Add(-time.Minute))) }},
		{"ended without a read", func(w *leaseWrite) { w.end() }},
	} {
		n := &leaseNews{}
		w := n.expect()
		time.AfterFunc(leaseNewsFresh/5, func() { tc.end(w) })
		if st, ok := n.lease(ctx, asked); ok {
			t.Errorf("%s: the fence took the read at %v", tc.name, st.Began)
		}
	}

	// A write that never reads holds a fence leaseNewsFresh at most, and
	// a fence whose context ends stops waiting.
	n = &leaseNews{}
	n.expect()
	start := time.Now()
	if _, ok := n.lease(ctx, asked); ok || time.Since(start) < leaseNewsFresh {
		t.Errorf("waiting for a write that never reads: took %v after %v; want nothing after %v", ok, time.Since(start), leaseNewsFresh)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := n.lease(cctx, asked); ok {
		t.Error("a fence whose context ended took a read")
	}
}

// TestFenceTakesTheWritesLeaseRead: after an answer's write the next
// call's fence takes the lease as that write read it: a cancel committed
// while the call was out (before the write) stops the next call at once;
// a cancel committed after the write's read is seen once that read is
// older than leaseNewsFresh; a lease that ran out since the write's read
// stops the call (its time counts from the read).
func TestFenceTakesTheWritesLeaseRead(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		r := env.startRunner(Config{})
		run, bs := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 3)
		set := func(status string, until time.Duration) {
			t.Helper()
			if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ?, lease_until = ? WHERE id = ?`,
				"w1", status, time.Now().UTC().Add(until), run.ID).Error; err != nil {
				t.Fatal(err)
			}
		}
		news := &leaseNews{}
		ctx := withLeaseNews(models.WithLeaseOwner(context.Background(), "w1"), news)
		g := &callGuard{r: r, runID: run.ID, owner: "w1", news: news, ctx: ctx}
		save := func(i int) {
			t.Helper()
			b := bs[i]
			b.Status, b.Response, b.Calls = models.BatchDone, "Sample1: 2", 1
			score := 2.0
			if err := r.saveResult(ctx, models.BatchResult{Batch: b, Scores: []models.RunScore{{RunID: run.ID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &score}}}); err != nil {
				t.Fatal(err)
			}
		}

		set(models.RunRunning, time.Minute)
		save(0)
		news.mu.Lock()
		began := news.st.Began
		news.mu.Unlock()
		if began.IsZero() {
			t.Fatal("the answer's write handed on no lease read")
		}
		set(models.RunCancelled, time.Minute)
		// Within leaseNewsFresh of the write's read the fence takes it
		// (and so does not see this cancel); a slower machine reads.
		if err := g.fence(ctx); err != nil && time.Since(began) <= leaseNewsFresh {
			t.Errorf("a fence right after the write: %v, want the write's read taken", err)
		}
		time.Sleep(2 * leaseNewsFresh)
		if err := g.fence(ctx); !errors.Is(err, errRunCancelled) {
			t.Errorf("a fence %v after the write, with the run cancelled since: %v, want %v", 2*leaseNewsFresh, err, errRunCancelled)
		}

		// Cancelled while the call was out: the write's read says so.
		save(1)
		if err := g.fence(ctx); !errors.Is(err, errRunCancelled) {
			t.Errorf("a fence after a write that read a cancelled run: %v, want %v", err, errRunCancelled)
		}

		// The lease as the write read it runs out within a millisecond (a
		// new execution: for this one the cancel it read is final).
		news.mu.Lock()
		news.st = models.LeaseState{}
		news.mu.Unlock()
		set(models.RunRunning, time.Millisecond)
		save(2)
		time.Sleep(2 * time.Millisecond)
		if err := g.fence(ctx); !errors.Is(err, models.ErrLeaseLost) {
			t.Errorf("a fence after the lease the write read ran out: %v, want %v", err, models.ErrLeaseLost)
		}
	})
}

// TestFenceCountsFromTheTakenRead pins the fence's arithmetic when it takes
// a write's read, without depending on the machine's speed: the time left
// counts from when that read began (not from when the fence asked), so
// the validity it records is exactly Began + (Until - Now), and a read
// whose lease ran out, counted from its beginning, is refused even though
// it would still be valid counted from the fence's own start. The run in
// the database is cancelled, so a fence that read the lease itself
// instead of taking the write's read fails differently (errRunCancelled).
func TestFenceCountsFromTheTakenRead(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		r := env.startRunner(Config{})
		run, _ := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 1)
		if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ?, lease_until = ? WHERE id = ?`,
			"w1", models.RunCancelled, time.Now().UTC().Add(time.Minute), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name    string
			age     time.Duration // how long before the fence the read began
			left    time.Duration // Until - Now as the read saw it
			wantErr error
		}{
			{"valid, counted from the read", leaseNewsFresh / 5, time.Minute, nil},
			{"ran out counted from the read, not from the fence", leaseNewsFresh / 5, leaseNewsFresh / 10, models.ErrLeaseLost},
		}
		for _, tc := range cases {
			news := &leaseNews{}
			ctx := withLeaseNews(models.WithLeaseOwner(context.Background(), "w1"), news)
			g := &callGuard{r: r, runID: run.ID, owner: "w1", news: news, ctx: ctx}
			wall := time.Now().UTC()
			until := wall.Add(tc.left)
			st := models.LeaseState{Owner: "w1", Status: models.RunRunning, Until: &until, Now: wall, Began: time.Now().Add(-tc.age)}
			news.expect().tell(st)
			err := g.fence(ctx)
			if errors.Is(err, errRunCancelled) {
				t.Logf("%s: the fence read the lease itself (a slow machine); nothing to check", tc.name)
				continue
			}
			if !errors.Is(err, tc.wantErr) && err != tc.wantErr {
				t.Errorf("%s: fence %v, want %v", tc.name, err, tc.wantErr)
				continue
			}
			g.mu.Lock()
			got := g.validUntil
			g.mu.Unlock()
			want := time.Time{}
			if tc.wantErr == nil {
				want = st.Began.Add(tc.left)
			}
			if !got.Equal(want) {
				t.Errorf("%s: lease valid until %v, want the read's start plus its time left, %v", tc.name, got, want)
			}
		}
	})
}
