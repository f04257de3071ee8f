package handlers

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
)

// TestRunExportCSVForExcel: the run's CSV has no byte order mark, so Excel
// on Windows read its UTF-8 as the system's code page ("Ã©" for "é").
// ?excel=1 gives the same file with EF BB BF first and CRLF line ends
// (inside quoted cells too); the plain export keeps its bytes, and both
// defuse a cell a spreadsheet would run as a formula. The run page links
// it.
func TestRunExportCSVForExcel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const file = `{"id": "s1", "text": "Привет, мир — café 東京"}` + "\n" +
			`{"id": "s2", "text": "=HYPERLINK(\"http://x\")"}` + "\n" +
			`{"id": "s3", "text": "two\nlines"}` + "\n"
		token := env.uploadToken("unicode.jsonl", file)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Unicode"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Text"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d: %s", rec.Code, rec.Body)
		}
		run := env.startRun(env.lastDataset(), "Excel export", string(evaluator.MethodBatchEval), nil)
		env.waitRun(run.ID, 30*time.Second)

		plain := env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID))
		excel := env.get(fmt.Sprintf("/runs/%d/export.csv?excel=1", run.ID))
		if plain.Code != http.StatusOK || excel.Code != http.StatusOK {
			t.Fatalf("exports = %d, %d", plain.Code, excel.Code)
		}
		p, x := plain.Body.Bytes(), excel.Body.Bytes()
		if bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}) || bytes.Contains(p, []byte("\r\n")) {
			t.Errorf("the plain export changed: it has a byte order mark or CRLF:\n%q", p)
		}
		if !bytes.HasPrefix(x, []byte{0xEF, 0xBB, 0xBF}) {
			t.Fatalf("the Excel export starts %q, want EF BB BF", x[:min(len(x), 8)])
		}
		if want := bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n")); !bytes.Equal(x[3:], want) {
			t.Errorf("the Excel export after its byte order mark is not the plain export with CRLF:\n got %q\nwant %q", x[3:], want)
		}
		for name, body := range map[string]string{"plain": string(p), "excel": string(x)} {
			lines := "two\nlines"
			if name == "excel" {
				lines = "two\r\nlines"
			}
			for _, w := range []string{"Привет, мир — café 東京", `"'=HYPERLINK(`, lines} {
				if !strings.Contains(body, w) {
					t.Errorf("the %s export lacks %q:\n%s", name, w, body)
				}
			}
		}
		if cd := excel.Header().Get("Content-Disposition"); !strings.Contains(cd, ".csv") {
			t.Errorf("Content-Disposition = %q, want a .csv file name", cd)
		}
		page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if want := fmt.Sprintf(`href="/runs/%d/export.csv?excel=1"`, run.ID); !strings.Contains(page, want) {
			t.Errorf("the run page has no link %s", want)
		}
	})
}

// excelCSV writes CRLF for a line feed that arrives in a later write than
// its carriage return without doubling the carriage return.
func TestExcelCSVLineEnds(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"lf", []string{"a,b\nc,d\n"}, "\xEF\xBB\xBFa,b\r\nc,d\r\n"},
		{"crlf kept", []string{"a,\"x\r\ny\"\n"}, "\xEF\xBB\xBFa,\"x\r\ny\"\r\n"},
		{"crlf split over writes", []string{"a,\"x\r", "\ny\"\n"}, "\xEF\xBB\xBFa,\"x\r\ny\"\r\n"},
		{"lf first in a later write", []string{"a", "\nb\n"}, "\xEF\xBB\xBFa\r\nb\r\n"},
		{"nothing written", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			x := &excelCSV{w: &b}
			for _, w := range tt.writes {
				if n, err := x.Write([]byte(w)); err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if b.String() != tt.want {
				t.Errorf("wrote %q, want %q", b.String(), tt.want)
			}
		})
	}
}

// TestDatasetExportCSVForExcel: the dataset's export with the reviewers'
// ratings had no Excel variant (found by newcomer39): Excel on Windows
// showed its non-Latin text as mojibake. ?excel=1 writes the same file
// with a byte order mark and CRLF, formulas defused as in the plain one,
// and the dataset page links it.
func TestDatasetExportCSVForExcel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const file = `{"id": "s1", "text": "Привет, мир — café 東京"}` + "\n" +
			`{"id": "s2", "text": "=HYPERLINK(\"http://x\")"}` + "\n" +
			`{"id": "s3", "text": "two\nlines"}` + "\n"
		token := env.uploadToken("unicode.jsonl", file)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Unicode"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Text"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d: %s", rec.Code, rec.Body)
		}
		ds := env.lastDataset()
		plain := env.get(fmt.Sprintf("/datasets/%d/export.csv", ds.ID))
		excel := env.get(fmt.Sprintf("/datasets/%d/export.csv?excel=1", ds.ID))
		if plain.Code != http.StatusOK || excel.Code != http.StatusOK {
			t.Fatalf("exports = %d, %d", plain.Code, excel.Code)
		}
		p, x := plain.Body.Bytes(), excel.Body.Bytes()
		if bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}) || bytes.Contains(p, []byte("\r\n")) {
			t.Errorf("the plain export changed: it has a byte order mark or CRLF:\n%q", p)
		}
		if !bytes.HasPrefix(x, []byte{0xEF, 0xBB, 0xBF}) {
			t.Fatalf("the Excel export starts %q, want EF BB BF", x[:min(len(x), 8)])
		}
		if want := bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n")); !bytes.Equal(x[3:], want) {
			t.Errorf("the Excel export after its byte order mark is not the plain export with CRLF:\n got %q\nwant %q", x[3:], want)
		}
		for _, w := range []string{"Привет, мир — café 東京", `"'=HYPERLINK(`, "two\r\nlines"} {
			if !bytes.Contains(x, []byte(w)) {
				t.Errorf("the Excel export lacks %q:\n%s", w, x)
			}
		}
		if cd := excel.Header().Get("Content-Disposition"); !strings.HasSuffix(cd, `.excel.csv"`) {
			t.Errorf("Content-Disposition = %q, want a .excel.csv file name", cd)
		}
		page := env.get(fmt.Sprintf("/datasets/%d", ds.ID))
		if want := fmt.Sprintf(`href="/datasets/%d/export.csv?excel=1"`, ds.ID); !strings.Contains(page.Body.String(), want) {
			t.Errorf("the dataset page (%d) has no link %s: %.300s", page.Code, want, page.Body.String())
		}
	})
}
