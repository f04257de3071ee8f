package handlers

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"
)

// TestRunsListReadsDatasetsOnce: the runs list and a project page read the
// dataset of their runs one statement a dataset (FindDataset for each,
// whole rows), so a page's queries grew with the datasets its runs are on.
// They read the names in one statement, whatever the number of datasets;
// a deleted dataset is still named as such.
func TestRunsListReadsDatasetsOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const datasets = 4
		var names []string
		for i := range datasets {
			d := env.ratedDataset(fmt.Sprintf("Dataset <%d>", i), 3)
			names = append(names, d.ds.Name)
			env.storedRun(d, fmt.Sprintf("Run on %d", i), d.human, nil)
		}
		var mu sync.Mutex
		var reads []string
		fromDatasets := regexp.MustCompile("(?i)from [`\"]?datasets[`\"]?( |$)")
		// Find and First run the query callbacks, Scan and Row the row
		// ones: a counter on both sees every read.
		const hook = "test:datasets_reads"
		count := func(tx *gorm.DB) {
			if sql := tx.Statement.SQL.String(); fromDatasets.MatchString(sql) {
				mu.Lock()
				reads = append(reads, sql)
				mu.Unlock()
			}
		}
		if err := env.db.Gorm.Callback().Query().After("gorm:query").Register(hook, count); err != nil {
			t.Fatal(err)
		}
		if err := env.db.Gorm.Callback().Row().After("gorm:row").Register(hook, count); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.db.Gorm.Callback().Query().Remove(hook)
			_ = env.db.Gorm.Callback().Row().Remove(hook)
		})
		// The finished runs' summaries are built (and stored) on the first
		// visit, reading each run's dataset: counted after that.
		env.get("/runs")

		for _, tc := range []struct {
			name, path string
			want       int // statements reading the datasets table
		}{
			// The runs list: its runs' datasets, named in the filter and
			// the rows, in one statement.
			{"runs list", "/runs", 1},
			// The project page lists its datasets (two statements of its
			// own: the list and the live ones for the main dataset) and
			// names its runs' in one more.
			{"project page", fmt.Sprintf("/projects/%d", env.project.ID), 3},
		} {
			mu.Lock()
			reads = nil
			mu.Unlock()
			body := env.get(tc.path).Body.String()
			mu.Lock()
			got := append([]string(nil), reads...)
			mu.Unlock()
			if len(got) != tc.want {
				t.Errorf("%s: %d statements read the datasets, want %d:\n%s", tc.name, len(got), tc.want, strings.Join(got, "\n"))
			}
			for _, n := range names {
				if !strings.Contains(body, strings.ReplaceAll(strings.ReplaceAll(n, "<", "&lt;"), ">", "&gt;")) {
					t.Errorf("%s: dataset %q is not named", tc.name, n)
				}
			}
		}
	})
}
