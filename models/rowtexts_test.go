package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestDatasetRowTextsAreTheRowsData: EachDatasetRowTexts gives every row
// of the dataset (and only that dataset's) in file order, whatever the
// chunk, with its id, its id in the file and, of its texts, exactly what
// ListDatasetRows's Data holds for each column asked for (escaped
// characters, line breaks, other scripts, an empty value, no such column,
// data stored as null or empty); an error from the callback stops the
// reading, and data that is not JSON is refused naming the row.
func TestDatasetRowTextsAreTheRowsData(t *testing.T) {
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
		texts := []string{"plain", `<b>"quoted" & \back\slash</b>`, "line\nbreak\ttab\u2028sep", "émoji 🎉 日本語", "", "bad \xff byte", strings.Repeat("long ", 300)}
		importRows := func(name string, n int) models.Dataset {
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: name, Columns: []string{"text", "doc", "a<b"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}}
			err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
				for i := range n {
					q := float64(i % 5)
					data := map[string]string{"doc": fmt.Sprintf("d%d", i/2), "a<b": texts[(i+3)%len(texts)]}
					if i%5 != 4 {
						data["text"] = texts[i%len(texts)]
					}
					if i == 6 {
						data = map[string]string{}
					}
					// Stored out of position order: the file order is position.
					if err := put(models.DatasetRow{Position: n - i, ExternalID: fmt.Sprintf("r%d", i), Data: data, Ratings: map[string]*float64{"q": &q}}); err != nil {
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
		importRows("other", 4)
		ds := importRows("mine", 23)
		// Data stored as JSON null and as an empty text (rows written by
		// hand or by an old version): no map, every text empty.
		full, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range map[int]string{3: "null", 9: ""} {
			if err := db.Gorm.Exec("UPDATE dataset_rows SET data = ? WHERE id = ?", v, full[i].ID).Error; err != nil {
				t.Fatal(err)
			}
		}
		if full, err = db.ListDatasetRows(ctx, ds.ID, 0, 0); err != nil {
			t.Fatal(err)
		}
		if len(full) != 23 || full[3].Data != nil || full[9].Data != nil {
			t.Fatalf("%d rows; row 3 data %v, row 9 data %v", len(full), full[3].Data, full[9].Data)
		}
		columns := []string{"text", "absent", "a<b", "text"}
		for _, chunk := range []int{0, 1, 2, 5, 22, 23, 24} {
			t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
				var got []models.RowTexts
				err := db.EachDatasetRowTexts(ctx, ds.ID, columns, chunk, func(r models.RowTexts) error {
					got = append(got, r)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(full) {
					t.Fatalf("%d rows, want %d", len(got), len(full))
				}
				for i, r := range got {
					w := full[i]
					if r.ID != w.ID || r.ExternalID != w.ExternalID || len(r.Texts) != len(columns) {
						t.Fatalf("row %d: %+v, want id %d (%s) and %d texts", i, r, w.ID, w.ExternalID, len(columns))
					}
					for c, col := range columns {
						if r.Texts[c] != w.Data[col] {
							t.Errorf("row %d, column %q: %q, want %q", i, col, r.Texts[c], w.Data[col])
						}
					}
				}
			})
		}
		t.Run("the callback's error stops the reading", func(t *testing.T) {
			stop := errors.New("stop")
			calls := 0
			err := db.EachDatasetRowTexts(ctx, ds.ID, columns, 4, func(models.RowTexts) error {
				calls++
				if calls == 6 {
					return stop
				}
				return nil
			})
			if err != stop || calls != 6 {
				t.Errorf("error %v after %d calls, want %v after 6", err, calls, stop)
			}
		})
		t.Run("data that is not JSON names its row", func(t *testing.T) {
			if err := db.Gorm.Exec("UPDATE dataset_rows SET data = ? WHERE id = ?", `{"text": "cut`, full[12].ID).Error; err != nil {
				t.Fatal(err)
			}
			err := db.EachDatasetRowTexts(ctx, ds.ID, columns, 5, func(models.RowTexts) error { return nil })
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("row %d (id %q)", full[12].ID, full[12].ExternalID)) {
				t.Errorf("error %v, want one naming row %d (%s)", err, full[12].ID, full[12].ExternalID)
			}
		})
	})
}
