package dataimport

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/internal/quote"
)

// RepeatedID is one id value found on several rows.
type RepeatedID struct {
	ID    string
	Count int // rows carrying it
}

// IDReport explains why a column named like an id was not taken as the
// id: some of its values repeat (or are empty). Without it the mapping step
// silently fell back to generated ids.
type IDReport struct {
	Column string
	// Repeated lists the most frequent repeated values, at most
	// maxRepeatedShown, most rows first.
	Repeated []RepeatedID
	// RepeatedIDs is how many distinct values repeat; RepeatedRows how many
	// rows carry one of them.
	RepeatedIDs, RepeatedRows int
	EmptyRows                 int // rows whose id is empty
	// RatingsDiffer names the numeric columns whose values differ between
	// rows of one repeated id: the mark of one row per annotator.
	RatingsDiffer []string
	// TextDiffers names the other columns (not numbers, not the
	// annotator's) whose values differ between rows of one repeated id: the
	// mark of different samples given one id, which a per-annotator import
	// refuses ("rows disagree on this field").
	TextDiffers []string
	// AnnotatorColumn is a column that tells the rows of one id apart (the
	// pair id, value never repeats), the best guess for "one row per
	// annotator"; "" when none does.
	AnnotatorColumn string
}

// PerAnnotator reports whether the repeats look like one row per annotator:
// the same id rated differently on different rows that otherwise agree.
func (r IDReport) PerAnnotator() bool { return len(r.RatingsDiffer) > 0 && len(r.TextDiffers) == 0 }

// maxRepeatedShown caps the repeated ids listed: a handful shows the
// pattern, the counts give the size.
const maxRepeatedShown = 5

// annotatorNames are words that name an annotator column, tried first.
var annotatorNames = []string{"annotator", "rater", "worker", "judge", "annotator_id", "rater_id", "worker_id", "user", "user_id", "coder"}

// ExplainIDs returns a report for each column named like an id (id, uuid,
// sample_id...) whose values are not present and unique in every row.
func ExplainIDs(t *Table) []IDReport {
	var out []IDReport
	for _, c := range t.Columns {
		if !isIDName(c) {
			continue
		}
		if r, ok := explainID(t, c); ok {
			out = append(out, r)
		}
	}
	return out
}

func isIDName(col string) bool {
	key := idNameKey(col)
	for _, n := range idNames {
		if key == n {
			return true
		}
	}
	return false
}

// explainID checks one candidate id column; ok is false when its values
// are present and unique (nothing to explain).
func explainID(t *Table, col string) (IDReport, bool) {
	r := IDReport{Column: col}
	counts := map[string]int{}
	for _, rec := range t.Records {
		id := strings.TrimSpace(rec.Values[col])
		if id == "" {
			r.EmptyRows++
			continue
		}
		counts[id]++
	}
	for id, n := range counts {
		if n > 1 {
			r.RepeatedIDs++
			r.RepeatedRows += n
			r.Repeated = append(r.Repeated, RepeatedID{ID: id, Count: n})
		}
	}
	if r.RepeatedIDs == 0 && r.EmptyRows == 0 {
		return r, false
	}
	sort.Slice(r.Repeated, func(i, j int) bool {
		if r.Repeated[i].Count != r.Repeated[j].Count {
			return r.Repeated[i].Count > r.Repeated[j].Count
		}
		return r.Repeated[i].ID < r.Repeated[j].ID
	})
	r.Repeated = r.Repeated[:min(len(r.Repeated), maxRepeatedShown)]
	if r.RepeatedIDs > 0 {
		r.RatingsDiffer = ratingsDiffer(t, col, counts)
		r.AnnotatorColumn = annotatorColumn(t, col)
		r.TextDiffers = textDiffers(t, col, r.AnnotatorColumn, counts)
	}
	return r, true
}

