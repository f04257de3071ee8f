package runner

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
)

// startReads marks the context of the reads TestRunStartReadsOnlyItsColumns
// records.
type startReads struct{}

// TestRunStartReadsOnlyItsColumns: what a run holds of its rows (ids in
// file order, each id's place, each row's sample through the fields) is
// what the rows give (DatasetRow.Sample, from which every prompt is
// written), read a chunk at a time: no read of the dataset's rows at the
// run's start takes their ratings or every column (SELECT *), and each
// reads at most a chunk. The run's start read every row whole in one
// query.
func TestRunStartReadsOnlyItsColumns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var mu sync.Mutex
		var reads []string
		record := func(tx *gorm.DB) {
			if tx.Statement.Context == nil || tx.Statement.Context.Value(startReads{}) == nil {
				return
			}
			if q := strings.ToLower(tx.Statement.SQL.String()); strings.Contains(q, "dataset_rows") {
				mu.Lock()
				reads = append(reads, q)
				mu.Unlock()
			}
		}
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			const name = "test:run_start_row_reads"
			if err := g.Callback().Query().After("gorm:query").Register(name, record); err != nil {
				t.Fatal(err)
			}
			if err := g.Callback().Row().After("gorm:row").Register(name, record); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove(name)
				_ = g.Callback().Row().Remove(name)
			})
		}
		ctx := context.WithValue(context.Background(), startReads{}, true)
		for _, tc := range []struct {
			name   string
			fields []evaluator.Field
			chunk  int
		}{
			{"the rubric's fields, chunks of 7", env.rubric.Fields, 7},
			{"the dataset's fields, one chunk", env.dataset.Fields, 100},
			{"one field twice, chunks of 1", []evaluator.Field{{Column: env.dataset.Fields[0].Column, Label: "A"}, {Column: env.dataset.Fields[0].Column, Label: "B"}}, 1},
			{"a column no row has", []evaluator.Field{{Column: "absent", Label: "Absent"}}, 30},
			{"no field", nil, 8},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mu.Lock()
				reads = nil
				mu.Unlock()
				ids, index, samples, err := loadRunRows(ctx, env.db, env.dataset.ID, tc.fields, tc.chunk)
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) != len(env.rows) || len(index) != len(env.rows) || len(samples) != len(env.rows) {
					t.Fatalf("%d ids, %d places, %d samples, want %d", len(ids), len(index), len(samples), len(env.rows))
				}
				for i, row := range env.rows {
					if ids[i] != row.ID || index[row.ID] != i {
						t.Fatalf("row %d: id %d at place %d, want %d", i, ids[i], index[row.ID], row.ID)
					}
					if want := row.Sample(tc.fields); !reflect.DeepEqual(samples[i], want) {
						t.Fatalf("sample %d: %+v, want %+v", i, samples[i], want)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if len(reads) == 0 {
					t.Fatal("no read of the dataset's rows recorded")
				}
				for _, q := range reads {
					if strings.Contains(q, "ratings") || strings.Contains(q, "select *") {
						t.Errorf("the run's start read %s", q)
					}
					if strings.Contains(q, "count(") {
						continue
					}
					if !strings.Contains(q, "limit") {
						t.Errorf("the run's start read every row at once: %s", q)
					}
				}
			})
		}
	})
}
