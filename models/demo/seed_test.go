package demo

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// queue is a Launcher whose Enqueue fails while fail is set.
type queue struct {
	fail   bool
	queued []int64 // runs queued
}

func (q *queue) PrepareRun(*models.Run) error { return nil }

func (q *queue) Enqueue(_ context.Context, _ *sql.Tx, run *models.Run) (int64, error) {
	if q.fail {
		return 0, errors.New("the process died")
	}
	q.queued = append(q.queued, run.ID)
	return 1000 + run.ID, nil
}

// TestSeedFailureLeavesNoPartialDemo: a start whose seeding fails midway
// (here at the dataset's rows, the rubric, or the first run's job; a crash
// there is the same) leaves nothing of the demo, and the next start seeds
// it whole, first run included. Seeding took several transactions, and a
// failure between them left a demo without its dataset, rubric or run that
// no later start completed (the project existed, so it seeded nothing).
func TestSeedFailureLeavesNoPartialDemo(t *testing.T) {
	tests := []struct {
		name  string
		table string // a create in this table fails; "" for none
		job   bool   // queueing the first run's job fails
	}{
		{name: "dataset rows", table: "dataset_rows"},
		{name: "rubric", table: "rubrics"},
		{name: "first run's job", job: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *models.DB) {
				ctx := context.Background()
				ws, err := db.EnsureDefaultWorkspace(ctx)
				if err != nil {
					t.Fatal(err)
				}
				const hook = "test:fail_seed"
				if tc.table != "" {
					err := db.Gorm.Callback().Create().Before("gorm:create").Register(hook, func(tx *gorm.DB) {
						if tx.Statement.Table == tc.table {
							_ = tx.AddError(errors.New("the process died"))
						}
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				q := &queue{fail: tc.job}
				if _, _, err := SeedProject(ctx, db, ws, q); err == nil {
					t.Fatal("seeding did not fail: the test proves nothing")
				}
				counts := demoCounts(t, db, ws.ID)
				for table, n := range counts {
					// The simulated judge is the workspace's, there before
					// the demo (models.EnsureSimulatedJudges): one, not two.
					want := int64(0)
					if table == "judges" {
						want = 1
					}
					if n != want {
						t.Errorf("after the failed seeding, %d rows in %s; want %d", n, table, want)
					}
				}
				if _, err := db.FindSeededProject(ctx, ws.ID, SeedKey); models.ErrorCode(err) != models.ENotFound {
					t.Errorf("a demo project is left: %v", err)
				}

				// The next start.
				if tc.table != "" {
					if err := db.Gorm.Callback().Create().Remove(hook); err != nil {
						t.Fatal(err)
					}
				}
				q.fail = false
				p, created, err := SeedProject(ctx, db, ws, q)
				if err != nil || !created {
					t.Fatalf("the next start: created %v, %v", created, err)
				}
				want := map[string]int64{"projects": 1, "judges": 1, "datasets": 1, "dataset_rows": 30, "rubrics": 1, "rubric_versions": 1, "runs": 1}
				got := demoCounts(t, db, ws.ID)
				for table, n := range want {
					if got[table] != n {
						t.Errorf("after the next start, %d rows in %s, want %d", got[table], table, n)
					}
				}
				runs, err := db.ListRuns(ctx, ws.ID, p.ID)
				if err != nil || len(runs) != 1 {
					t.Fatalf("runs of the demo: %d, %v", len(runs), err)
				}
				if r := runs[0]; r.Name != FirstRunName || r.JobID == nil || *r.JobID != 1000+r.ID || len(q.queued) != 1 || !r.Simulated {
					t.Errorf("the first run %+v (queued %v); want %q queued once, simulated", r, q.queued, FirstRunName)
				}
			})
		})
	}
}

// demoCounts counts the rows of the workspace's demo: its project,
// simulated judge, dataset and rows, rubric and versions, and runs.
func demoCounts(t *testing.T, db *models.DB, wsID int64) map[string]int64 {
	t.Helper()
	queries := map[string]string{
		"projects":        `SELECT COUNT(*) FROM projects WHERE workspace_id = ?`,
		"judges":          `SELECT COUNT(*) FROM judges WHERE workspace_id = ? AND simulated`,
		"datasets":        `SELECT COUNT(*) FROM datasets WHERE workspace_id = ?`,
		"dataset_rows":    `SELECT COUNT(*) FROM dataset_rows WHERE dataset_id IN (SELECT id FROM datasets WHERE workspace_id = ?)`,
		"rubrics":         `SELECT COUNT(*) FROM rubrics WHERE workspace_id = ?`,
		"rubric_versions": `SELECT COUNT(*) FROM rubric_versions WHERE rubric_id IN (SELECT id FROM rubrics WHERE workspace_id = ?)`,
		"runs":            `SELECT COUNT(*) FROM runs WHERE workspace_id = ?`,
	}
	out := map[string]int64{}
	for table, q := range queries {
		var n int64
		if err := db.Gorm.Raw(q, wsID).Scan(&n).Error; err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}
