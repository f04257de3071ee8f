package handlers

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
)

// TestRunExportCSVForDecimalCommaExcel: a person whose Excel writes
// decimals with a comma uploads the file that Excel saved (semicolons,
// "2,5"), runs it, and downloads "CSV for Excel": comma-separated with
// decimal points, that Excel showed each line as one cell of text and read
// 2.655 as 2655. ?excel=semicolon gives the same rows and columns with
// semicolons between the cells, decimal commas in the numbers, a byte
// order mark and CRLF; text cells (a decimal point in a sentence, a
// semicolon, a defused formula) are kept as written. The run page links
// it. Fails on the old code: ?excel=semicolon was the plain CSV.
func TestRunExportCSVForDecimalCommaExcel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const file = "\uFEFFid;context;response;engaging;coherent\r\n" +
			"s1;User: hi;\"Version 3.5 is out; try it\";2,5;3\r\n" +
			"s2;User: why?;=1+2;1;1,5\r\n" +
			"s3;User: ok;Fine then, see you;;2\r\n"
		token := env.uploadToken("excel.csv", file)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Excel"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Context"}, "show_2": {"1"}, "label_2": {"Response"}, "rating_3": {"1"}, "rating_4": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d: %s", rec.Code, rec.Body)
		}
		run := env.startRun(env.lastDataset(), "Decimal commas", string(evaluator.MethodBatchEval), nil)
		env.waitRun(run.ID, 30*time.Second)

		plainRec := env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID))
		semiRec := env.get(fmt.Sprintf("/runs/%d/export.csv?excel=semicolon", run.ID))
		if plainRec.Code != http.StatusOK || semiRec.Code != http.StatusOK {
			t.Fatalf("exports = %d, %d: %s", plainRec.Code, semiRec.Code, semiRec.Body)
		}
		semi, decimals := semicolonCopyOf(t, plainRec.Body.Bytes(), semiRec.Body.Bytes())
		if decimals == 0 {
			t.Errorf("no decimal number in the export to write with a comma:\n%s", semiRec.Body)
		}
		if len(semi) != 4 {
			t.Fatalf("%d lines: want the header and 3 samples", len(semi))
		}
		col := map[string]int{}
		for i, h := range semi[0] {
			col[h] = i
		}
		for _, tc := range []struct {
			line         int
			column, want string
		}{
			{1, "Engaging human", "2,5"},
			{2, "Coherent human", "1,5"},
			{3, "Engaging human", ""}, // not rated: missing, never 0
			{1, "Response", "Version 3.5 is out; try it"},
			{2, "Response", "'=1+2"},
			{3, "Response", "Fine then, see you"},
		} {
			j, ok := col[tc.column]
			if !ok {
				t.Fatalf("no column %q in %q", tc.column, semi[0])
			}
			if got := semi[tc.line][j]; got != tc.want {
				t.Errorf("sample %d, %q = %q, want %q", tc.line, tc.column, got, tc.want)
			}
		}
		if cd := semiRec.Header().Get("Content-Disposition"); !strings.HasSuffix(cd, `.excel-semicolon.csv"`) {
			t.Errorf("Content-Disposition = %q, want a .excel-semicolon.csv file name", cd)
		}
		page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if want := fmt.Sprintf(`href="/runs/%d/export.csv?excel=semicolon"`, run.ID); !strings.Contains(page, want) {
			t.Errorf("the run page has no link %s", want)
		}

		// The dataset's export with the reviewers' ratings, the same way
		// (it had only the comma-separated file for Excel).
		// A reviewer's 2.5 (a rating between the buttons, typed).
		rows, err := env.db.ListDatasetRows(t.Context(), run.DatasetID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		queue := fmt.Sprintf("/datasets/%d/review", run.DatasetID)
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(rows[0].ID)}, "criterion": {run.RubricSnapshot.Criteria[0].Name},
			"reviewer": {"Ann"}, "score": {"2.5"}, "back": {queue}}
		if rec := env.postForm(queue, form); rec.Code != http.StatusSeeOther {
			t.Fatalf("rating: %d %s", rec.Code, rec.Body)
		}
		dsPath := fmt.Sprintf("/datasets/%d/export.csv", run.DatasetID)
		plainDS, semiDS := env.get(dsPath), env.get(dsPath+"?excel=semicolon")
		if plainDS.Code != http.StatusOK || semiDS.Code != http.StatusOK {
			t.Fatalf("dataset exports = %d, %d: %s", plainDS.Code, semiDS.Code, semiDS.Body)
		}
		// Its rating columns' numbers are written as the product read them
		// (2.5 in the plain file, 2,5 here: polish49), and so is the
		// reviewer's column: three decimals written with a comma.
		ds, decimals := semicolonCopyOf(t, plainDS.Body.Bytes(), semiDS.Body.Bytes())
		if len(ds) != 4 || strings.Join(ds[0][:5], ";") != "id;context;response;engaging;coherent" {
			t.Fatalf("dataset export: %q", ds)
		}
		if decimals != 3 || ds[1][len(ds[1])-1] != "2,5" && ds[1][len(ds[1])-2] != "2,5" {
			t.Errorf("dataset export: the reviewer's 2.5 is not written 2,5 (%d decimals written with a comma): %q", decimals, ds)
		}
		if got := [][]string{{ds[1][3], ds[2][4], ds[3][3]}}; got[0][0] != "2,5" || got[0][1] != "1,5" || got[0][2] != "" {
			t.Errorf("dataset export ratings %q, want 2,5 1,5 and none", got)
		}
		if cd := semiDS.Header().Get("Content-Disposition"); !strings.HasSuffix(cd, `.excel-semicolon.csv"`) {
			t.Errorf("dataset export Content-Disposition = %q, want a .excel-semicolon.csv file name", cd)
		}
		dsPage := env.get(fmt.Sprintf("/datasets/%d", run.DatasetID)).Body.String()
		if want := fmt.Sprintf(`href="/datasets/%d/export.csv?excel=semicolon"`, run.DatasetID); !strings.Contains(dsPage, want) {
			t.Errorf("the dataset page has no link %s", want)
		}
	})
}

