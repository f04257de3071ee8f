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
	msgUTF16     = "the file is UTF-16 encoded; only UTF-8 is accepted: " + msgSaveAsCSV + ", or re-save it as UTF-8 in your text editor"
	msgWorkbook  = "spreadsheet workbooks (.xlsx, .xls, .ods, .numbers) are not accepted: " + msgSaveAsCSV
	msgTabs      = "tab-separated files are not accepted, only comma-separated CSV: " + msgSaveAsCSV
)

// DetectFormat decides how to read an upload from its file name and its
// first bytes (head). The extension wins when it is .csv, .jsonl, .ndjson or
// .json, except that a .json file whose content starts with '{' is read as
// JSON Lines (many tools write JSON Lines under a .json name) and a .jsonl
// file starting with '[' is read as a JSON array. Without a known extension
// the first non-space byte decides: '[' is JSON, '{' is JSON Lines, anything
// else CSV. Workbooks, TSV files, UTF-16 text and empty files are refused
// with an error that says what to do instead.
func DetectFormat(filename string, head []byte) (Format, error) {
	ext := strings.ToLower(filepath.Ext(filename))
	switch ext {
	case ".xlsx", ".xlsm", ".xls", ".ods", ".numbers":
		return "", errors.New(msgWorkbook)
	case ".tsv", ".tab":
		return "", errors.New(msgTabs)
	}
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		// A zip archive: .xlsx, .ods and .numbers are all zip files.
		return "", errors.New("the file looks like a spreadsheet workbook or a zip archive, not text: " + msgSaveAsCSV)
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return "", errors.New(msgUTF16)
	case bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0}):
		// The old binary Office container used by .xls.
		return "", errors.New(msgWorkbook)
	case bytes.IndexByte(head, 0) >= 0:
		return "", errors.New("the file contains NUL bytes, so it is binary or UTF-16 text; only UTF-8 text is accepted: " + msgSaveAsCSV)
	}
	text := bytes.TrimSpace(bytes.TrimPrefix(head, utf8BOM))
	if len(text) == 0 {
		return "", errors.New("the file is empty")
	}
	first := text[0]
	switch ext {
	case ".csv":
		return CSV, nil
	case ".jsonl", ".ndjson":
		if first == '[' {
			return JSON, nil
		}
		return JSONL, nil
	case ".json":
		if first == '{' {
			return JSONL, nil
		}
		return JSON, nil
	}
	switch first {
	case '[':
		return JSON, nil
	case '{':
		return JSONL, nil
	}
	return CSV, nil
}

// checkFormat reports a format Parse does not know.
func checkFormat(f Format) error {
	switch f {
	case CSV, JSONL, JSON:
		return nil
	}
	return fmt.Errorf("unknown file format %q: use csv, jsonl or json", string(f))
}
