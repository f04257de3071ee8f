package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// indentedFormulas are text cells that a spreadsheet trims and then runs
// as formulas, with what SafeCell must make of them.
var indentedFormulas = []struct{ in, want string }{
	{" =1+1", "' =1+1"},
	{"\t=cmd", "'\t=cmd"},
	{"  \t+SUM(A1)", "'  \t+SUM(A1)"},
	{"\n-2+3", "'\n-2+3"},
	{"\u00a0@A1", "'\u00a0@A1"},
	{"\ufeff=HYPERLINK(\"http://evil\")", "'\ufeff=HYPERLINK(\"http://evil\")"},
	{"\u200b=1", "'\u200b=1"},
	{" \n\n =1", "' \n\n =1"},
}

// TestSafeCellDefusesFormulasAfterLeadingBlanks: a cell whose formula
// character follows leading blanks is prefixed with a quote, as one that
// starts with it is; text with a formula character further in, and blank
// cells, are left alone.
func TestSafeCellDefusesFormulasAfterLeadingBlanks(t *testing.T) {
	cases := append(slices.Clone(indentedFormulas), []struct{ in, want string }{
		{"=1+1", "'=1+1"},
		{"-2+3", "'-2+3"},
		{"-", "'-"},
		{"\tplain", "'\tplain"},
		{"\rplain", "'\rplain"},
		{" plain = text", " plain = text"},
		{"a -1", "a -1"},
		{"  ", "  "},
		{"", ""},
		{" 3.5", " 3.5"},
	}...)
	for _, c := range cases {
		if got := SafeCell(c.in); got != c.want {
			t.Errorf("SafeCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCSVExportDefusesIndentedFormulas: the run's CSV export, streamed from
// the database, writes every indented formula of a dataset's text as
// quoted text, in the id, field and header cells alike, while the scores
// of a criterion on [-2, 2] (-0.5, -2) stay plain numbers.
func TestCSVExportDefusesIndentedFormulas(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, p := streamProject(t, db)
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "F", Columns: []string{"text"},
			Fields: []evaluator.Field{{Column: "text", Label: " =Label"}}, RatingColumns: []string{}}
		var rows []models.DatasetRow
		for i, c := range indentedFormulas {
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf(" @id%d", i+1),
				Data: map[string]string{"text": c.in}, Ratings: map[string]*float64{}})
		}
		if err := db.CreateDataset(ctx, &ds, rows); err != nil {
			t.Fatal(err)
		}
		rows, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		crit := evaluator.Criterion{Name: " -Sentiment", Lo: -2, Hi: 2}
		run := storeStreamRun(t, db, ws.ID, ds, rows, streamCase{name: "formulas", method: "batcheval", rounds: 1,
			criteria: []evaluator.Criterion{crit},
			score: func(pos, ci, r int) (*float64, bool) {
				return ptr([]float64{-0.5, -2}[pos%2]), true
			}})
		var out bytes.Buffer
		if err := StreamCSV(ctx, db, ws.ID, run.ID, &out); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(recs) != len(indentedFormulas)+1 {
			t.Fatalf("CSV: %d records, %v:\n%s", len(recs), err, out.String())
		}
		head := recs[0]
		if head[1] != "' =Label" || head[2] != "' -Sentiment human" || head[3] != "' -Sentiment final" {
			t.Errorf("header = %q, want the field label and criterion name defused", head[:4])
		}
		for _, rec := range recs[1:] {
			var pos int
			if _, err := fmt.Sscanf(rec[0], "' @id%d", &pos); err != nil || pos < 1 || pos > len(indentedFormulas) {
				t.Errorf("id cell %q, want ' @id<n>", rec[0])
				continue
			}
			if want := indentedFormulas[pos-1].want; rec[1] != want {
				t.Errorf("sample %d: text cell %q, want %q", pos, rec[1], want)
			}
			want := []string{"-0.5", "-2"}[pos%2]
			if rec[3] != want || rec[4] != want {
				t.Errorf("sample %d: final and round cells %q, %q, want the number %s", pos, rec[3], rec[4], want)
			}
		}
	})
}

// TestRatingCellWritesNumbersBare: a rating padded with blanks is written
// as the bare number (the dataset export wrote " 4" as quoted text), and a
// rating cell holding anything but a number is still defused like text.
func TestRatingCellWritesNumbersBare(t *testing.T) {
	cases := []struct{ in, want string }{
		{"4", "4"},
		{" 4", "4"},
		{"3.5 ", "3.5"},
		{"\t-2\t", "-2"},
		{"\u00a0-0.5", "-0.5"},
		{"\ufeff1e2", "1e2"},
		{"+3", "+3"},
		{"", ""},
		{"  ", "  "},
		{" =1+1", "' =1+1"},
		{"-2+3", "'-2+3"},
		{" -Inf", "' -Inf"},
		{"4 stars", "4 stars"},
		{"\t4 stars", "'\t4 stars"},
	}
	for _, c := range cases {
		if got := RatingCell(c.in); got != c.want {
			t.Errorf("RatingCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
