package dataimport

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batcheval/batcheval/internal/quote"
)

// Default limits, used when Options leaves a field at zero.
const (
	// DefaultMaxBytes is 50 MiB: the largest evaluation sets we expect
	// (tens of thousands of dialogues) fit several times over, while one
	// upload cannot hold a server's memory hostage.
	DefaultMaxBytes int64 = 50 << 20
	// DefaultMaxRows is 100,000 rows: beyond that a judged run would cost
	// more than anyone should start from a web form by accident.
	DefaultMaxRows = 100000
	// DefaultMaxColumns is 500 columns: far more than a data set to judge
	// has, and a bound on the mapping page, which lists every column (a
	// 2.3 MB file of distinct keys once made a 102 MB page).
	DefaultMaxColumns = 500
	// MaxColumnNameLength bounds a column name, in characters: a name is
	// shown several times on the mapping page and stored with the data set.
	MaxColumnNameLength = 200
)

// Options bounds what Parse accepts. Zero fields take the defaults.
type Options struct {
	MaxBytes int64 // largest accepted file, in bytes (default DefaultMaxBytes)
	MaxRows  int   // most data rows accepted (default DefaultMaxRows)
	// MaxColumns is the most distinct columns accepted (default DefaultMaxColumns).
	MaxColumns int
	// NoHeader reads a CSV file's first row as data and names the columns
	// column_1, column_2... (for files without a header row).
	NoHeader bool
	// ReuseValues lets Scan hand every CSV record the same Values map,
	// overwritten for the next record: for callers that are done with a
	// record when their callback returns, it saves a map per row.
	ReuseValues bool
	// HeaderHint is the way out offered when the header row of a CSV file
	// fails its checks (a column without a name, two with the same name),
	// which often means the file has no header row at all. It is worded
	// for where the message is shown (the upload form's checkbox, an API
	// field, a flag); empty says the first row must hold the column names,
	// for callers that offer no way to read it as data.
	HeaderHint string
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxColumns <= 0 {
		o.MaxColumns = DefaultMaxColumns
	}
	if o.HeaderHint == "" {
		o.HeaderHint = msgAddHeader
	}
	return o
}

// Record is one data row of an uploaded file.
type Record struct {
	// Line locates the record: for CSV the physical line where the record
	// starts (a quoted field may span lines), for JSON Lines the line of the
	// object, for a JSON array the 1-based position of the item.
	Line int
	// Values maps each column to its text. A JSON object that lacks a key
	// has no entry for that column.
	Values map[string]string
	// DecimalComma is set for the records of a semicolon- or
	// tab-separated CSV file, as Excel saves "CSV" and "Unicode Text" in
	// locales that write decimals with a comma (a comma cannot separate
	// the fields of such a file): where a number is read from one of its
	// cells (a rating), "3,5" is 3.5. Values keep every cell as written.
	DecimalComma bool
}

// Table is a parsed file: its columns and its records, in file order.
type Table struct {
	Format  Format
	Columns []string // every column, in the order first seen
	Records []Record
	// Generated is set when the column names were made up because the
	// file has no header row (Options.NoHeader).
	Generated bool
	// Read is how the file was read: its encoding and separator.
	Read Reading
	// Renamed says which header columns were renamed (Summary.Renamed).
	Renamed []string
}

// ParseError is one problem at one place of an uploaded file.
type ParseError struct {
	Line   int    // line (or item, when Item is set) where the problem is; 0 when it concerns the whole file
	Item   bool   // Line counts items of a JSON array rather than lines
	Column string // column concerned, if any
	Msg    string // what is wrong and what to do about it
	// Choice is the mapping choice the problem is about (ChoiceField,
	// ChoiceLabel...), so a form can say it beside that choice; "" for a
	// problem of the file's content alone (a row's id or rating).
	Choice string
}

// The mapping choices a problem can be about (ParseError.Choice).
const (
	ChoiceField     = "field"     // a column shown to the judge, or none shown
	ChoiceLabel     = "label"     // the label of a shown column
	ChoiceRating    = "rating"    // a column of human ratings
	ChoiceID        = "id"        // the id column
	ChoiceAnnotator = "annotator" // the annotator column
)

// Error reads like `line 7: invalid JSON: ...` or `item 3, column "id": ...`.
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		if e.Item {
			fmt.Fprintf(&b, "item %d", e.Line)
		} else {
			fmt.Fprintf(&b, "line %d", e.Line)
		}
	}
	if e.Column != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("column " + quote.Quoted(e.Column))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// TooLargeError reports a file bigger than Options.MaxBytes.
type TooLargeError struct {
	Limit int64 // the limit that was exceeded, in bytes
}

// Error names the limit and the two ways around it.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the file is larger than the %s limit; raise BATCHEVAL_MAX_UPLOAD_MB or split it", formatSize(e.Limit))
}

// formatSize writes a byte count the way people read it.
func formatSize(n int64) string {
	const mib = 1 << 20
	if n >= mib && n%mib == 0 {
		return fmt.Sprintf("%d MiB", n/mib)
	}
	if n >= mib {
		return fmt.Sprintf("%.1f MiB", float64(n)/mib)
	}
	return fmt.Sprintf("%d bytes", n)
}

var errNoRows = &ParseError{Msg: "the file has no rows: it needs one row (in JSON, one object) per sample"}

var errNoColumns = &ParseError{Msg: `the file has no columns: every row is an empty object ({}); give each row its fields, e.g. {"id": "s1", "response": "…", "rating": 4}`}

