package dataimport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/excerpt"
)

// Mapping is what the person says about the columns of a table.
type Mapping struct {
	IDColumn      string            // column holding each row's id; "" generates row-1, row-2...
	Fields        []evaluator.Field // columns the judge sees, with their labels (at least one)
	RatingColumns []string          // columns holding numeric human ratings
	// AnnotatorColumn, when set, says the file has one row per annotator
	// and sample: rows sharing an id are one sample, their shown fields must
	// agree, and each rating column becomes the mean of the annotators'
	// ratings, with every annotator's own rating kept as "<column>@<annotator>"
	// (for inter-annotator agreement and the human ceiling).
	AnnotatorColumn string
}

// Row is one record after the mapping is applied.
type Row struct {
	Position   int                 // 1-based position in the file
	ExternalID string              // the id column's value, or the generated row-N
	Data       map[string]string   // every column of the table ("" where the record had none)
	Ratings    map[string]*float64 // each rating column; nil means not rated (never 0)
}

// maxProblems caps the problems a ValidationError lists: past twenty, the
// person is better served fixing the pattern than reading the rest.
const maxProblems = 20

// ValidationError lists what stops a mapping from applying to a table.
type ValidationError struct {
	Problems []ParseError // the first problems found, at most 20
	More     int          // how many further problems were not listed
}

// Error lists the problems, one a line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	total := len(e.Problems) + e.More
	if total == 1 {
		b.WriteString("the data set has 1 problem:")
	} else {
		fmt.Fprintf(&b, "the data set has %d problems:", total)
	}
	for i := range e.Problems {
		b.WriteString("\n- ")
		b.WriteString(e.Problems[i].Error())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n- and %d more", e.More)
	}
	return b.String()
}

// problems collects ParseErrors, keeping the first maxProblems.
type problems struct {
	list []ParseError
	more int
}

func (p *problems) add(e ParseError) {
	if len(p.list) < maxProblems {
		p.list = append(p.list, e)
		return
	}
	p.more++
}

// Apply checks the mapping against every record and returns the rows. It
// reports all problems at once, as a *ValidationError: mapped columns that
// do not exist, empty or repeated ids, rating cells that are not finite
// numbers, and shown columns that are empty in every row. An empty rating
// cell is not a problem: it becomes a nil rating.
func (t *Table) Apply(m Mapping) ([]Row, error) {
	a := NewApplier(t.Columns, t.Format, m)
	rows := make([]Row, 0, len(t.Records))
	for _, rec := range t.Records {
		rows = append(rows, a.Add(rec))
	}
	a.finish()
	if m.AnnotatorColumn != "" && a.exists[m.AnnotatorColumn] && a.idOK {
		rows = mergeAnnotators(rows, t, m, a.fieldCols, a.ratingCols, &a.probs, a.item)
	} else if m.AnnotatorColumn != "" && !a.exists[m.AnnotatorColumn] {
		a.missingColumn("annotator", m.AnnotatorColumn)
	}
	if err := a.err(); err != nil {
		return nil, err
	}
	return rows, nil
}

// Applier applies a mapping one record at a time, for imports that stream
// the file instead of holding it: feed it every record with Add, in file
// order, then call Finish. It keeps the ids seen (to find repeats), not
// the rows. It does not merge one-row-per-annotator files, which need
// every row of a sample together: use Table.Apply for those.
type Applier struct {
	m          Mapping
	columns    []string
	exists     map[string]bool
	item       bool
	idOK       bool
	fieldCols  []string
	ratingCols []string
	probs      problems
	firstLine  map[string]int // id -> line where it first appears
	nonEmpty   map[string]bool
	n          int // records added
}

