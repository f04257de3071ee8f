package dataimport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/internal/quote"
)

// A rating written as a score out of a maximum ("4/5", "4 / 5", "3.5/5",
// "4 out of 5") is read as its score, 4, when every such cell of its
// column has the same maximum and no plain number of the column is above
// it: the column is then a scale from 0 to that maximum, written the way
// people type it in a spreadsheet, and 4 is what "4/5" says. A column
// that mixes maximums ("4/5" and "7/10"), a score above its own maximum
// ("6/5"), or a plain number above the column's maximum (8 beside "4/5")
// has no one scale: reading the scores as they stand would put 7 out of
// 10 above 4 out of 5 and 8 above "5/5", a wrong number without a word,
// so those cells are refused, naming their line and what to write.
// Only the column's own cells decide: the file stores numbers, and the
// rubric that will read them is chosen later.

// fraction reads a cell written as a score out of a maximum: num is the
// score, den the maximum; ok is false for anything else, and for a
// maximum that is not above 0 or a score below 0. With decimalComma
// "3,5/5" is 3.5 out of 5.
func fraction(v string, decimalComma bool) (num, den float64, ok bool) {
	s := strings.TrimSpace(v)
	a, b, found := strings.Cut(s, "/")
	if !found {
		lower := strings.ToLower(s)
		i := strings.Index(lower, " out of ")
		if i < 0 {
			return 0, 0, false
		}
		a, b = s[:i], s[i+len(" out of "):]
	}
	num, okA := plainDecimal(strings.TrimSpace(a), decimalComma)
	den, okB := plainDecimal(strings.TrimSpace(b), decimalComma)
	if !okA || !okB || den <= 0 {
		return 0, 0, false
	}
	return num, den, true
}

// plainDecimal reads digits with at most one decimal point (or, with
// decimalComma, a decimal comma): no sign, exponent, NaN or infinity,
// which no one writes in a score out of a maximum.
func plainDecimal(s string, decimalComma bool) (float64, bool) {
	if decimalComma {
		s = strings.Replace(s, ",", ".", 1)
	}
	whole, frac, dot := strings.Cut(s, ".")
	if !digitsOnly(whole) || (dot && !digitsOnly(frac)) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// numberText writes a number as people read it: 4, 3.5.
func numberText(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// fractionScale is what an Applier has seen of one rating column's
// scores written out of a maximum, and of its plain numbers.
type fractionScale struct {
	den       float64 // the maximum of the first such cell; 0 before one
	example   string  // that cell, as written
	line      int     // its line (or item)
	n         int     // cells read as their score
	plainMax  float64 // the largest plain number so far
	plainLine int     // its line; 0 before any plain number
}

// readFraction reads the cell of column col of the record at line (s
// trimmed, known not to be a plain number) against the column's scale so
// far; it returns the score, or a message saying why the cell cannot be
// read. ok is false when the cell is not written as a score out of a
// maximum at all.
func (f *fractionScale) readFraction(s string, decimalComma bool, line int, where string) (v *float64, msg string, ok bool) {
	num, den, ok := fraction(s, decimalComma)
	if !ok {
		return nil, "", false
	}
	const fix = "write every rating of the column out of one maximum, or all of them as plain numbers on one scale; leave the cell empty if the row was not rated"
	switch {
	case num > den:
		return nil, fmt.Sprintf("the rating %s is more than its own maximum (%s): correct it; leave the cell empty if the row was not rated", quote.Quoted(s), numberText(den)), true
	case f.den != 0 && den != f.den:
		on := num / den * f.den
		about := ""
		if r := math.Round(on*100) / 100; r != on {
			on, about = r, "about "
		}
		return nil, fmt.Sprintf("the rating %s is out of %s, but this column's ratings are out of %s (%s on %s %d), so the two cannot be compared as written: %s (%s out of %s is %s%s out of %s)",
			quote.Quoted(s), numberText(den), numberText(f.den), quote.Quoted(f.example), where, f.line, fix, numberText(num), numberText(den), about, numberText(on), numberText(f.den)), true
	case f.den == 0 && f.plainLine > 0 && f.plainMax > den:
		return nil, fmt.Sprintf("the rating %s is out of %s, but this column holds %s (on %s %d), more than that, so its scale is not clear: %s",
			quote.Quoted(s), numberText(den), numberText(f.plainMax), where, f.plainLine, fix), true
	}
	if f.den == 0 {
		f.den, f.example, f.line = den, s, line
	}
	f.n++
	return &num, "", true
}

// plain notes a plain number of the column; msg is set when it is above
// the maximum the column's scores are written out of.
func (f *fractionScale) plain(v float64, s string, line int, where string) (msg string) {
	if f.den != 0 && v > f.den {
		return fmt.Sprintf("the rating %s is more than %s, the maximum this column's ratings are written out of (%s on %s %d), so its scale is not clear: "+
			"write every rating of the column out of one maximum, or all of them as plain numbers on one scale; leave the cell empty if the row was not rated",
			quote.Quoted(s), numberText(f.den), quote.Quoted(f.example), where, f.line)
	}
	if f.plainLine == 0 || v > f.plainMax {
		f.plainMax, f.plainLine = v, line
	}
	return ""
}

// note says how the column's scores were read, for the import notes; ""
// when it had none.
func (f *fractionScale) note(col string, where string) string {
	if f == nil || f.n == 0 {
		return ""
	}
	what := "1 rating of column %s is"
	if f.n != 1 {
		what = strconv.Itoa(f.n) + " ratings of column %s are"
	}
	return fmt.Sprintf(what+" written out of %s (such as %s on %s %d): each was read as its score, the number before the maximum, on a scale up to %s.",
		quote.Quoted(col), numberText(f.den), quote.Quoted(f.example), where, f.line, numberText(f.den))
}

// columnFractions reads a column of t the way an Applier reads its
// ratings: how many cells are scores out of a maximum, and whether they
// make one scale (one maximum, no score above it, no plain number above
// it); den is that maximum.
func columnFractions(t *Table, col string) (n int, den float64, example string, oneScale bool) {
	oneScale = true
	plainMax, plain := 0.0, false
	for _, r := range t.Records {
		v := strings.TrimSpace(r.Values[col])
		if v == "" || notRated(v) {
			continue
		}
		if f, err := readNumber(v, r.DecimalComma); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			plainMax, plain = max(plainMax, f), true
			continue
		}
		num, d, ok := fraction(v, r.DecimalComma)
		if !ok {
			continue
		}
		if n == 0 {
			den, example = d, v
		}
		n++
		if d != den || num > d {
			oneScale = false
		}
	}
	if n > 0 && plain && plainMax > den {
		oneScale = false
	}
	return n, den, example, oneScale
}

// RatingScaleNote says, for a rating column whose ratings are written as
// scores out of one maximum ("4/5"), how they will be read: "" for any
// other column. The mapping page shows it beside the column.
func RatingScaleNote(t *Table, col string) string {
	n, den, example, one := columnFractions(t, col)
	if n == 0 || !one {
		return ""
	}
	num, _, _ := fraction(example, t.Records[0].DecimalComma)
	return fmt.Sprintf("Its ratings written out of %s (such as %s) are read as their score (%s), on a scale up to %s.",
		numberText(den), quote.Quoted(example), numberText(num), numberText(den))
}
