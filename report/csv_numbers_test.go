package report

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestSafeCellKeepsSignedNumbers: a text cell that is a signed number and
// nothing else is no formula and stays a number; the quote went on it
// ("-0.5" was written '-0.5), so a spreadsheet showed the text '-0.5 and an
// id of -1 came back as '-1 when the export was uploaded again. Anything
// more than a number after the sign is still defused.
func TestSafeCellKeepsSignedNumbers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"-0.5", "-0.5"},
		{"-1", "-1"},
		{"+3", "+3"},
		{"-1e-3", "-1e-3"},
		{"-.5", "-.5"},
		{" -2", " -2"},
		{"-2 ", "-2 "},
		{"\u00a0+4", "\u00a0+4"},
		{"-2+3", "'-2+3"},
		{"-1-1", "'-1-1"},
		{"+A1", "'+A1"},
		{"-Inf", "'-Inf"},
		{"-NaN", "'-NaN"},
		{"-1,5", "'-1,5"},
		{"-0x10", "'-0x10"},
		{"- 1", "'- 1"},
		{"--1", "'--1"},
		{"-1e", "'-1e"},
		{"-1)*cmd|' /C calc'!A0", "'-1)*cmd|' /C calc'!A0"},
		{"\t-1", "'\t-1"},
		{"\r-1", "'\r-1"},
		{"=1", "'=1"},
		{"@1", "'@1"},
	} {
		if got := SafeCell(c.in); got != c.want {
			t.Errorf("SafeCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCSVExportKeepsSignedIDsAndFields: the run's CSV export writes a
// sample id and a field that are signed numbers as those numbers, and a
// formula behind a minus sign as text.
func TestCSVExportKeepsSignedIDsAndFields(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, p := streamProject(t, db)
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "N", Columns: []string{"delta"},
			Fields: []evaluator.Field{{Column: "delta", Label: "Delta"}}, RatingColumns: []string{}}
		rows := []models.DatasetRow{
			{Position: 1, ExternalID: "-1", Data: map[string]string{"delta": "-0.5"}, Ratings: map[string]*float64{}},
			{Position: 2, ExternalID: "-2", Data: map[string]string{"delta": "-2+3"}, Ratings: map[string]*float64{}},
		}
		if err := db.CreateDataset(ctx, &ds, rows); err != nil {
			t.Fatal(err)
		}
		rows, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		run := storeStreamRun(t, db, ws.ID, ds, rows, streamCase{name: "numbers", method: "batcheval", rounds: 1,
			criteria: []evaluator.Criterion{{Name: "Q", Lo: 1, Hi: 5}},
			score:    func(pos, ci, r int) (*float64, bool) { return ptr(3), true }})
		var out bytes.Buffer
		if err := StreamCSV(ctx, db, ws.ID, run.ID, &out); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(recs) != 3 {
			t.Fatalf("CSV: %d records, %v:\n%s", len(recs), err, out.String())
		}
		got := [][]string{recs[1][:2], recs[2][:2]}
		want := [][]string{{"-1", "-0.5"}, {"-2", "'-2+3"}}
		for i := range want {
			if got[i][0] != want[i][0] || got[i][1] != want[i][1] {
				t.Errorf("line %d: id and field %q, want %q", i+2, got[i], want[i])
			}
		}
	})
}

// TestIsPlainNumberIsThePattern: the hand-written check accepts exactly
// what the plainNumber pattern does, on every string of up to 5 characters
// over the characters that matter and on random longer ones.
func TestIsPlainNumberIsThePattern(t *testing.T) {
	const alphabet = "+-.eE09x "
	var walk func(prefix string, n int)
	walk = func(prefix string, n int) {
		if got, want := isPlainNumber(prefix), plainNumber.MatchString(prefix); got != want {
			t.Errorf("isPlainNumber(%q) = %v, the pattern says %v", prefix, got, want)
		}
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			walk(prefix+alphabet[i:i+1], n-1)
		}
	}
	walk("", 5)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := make([]byte, 6+rng.IntN(10))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := isPlainNumber(string(b)), plainNumber.MatchString(string(b)); got != want {
			t.Fatalf("isPlainNumber(%q) = %v, the pattern says %v", b, got, want)
		}
	}
}
