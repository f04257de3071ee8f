package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

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
