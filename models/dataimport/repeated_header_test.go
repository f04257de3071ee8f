package dataimport

import (
	"strings"
	"testing"
)

// A CSV file made of two exports put one after the other repeats its
// header: the second header was read as a sample, and the import said
// `line 4, column "rating": the rating "rating" is not a number; leave the
// cell empty if the row was not rated`.
func TestCSVRepeatedHeaderRow(t *testing.T) {
	tests := []struct {
		name, input string
		opt         Options
		want        string // "" for no error
	}{
		{"second export appended", "id,question,answer,rating\ns1,Q?,A.,4\ns2,Q2?,A2.,3\nid,question,answer,rating\ns3,Q3?,A3.,5\n", Options{},
			"line 4: this row repeats the header row (id, question, answer, rating): the file looks like several files put one after the other; delete this line"},
		{"spaces around names", "id;answer\r\n1;oui\r\n id ; answer \r\n", Options{}, "line 3: this row repeats the header row (id, answer)"},
		{"a row holding one name is data", "id,answer\n1,answer\nid,yes\n", Options{}, ""},
		{"no header: a row like the first is data", "a,b\na,b\n", Options{NoHeader: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.input), CSV, tt.opt)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Parse: %v, want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Parse: %v\nwant: %s", err, tt.want)
			}
		})
	}
}
