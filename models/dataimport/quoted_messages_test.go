package dataimport

import (
	"errors"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestMessagesQuoteNamesAsTyped (llmeval44): the import's messages quoted
// names and values with Go's %q, so a column named a"b <b>x</b> read
// `column "a\"b <b>x</b>"` and a tab in a label read \t, while every other
// message of the product quotes as typed between “ and ” (web.Quoted, now
// internal/quote). Each message below names a column, a label, an id or a
// value holding a quotation mark and <b>, and must show it as typed; HTML
// escaping is the page's job, so <b> stays here and no backslash appears.
func TestMessagesQuoteNamesAsTyped(t *testing.T) {
	const name = `a"b <b>x</b>`
	tests := []struct {
		name    string
		input   string
		mapping Mapping
		want    []string
	}{
		{"a rating column's problem", "id,text,\"a\"\"b <b>x</b>\"\ns1,hello,bad\n",
			Mapping{IDColumn: "id", Fields: fields("text"), RatingColumns: []string{name}},
			[]string{`line 2, column “a"b <b>x</b>”: the rating “bad” is not a number`}},
		{"a repeated id holding a quote", "id,text\n\"s\"\"1<b>\",hello\n\"s\"\"1<b>\",again\n",
			Mapping{IDColumn: "id", Fields: fields("text")},
			[]string{`line 3, column “id”: the id “s"1<b>” is also used on line 2`}},
		{"a missing column", "id,text\ns1,hello\n",
			Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "text", Label: "Text"}, {Column: name, Label: "B"}}},
			[]string{`column “a"b <b>x</b>”: the field column is not in the file`}},
		{"two fields with one label, a tab in it", "id,text,\"a\"\"b <b>x</b>\"\ns1,hello,hi\n",
			Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "text", Label: "L\t<b>"}, {Column: name, Label: "L\t<b>"}}},
			[]string{`column “a"b <b>x</b>”: the label “L␉<b>” holds a control character (U+0009)`}},
		{"ratings out of several maximums", "id,text,\"a\"\"b <b>x</b>\"\ns1,hello,\"4/5\"\ns2,hi,\"7/10\"\n",
			Mapping{IDColumn: "id", Fields: fields("text"), RatingColumns: []string{name}},
			[]string{`line 3, column “a"b <b>x</b>”: the rating “7/10” is out of 10, but this column's ratings are out of 5 (“4/5” on line 2)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mustParse(t, CSV, tt.input).Apply(tt.mapping)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Apply error = %v, want a *ValidationError", err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q\ndoes not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, `\"`) || strings.Contains(msg, `\t`) {
				t.Errorf("%q holds a Go escape", msg)
			}
		})
	}

	// The notes of a successful import quote as typed too.
	tab := mustParse(t, CSV, "id,text,\"a\"\"b <b>x</b>\",\"a\"\"b <b>x</b>\"\ns1,hello,\"4/5\",\"3/5\"\n")
	if len(tab.Renamed) != 1 || tab.Renamed[0] != `Columns 3 and 4 of the header are both named “a"b <b>x</b>”: column 4 is named “a"b <b>x</b> (2)” here.` {
		t.Errorf("renamed %q", tab.Renamed)
	}
	_, _, notes, err := tab.ApplyWithNotes(Mapping{IDColumn: "id", Fields: fields("text"), RatingColumns: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `1 rating of column “a"b <b>x</b>” is written out of 5 (such as “4/5” on line 2)`; !strings.Contains(strings.Join(notes, "\n"), want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
}
