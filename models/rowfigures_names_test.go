package models_test

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestDatasetRowFiguresColumnsTakenInSQL: ListDatasetRowFigures takes the
// asked columns out of each row's JSON in the database, so it reads no
// text: every column name a CSV can have gives the row's own value (a
// dot, a dollar, brackets, spaces are labels, not paths; an empty value
// is kept, a missing one left out), and the statement names data only
// inside the extraction, except for a name SQLite's path cannot spell (a
// double quote, a backslash) on SQLite, which reads the JSON whole, with
// the same values.
func TestDatasetRowFiguresColumnsTakenInSQL(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "p"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		rows := []map[string]string{
			{"text": "long", "a.b": "dotted", "a": "plain", "$s": "dollar", "[0]": "bracket", "w s": "space", "é": "accent", "e": "", `q"t`: "quote", `b\x`: "backslash"},
			{"text": "other", "a.b": "dotted 2", "w s": "space 2"},
		}
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "names", Columns: []string{"text"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		if err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
			for i, d := range rows {
				if err := put(models.DatasetRow{Position: i, ExternalID: string(rune('a' + i)), Data: d}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var stmts []string
		const hook = "test:rowfigures_names"
		take := func(tx *gorm.DB) {
			if sql := tx.Statement.SQL.String(); strings.Contains(sql, "dataset_rows") {
				stmts = append(stmts, sql)
			}
		}
		if err := db.Gorm.Callback().Row().After("gorm:row").Register(hook, take); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Gorm.Callback().Row().Remove(hook) })
		whole := regexp.MustCompile(`\bdata\b`)
		extract := regexp.MustCompile(`data(::jsonb)? ->> `)
		for _, c := range []struct {
			cols  []string
			whole bool
		}{
			{[]string{"a.b", "a", "$s", "[0]", "w s", "é", "e", "missing"}, false},
			{[]string{"a.b", `q"t`}, true},
			{[]string{`b\x`, "w s"}, true},
		} {
			stmts = nil
			got, err := db.ListDatasetRowFigures(ctx, ds.ID, c.cols)
			if err != nil {
				t.Fatalf("%q: %v", c.cols, err)
			}
			if len(got) != len(rows) {
				t.Fatalf("%q: %d rows, want %d", c.cols, len(got), len(rows))
			}
			for i, r := range got {
				want := map[string]string{}
				for _, col := range c.cols {
					if v, ok := rows[i][col]; ok {
						want[col] = v
					}
				}
				if !reflect.DeepEqual(r.Data, want) {
					t.Errorf("%q, row %d: %q, want %q", c.cols, i, r.Data, want)
				}
			}
			read := false
			for _, s := range stmts {
				read = read || whole.MatchString(extract.ReplaceAllString(s, ""))
			}
			// PostgreSQL's ->> takes any label.
			want := c.whole && db.Dialect == models.SQLite
			if len(stmts) == 0 || read != want {
				t.Errorf("%q: JSON read whole %v, want %v: %q", c.cols, read, want, stmts)
			}
		}
	})
}