// ratingsDiffer lists the numeric columns (every filled cell a finite
// number, or a score out of the column's one maximum as the import reads
// it, "4/5"; and not an id) whose value, as read, differs between two rows
// of a repeated id.
//
// A column of scores out of one maximum was not numeric here though the
// import reads it as numbers, so one row per annotator rated "3/5" and
// "4/5" was not told apart from duplicate samples (import43).
func ratingsDiffer(t *Table, idCol string, counts map[string]int) []string {
	var out []string
	for _, c := range t.Columns {
		if c == idCol || looksLikeID(c) {
			continue
		}
		n, _, _, oneScale := columnFractions(t, c)
		fractions := n > 0 && oneScale
		first := map[string]float64{}
		numeric, filled, differs := true, false, false
		for _, rec := range t.Records {
			v := strings.TrimSpace(rec.Values[c])
			if v == "" || notRated(v) {
				continue
			}
			filled = true
			f, ok := ratingValue(v, rec.DecimalComma, fractions)
			if !ok {
				numeric = false
				break
			}
			id := strings.TrimSpace(rec.Values[idCol])
			if counts[id] < 2 || differs {
				continue
			}
			if prev, seen := first[id]; !seen {
				first[id] = f
			} else if prev != f {
				differs = true
			}
		}
		if numeric && filled && differs {
			out = append(out, c)
		}
	}
	return out
}

// ratingValue reads a filled cell of a rating column as the import does:
// a finite plain number, or, when the column's scores out of a maximum
// share one (fractions), the score before it. ok is false for anything
// else.
func ratingValue(v string, decimalComma, fractions bool) (float64, bool) {
	if f, err := readNumber(v, decimalComma); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, true
	}
	if fractions {
		if num, _, ok := fraction(v, decimalComma); ok {
			return num, true
		}
	}
	return 0, false
}