// Parse reads a whole upload in the given format. It streams: memory grows
// with the parsed table, not with a second copy of the file. A leading UTF-8
// byte order mark is dropped, UTF-16 with its byte order mark is decoded,
// and a file that is not UTF-8 from its start is read as Windows-1252 (see
// decodeInput); any other encoding is refused. On error it
// returns a nil table and a *ParseError, a *TooLargeError or, for an
// unreadable source, the reader's error.
func Parse(r io.Reader, f Format, opt Options) (*Table, error) {
	t := &Table{Format: f}
	s, err := Scan(r, f, opt, func(rec Record) error {
		t.Records = append(t.Records, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.Columns, t.Generated, t.Read, t.Renamed = s.Columns, s.Generated, s.Read, s.Renamed
	return t, nil
}

// Summary is what Scan learnt about a whole file.
type Summary struct {
	Columns   []string // every column, in the order first seen
	Rows      int      // data rows
	Generated bool     // column names made up (Options.NoHeader)
	// Skipped counts the empty lines (and CSV rows of empty cells) between
	// the rows, which are not rows: the mapping page says so.
	Skipped int
	// Read is how the file was read: its encoding and separator.
	Read Reading
	// Renamed says, a sentence each, which columns of a CSV header were
	// given a name of their own because an earlier column had theirs, and
	// that an unnamed first column of whole numbers (a pandas row index)
	// was left out.
	Renamed []string
}

// Scan reads an upload like Parse but hands each record to fn as soon as
// it is read instead of keeping it, so memory follows the largest record,
// not the file. fn's error stops the scan and is returned as is, with the
// summary of the records read until then. Columns
// grow as records introduce them (JSON); a record's columns are all known
// when fn gets it.
func Scan(r io.Reader, f Format, opt Options, fn func(Record) error) (Summary, error) {
	if err := checkFormat(f); err != nil {
		return Summary{}, err
	}
	opt = opt.withDefaults()
	limited := &limitReader{r: r, max: opt.MaxBytes}
	br, enc, undecided, err := decodeInput(bufio.NewReaderSize(limited, headerPeek))
	if err != nil {
		return Summary{}, readFailure(limited, nil, err)
	}
	comma, mixed, sepLine := ',', false, false
	if f == CSV {
		if br, err = crLineEnds(br); err != nil {
			return Summary{}, readFailure(limited, nil, err)
		}
		var err error
		if comma, sepLine, err = excelSepLine(br); err != nil {
			return Summary{}, readFailure(limited, nil, err)
		}
		if !sepLine {
			if comma, mixed, err = csvDelimiter(br, opt.NoHeader); err != nil {
				return Summary{}, readFailure(limited, nil, err)
			}
		}
	}
	checked := &utf8Checker{r: br, line: 1}
	if undecided != nil {
		checked.undecided, checked.br = undecided, br
	}
	p := &parser{table: &Table{Format: f}, seen: map[string]bool{}, maxRows: opt.MaxRows, maxColumns: opt.MaxColumns, emit: fn, reuse: opt.ReuseValues,
		mixedFirstRow: mixed, sepLine: sepLine}
	read := Reading{Encoding: enc}
	if f == CSV {
		read.Separator = comma
	}
	switch {
	case f == CSV && comma == '\t':
		// Quotes inside a tab-separated cell are text (tsvQuotes).
		p.tsv = newTSVQuotes(checked)
		err = p.parseCSV(p.tsv, comma, opt.NoHeader, opt.HeaderHint)
	case f == CSV:
		err = p.parseCSV(checked, comma, opt.NoHeader, opt.HeaderHint)
	case f == JSONL:
		err = p.parseJSONL(checked)
	case f == JSON:
		err = p.parseJSONArray(checked)
	}
	if undecided != nil && undecided.enc != "" {
		read.Encoding = undecided.enc // decided past the file's start
	}
	if err != nil {
		var stop *stopError
		if errors.As(err, &stop) {
			// What was read so far: a caller that stops early may want
			// the columns.
			return Summary{Columns: p.table.Columns, Rows: p.rows, Generated: p.table.Generated, Skipped: p.skipped, Read: read, Renamed: p.renamed}, stop.err
		}
		return Summary{}, readFailure(limited, checked, err)
	}
	if p.rows == 0 {
		return Summary{}, errNoRows
	}
	if len(p.table.Columns) == 0 {
		// Only JSON gets here ({} rows): without a column the mapping page
		// has nothing to offer and the import nothing to show the judge.
		return Summary{}, errNoColumns
	}
	return Summary{Columns: p.table.Columns, Rows: p.rows, Generated: p.table.Generated, Skipped: p.skipped, Read: read, Renamed: p.renamed}, nil
}

// crLineEnds reads a CSV file whose lines end in a carriage return alone
// (Excel for Mac's "CSV (Macintosh)", old Mac text editors), which the CSV
// reader would take for one long line, as if they ended in line feeds.
// Such a file is told by its start (as far as headerPeek reaches): it has
// carriage returns and no line feed. Carriage returns inside double quotes
// are kept as they are, as part of the text; other files are read as they
// are, with no layer added.
func crLineEnds(br *bufio.Reader) (*bufio.Reader, error) {
	head, err := br.Peek(headerPeek)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	if bytes.IndexByte(head, '\r') < 0 || bytes.IndexByte(head, '\n') >= 0 {
		return br, nil
	}
	return bufio.NewReaderSize(&crToLF{r: br}, headerPeek), nil
}

// crToLF turns the carriage returns outside double quotes into line feeds.
type crToLF struct {
	r      io.Reader
	quoted bool // inside double quotes ("" inside them toggles twice)
}

func (c *crToLF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		switch {
		case b == '"':
			c.quoted = !c.quoted
		case b == '\r' && !c.quoted:
			p[i] = '\n'
		}
	}
	return n, err
}

// stopError carries the callback's own error through the parsers, so it is
// not mistaken for a problem of the file.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

// readFailure picks the error to report: an exceeded size limit or bad
// encoding explain a parse failure better than the parser's own message.
func readFailure(l *limitReader, c *utf8Checker, err error) error {
	if l.exceeded {
		return &TooLargeError{Limit: l.max}
	}
	if c != nil && c.err != nil {
		return c.err
	}
	return err
}

// limitReader fails once more than max bytes have been read.
type limitReader struct {
	r        io.Reader
	max      int64
	n        int64
	exceeded bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.exceeded {
		return 0, &TooLargeError{Limit: l.max}
	}
	// Allow one byte past the limit, to tell "exactly max" from "more".
	if room := l.max + 1 - l.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		l.exceeded = true
		return 0, &TooLargeError{Limit: l.max}
	}
	return n, err
}

// utf8Checker passes bytes through while checking that they are UTF-8 text
// and counting lines, so that the first bad byte is reported with its line
// whatever parser sits on top.
type utf8Checker struct {
	r       io.Reader
	line    int    // line of the next byte to check
	pending []byte // start of a multi-byte character cut by the previous read
	err     error  // first encoding problem, sticky
	// undecided, while its encoding is "", reads an ASCII file start
	// from br (which is r), up to the first byte beyond ASCII, where it
	// decides the encoding of the rest (asciiStart).
	undecided *asciiStart
	br        *bufio.Reader
}

func (c *utf8Checker) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.undecided != nil && c.undecided.enc == "" && len(p) > 0 {
		chunk, err := c.br.Peek(min(len(p), c.br.Size()))
		if len(chunk) == 0 {
			return 0, err
		}
		if i := asciiPrefix(chunk); i > 0 {
			n := copy(p, chunk[:i])
			_, _ = c.br.Discard(n)
			if bad := c.check(p[:n]); bad >= 0 { // a NUL byte
				return bad, c.err
			}
			return n, nil
		}
		head, _ := c.br.Peek(utf8.UTFMax)
		c.r = c.undecided.decide(head, c.br, c.line)
	}
	n, err := c.r.Read(p)
	if bad := c.check(p[:n]); bad >= 0 {
		return bad, c.err
	}
	if err == io.EOF && len(c.pending) > 0 {
		c.fail(c.pending[0])
		return n, c.err
	}
	return n, err
}

