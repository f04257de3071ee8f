// Package dataimport turns an uploaded data set (CSV, JSON Lines or a JSON
// array) into a table of text cells, and then applies the column mapping the
// person chose: which column is the id, which columns the judge sees and
// which columns hold human ratings.
//
// Every error it returns is written for the person who uploaded the file: it
// says where the problem is (line or item, column) and what to do about it.
package dataimport

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/batcheval/batcheval/internal/quote"
)

// Format is the syntax of an uploaded file.
type Format string

// The accepted formats.
const (
	CSV   Format = "csv"   // comma-separated values with a header row
	JSONL Format = "jsonl" // JSON Lines: one JSON object per line
	JSON  Format = "json"  // one JSON array of objects
)

// utf8BOM is the byte order mark some editors (and Excel's "CSV UTF-8")
// put at the start of UTF-8 files; it carries no data and is dropped.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Messages shared by DetectFormat and Parse.
const (
	msgSaveAsCSV = `save it as "CSV UTF-8 (Comma delimited)" (Excel: File > Save As) and upload that file`
	msgWorkbook  = "spreadsheet workbooks (.xlsx, .xls, .ods, .numbers) are not accepted: " + msgSaveAsCSV
)

// DetectFormat decides how to read an upload from its file name and its
// first bytes (head), read in the encoding Scan will read them in (UTF-16
// with its byte order mark is decoded first). The extension wins when it
// is .csv, .tsv, .tab, .jsonl, .ndjson or .json (.tsv and .tab files are
// read as CSV, their separator found from their header), except that a .json file whose content starts with '{' is read as
// JSON Lines (many tools write JSON Lines under a .json name) and a .jsonl
// file starting with '[' is read as a JSON array. A name without an
// extension (a script's upload) is read by its first non-space byte: '[' is
// JSON, '{' is JSON Lines, anything else CSV. A .txt file whose first line
// has a tab is read as CSV too: Excel saves "Unicode Text" and "Text (Tab
// delimited)" as .txt. Any other extension (.html...), and a .txt file
// without tabs, is refused, naming the accepted ones and, when the content
// looks like one of them, the name to give the file: the upload form lists
// only those, and guessing would read a page of prose as a table. HTML and
// XML pages, workbooks, UTF-16 text without a byte order mark, empty files and JSON files
// that hold a CSV table are refused with an error that says what the file
// looks like and what to do instead.
func DetectFormat(filename string, head []byte) (Format, error) {
	ext := strings.ToLower(filepath.Ext(filename))
	switch ext {
	case ".xlsx", ".xlsm", ".xls", ".ods", ".numbers":
		return "", errors.New(msgWorkbook)
	}
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		// A zip archive: .xlsx, .ods and .numbers are all zip files.
		return "", errors.New("the file looks like a spreadsheet workbook or a zip archive, not text: " + msgSaveAsCSV)
	case bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0}):
		// The old binary Office container used by .xls.
		return "", errors.New(msgWorkbook)
	}
	head, _ = decodeHead(head)
	if bytes.IndexByte(head, 0) >= 0 {
		return "", errors.New(`the file contains NUL bytes, so it is binary or UTF-16 text without a byte order mark; save it as "CSV UTF-8 (Comma delimited)" or "Unicode Text" (Excel: File > Save As) and upload that file`)
	}
	text := bytes.TrimSpace(head)
	if len(text) == 0 {
		return "", errors.New("the file is empty: choose the file that holds your data, one sample a row (check that it was saved or exported in full)")
	}
	if page := markupKind(text); page != "" {
		// Read as CSV, a saved web page was "a file with no rows, only a
		// header"; as JSON, an invalid character.
		return "", fmt.Errorf("this looks like %s, not a CSV, JSONL or JSON file: export your table as CSV, JSONL or JSON and upload that file", page)
	}
	first := text[0]
	firstLine, _, _ := bytes.Cut(text, []byte("\n"))
	switch ext {
	case ".csv", ".tsv", ".tab":
		return CSV, nil
	case ".txt":
		if bytes.IndexByte(firstLine, '\t') >= 0 {
			return CSV, nil
		}
	case ".jsonl", ".ndjson", ".json":
		switch {
		case first == '[':
			return JSON, nil
		case first == '{':
			return JSONL, nil
		case looksLikeCSV(text):
			return "", fmt.Errorf("the file is named %s but its first line looks like comma-separated values (CSV), not JSON: if it is a table with a header row, rename it to end in .csv and upload it again", ext)
		case ext == ".json":
			return JSON, nil // the parser names the line that is not JSON
		}
		return JSONL, nil
	case "":
		switch first {
		case '[':
			return JSON, nil
		case '{':
			return JSONL, nil
		}
		return CSV, nil
	}
	hint := ""
	switch {
	case first == '[':
		hint = "; this one looks like a JSON array: if it is, rename it to end in .json"
	case first == '{':
		hint = "; this one looks like JSON Lines: if it is, rename it to end in .jsonl"
	case looksLikeCSV(text):
		hint = "; this one looks like comma-separated values: if it is a table with a header row, rename it to end in .csv"
	}
	return "", fmt.Errorf("files ending in %s are not accepted: upload a .csv, .tsv, .jsonl or .json file%s", ext, hint)
}

// looksLikeCSV says whether text (the start of a file) reads as a CSV
// table: its first line has a comma and does not open a JSON value.
func looksLikeCSV(text []byte) bool {
	text = bytes.TrimSpace(bytes.TrimPrefix(text, utf8BOM))
	if len(text) == 0 || text[0] == '[' || text[0] == '{' {
		return false
	}
	line, _, _ := bytes.Cut(text, []byte("\n"))
	return bytes.IndexByte(line, ',') >= 0
}

// markupKind names the kind of page text starts like ("an HTML page",
// "an XML file"), or is "" for anything else. Only the openings those
// files have are recognised, so a CSV header such as "<id>,text" still
// reads as CSV.
func markupKind(text []byte) string {
	start := bytes.ToLower(text[:min(len(text), 64)])
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body", "<!--"} {
		if bytes.HasPrefix(start, []byte(p)) {
			return "an HTML page (a saved web page)"
		}
	}
	if bytes.HasPrefix(start, []byte("<?xml")) {
		if bytes.Contains(bytes.ToLower(text), []byte("<html")) {
			return "an HTML page (a saved web page)"
		}
		return "an XML file"
	}
	return ""
}

// checkFormat reports a format Parse does not know.
func checkFormat(f Format) error {
	switch f {
	case CSV, JSONL, JSON:
		return nil
	}
	return fmt.Errorf("unknown file format %s: use csv, jsonl or json", quote.Quoted(string(f)))
}
