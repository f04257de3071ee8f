package web

import "github.com/batcheval/batcheval/internal/quote"

// Quoted puts a name a person typed (a judge's, a rubric's, a column's, a
// value from a form) between the product's quotation marks, “ and ”, as
// typed: a quotation mark, a backslash or a <b> in it stays as it is (no
// Go-style escaping), and HTML escaping is left to the template that shows
// the text. Only what cannot be seen is made visible (quote.Visible). Use
// it for messages people read; text for machines (JSON, logs, headers)
// keeps %q. It is quote.Quoted, which the models' messages use too.
func Quoted(s string) string { return quote.Quoted(s) }

// QuotedList quotes each name with Quoted and joins them with commas and
// conj ("and", "or") before the last: “a”, “b” or “c”.
func QuotedList(names []string, conj string) string { return quote.QuotedList(names, conj) }

// Visible is s with its control characters and direction overrides
// written visibly, as Quoted writes them, and nothing else changed.
func Visible(s string) string { return quote.Visible(s) }

// VisibleLines is Visible for a block of text shown with its line breaks
// (a <pre>): line breaks (\r\n written as \n) and tabs are kept as they
// are, every other control character is made visible.
func VisibleLines(s string) string { return quote.VisibleLines(s) }