// check validates chunk, following on from earlier chunks. It returns the
// offset in chunk of the first bad byte, or -1 when all is well.
func (c *utf8Checker) check(chunk []byte) int {
	data := chunk
	carried := len(c.pending)
	if carried > 0 {
		data = append(c.pending, chunk...)
		c.pending = nil
	}
	for i := 0; i < len(data); {
		b := data[i]
		if b < utf8.RuneSelf {
			switch b {
			case '\n':
				c.line++
			case 0:
				c.err = &ParseError{Line: c.line, Msg: "the file contains a NUL byte, so it is binary or UTF-16 text; only UTF-8 text is accepted: " + msgSaveAsCSV}
				return max(i-carried, 0)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(data[i:]) {
				// Possibly a character split across reads: decide next time.
				c.pending = append([]byte(nil), data[i:]...)
				return -1
			}
			c.fail(b)
			return max(i-carried, 0)
		}
		i += size
	}
	return -1
}

func (c *utf8Checker) fail(b byte) {
	c.err = &ParseError{Line: c.line, Msg: fmt.Sprintf(
		"the text is not valid UTF-8 (byte 0x%02X); the file is probably in another encoding such as Latin-1, Windows-1252 or UTF-16. Only UTF-8 is accepted: %s, or re-save it as UTF-8 in your text editor",
		b, msgSaveAsCSV)}
}

// parser accumulates the table shared by the three formats.
type parser struct {
	table      *Table
	seen       map[string]bool
	maxRows    int
	maxColumns int
	rows       int                // records emitted so far
	skipped    int                // empty lines and rows skipped (Summary.Skipped)
	emit       func(Record) error // receives each record
	reuse      bool               // Options.ReuseValues
	// mixedFirstRow is set when a CSV file without a header is read as
	// comma-separated though its first row has semicolons too (see
	// csvDelimiter).
	mixedFirstRow bool
	// sepLine is set when a CSV file opens with Excel's "sep=;" line
	// (excelSepLine), which is no row.
	sepLine bool
	// renamed says which columns of a CSV header were renamed because
	// their name was taken (Summary.Renamed).
	renamed []string
	// tsv reads a tab-separated file's quotes (nil for other files);
	// header is its header row, to name the column of a quoted cell that
	// is never closed.
	tsv    *tsvQuotes
	header []string
}

// csvError is the package's csvError, naming the column of a
// tab-separated file's quoted cell that is never closed.
func (p *parser) csvError(err error) error {
	out := csvError(err)
	var pe *csv.ParseError
	var mine *ParseError
	if p.tsv != nil && errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrQuote) && errors.As(out, &mine) &&
		pe.StartLine == p.tsv.openLine && p.tsv.openField < len(p.header) {
		mine.Column = strings.TrimSpace(p.header[p.tsv.openField])
		mine.Msg = `a cell starting with a double quote is read as a quoted cell, as spreadsheets write a cell holding a tab or a line break, but this one is not closed: ` +
			`if the quote is part of the text, write it twice ("") and put the whole cell in double quotes; otherwise add the closing quote`
		if pe.StartLine != pe.Line {
			mine.Msg += fmt.Sprintf("; the reader gave up on line %d", pe.Line)
		}
		if mine.Column == "" {
			mine.Msg = fmt.Sprintf("column %d: %s", p.tsv.openField+1, mine.Msg)
		}
	}
	return out
}

// add appends a record, registering new columns in first-seen order.
func (p *parser) add(rec Record, keys []string, item bool) error {
	if p.rows >= p.maxRows {
		return &ParseError{Line: rec.Line, Item: item, Msg: fmt.Sprintf(
			"the file has more than %d rows, the most one upload may hold; split it into several data sets", p.maxRows)}
	}
	for _, k := range keys {
		if !p.seen[k] {
			// Only JSON meets new columns here (a CSV file's are all in its
			// header, registered by headerColumns): the problem is at the
			// record where the key first appears, and names the key.
			if n := utf8.RuneCountInString(k); n > MaxColumnNameLength {
				return &ParseError{Line: rec.Line, Item: item, Msg: fmt.Sprintf(
					"the key %s… is %d characters long; column names may be up to %d", quote.Quoted(firstRunes(k, 40)), n, MaxColumnNameLength)}
			}
			if len(p.table.Columns) >= p.maxColumns {
				return &ParseError{Line: rec.Line, Item: item, Msg: fmt.Sprintf(
					"the key %s first appears here and would be column %d; %s", quote.Quoted(firstRunes(k, 40)), len(p.table.Columns)+1, p.tooManyColumns())}
			}
			p.seen[k] = true
			p.table.Columns = append(p.table.Columns, k)
		}
	}
	p.rows++
	if err := p.emit(rec); err != nil {
		return &stopError{err}
	}
	return nil
}

