package demo

import (
	"bytes"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models/dataimport"
)

func TestRubric(t *testing.T) {
	r, err := Rubric()
	if err != nil {
		t.Fatalf("Rubric: %v", err)
	}
	wantFields := []evaluator.Field{{Column: "context", Label: "Conversation history"}, {Column: "response", Label: "Response"}}
	if len(r.Fields) != len(wantFields) {
		t.Fatalf("fields = %+v, want %+v", r.Fields, wantFields)
	}
	for i, f := range r.Fields {
		if f != wantFields[i] {
			t.Errorf("field %d = %+v, want %+v", i, f, wantFields[i])
		}
	}
	tests := []struct {
		name, human string
		lo, hi      float64
	}{
		{"Engaging", "engaging", 1, 3},
		{"Coherent", "coherent", 1, 3},
	}
	if len(r.Criteria) != len(tests) {
		t.Fatalf("%d criteria, want %d", len(r.Criteria), len(tests))
	}
	for i, tt := range tests {
		c := r.Criteria[i]
		if c.Name != tt.name || c.HumanColumn != tt.human || c.Lo != tt.lo || c.Hi != tt.hi {
			t.Errorf("criterion %d = %s [%g, %g] human %q, want %s [%g, %g] human %q",
				i, c.Name, c.Lo, c.Hi, c.HumanColumn, tt.name, tt.lo, tt.hi, tt.human)
		}
		if c.Description == "" || c.Levels.Low == "" || c.Levels.Middle == "" || c.Levels.High == "" {
			t.Errorf("criterion %s lacks a description or a level: %+v", c.Name, c)
		}
	}
}

func TestDatasetFitsRubric(t *testing.T) {
	data := Dataset()
	format, err := dataimport.DetectFormat(DatasetFilename, data)
	if err != nil {
		t.Fatal(err)
	}
	table, err := dataimport.Parse(bytes.NewReader(data), format, dataimport.Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r, err := Rubric()
	if err != nil {
		t.Fatal(err)
	}
	ratings := []string{"overall"}
	for _, c := range r.Criteria {
		ratings = append(ratings, c.HumanColumn)
	}
	rows, err := table.Apply(dataimport.Mapping{IDColumn: "id", Fields: r.Fields, RatingColumns: ratings})
	if err != nil {
		t.Fatalf("the rubric's columns do not fit the data set: %v", err)
	}
	if len(rows) < 25 || len(rows) > 40 {
		t.Errorf("%d rows, want about 30", len(rows))
	}
	scale := map[string][2]float64{"engaging": {1, 3}, "coherent": {1, 3}, "overall": {1, 5}}
	for _, row := range rows {
		for col, bounds := range scale {
			v := row.Ratings[col]
			if v == nil {
				t.Errorf("%s: no %s rating", row.ExternalID, col)
				continue
			}
			if *v < bounds[0] || *v > bounds[1] {
				t.Errorf("%s: %s = %g, outside [%g, %g]", row.ExternalID, col, *v, bounds[0], bounds[1])
			}
		}
	}
	// The demo must show the judge a spread of quality, not just one kind.
	var low, high int
	for _, row := range rows {
		switch o := *row.Ratings["overall"]; {
		case o <= 2:
			low++
		case o >= 4:
			high++
		}
	}
	if low < 5 || high < 5 {
		t.Errorf("%d poor and %d good responses by overall rating, want at least 5 of each", low, high)
	}
}

func TestCopies(t *testing.T) {
	tests := []struct {
		name string
		get  func() []byte
	}{
		{"Dataset", Dataset},
		{"RubricYAML", RubricYAML},
	}
	for _, tt := range tests {
		b := tt.get()
		if len(b) == 0 {
			t.Fatalf("%s is empty", tt.name)
		}
		b[0] = 'X'
		if got := tt.get()[0]; got == 'X' {
			t.Errorf("%s returns the embedded bytes themselves: a caller can change them", tt.name)
		}
	}
}