// textDiffers lists the columns other than ratings (columns of numbers),
// the id and the annotator (annotatorCol, or any column named like one)
// whose value differs between two rows of a repeated id. An empty cell
// differs from a filled one, as it does when rows are merged.
func textDiffers(t *Table, idCol, annotatorCol string, counts map[string]int) []string {
	var out []string
	for _, c := range t.Columns {
		if c == idCol || c == annotatorCol || namedLikeAnnotator(c) || statsOf(t, c).numeric {
			continue
		}
		first := map[string]string{}
		for _, rec := range t.Records {
			id := strings.TrimSpace(rec.Values[idCol])
			if counts[id] < 2 {
				continue
			}
			v := strings.TrimSpace(rec.Values[c])
			if prev, seen := first[id]; !seen {
				first[id] = v
			} else if prev != v {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// namedLikeAnnotator reports whether a column's name contains one of the
// usual names of an annotator column.
func namedLikeAnnotator(col string) bool {
	lc := strings.ToLower(col)
	for _, name := range annotatorNames {
		if strings.Contains(lc, name) {
			return true
		}
	}
	return false
}

// annotatorColumn finds a column whose value, paired with the id, never
// repeats and is never empty: a column naming the annotator, preferring
// the usual names.
func annotatorColumn(t *Table, idCol string) string {
	var candidates []string
	for _, c := range t.Columns {
		if c != idCol && separatesRows(t, idCol, c) {
			candidates = append(candidates, c)
		}
	}
	for _, name := range annotatorNames {
		for _, c := range candidates {
			if strings.EqualFold(c, name) {
				return c
			}
		}
	}
	// Beyond an exact name, a column with ratings written out of a
	// maximum ("4/5") is a rating column, never the annotators': one named
	// "rater_score", or one whose ratings are out of several maximums (so
	// not numbers to statsOf), was offered as the annotator column, and
	// importing with it made each rating an annotator (llmeval44).
	// Nor is a column named like a rating whose values are ratings
	// ("worker_rating" of 3.5 and 4, "rater_score" of 1 to 5): it was
	// guessed as the annotators' for "worker" or "rater" in its name
	// (llmeval44).
	for _, c := range candidates {
		lc := strings.ToLower(c)
		for _, name := range annotatorNames {
			if strings.Contains(lc, name) && !writtenOutOfMaximum(t, c) && !ratingsNamedSo(t, c) {
				return c
			}
		}
	}
	// Otherwise the first one that holds names rather than numbers
	// (a numeric column that happens to differ is more likely a rating).
	for _, c := range candidates {
		if !statsOf(t, c).numeric && !writtenOutOfMaximum(t, c) {
			return c
		}
	}
	return ""
}

// ratingWords are parts of a column name that say it holds ratings.
var ratingWords = []string{"rating", "score", "grade"}

// ratingScaleBound bounds the values of a scale of whole numbers: ratings
// run 1-5, 1-10, 0-100 at most, while a worker numbered by a platform
// (1023) lies beyond it.
const ratingScaleBound = 100

// ratingsNamedSo reports whether col is named like a rating (ratingWords)
// and every filled cell is a number a rating scale holds: some value has
// decimals, or all lie within ±ratingScaleBound. Such a column is a
// rating even when "rater" or "worker" is in its name; ids written as
// codes ("A1B2") are no numbers and stay annotators.
func ratingsNamedSo(t *Table, col string) bool {
	lc := strings.ToLower(col)
	if !slices.ContainsFunc(ratingWords, func(w string) bool { return strings.Contains(lc, w) }) {
		return false
	}
	filled, decimals, inScale := false, false, true
	for _, rec := range t.Records {
		v := strings.TrimSpace(rec.Values[col])
		if v == "" || notRated(v) {
			continue
		}
		f, err := readNumber(v, rec.DecimalComma)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		filled = true
		if f != math.Trunc(f) {
			decimals = true
		}
		if math.Abs(f) > ratingScaleBound {
			inScale = false
		}
	}
	return filled && (decimals || inScale)
}

// writtenOutOfMaximum reports whether some cell of col is a rating
// written out of a maximum ("4/5", "3 out of 5"), as fractions.go reads
// them, whatever the maximums: a mark of a rating column.
func writtenOutOfMaximum(t *Table, col string) bool {
	n, _, _, _ := columnFractions(t, col)
	return n > 0
}

// separatesRows reports whether col is filled on every row and tells apart
// the rows sharing an id, while itself repeating across ids (an annotator
// rates many samples; a unique per-row value such as free text does not
// name an annotator).
func separatesRows(t *Table, idCol, col string) bool {
	pairs := map[[2]string]bool{}
	values := map[string]bool{}
	for _, rec := range t.Records {
		v := strings.TrimSpace(rec.Values[col])
		if v == "" {
			return false
		}
		k := [2]string{strings.TrimSpace(rec.Values[idCol]), v}
		if pairs[k] {
			return false
		}
		pairs[k] = true
		values[v] = true
	}
	return len(values) < len(t.Records)
}

// HeaderNote explains why the first row of a CSV file may be data rather
// than column names.
type HeaderNote struct {
	// Numbers lists the header cells that are numbers.
	Numbers []string
}

// Message says what was seen and what to do.
func (n HeaderNote) Message() string {
	quoted := make([]string, len(n.Numbers))
	for i, s := range n.Numbers {
		quoted[i] = quote.Quoted(shorten(s, 30))
	}
	return fmt.Sprintf("The first row of the file may be data rather than column names: %s %s, and none of the names is a usual column name (id, text, score…). "+
		"Read as a header, that row is not imported.", strings.Join(quoted, ", "), plural(len(n.Numbers), "is a number", "are numbers"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// headerWords are column names common enough that a header holding one is
// a header even if other names are numbers (e.g. "id,1,2,3" for three
// annotators).
var headerWords = []string{"text", "score", "rating", "label", "response", "context", "question", "answer",
	"summary", "source", "document", "reference", "system", "model", "annotator", "input", "output", "prompt",
	"dialogue", "dialog", "fact", "name", "value", "human", "overall"}

// CheckHeader looks at a CSV table's header for signs that it is the first
// data row: some names are numbers, and none is a usual column name. ok is
// false when the header looks like a header. Tables read without a header
// (or not from CSV) have nothing to check.
func CheckHeader(t *Table) (HeaderNote, bool) {
	if t.Format != CSV || t.Generated {
		return HeaderNote{}, false
	}
	var n HeaderNote
	for _, c := range t.Columns {
		if isHeaderWord(c) {
			return HeaderNote{}, false
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(c), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			n.Numbers = append(n.Numbers, c)
		}
	}
	return n, len(n.Numbers) > 0
}

func isHeaderWord(col string) bool {
	lc := strings.ToLower(strings.TrimSpace(col))
	if isIDName(lc) || looksLikeID(lc) {
		return true
	}
	for _, w := range headerWords {
		if lc == w || strings.HasPrefix(lc, w+"_") || strings.HasSuffix(lc, "_"+w) || strings.HasPrefix(lc, w+" ") || strings.HasSuffix(lc, " "+w) {
			return true
		}
	}
	return false
}