// headerColumns registers a CSV file's columns from its header (or, with
// generated names, its first row), read at line: problems with them are
// problems of that line, whatever row comes next.
func (p *parser) headerColumns(names []string, line int, generated bool) error {
	if len(names) > p.maxColumns {
		what := "the header"
		if generated {
			what = "the first row"
		}
		return &ParseError{Line: line, Msg: fmt.Sprintf("%s has %d columns; %s", what, len(names), p.tooManyColumns())}
	}
	for i, k := range names {
		if n := utf8.RuneCountInString(k); n > MaxColumnNameLength {
			return &ParseError{Line: line, Msg: fmt.Sprintf(
				"column %d of the header, named %s…, is %d characters long; column names may be up to %d", i+1, quote.Quoted(firstRunes(k, 40)), n, MaxColumnNameLength)}
		}
		p.seen[k] = true
		p.table.Columns = append(p.table.Columns, k)
	}
	return nil
}

// tooManyColumns says what the column limit is and what to do about it.
func (p *parser) tooManyColumns() string {
	return fmt.Sprintf("the file has more than %d different columns, the most one upload may hold; keep only the columns the judge needs and the human ratings", p.maxColumns)
}

// firstRunes is the start of s, at most n characters, to quote a name too
// long to show whole.
func firstRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// headerPeek is how much of a file's start is read ahead to find the
// separator of a CSV file: a header longer than that is read as
// comma-separated.
const headerPeek = 64 << 10

// csvDelimiter finds the separator of a CSV file from its first line (the
// header, or the first row with noHeader), looking only at characters
// outside double quotes: a tab when a header has tabs (Excel's "Unicode
// Text" and "Text (Tab delimited)", a .tsv file), or a first row of data
// has tabs and no comma or semicolon, or as many tabs as each following
// line; ';' when that line has semicolons and no comma, as
// Excel saves "CSV" in locales with a decimal comma; ',' otherwise. A
// header with both is refused as ambiguous. In a first row of data a comma
// between digits is taken for a decimal comma; a row that has both
// otherwise is read as semicolon-separated when the following lines (as
// far as headerPeek reaches) have as many semicolons as it has and
// commas in varying numbers (commas in text), and as comma-separated
// otherwise (its text may hold semicolons): mixed is then set, for the
// message of a row that does not fit (see fieldCountError).
func csvDelimiter(br *bufio.Reader, noHeader bool) (comma rune, mixed bool, err error) {
	head, err := br.Peek(headerPeek)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return 0, false, err
	}
	lines := separatorCounts(head, noHeader, err == io.EOF)
	if len(lines) == 0 {
		return ',', false, nil
	}
	first := lines[0]
	sameTabs := true
	for _, l := range lines[1:] {
		sameTabs = sameTabs && l.tabs == first.tabs
	}
	switch {
	case first.tabs > 0 && (!noHeader || first.commas+first.semicolons == 0 || sameTabs):
		return '\t', false, nil
	case first.semicolons == 0:
		return ',', false, nil
	case first.commas == 0:
		return ';', false, nil
	case !noHeader:
		return 0, false, &ParseError{Line: 1, Msg: "the header has both commas and semicolons between its names, so the columns cannot be told apart: separate them with one of the two, " +
			`and put a name that contains the other in double quotes (or ` + msgSaveAsCSV + ")"}
	}
	sameSemicolons, sameCommas := len(lines) > 1, true
	for _, l := range lines[1:] {
		sameSemicolons = sameSemicolons && l.semicolons == first.semicolons
		sameCommas = sameCommas && l.commas == first.commas
	}
	if sameSemicolons && !sameCommas {
		return ';', false, nil
	}
	return ',', true, nil
}

// excelSepLine reads Excel's way of naming a CSV file's separator, a
// first line "sep=;" (or "sep=,"): ok is set, with the separator, when the
// file opens with one. A file naming another separator is refused.
func excelSepLine(br *bufio.Reader) (comma rune, ok bool, err error) {
	head, err := br.Peek(8)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return ',', false, err
	}
	rest, found := bytes.CutPrefix(bytes.ToLower(head), []byte("sep="))
	if !found || len(rest) == 0 {
		return ',', false, nil
	}
	end := bytes.TrimPrefix(rest[1:], []byte{'\r'})
	if len(end) > 0 && end[0] != '\n' {
		return ',', false, nil // "sep=..." is the name of a column
	}
	switch rest[0] {
	case ',', ';', '\t':
		return rune(rest[0]), true, nil
	}
	return 0, false, &ParseError{Line: 1, Msg: fmt.Sprintf("the first line (sep=%c) names %s as the separator; only commas, semicolons and tabs are accepted: %s", rest[0], quote.Quoted(string(rune(rest[0]))), msgSaveAsCSV)}
}

// lineSeparators counts the commas, semicolons and tabs outside double
// quotes of one line of a CSV file.
type lineSeparators struct{ commas, semicolons, tabs int }

// separatorCounts counts the separators of each line of head that is not
// blank, up to the last complete one (the last line too when whole is
// set: head is the whole file). A line break inside double quotes does not
// end a line. With data, a comma between digits is a decimal comma, not
// counted.
func separatorCounts(head []byte, data, whole bool) []lineSeparators {
	digit := func(i int) bool { return i >= 0 && i < len(head) && head[i] >= '0' && head[i] <= '9' }
	var out []lineSeparators
	var cur lineSeparators
	quoted, blank := false, true
	for i, b := range head {
		switch {
		case b == '"':
			quoted, blank = !quoted, false
		case quoted:
		case b == '\n':
			if !blank {
				out = append(out, cur)
			}
			cur, blank = lineSeparators{}, true
		case b == ',' && data && digit(i-1) && digit(i+1):
			blank = false // a decimal comma in a row of data, not a separator
		case b == ',':
			cur.commas++
			blank = false
		case b == ';':
			cur.semicolons++
			blank = false
		case b == '\t':
			cur.tabs++ // a line of tabs alone is blank, as a row of empty cells is
		case b != ' ' && b != '\r':
			blank = false
		}
	}
	if whole && !blank && !quoted {
		out = append(out, cur)
	}
	if len(out) == 0 && !blank {
		out = append(out, cur) // a first line longer than head
	}
	return out
}

