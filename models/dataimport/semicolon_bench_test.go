package dataimport

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// BenchmarkSemicolonImport reads and maps 100,000 rows written as European
// Excel saves them (';' between fields, decimal-comma ratings) against the
// same rows comma-separated with decimal points, the baseline, in one
// process: the decimal comma is read where a rating is, not in every cell.
func BenchmarkSemicolonImport(b *testing.B) {
	const rows = 100000
	for _, sep := range []string{"comma", "semicolon"} {
		var buf bytes.Buffer
		for i := range rows {
			if i == 0 {
				if sep == "comma" {
					buf.WriteString("id,question,answer,rating\n")
				} else {
					buf.WriteString("id;question;answer;rating\n")
				}
			}
			if sep == "comma" {
				fmt.Fprintf(&buf, "s%06d,\"Question %d, asked for the benchmark?\",\"Answer %d, with 3,5 in it\",%d.5\n", i, i, i, i%4+1)
			} else {
				fmt.Fprintf(&buf, "s%06d;Question %d, asked for the benchmark?;Answer %d, with 3,5 in it;%d,5\n", i, i, i, i%4+1)
			}
		}
		data := buf.Bytes()
		m := Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "question", Label: "Question"}, {Column: "answer", Label: "Answer"}}, RatingColumns: []string{"rating"}}
		b.Run(sep, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				a := NewApplier([]string{"id", "question", "answer", "rating"}, CSV, m, nil)
				_, err := Scan(bytes.NewReader(data), CSV, Options{MaxRows: 2 * rows, ReuseValues: true}, func(rec Record) error {
					a.Add(rec)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				if err := a.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
