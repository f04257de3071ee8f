package handlers

import (
	"encoding/csv"
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// plainDecimal matches a cell that is a number with a decimal point and
// nothing else ("2.655", "-0.5", "1.5e-05"): the cells a spreadsheet in a
// decimal-comma locale reads as a date or as a number a thousand times too
// big unless the point is written as a comma.
var plainDecimal = regexp.MustCompile(`^[+-]?[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?$`)

// semicolonExcelCSV writes the CSV that stream writes as Excel reads a
// ".csv" file where the decimal separator is a comma (most of continental
// Europe, Latin America): cells separated by semicolons, each decimal
// number with a decimal comma, a UTF-8 byte order mark and CRLF line ends
// (excelCSV). Every other cell is kept as written, quoted where it holds
// a semicolon, so text keeps its decimal points and a defused formula
// keeps its leading quote. QA: the "CSV for Excel" download of a run on a
// file Excel had saved with semicolons and decimal commas opened as one
// column of text in that Excel, its 2.655 read as 2655.
//
// The rows are read back from stream through a pipe, one at a time, so
// memory follows one row and not the run; nothing reaches w before the
// first row is complete, so an export that fails before it still gets its
// own status, and stream's own error is the one returned.
func semicolonExcelCSV(w io.Writer, stream func(io.Writer) error) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := stream(pw)
		pw.CloseWithError(err) // nil: the reader sees io.EOF
		done <- err
	}()
	r := csv.NewReader(pr)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	out := csv.NewWriter(&excelCSV{w: w})
	out.Comma = ';'
	var failed error
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			failed = err
			break
		}
		for i, cell := range rec {
			if plainDecimal.MatchString(cell) {
				rec[i] = strings.Replace(cell, ".", ",", 1)
			}
		}
		if err := out.Write(rec); err != nil {
			failed = err
			break
		}
	}
	// Unblock the writer when this side stopped early (the client went
	// away, or a row could not be read); a no-op after io.EOF.
	pr.CloseWithError(failed)
	if err := <-done; err != nil {
		return err
	}
	if failed != nil {
		return failed
	}
	out.Flush()
	return out.Error()
}

// excelVariant is the file variant a CSV export's ?excel= asks for: "" (the
// plain file), "1" (Excel on Windows) or "semicolon" (Excel with decimal
// commas). Any other value is refused, naming the ones it takes: it sent
// the plain file as if the parameter were left out, so a typo went unseen.
func excelVariant(c echo.Context) (string, error) {
	switch v := c.QueryParam("excel"); v {
	case "", "1", "semicolon":
		return v, nil
	default:
		return "", models.Errorf(models.EInvalid,
			"excel=%q is not a file this export makes: use excel=1 for Excel on Windows, excel=semicolon for Excel where decimals are written with a comma, or leave it out for the plain CSV", v)
	}
}