// DecimalCommaNumber reads a number written with a decimal comma ("3,5",
// "-0,25") and gives it with a dot; ok is false for anything else.
func DecimalCommaNumber(v string) (string, bool) {
	t := strings.TrimSpace(v)
	sign := ""
	if t != "" && (t[0] == '-' || t[0] == '+') {
		sign, t = t[:1], t[1:]
	}
	whole, frac, found := strings.Cut(t, ",")
	if !found || !digitsOnly(whole) || !digitsOnly(frac) {
		return "", false
	}
	return sign + whole + "." + frac, true
}

// isNumber reports a name that reads as a number, as a cell of data does.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

func digitsOnly(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// parseCSV reads values separated by comma (',' or ';', see csvDelimiter)
// with a header row, or without one when noHeader is set; hint ends a
// refused header's message. The records of a semicolon-separated file are
// marked DecimalComma; their cells are kept as written.
func (p *parser) parseCSV(r io.Reader, comma rune, noHeader bool, hint string) error {
	cr := csv.NewReader(r)
	cr.Comma = comma
	cr.FieldsPerRecord = -1 // checked here, for a friendlier message
	cr.LazyQuotes = false
	cr.ReuseRecord = true // each field is copied into the record's map
	var values map[string]string
	if p.sepLine {
		if _, err := cr.Read(); err != nil { // Excel's "sep=;", no row
			return p.csvError(err)
		}
		p.skipped-- // counted below as a line before the header, and not an empty one
	}
	header, err := cr.Read()
	if err == io.EOF {
		return errNoRows
	}
	if err != nil {
		return p.csvError(err)
	}
	var names []string
	var first []string // the first row, when it is data
	if noHeader {
		names = GeneratedColumns(len(header))
		first = header
		p.table.Generated = true
	} else if names, p.renamed, err = csvHeader(header, hint); err != nil {
		return err
	}
	p.header = names // by position, "" where unnamed
	// Columns without a name are kept out of the table; each must be empty
	// in every row (checked below), as the empty columns spreadsheets often
	// add at the end of an export are.
	width := len(names) // fields a row may have
	var named []int     // positions of the named columns
	for i, name := range names {
		if name != "" {
			named = append(named, i)
		}
	}
	if len(named) < len(names) {
		kept := make([]string, len(named))
		for k, i := range named {
			kept[k] = names[i]
		}
		names = kept
	}
	// A first column without a name beside named ones is how pandas writes
	// its row index (DataFrame.to_csv: ",id,answer" then "0,s1,..."):
	// whole numbers there are left out, as a row's place is kept anyway;
	// anything else in it is refused as in any unnamed column.
	leadingIndex := !noHeader && len(named) > 0 && named[0] > 0 && len(header) > 0 && strings.TrimSpace(header[0]) == ""
	sawIndex := false
	// The header's own line (1 unless blank lines come first), not the
	// line of the first data row that add would name.
	headerLine, _ := cr.FieldPos(0)
	// The CSV reader skips empty lines without a word: they are counted
	// from the gap between one record's last line and the next's first.
	p.skipped += headerLine - 1
	end := recordEnd(cr, header)
	if err := p.headerColumns(names, headerLine, noHeader); err != nil {
		return err
	}
	// next returns the held-back first row, then reads on; FieldPos still
	// answers for the row returned, as it was the last one read.
	next := func() ([]string, error) {
		if first != nil {
			row := first
			first = nil
			return row, nil
		}
		return cr.Read()
	}
	for {
		fields, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.csvError(err)
		}
		line, _ := cr.FieldPos(0)
		p.skipped += max(0, line-end-1)
		end = max(end, recordEnd(cr, fields))
		// A row may leave out the unnamed columns at the end of the header.
		short := len(fields) < width && len(named) > 0 && len(fields) > named[len(named)-1]
		if len(fields) != width && !short {
			if len(fields) == 1 && strings.TrimSpace(fields[0]) == "" {
				p.skipped++
				continue // a line of spaces only
			}
			return p.fieldCountError(line, len(fields), width, comma, noHeader)
		}
		if leadingIndex && len(fields) > 0 && isWholeNumber(fields[0]) {
			fields[0] = ""
			if !sawIndex {
				sawIndex = true
				p.renamed = append(p.renamed, "Column 1 has no name in the header row and holds whole numbers, a row index as pandas writes one: it is left out (each sample keeps its place in the file).")
			}
		}
		if len(named) < width {
			if err := unnamedEmpty(fields, named, line, hint); err != nil {
				return err
			}
		}
		if allBlank(fields) {
			p.skipped++
			continue // spreadsheets often export trailing rows of empty cells
		}
		if !noHeader && repeatsHeader(fields, named, names) {
			// Its cells would be read as a sample ("the rating "rating"
			// is not a number; leave the cell empty...").
			return &ParseError{Line: line, Msg: "this row repeats the header row (" + shorten(strings.Join(names, ", "), 80) +
				"): the file looks like several files put one after the other; delete this line (and any other repeated header) and upload the file again"}
		}
		if values == nil || !p.reuse {
			values = make(map[string]string, len(names))
		}
		for k, name := range names {
			values[name] = fields[named[k]]
		}
		if err := p.add(Record{Line: line, Values: values, DecimalComma: comma != ','}, names, false); err != nil {
			return err
		}
	}
	if p.rows == 0 {
		return &ParseError{Msg: `the file has no rows, only a header: add one row per sample under it; if that line is itself a sample, tick "The first row is data" on the upload form and upload it again`}
	}
	return nil
}

