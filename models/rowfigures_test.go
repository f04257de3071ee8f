package models_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestDatasetRowFiguresKeepOnlyTheirColumns: ListDatasetRowFigures gives
// every row of the dataset (and only that dataset's) in file order with
// the id, position, id in the file and ratings ListDatasetRows gives, and
// of the texts only the columns asked for: rows of one system share one
// map, a row without the column has none, and no column asked reads no
// text at all; rows with the same ratings share one map of them.
func TestDatasetRowFiguresKeepOnlyTheirColumns(t *testing.T) {
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
		importRows := func(name string, n int) models.Dataset {
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: name, Columns: []string{"text", "system", "doc"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q", "q@ann"}}
			err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
				for i := range n {
					q, a := float64(i%5), float64(i%3)
					data := map[string]string{"text": strings.Repeat("long text ", 20) + fmt.Sprint(i), "doc": fmt.Sprintf("d%d", i/2)}
					if i%4 != 3 {
						data["system"] = fmt.Sprintf("sys%d", i%2)
					}
					ratings := map[string]*float64{"q": &q, "q@ann": &a}
					if i%6 == 5 {
						ratings = map[string]*float64{"q": nil}
					}
					// Stored out of position order: the file order is position.
					if err := put(models.DatasetRow{Position: n - i, ExternalID: fmt.Sprintf("r%d", i), Data: data, Ratings: ratings}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return ds
		}
		importRows("other", 5)
		ds := importRows("mine", 24)
		full, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, cols := range [][]string{nil, {""}, {"system"}, {"system", "doc", "system"}, {"absent"}} {
			got, err := db.ListDatasetRowFigures(ctx, ds.ID, cols)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(full) || len(full) != 24 {
				t.Fatalf("columns %q: %d rows, want %d (of 24)", cols, len(got), len(full))
			}
			bySystem := map[string]map[string]string{}
			for i, r := range got {
				w := full[i]
				if r.ID != w.ID || r.DatasetID != w.DatasetID || r.Position != w.Position || r.ExternalID != w.ExternalID || !reflect.DeepEqual(r.Ratings, w.Ratings) {
					t.Fatalf("columns %q, row %d: %+v, want %+v", cols, i, r, w)
				}
				want := map[string]string{}
				for _, c := range cols {
					if v, ok := w.Data[c]; ok {
						want[c] = v
					}
				}
				if len(want) == 0 {
					want = nil
				}
				if !reflect.DeepEqual(r.Data, want) {
					t.Fatalf("columns %q, row %d: data %v, want %v", cols, i, r.Data, want)
				}
				if len(cols) == 1 && cols[0] == "system" && r.Data != nil {
					if m, ok := bySystem[r.Data["system"]]; ok && reflect.ValueOf(m).Pointer() != reflect.ValueOf(r.Data).Pointer() {
						t.Errorf("row %d: rows of %s do not share their map", i, r.Data["system"])
					}
					bySystem[r.Data["system"]] = r.Data
				}
			}
			if len(cols) == 1 && cols[0] == "system" && len(bySystem) != 2 {
				t.Errorf("%d systems, want 2", len(bySystem))
			}
			// Rows rated alike share one map of ratings (a million rows of
			// 1-5 ratings hold a few maps, not a million).
			byRatings := map[string]map[string]*float64{}
			for i, r := range got {
				k := fmt.Sprint(full[i].Ratings["q"] != nil, ratingOf(full[i].Ratings["q"]), ratingOf(full[i].Ratings["q@ann"]))
				if m, ok := byRatings[k]; ok && reflect.ValueOf(m).Pointer() != reflect.ValueOf(r.Ratings).Pointer() {
					t.Fatalf("columns %q, row %d: rows rated %s do not share their ratings", cols, i, k)
				}
				byRatings[k] = r.Ratings
			}
			if len(byRatings) != 15 {
				t.Errorf("%d distinct ratings, want 15", len(byRatings))
			}
		}
	})
}

// ratingOf is a rating's value, -1 for none.
func ratingOf(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}