// NewApplier checks the mapping against the file's columns (all of them,
// as a scan of the whole file found them) and gets ready for its records.
func NewApplier(columns []string, f Format, m Mapping) *Applier {
	a := &Applier{m: m, columns: columns, exists: make(map[string]bool, len(columns)), item: f == JSON,
		firstLine: map[string]int{}, nonEmpty: map[string]bool{}}
	for _, c := range columns {
		a.exists[c] = true
	}
	a.idOK = m.IDColumn != "" && !a.missingColumn("id", m.IDColumn)
	if len(m.Fields) == 0 {
		a.probs.add(ParseError{Msg: "no column is shown to the judge: choose at least one field"})
	}
	shown := map[string]bool{}
	for _, f := range m.Fields {
		switch {
		case strings.TrimSpace(f.Column) == "":
			a.probs.add(ParseError{Msg: fmt.Sprintf("the field labelled %q names no column", f.Label)})
		case shown[f.Column]:
			a.probs.add(ParseError{Column: f.Column, Msg: "this column is chosen twice as a field"})
		case !a.missingColumn("field", f.Column):
			shown[f.Column] = true
			a.fieldCols = append(a.fieldCols, f.Column)
		}
	}
	rated := map[string]bool{}
	for _, c := range m.RatingColumns {
		if rated[c] {
			a.probs.add(ParseError{Column: c, Msg: "this column is chosen twice as a rating"})
			continue
		}
		rated[c] = true
		switch {
		case shown[c]:
			a.probs.add(ParseError{Column: c, Msg: "this column is both shown to the judge and used as a human rating: the judge would see the answer"})
		case !a.missingColumn("rating", c):
			a.ratingCols = append(a.ratingCols, c)
		}
	}
	return a
}

// missingColumn records a mapped column that is not in the file.
func (a *Applier) missingColumn(role, col string) bool {
	if a.exists[col] {
		return false
	}
	a.probs.add(ParseError{Column: col, Msg: fmt.Sprintf("the %s column is not in the file; the columns are: %s", role, strings.Join(a.columns, ", "))})
	return true
}

// Add maps the next record of the file to a row, noting its problems.
func (a *Applier) Add(rec Record) Row {
	a.n++
	row := Row{
		Position: a.n,
		Data:     make(map[string]string, len(a.columns)),
		Ratings:  make(map[string]*float64, len(a.ratingCols)),
	}
	for _, c := range a.columns {
		row.Data[c] = rec.Values[c]
	}
	switch {
	case a.m.IDColumn == "":
		row.ExternalID = "row-" + strconv.Itoa(a.n)
	case a.idOK:
		id := strings.TrimSpace(rec.Values[a.m.IDColumn])
		row.ExternalID = id
		if id == "" {
			a.probs.add(ParseError{Line: rec.Line, Item: a.item, Column: a.m.IDColumn, Msg: "the id is empty: every row needs an id"})
		} else if first, dup := a.firstLine[id]; dup && a.m.AnnotatorColumn == "" {
			a.probs.add(ParseError{Line: rec.Line, Item: a.item, Column: a.m.IDColumn, Msg: fmt.Sprintf(
				"the id %q is also used on %s %d: ids must be unique", id, lineWord(a.item), first)})
		} else if !dup {
			// A CSV record's fields share one string: keeping the id as
			// it is would keep the whole record alive, so an import would
			// hold the file in memory after all.
			a.firstLine[strings.Clone(id)] = rec.Line
		}
	}
	for _, c := range a.fieldCols {
		if !a.nonEmpty[c] && strings.TrimSpace(rec.Values[c]) != "" {
			a.nonEmpty[c] = true
		}
	}
	for _, c := range a.ratingCols {
		v, msg := parseRating(rec.Values[c])
		if msg != "" {
			a.probs.add(ParseError{Line: rec.Line, Item: a.item, Column: c, Msg: msg})
		}
		row.Ratings[c] = v
	}
	return row
}

// Failed reports whether a problem has been found so far: the rows are
// not worth storing any more, though the rest of the file is still worth
// checking so every problem is listed at once.
func (a *Applier) Failed() bool { return len(a.probs.list) > 0 }

// finish adds the problems only the whole file shows.
func (a *Applier) finish() {
	if a.n == 0 {
		a.probs.add(ParseError{Msg: "the file has no rows"})
		return
	}
	for _, c := range a.fieldCols {
		if !a.nonEmpty[c] {
			a.probs.add(ParseError{Column: c, Msg: "this field is empty in every row: the judge would have nothing to read; choose another column"})
		}
	}
}