// fieldCountError is the problem of a CSV row with n fields where the
// header (or, without one, the first row) has width.
func (p *parser) fieldCountError(line, n, width int, comma rune, noHeader bool) error {
	first := "the header has"
	if noHeader {
		first = "the first row has"
	}
	if p.mixedFirstRow {
		// Both separators in the first row: the advice about commas
		// would have the person quote what is most likely a text's
		// comma in a semicolon-separated file.
		return &ParseError{Line: line, Msg: fmt.Sprintf(
			"this row has %d fields but %s %d; the first row has both commas and semicolons outside double quotes, so the file was read as separated by commas. "+
				`If its columns are separated by semicolons, put each field that contains a comma or a semicolon in double quotes ("Hello, world"), or %s; `+
				"if they are separated by commas, check this row for an unquoted comma or a missing quote",
			n, first, width, msgSaveAsCSV)}
	}
	sep, seps := "comma", "commas"
	switch comma {
	case ';':
		sep, seps = "semicolon", "semicolons"
	case '\t':
		sep, seps = "tab", "tabs"
	}
	fields := "fields"
	if n == 1 {
		fields = "field"
	}
	if n < width {
		// QA: a row that simply ends early (a value left out) was told to
		// look for an unquoted comma, which gives a row more fields, not
		// fewer.
		example := "" // two tabs in quotes would read as blank space
		if comma != '\t' {
			example = " (" + quote.Quoted(strings.Repeat(string(comma), 2)) + ")"
		}
		return &ParseError{Line: line, Msg: fmt.Sprintf(
			"this row has %d %s but %s %d columns, so it ends before its last column: give every column a value, writing an empty one as nothing between two %s%s, "+
				"or check for a double quote that is not closed where it should be, which joins fields",
			n, fields, first, width, seps, example)}
	}
	return &ParseError{Line: line, Msg: fmt.Sprintf(
		"this row has %d %s but %s %d columns; check for an unquoted %s or a missing quote (put a field containing %s in double quotes)",
		n, fields, first, width, sep, seps)}
}

// repeatsHeader reports a row whose named columns hold their own names, as
// a second file's header does when two exports are put one after the
// other.
func repeatsHeader(fields []string, named []int, names []string) bool {
	for k, i := range named {
		if i >= len(fields) || strings.TrimSpace(fields[i]) != names[k] {
			return false
		}
	}
	return len(named) > 0
}

// msgAddHeader is the way out when a header check fails and the caller
// has no option to read the first row as data (see Options.HeaderHint).
const msgAddHeader = "The first row must be a header row of unique column names: if the file starts with data, add such a row above it"

// GeneratedColumns names n columns of a file without a header row:
// column_1, column_2...
func GeneratedColumns(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("column_%d", i+1)
	}
	return names
}

// csvHeader checks the header row and returns the column names, "" for a
// column without one (allowed only if it is empty in every row: see
// unnamedEmpty). A header whose every column lacks a name is refused. A
// name that an earlier column already has, as spreadsheets allow (two
// "Comments" columns), is made unique with its count, "Comments (2)", and
// renamed says so, for the mapping page and the import notes; a repeated
// name that is a number ("3,3,x") is refused, as the row is more likely
// data than a header.
func csvHeader(header []string, hint string) (names, renamed []string, err error) {
	names = make([]string, len(header))
	if allBlank(header) {
		return nil, nil, &ParseError{Line: 1, Msg: "the header row has no column names: give every column a name. " + hint}
	}
	taken := map[string]bool{} // every name the header spells
	for _, h := range header {
		taken[strings.TrimSpace(h)] = true
	}
	where := map[string]int{}
	for i, h := range header {
		name := strings.TrimSpace(h)
		if name == "" {
			continue
		}
		if j, dup := where[name]; dup && isNumber(name) {
			// "3,3,x": a first row of data more likely than a header.
			return nil, nil, &ParseError{Line: 1, Column: name, Msg: fmt.Sprintf("columns %d and %d have the same name: column names must be unique. %s", j+1, i+1, hint)}
		} else if dup {
			unique := name
			for k := 2; taken[unique]; k++ {
				unique = fmt.Sprintf("%s (%d)", name, k)
			}
			taken[unique] = true
			renamed = append(renamed, fmt.Sprintf("Columns %d and %d of the header are both named %s: column %d is named %s here.", j+1, i+1, quote.Quoted(name), i+1, quote.Quoted(unique)))
			name = unique
		} else {
			where[name] = i
		}
		names[i] = name
	}
	return names, renamed, nil
}

// csvError rewords encoding/csv's syntax errors.
func csvError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	line, msg := pe.Line, pe.Err.Error()
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		msg = `a double quote (") appears inside a field that is not quoted: put the whole field in double quotes and write each inner quote twice ("")`
	case errors.Is(pe.Err, csv.ErrQuote):
		// Most often a quote opened and never closed, which swallows the
		// following lines: point at the row where it was opened.
		line = pe.StartLine
		msg = `a quoted field is not closed, or has text after its closing quote: check the double quotes (write a quote inside a quoted field as "")`
		if pe.StartLine != pe.Line {
			msg += fmt.Sprintf("; the reader gave up on line %d", pe.Line)
		}
	}
	return &ParseError{Line: line, Msg: msg}
}

// isWholeNumber reports whether a cell holds a whole number (a row index).
func isWholeNumber(f string) bool {
	_, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
	return err == nil
}

// unnamedEmpty refuses a row with text in a column the header leaves
// without a name (named lists the positions of the named columns; the row
// may stop before trailing unnamed ones).
func unnamedEmpty(fields []string, named []int, line int, hint string) error {
	k := 0
	for i, f := range fields {
		if k < len(named) && named[k] == i {
			k++
			continue
		}
		if strings.TrimSpace(f) != "" {
			return &ParseError{Line: line, Msg: fmt.Sprintf(
				"column %d has no name in the header row but holds %s here: give it a name in the header row, or delete the column if it is not needed. %s",
				i+1, quote.Quoted(shorten(strings.TrimSpace(f), 40)), hint)}
		}
	}
	return nil
}

// recordEnd is the line the record just read ends on: its last field's
// first line plus the line breaks inside that field.
func recordEnd(cr *csv.Reader, fields []string) int {
	if len(fields) == 0 {
		return 0
	}
	line, _ := cr.FieldPos(len(fields) - 1)
	return line + strings.Count(fields[len(fields)-1], "\n")
}

