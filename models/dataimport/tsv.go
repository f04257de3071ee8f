package dataimport

import (
	"bufio"
	"bytes"
	"io"
)

// tsvQuotes reads a tab-separated file for the CSV reader, so that double
// quotes inside a cell are text, as they are in the TSV files scripts,
// databases and many spreadsheets write ("He said "hi" there" in a
// dialogue): a tab-separated cell cannot hold a tab or a line break
// without quotes, but a quote needs none. Each such cell is handed on
// quoted, its quotes doubled, so encoding/csv reads back the cell as
// written.
//
// A cell that starts with a quote is read as a quoted cell, as pandas
// (to_csv with sep="\t") and Excel write a cell that holds a tab, a line
// break or a quote, when it is one: its quotes inside are doubled and it
// ends with a quote before a tab or the end of its line, on this line or
// a later one (a cell of several lines). Otherwise ("Hi," she said: a
// quote closes and the cell goes on) it is text like any other. Reading
// every quote as text would cut the cells of several lines those tools
// write into rows of their own; reading every quote as a quoted cell (as
// CSV does) refuses dialogues. Lines are neither added nor removed, so a
// problem's line is the file's.
type tsvQuotes struct {
	br     *bufio.Reader
	out    []byte // transformed text not yet handed on
	buf    []byte // out's storage, reused line after line
	quoted bool   // inside a quoted cell that goes on over lines
	line   int    // line of the next line read (1-based)
	field  int    // 0-based cell of that line where reading resumes
	// openLine and openField locate the last quoted cell that went on
	// past its first line, to name its column if it is never closed.
	openLine, openField int
	err                 error
}

func newTSVQuotes(r io.Reader) *tsvQuotes {
	return &tsvQuotes{br: bufio.NewReaderSize(r, 64<<10), line: 1}
}

func (t *tsvQuotes) Read(p []byte) (int, error) {
	for len(t.out) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		line, err := t.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: read it whole.
			rest, rerr := t.br.ReadBytes('\n')
			line, err = append(append([]byte(nil), line...), rest...), rerr
		}
		if len(line) > 0 {
			t.buf = t.convert(t.buf[:0], line)
			t.out = t.buf
			t.line++
		}
		if err != nil {
			t.err = err
		}
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// lineEnd reports whether b[i:] is the end of a line: nothing, a line
// feed, or a carriage return and a line feed.
func lineEnd(b []byte, i int) bool {
	return i >= len(b) || b[i] == '\n' || (b[i] == '\r' && (i+1 == len(b) || b[i+1] == '\n'))
}

// cellEnd is the index of the tab or line end that ends the cell
// starting at b[i].
func cellEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		if b[i] == '\t' || lineEnd(b, i) {
			return i
		}
	}
	return i
}

// quotedEnd scans a quoted cell's text from b[i] (past its opening quote,
// or at the start of a line it goes on over) and returns the index just
// past its closing quote, with closed set, or len(b) when it goes on past
// this line; ok is false when a quote inside it is neither doubled nor
// closing, so it is not a quoted cell.
func quotedEnd(b []byte, i int) (end int, closed, ok bool) {
	for i < len(b) {
		if b[i] != '"' {
			i++
			continue
		}
		switch {
		case i+1 < len(b) && b[i+1] == '"':
			i += 2
		case i+1 < len(b) && b[i+1] == '\t', lineEnd(b, i+1):
			return i + 1, true, true
		default:
			return 0, false, false
		}
	}
	return len(b), false, true
}

// convert appends line, read as tab-separated, to dst in the form the
// CSV reader reads as meant.
func (t *tsvQuotes) convert(dst, line []byte) []byte {
	if !t.quoted && bytes.IndexByte(line, '"') < 0 {
		return append(dst, line...) // most lines: nothing to change
	}
	i := 0
	field := 0
	if t.quoted {
		end, closed, ok := quotedEnd(line, 0)
		if !ok || !closed {
			// Still inside (or a stray quote the CSV reader will report
			// at the cell's first line): hand on as it is.
			if !ok {
				t.quoted = false
			}
			return append(dst, line...)
		}
		t.quoted = false
		dst = append(dst, line[:end]...)
		i, field = end, t.field
		if i < len(line) && line[i] == '\t' {
			dst = append(dst, '\t')
			i++
			field++
		} else {
			return append(dst, line[i:]...)
		}
	}
	for {
		if i < len(line) && line[i] == '"' {
			end, closed, ok := quotedEnd(line, i+1)
			if ok && !closed {
				t.quoted, t.field = true, field
				t.openLine, t.openField = t.line, field
				return append(dst, line[i:]...)
			}
			if ok {
				dst = append(dst, line[i:end]...)
				i = end
			} else {
				i = t.quoteCell(&dst, line, i)
			}
		} else {
			i = t.quoteCell(&dst, line, i)
		}
		if i < len(line) && line[i] == '\t' {
			dst = append(dst, '\t')
			i++
			field++
			continue
		}
		return append(dst, line[i:]...)
	}
}

// quoteCell appends the cell at line[i], text whatever quotes it holds,
// quoted for the CSV reader when it holds any, and returns where it ends.
func (t *tsvQuotes) quoteCell(dst *[]byte, line []byte, i int) int {
	end := cellEnd(line, i)
	cell := line[i:end]
	if bytes.IndexByte(cell, '"') < 0 {
		*dst = append(*dst, cell...)
		return end
	}
	*dst = append(*dst, '"')
	for _, b := range cell {
		if b == '"' {
			*dst = append(*dst, '"')
		}
		*dst = append(*dst, b)
	}
	*dst = append(*dst, '"')
	return end
}