func (a *Applier) err() error {
	if len(a.probs.list) > 0 {
		return &ValidationError{Problems: a.probs.list, More: a.probs.more}
	}
	return nil
}

// Finish ends the file: nil when every record fitted the mapping, else a
// *ValidationError listing the problems.
func (a *Applier) Finish() error {
	if a.m.AnnotatorColumn != "" {
		a.probs.add(ParseError{Column: a.m.AnnotatorColumn, Msg: "one row per annotator cannot be read one record at a time"})
	}
	a.finish()
	return a.err()
}

// AnnotatorKey names one annotator's rating of a rating column.
func AnnotatorKey(column, annotator string) string { return column + "@" + annotator }

// mergeAnnotators folds rows that share an id (one per annotator) into one
// sample whose ratings are the annotators' mean.
func mergeAnnotators(rows []Row, t *Table, m Mapping, fieldCols, ratingCols []string, probs *problems, item bool) []Row {
	var out []Row
	index := map[string]int{}
	sums := map[string]map[string][2]float64{} // id -> column -> (sum, count)
	for i, row := range rows {
		rec := t.Records[i]
		ann := strings.TrimSpace(rec.Values[m.AnnotatorColumn])
		if ann == "" {
			probs.add(ParseError{Line: rec.Line, Item: item, Column: m.AnnotatorColumn, Msg: "the annotator is empty: every row needs one when rows are per annotator"})
			continue
		}
		k, seen := index[row.ExternalID]
		if !seen {
			k = len(out)
			index[row.ExternalID] = k
			merged := row
			merged.Position = k + 1
			merged.Ratings = map[string]*float64{}
			out = append(out, merged)
			sums[row.ExternalID] = map[string][2]float64{}
		} else {
			for _, c := range fieldCols {
				if strings.TrimSpace(row.Data[c]) != strings.TrimSpace(out[k].Data[c]) {
					probs.add(ParseError{Line: rec.Line, Item: item, Column: c, Msg: fmt.Sprintf(
						"rows with id %q disagree on this field: the rows of one sample must show the same text", row.ExternalID)})
				}
			}
		}
		for _, c := range ratingCols {
			v := row.Ratings[c]
			key := AnnotatorKey(c, ann)
			if _, twice := out[k].Ratings[key]; twice {
				probs.add(ParseError{Line: rec.Line, Item: item, Column: m.AnnotatorColumn, Msg: fmt.Sprintf(
					"annotator %q rates sample %q twice", ann, row.ExternalID)})
				continue
			}
			out[k].Ratings[key] = v
			if v != nil {
				s := sums[row.ExternalID][c]
				sums[row.ExternalID][c] = [2]float64{s[0] + *v, s[1] + 1}
			}
		}
	}
	for i := range out {
		for _, c := range ratingCols {
			s := sums[out[i].ExternalID][c]
			if s[1] > 0 {
				mean := s[0] / s[1]
				out[i].Ratings[c] = &mean
			} else {
				out[i].Ratings[c] = nil
			}
		}
	}
	return out
}

// parseRating reads one rating cell: empty is nil (not rated); anything but
// a finite number is a problem, described by the returned message.
func parseRating(cell string) (*float64, string) {
	s := strings.TrimSpace(cell)
	if s == "" {
		return nil, ""
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		msg := fmt.Sprintf("the rating %q is not a number", shorten(s, 40))
		if strings.Contains(s, ",") {
			msg += " (write decimals with a dot, e.g. 2.5)"
		}
		return nil, msg + "; leave the cell empty if the row was not rated"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Sprintf("the rating %q is not a finite number; leave the cell empty if the row was not rated", s)
	}
	return &v, ""
}

func lineWord(item bool) string {
	if item {
		return "item"
	}
	return "line"
}

// shorten cuts s to at most n characters at a word boundary, marking the
// cut.
func shorten(s string, n int) string { return excerpt.Cut(s, n) }

// Preview returns the first n records (all of them when there are fewer).
func (t *Table) Preview(n int) []Record {
	if n <= 0 {
		return nil
	}
	return t.Records[:min(n, len(t.Records))]
}