func allBlank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// parseJSONL reads one JSON object per line; blank lines are skipped.
func (p *parser) parseJSONL(r io.Reader) error {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		text, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return err
		}
		if trimmed := bytes.TrimSpace(text); len(trimmed) > 0 {
			if aerr := p.addJSON(trimmed, line, false); aerr != nil {
				// More lines follow when the line ends in a line break: an
				// object cut short here may go on there.
				var pe *ParseError
				if errors.As(aerr, &pe) && pe.Line == line && strings.HasPrefix(pe.Msg, "invalid JSON: ") {
					// A next line that is a whole object of its own says
					// this one was cut short, not pretty-printed.
					more := err != io.EOF && !nextLineWhole(br)
					if hint := jsonLinesHint(trimmed, more); hint != "" {
						pe.Msg = hint
					}
				}
				return aerr
			}
		} else if len(text) > 0 {
			p.skipped++
		}
		if err == io.EOF {
			return nil
		}
	}
}

// nextLineWhole reports whether the next line of br that is not blank,
// as far as br has it buffered, is a whole JSON object: the line before it
// was then one object cut short (a broken line in the middle of a JSON
// Lines file), not the start of an object pretty-printed over several
// lines. QA: a .jsonl file with one truncated line among good ones was
// told to "write each object on a line of its own (jq -c does)". br is
// not advanced.
func nextLineWhole(br *bufio.Reader) bool {
	buf, _ := br.Peek(br.Size())
	for len(buf) > 0 {
		line, rest, found := bytes.Cut(buf, []byte{'\n'})
		if !found && len(buf) == br.Size() {
			return false // longer than what is buffered: cannot tell
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line[0] == '{' && json.Valid(line)
		}
		buf = rest
	}
	return false
}

// parseJSONArray reads a JSON array of objects, one item at a time.
// encoding/json's syntax errors carry no line, and an array is often
// pretty-printed over many lines: a lineTail beside the decoder turns the
// place of an error into the line an editor shows.
func (p *parser) parseJSONArray(r io.Reader) error {
	lt := &lineTail{r: r, line: 1}
	dec := json.NewDecoder(lt)
	tok, err := dec.Token()
	if err == io.EOF {
		return errNoRows
	}
	if err != nil {
		msg := "invalid JSON: " + jsonMessage(err)
		if start, ok := lt.from(0); ok && looksLikeCSV(start) {
			msg += "; the file looks like comma-separated values (CSV): if it is a table with a header row, save it with a name ending in .csv and upload it again"
		} else {
			msg += "; a JSON file should hold an array of objects, like [{...}, {...}]"
		}
		return &ParseError{Line: lt.errorLine(0), Msg: msg}
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		if d == '{' {
			return &ParseError{Msg: "the file holds a single JSON object; expected an array of objects ([{...}, {...}]) or JSON Lines (one object per line, saved as .jsonl)"}
		}
		return &ParseError{Msg: "the file is not a JSON array of objects: it should look like [{...}, {...}]"}
	}
	item := 0
	for dec.More() {
		item++
		at := dec.InputOffset() // the comma before the item, or the first item itself
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if b, ok := lt.from(at); ok && item > 1 && trailingComma(b) {
				return &ParseError{Line: lt.lineAt(at + int64(bytes.IndexByte(b, ','))), Msg: fmt.Sprintf(
					"a comma follows the last item (item %d), which JSON does not allow: remove the comma before the closing ]", item-1)}
			}
			line := 0
			if b, ok := lt.from(at); ok && item > 1 && (len(b) == 0 || b[0] != ',') {
				line = lt.lineAt(at) // no comma between two items: the second one
			} else if ok {
				if item > 1 {
					at++ // the comma
				}
				line = lt.errorLine(at)
			}
			if line > 0 {
				return &ParseError{Line: line, Msg: fmt.Sprintf("invalid JSON in item %d: %s — fix the item or remove it", item, jsonMessage(err))}
			}
			return &ParseError{Line: item, Item: true, Msg: "invalid JSON: " + jsonMessage(err) + " — fix the item or remove it"}
		}
		if err := p.addJSON(raw, item, true); err != nil {
			return err
		}
	}
	at := dec.InputOffset()
	if _, err := dec.Token(); err != nil { // the closing ]
		if line := lt.errorLine(at); line > 0 {
			return &ParseError{Line: line, Msg: "invalid JSON: " + jsonMessage(err) + " — check the end of the array"}
		}
		return &ParseError{Line: item + 1, Item: true, Msg: "invalid JSON: " + jsonMessage(err) + " — check the end of the array"}
	}
	at = dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return &ParseError{Line: lt.errorLine(at), Msg: "there is more content after the closing ] of the array: remove it"}
	}
	return nil
}

// lineTailKeep is how much of the latest input a lineTail keeps to find an
// error's line: 1 MiB holds the item being decoded in any honest file, and
// an error further back is reported by its item only.
const lineTailKeep = 1 << 20

// lineTail passes a reader through, keeping the last bytes read (at least
// lineTailKeep of them) and the line where they start, so that an offset
// in the recent input can be turned into a line.
type lineTail struct {
	r    io.Reader
	n    int64  // bytes read so far
	tail []byte // the last bytes read
	line int    // line of tail[0]
}

func (t *lineTail) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.tail = append(t.tail, p[:n]...)
	t.n += int64(n)
	if len(t.tail) > 2*lineTailKeep {
		// Drop the oldest half at once, so the copying stays in
		// proportion to the input.
		drop := len(t.tail) - lineTailKeep
		t.line += bytes.Count(t.tail[:drop], []byte{'\n'})
		t.tail = t.tail[:copy(t.tail, t.tail[drop:])]
	}
	return n, err
}

// from is the input kept from offset on, if it is still kept.
func (t *lineTail) from(offset int64) ([]byte, bool) {
	start := t.n - int64(len(t.tail))
	if offset < start || offset > t.n {
		return nil, false
	}
	return t.tail[offset-start:], true
}

// lineAt is the line of the byte at offset, or 0 when it is no longer kept.
func (t *lineTail) lineAt(offset int64) int {
	start := t.n - int64(len(t.tail))
	if offset < start || offset > t.n {
		return 0
	}
	return t.line + bytes.Count(t.tail[:offset-start], []byte{'\n'})
}