// semicolonCopyOf reads semi, a download for Excel with decimal commas,
// and checks it is plain, a comma-separated download of the same file,
// written as that Excel reads it: a byte order mark, CRLF throughout,
// semicolons between the cells, the same rows and cells, each decimal
// number with a comma and every other cell as written. It returns its
// rows and how many decimal numbers it wrote with a comma.
func semicolonCopyOf(t *testing.T, plainBody, body []byte) ([][]string, int) {
	t.Helper()
	if !bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}) {
		t.Fatalf("the export starts %q, want a UTF-8 byte order mark", body[:min(len(body), 8)])
	}
	if n, crlf := bytes.Count(body, []byte("\n")), bytes.Count(body, []byte("\r\n")); n == 0 || n != crlf {
		t.Errorf("%d line feeds, %d of them after a carriage return: want CRLF throughout", n, crlf)
	}
	plain, err := csv.NewReader(bytes.NewReader(plainBody)).ReadAll()
	if err != nil {
		t.Fatalf("plain export: %v", err)
	}
	r := csv.NewReader(bytes.NewReader(body[3:]))
	r.Comma = ';'
	semi, err := r.ReadAll()
	if err != nil {
		t.Fatalf("the export does not read as semicolon-separated: %v\n%s", err, body)
	}
	if len(semi) != len(plain) {
		t.Fatalf("%d lines, the plain export %d", len(semi), len(plain))
	}
	decimals := 0
	for i := range semi {
		if len(semi[i]) != len(plain[i]) {
			t.Fatalf("line %d has %d cells, the plain export's %d", i+1, len(semi[i]), len(plain[i]))
		}
		for j, cell := range semi[i] {
			want := plain[i][j]
			if plainDecimal.MatchString(want) {
				want = strings.Replace(want, ".", ",", 1)
				decimals++
			}
			if cell != want {
				t.Errorf("line %d, column %q: %q, want %q (plain export: %q)", i+1, semi[0][j], cell, want, plain[i][j])
			}
		}
	}
	return semi, decimals
}

// failingWriter fails every write, as a download whose client went away.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errGone }

var errGone = errors.New("client went away")

// TestSemicolonExcelCSVErrors: an export that fails before its first row
// returns its own error with nothing written (so the handler can still
// answer 503 "being prepared"); one that fails after some rows returns its
// error too; and a client that went away stops the export instead of
// leaving it blocked on the pipe.
func TestSemicolonExcelCSVErrors(t *testing.T) {
	errStream := errors.New("stream failed")
	big := strings.Repeat("a,1.5\n", 10000) // more than the pipe and the writer buffer
	for _, tc := range []struct {
		name    string
		stream  func(w io.Writer) error
		out     io.Writer
		want    error
		written bool
	}{
		{"fails before its first row", func(io.Writer) error { return errStream }, &bytes.Buffer{}, errStream, false},
		{"fails after some rows", func(w io.Writer) error {
			if _, err := io.WriteString(w, "a,1.5\nb,2\n"); err != nil {
				return err
			}
			return errStream
		}, &bytes.Buffer{}, errStream, false},
		{"the client went away", func(w io.Writer) error {
			_, err := io.WriteString(w, big)
			return err
		}, failingWriter{}, errGone, false},
		{"whole", func(w io.Writer) error {
			_, err := io.WriteString(w, "id,score,text\na,1.5,\"x; 2.5 y\"\n")
			return err
		}, &bytes.Buffer{}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- semicolonExcelCSV(tc.out, tc.stream) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the export is still blocked after 10s")
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if b, ok := tc.out.(*bytes.Buffer); ok {
				if got := b.String(); tc.written != (got != "") {
					t.Errorf("wrote %q", got)
				} else if tc.written && got != "\uFEFFid;score;text\r\na;1,5;\"x; 2.5 y\"\r\n" {
					t.Errorf("wrote %q", got)
				}
			}
		})
	}
}