// idNames are the column names SuggestMapping takes for an id, in order of preference.
var idNames = []string{"id", "uuid", "guid", "_id", "key", "sample_id", "item_id", "example_id", "row_id", "dialogue_id", "dialog_id"}

// SuggestMapping guesses a mapping for the person to confirm: an id column
// with a familiar name (id, uuid...) whose values are present and unique;
// text-like columns (words, many distinct values) as fields labelled in
// Title Case; numeric columns (every non-empty value a finite number) as
// ratings.
func SuggestMapping(t *Table) Mapping {
	var m Mapping
	stats := make(map[string]columnStats, len(t.Columns))
	for _, c := range t.Columns {
		stats[c] = statsOf(t, c)
	}
	for _, name := range idNames {
		for _, c := range t.Columns {
			if strings.EqualFold(c, name) && stats[c].uniqueComplete {
				m.IDColumn = c
				break
			}
		}
		if m.IDColumn != "" {
			break
		}
	}
	var longest string
	for _, c := range t.Columns {
		s := stats[c]
		switch {
		case c == m.IDColumn || s.filled == 0:
		case s.numeric:
			if !looksLikeID(c) {
				m.RatingColumns = append(m.RatingColumns, c)
			}
		default:
			if s.textLike(len(t.Records)) {
				m.Fields = append(m.Fields, evaluator.Field{Column: c, Label: titleLabel(c)})
			}
			if longest == "" || s.meanLen() > stats[longest].meanLen() {
				longest = c
			}
		}
	}
	if len(m.Fields) == 0 && longest != "" {
		m.Fields = []evaluator.Field{{Column: longest, Label: titleLabel(longest)}}
	}
	return m
}

// columnStats summarises one column for SuggestMapping.
type columnStats struct {
	filled         int  // non-empty cells
	numeric        bool // every non-empty cell is a finite number
	words          bool // some cell has a space or a line break
	distinct       int  // distinct non-empty values
	totalLen       int  // characters over non-empty cells
	uniqueComplete bool // every row has a value and no value repeats
}

func (s columnStats) meanLen() float64 {
	if s.filled == 0 {
		return 0
	}
	return float64(s.totalLen) / float64(s.filled)
}

// textLike tells prose from labels: a column of words whose values are
// mostly different. A handful of values repeated across many rows (a system
// name, a category) is a label, not something to judge.
func (s columnStats) textLike(rows int) bool {
	if !s.words {
		return false
	}
	// Twenty distinct values repeated over more than twice as many rows is
	// a category; more variety than that is text.
	categorical := s.distinct <= 20 && s.distinct*2 < rows
	return !categorical
}

func statsOf(t *Table, col string) columnStats {
	s := columnStats{numeric: true}
	values := map[string]bool{}
	empty := false
	for _, r := range t.Records {
		v := strings.TrimSpace(r.Values[col])
		if v == "" {
			empty = true
			continue
		}
		s.filled++
		s.totalLen += utf8.RuneCountInString(v)
		if strings.ContainsAny(v, " \n") {
			s.words = true
		}
		if f, err := strconv.ParseFloat(v, 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			s.numeric = false
		}
		values[v] = true
	}
	s.distinct = len(values)
	s.numeric = s.numeric && s.filled > 0
	s.uniqueComplete = !empty && s.filled > 0 && s.distinct == s.filled
	return s
}

// looksLikeID reports names of bookkeeping columns that are numeric but are
// not ratings (row numbers, foreign ids).
func looksLikeID(col string) bool {
	c := strings.ToLower(col)
	return c == "id" || c == "index" || c == "idx" || c == "row" || strings.HasSuffix(c, "_id") || strings.HasSuffix(c, " id")
}

// titleLabel turns a column name into a label: "system_response" and
// "system.response" become "System Response".
func titleLabel(col string) string {
	words := strings.FieldsFunc(col, func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || unicode.IsSpace(r)
	})
	for i, w := range words {
		r, size := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[size:]
	}
	if len(words) == 0 {
		return col
	}
	return strings.Join(words, " ")
}