// errorLine is the line of the first JSON syntax error in the input kept
// from offset at on, which the decoder has just failed on, or 0 when that
// input is no longer kept. The decoder's own offsets do not all count from
// the start of the input, so the text is checked again on its own, where
// they count from its first byte. Input cut short ends at its last
// non-space byte.
func (t *lineTail) errorLine(at int64) int {
	b, ok := t.from(at)
	if !ok {
		return 0
	}
	var v any
	var se *json.SyntaxError
	if errors.As(json.Unmarshal(b, &v), &se) && se.Offset > 0 && se.Offset < int64(len(b)) {
		return t.lineAt(at + se.Offset - 1)
	}
	end := len(bytes.TrimRight(b, " \t\r\n"))
	return t.lineAt(at + int64(max(end-1, 0)))
}

// addJSON flattens one JSON object (a JSONL line or an array item) into a record.
func (p *parser) addJSON(text []byte, line int, item bool) error {
	text = bytes.TrimSpace(text)
	fix := " — fix the line or remove it"
	if item {
		fix = " — fix the item or remove it"
	}
	if depth := jsonDepth(text, MaxJSONDepth); depth > MaxJSONDepth {
		return &ParseError{Line: line, Item: item, Msg: fmt.Sprintf(
			"objects and arrays are nested more than %d levels deep here; a data set row needs a few levels at most: flatten the structure%s", MaxJSONDepth, fix)}
	}
	if !json.Valid(text) {
		var v any
		err := json.Unmarshal(text, &v)
		return &ParseError{Line: line, Item: item, Msg: "invalid JSON: " + jsonMessage(err) + fix}
	}
	if text[0] != '{' {
		return &ParseError{Line: line, Item: item, Msg: fmt.Sprintf("expected a JSON object ({...}) but found %s%s", jsonKind(text[0]), fix)}
	}
	f := &flattener{values: map[string]string{}}
	if err := f.object(text, ""); err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Line, pe.Item = line, item
			return pe
		}
		return &ParseError{Line: line, Item: item, Msg: "invalid JSON: " + jsonMessage(err) + fix}
	}
	return p.add(Record{Line: line, Values: f.values}, f.keys, item)
}

// MaxJSONDepth is the deepest nesting of objects and arrays accepted in
// one row. Rows of real data sets nest two or three levels; the flattener's
// cost grows with the square of the depth, so a 60 KB line nested ten
// thousand levels once took gigabytes. 64 leaves room for any honest file.
const MaxJSONDepth = 64

// jsonDepth returns the deepest nesting of objects and arrays in text, in
// one pass that skips string contents, and stops counting once past limit.
// It does not validate: malformed text is left to the JSON decoder.
func jsonDepth(text []byte, limit int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range text {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// flattener turns nested objects into dotted column names.
type flattener struct {
	values map[string]string
	keys   []string // in document order
}

func (f *flattener) set(key, value string) error {
	// A JSON string may spell NUL as \u0000, which the byte check of the
	// file (utf8Checker) cannot see. NUL is no text: PostgreSQL refuses it
	// in a text value, and no judge should read it.
	if strings.ContainsRune(key, 0) {
		return &ParseError{Msg: fmt.Sprintf("the key %s holds a NUL character (\\u0000), which is not text: remove it from the key", quote.Quoted(key))}
	}
	if strings.ContainsRune(value, 0) {
		return &ParseError{Column: key, Msg: "the value holds a NUL character (\\u0000), which is not text and cannot be stored: remove it from the file"}
	}
	if _, dup := f.values[key]; dup {
		return &ParseError{Column: key, Msg: "this key appears twice in the same object: keep only one"}
	}
	f.values[key] = value
	f.keys = append(f.keys, key)
	return nil
}

// object flattens the JSON object text under prefix, keeping key order.
func (f *flattener) object(text []byte, prefix string) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	empty := true
	for dec.More() {
		empty = false
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := prefix + tok.(string)
		if strings.TrimSpace(tok.(string)) == "" {
			return &ParseError{Column: key, Msg: "an object has an empty key: give every key a name"}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := f.value(key, raw); err != nil {
			return err
		}
	}
	if empty && prefix != "" {
		// Keep {} visible as an empty column rather than losing the key.
		return f.set(strings.TrimSuffix(prefix, "."), "")
	}
	return nil
}

// value stores one JSON value under key as text.
func (f *flattener) value(key string, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '{':
		return f.object(raw, key+".")
	case '[':
		var items []any
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		lines := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				var compact bytes.Buffer
				if err := json.Compact(&compact, raw); err != nil {
					return err
				}
				return f.set(key, compact.String())
			}
			lines = append(lines, s)
		}
		return f.set(key, strings.Join(lines, "\n"))
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		return f.set(key, s)
	case 'n':
		return f.set(key, "")
	default: // numbers, true and false keep their JSON spelling
		return f.set(key, string(raw))
	}
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonMessage words encoding/json's errors for a person.
// trailingComma reports input (from an array item's offset on) that is a
// comma and then the array's closing bracket: [{...}, {...},].
func trailingComma(b []byte) bool {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte{','})
	rest = bytes.TrimLeft(rest, " \t\r\n")
	return ok && len(rest) > 0 && rest[0] == ']'
}

// jsonLinesHint words the two usual ways a file of JSON objects is not
// JSON Lines, "" for any other invalid line: objects
// pretty-printed over several lines (the line holds an object's start, cut
// short after a bracket, a comma or a colon, as an indenting printer
// breaks lines, and more lines follow), and several objects on one line.
func jsonLinesHint(text []byte, more bool) string {
	dec := json.NewDecoder(bytes.NewReader(text))
	var v json.RawMessage
	err := dec.Decode(&v)
	switch {
	case more && (text[0] == '{' || text[0] == '[') && strings.ContainsRune("{[,:", rune(text[len(text)-1])) && errors.Is(err, io.ErrUnexpectedEOF):
		return "invalid JSON: this line starts a JSON object that goes on over the next lines, but JSON Lines holds each object whole on one line: " +
			"write each object on a line of its own (jq -c does), or put the objects in a JSON array ([{...}, {...}]) saved as .json"
	case err == nil && dec.More():
		return "invalid JSON: this line holds more than one JSON value (e.g. {...}{...}): JSON Lines has one object per line; put each object on a line of its own"
	}
	return ""
}

func jsonMessage(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of input"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	msg = strings.Replace(msg, "unexpected end of JSON input", "unexpected end of input", 1)
	return msg
}
