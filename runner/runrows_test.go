package runner

import (
	"reflect"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestRunRowsKeepsWhatTheRunReads: what a run keeps of its rows is their
// ids in file order, each id's place and each row's sample through the
// fields, as the rows give them.
func TestRunRowsKeepsWhatTheRunReads(t *testing.T) {
	h := 3.0
	rows := []models.DatasetRow{
		{ID: 40, Position: 1, ExternalID: "a", Data: map[string]string{"text": "first", "other": "x"}, Ratings: map[string]*float64{"q": &h}},
		{ID: 7, Position: 2, ExternalID: "b", Data: map[string]string{"text": "second"}},
		{ID: 19, Position: 3, ExternalID: "c", Data: map[string]string{}},
	}
	fields := []evaluator.Field{{Column: "text", Label: "Text"}}
	ids, index, samples := runRows(rows, fields)
	if want := []int64{40, 7, 19}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	if want := map[int64]int{40: 0, 7: 1, 19: 2}; !reflect.DeepEqual(index, want) {
		t.Errorf("places %v, want %v", index, want)
	}
	for i, r := range rows {
		if want := r.Sample(fields); !reflect.DeepEqual(samples[i], want) {
			t.Errorf("sample %d: %+v, want %+v", i, samples[i], want)
		}
	}
	if samples[0].ID != "a" || samples[0].Fields[0].Value != "first" {
		t.Errorf("sample 0 is %+v", samples[0])
	}
}
