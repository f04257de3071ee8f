package dataimport

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestApplierRepeatedIDsByHash: the applier keeps only a hash of each id,
// so two different ids may share one. With a hash that makes every id of
// the same length collide, it must still report exactly the repeated ids,
// each with the line where the id first appears, store every row of a file
// whose ids are merely colliding, list the problems in file order whether
// a repeat was confirmed at once or after the import had already failed,
// and read the file again only when a hash comes back.
func TestApplierRepeatedIDsByHash(t *testing.T) {
	tests := []struct {
		name    string
		ids     []string // one record each, from line 2
		ratings []string // "" is unrated; "x" is not a number
		want    []string // the problems, in order
		rereads int      // how many times the file is read again, at most
	}{
		{name: "unique ids, all colliding", ids: []string{"aa", "bb", "cc", "dd"}, rereads: 3},
		{name: "unique ids, no collision", ids: []string{"a", "bb", "ccc"}, rereads: 0},
		{name: "one repeat among collisions", ids: []string{"aa", "bb", "aa", "cc"}, rereads: 2, want: []string{
			`line 4, column “id”: the id “aa” is also used on line 2: ids must be unique`}},
		{name: "repeats after a bad rating are checked at the end", ids: []string{"aa", "bb", "bb", "cc", "aa", "a", "a"},
			ratings: []string{"1", "x", "2", "3", "4", "5", "x"}, rereads: 2, want: []string{
				`line 3, column “quality”: the rating “x” is not a number; leave the cell empty if the row was not rated`,
				`line 4, column “id”: the id “bb” is also used on line 3: ids must be unique`,
				`line 6, column “id”: the id “aa” is also used on line 2: ids must be unique`,
				`line 8, column “id”: the id “a” is also used on line 7: ids must be unique`,
				`line 8, column “quality”: the rating “x” is not a number; leave the cell empty if the row was not rated`}},
		{name: "colliding ids after a failure are not repeats", ids: []string{"aa", "aa", "bb", "cc"}, rereads: 2, want: []string{
			`line 3, column “id”: the id “aa” is also used on line 2: ids must be unique`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var recs []Record
			for i, id := range tc.ids {
				r := ""
				if tc.ratings != nil {
					r = tc.ratings[i]
				}
				recs = append(recs, Record{Line: i + 2, Values: map[string]string{"id": id, "text": "t " + id, "quality": r}})
			}
			rereads := 0
			a := NewApplier([]string{"id", "text", "quality"}, CSV,
				Mapping{IDColumn: "id", Fields: []evaluator.Field{{Label: "Text", Column: "text"}}, RatingColumns: []string{"quality"}},
				func(fn func(Record) error) error {
					rereads++
					for _, r := range recs {
						if err := fn(r); err != nil {
							return err
						}
					}
					return nil
				})
			a.hash = func(id string) uint64 { return uint64(len(id)) }
			stored := 0
			for _, r := range recs {
				a.Add(r)
				if !a.Failed() {
					stored++
				}
			}
			err := a.Finish()
			var got []string
			if ve, ok := err.(*ValidationError); ok {
				for _, p := range ve.Problems {
					got = append(got, p.Error())
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(tc.want) == 0 && stored != len(recs) {
				t.Errorf("%d of %d rows kept for a file without problems", stored, len(recs))
			}
			if rereads > tc.rereads {
				t.Errorf("the file was read again %d times, want at most %d", rereads, tc.rereads)
			}
		})
	}
}

// TestProblemsKeepFileOrder: past the cap, a problem found late (a repeat
// confirmed at the end) that belongs earlier in the file takes its place
// and the last listed problem becomes one of the "more".
func TestProblemsKeepFileOrder(t *testing.T) {
	var p problems
	for i := 1; i <= maxProblems+3; i++ {
		p.addAt(ParseError{Line: 10 * i, Msg: "rating"}, i, 1)
	}
	p.addAt(ParseError{Line: 20, Msg: "id"}, 2, 0)
	p.add(ParseError{Msg: "whole file"})
	if len(p.list) != maxProblems || p.more != 5 {
		t.Fatalf("%d listed, %d more; want %d and 5", len(p.list), p.more, maxProblems)
	}
	var got []string
	for _, e := range p.errors()[:4] {
		got = append(got, fmt.Sprintf("%d %s", e.Line, e.Msg))
	}
	if want := "10 rating,20 id,20 rating,30 rating"; strings.Join(got, ",") != want {
		t.Errorf("first problems %q, want %q", strings.Join(got, ","), want)
	}
}
