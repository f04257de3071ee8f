package handlers

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestPagesReadWithoutTheWritePool: on SQLite, pages read through the read
// pool, so a reader never waits for a connection that run writes hold. The
// test takes every connection of the write pool (as four busy runs would)
// and requires the pages a reviewer opens to answer anyway; before, the
// local user's check for accounts and the run page's derived runs waited
// for a writer's connection.
func TestPagesReadWithoutTheWritePool(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	d := env.demo()
	runID := env.launch(d.launchForm("2", "10"))
	if run := env.waitRun(runID, 60*time.Second); run.Status != models.RunSucceeded {
		t.Fatalf("run %s: %s", run.Status, run.Error)
	}
	// The runner stores the summary after the run's end: wait for it, so
	// the page has nothing to write.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int64
		if err := env.db.Gorm.Model(&models.RunSummary{}).Where("run_id = ?", runID).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("summary not stored within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rec := env.get(fmt.Sprintf("/runs/%d", runID)); rec.Code != http.StatusOK {
		t.Fatalf("run page before: %d", rec.Code)
	}

	ctx := context.Background()
	var held []*sql.Conn
	for len(held) < 4 { // the write pool's size (models.Open)
		c, err := env.db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 1)
	if err != nil || len(rows) == 0 {
		t.Fatalf("rows: %v", err)
	}
	for _, path := range []string{
		fmt.Sprintf("/runs/%d", runID),
		fmt.Sprintf("/runs/%d?criterion=0&sort=score&dir=desc", runID),
		fmt.Sprintf("/runs/%d/samples/%d", runID, rows[0].ID),
	} {
		done := make(chan int, 1)
		go func() { done <- env.get(path).Code }()
		select {
		case code := <-done:
			if code != http.StatusOK {
				t.Errorf("GET %s with the write pool busy: %d", path, code)
			}
		case <-time.After(10 * time.Second):
			// Where it waits, for whoever reads the failure.
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			// Free the pool so the stuck request ends and the test can.
			for _, c := range held {
				c.Close()
			}
			<-done
			t.Fatalf("GET %s waited for a write connection", path)
		}
	}
}
