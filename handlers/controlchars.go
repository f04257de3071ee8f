package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// refuseControlCharacters and refuseControlsInAddress are the one check,
// for every request, that no field holds a control character other than
// tab and line breaks: not the address's parts (path parameters, query
// parameter names and values: filters, tokens and names that reach SQL),
// not a form, JSON or multipart body's fields (multipart field values and
// file names). A NUL (JSON
// "\u0000", %00) was stored on SQLite and was a 500 on PostgreSQL, which
// refuses NUL in text, and the other controls are no text anyone means to
// store or show a judge. It answers 422 naming the parameter or field.
// Line breaks stay allowed here; fields of one line (names, labels,
// criterion names) refuse them where they are checked. A file's contents
// are checked by their reader (dataimport, the rubric file parser), and
// the dataset upload routes, whose bodies are streamed, check their other
// fields and the file name as they read them (acceptUpload).
//
// The body check runs after the route's access check (a refused caller
// learns nothing), on bodies limitBodies has already read into memory.
func refuseControlCharacters(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody || uploadRoute(c.Path()) {
			return next(c)
		}
		mt, params, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
		if mt != echo.MIMEApplicationJSON && mt != echo.MIMEApplicationForm && mt != echo.MIMEMultipartForm {
			return next(c)
		}
		data, err := io.ReadAll(req.Body)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, "The request could not be read; try again.")
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
		var field string
		var bad rune
		switch mt {
		case echo.MIMEApplicationJSON:
			field, bad = controlInJSON(data)
		case echo.MIMEApplicationForm:
			field, bad = controlInForm(data)
		default:
			field, bad = controlInMultipart(data, params["boundary"])
		}
		if field != "" {
			return controlRefused(field, bad)
		}
		return next(c)
	}
}

// refuseControlsInAddress is refuseControlCharacters for the address:
// path parameters and query parameters. It runs before the route's access
// check, which may itself look up the address's token (a share link's),
// and a refusal for the address's form tells a caller nothing they did
// not send.
func refuseControlsInAddress(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if field, bad := controlInAddress(c); field != "" {
			return controlRefused(field, bad)
		}
		return next(c)
	}
}

// controlRefused is the answer to a field holding the control character
// bad: 422, naming the field and the character.
func controlRefused(field string, bad rune) error {
	return models.Errorf(models.EInvalid, "%s holds a control character (%s), which is not text and cannot be stored: "+
		"remove it and send again (tabs and line breaks are kept where text may have several lines)", field, runeName(bad))
}

// controlInAddress finds, quoted, a path parameter or a query parameter
// (its name or a value) holding a refused control character; "" when
// none does.
func controlInAddress(c echo.Context) (string, rune) {
	values := c.ParamValues()
	for i, name := range c.ParamNames() {
		if i < len(values) {
			if r, ok := firstControl(values[i]); ok {
				return "the address part " + strconv.Quote(name), r
			}
		}
	}
	return controlInValues(c.QueryParams(), "the query parameter name ", "the query parameter ")
}

// controlInValues finds, quoted after namePrefix (a name) or valuePrefix
// (a value), the first of values' names and values holding a refused
// control character, in name order so the answer is the same every time;
// "" when none does.
func controlInValues(values url.Values, namePrefix, valuePrefix string) (string, rune) {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if r, ok := firstControl(k); ok {
			return namePrefix + strconv.QuoteToASCII(k), r
		}
		for _, v := range values[k] {
			if r, ok := firstControl(v); ok {
				return valuePrefix + strconv.Quote(k), r
			}
		}
	}
	return "", 0
}

// controlInMultipart finds, quoted, a multipart field holding a refused
// control character in its name, its value (parts without a file) or its
// file name; "" when none does or the body cannot be read (the handler
// then says so). Files' contents are their readers' to check.
func controlInMultipart(data []byte, boundary string) (string, rune) {
	if boundary == "" {
		return "", 0
	}
	mr := multipart.NewReader(bytes.NewReader(data), boundary)
	for {
		part, err := mr.NextPart()
		if err != nil {
			return "", 0
		}
		if field, r := controlInPart(part); field != "" {
			return field, r
		}
	}
}

// controlInPart checks one multipart part as controlInMultipart does,
// reading the value of a part without a file name (at most maxFieldBytes
// of it: a longer value is the handler's to refuse).
func controlInPart(part *multipart.Part) (string, rune) {
	name := part.FormName()
	if r, ok := firstControl(name); ok {
		return "the field name " + strconv.QuoteToASCII(name), r
	}
	if filename := part.FileName(); filename != "" {
		if r, ok := firstControl(filename); ok {
			return "the file name of " + strconv.Quote(name), r
		}
		return "", 0
	}
	value, _ := io.ReadAll(io.LimitReader(part, maxFieldBytes))
	if r, ok := firstControl(string(value)); ok {
		return strconv.Quote(name), r
	}
	return "", 0
}

// isRefusedControl says whether r is a control character a field may not
// hold: any but tab, line feed and carriage return.
func isRefusedControl(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
}

// firstControl returns the first refused control character of s.
func firstControl(s string) (rune, bool) {
	for _, r := range s {
		if isRefusedControl(r) {
			return r, true
		}
	}
	return 0, false
}

// runeName names a control character for people: "U+0000, NUL".
func runeName(r rune) string {
	if r == 0 {
		return "U+0000, NUL"
	}
	return fmt.Sprintf("U+%04X", r)
}

// controlInForm finds, quoted, a form field holding a refused control character
// (in its name or its value); "" when none does or the form cannot be read
// (the handler then says so).
func controlInForm(data []byte) (string, rune) {
	values, err := url.ParseQuery(string(data))
	if err != nil {
		return "", 0
	}
	return controlInValues(values, "the field name ", "")
}

// controlInJSON finds, quoted, by its JSON path ("criteria[0].description"), a
// value or key holding a refused control character; "" when none does or
// the body is not JSON (decodeJSON then says what is wrong).
func controlInJSON(data []byte) (string, rune) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", 0
	}
	return controlIn(v, "")
}

func controlIn(v any, path string) (string, rune) {
	at := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch v := v.(type) {
	case string:
		if r, ok := firstControl(v); ok {
			if path == "" {
				return "the request body", r
			}
			return strconv.Quote(path), r
		}
	case []any:
		for i, item := range v {
			if f, r := controlIn(item, fmt.Sprintf("%s[%d]", path, i)); f != "" {
				return f, r
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if r, ok := firstControl(k); ok {
				return "the key " + strconv.QuoteToASCII(at(k)), r
			}
			if f, r := controlIn(v[k], at(k)); f != "" {
				return f, r
			}
		}
	}
	return "", 0
}
