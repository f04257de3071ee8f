package dataimport

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/excerpt"
	"github.com/batcheval/batcheval/internal/quote"
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

// problems collects ParseErrors, keeping the first maxProblems in the
// order of the file: a problem's place is the record it concerns (0 for
// problems of the mapping itself, after every record for problems of the
// whole file) and, within a record, the id before the ratings. Problems
// mostly arrive in that order; a repeated id confirmed by a second reading
// of the file (Applier.Finish) arrives late and takes its place.
type problems struct {
	list []placedProblem
	more int
	seq  int
}

type placedProblem struct {
	ParseError
	record, sub, seq int
}

// afterRecords places problems of the whole file after every record.
const afterRecords = math.MaxInt

func (p *problems) add(e ParseError) { p.addAt(e, afterRecords, 0) }

// addAt adds a problem of the record-th record (1-based; 0 for the
// mapping); sub orders the problems of one record.
func (p *problems) addAt(e ParseError, record, sub int) {
	p.seq++
	pp := placedProblem{ParseError: e, record: record, sub: sub, seq: p.seq}
	i, _ := slices.BinarySearchFunc(p.list, pp, func(a, b placedProblem) int {
		return cmp.Or(cmp.Compare(a.record, b.record), cmp.Compare(a.sub, b.sub), cmp.Compare(a.seq, b.seq))
	})
	if i >= maxProblems {
		p.more++
		return
	}
	if len(p.list) == maxProblems {
		p.list = p.list[:maxProblems-1]
		p.more++
	}
	p.list = slices.Insert(p.list, i, pp)
}

func (p *problems) errors() []ParseError {
	out := make([]ParseError, len(p.list))
	for i := range p.list {
		out[i] = p.list[i].ParseError
	}
	return out
}

// Apply checks the mapping against every record and returns the rows. It
// reports all problems at once, as a *ValidationError: mapped columns that
// do not exist, empty or repeated ids, rating cells that are not finite
// numbers, and shown columns that are empty in every row. An empty rating
// cell is not a problem: it becomes a nil rating.
func (t *Table) Apply(m Mapping) ([]Row, error) {
	rows, _, err := t.ApplyNoting(m)
	return rows, err
}

// ApplyNoting is Apply that also returns the fields the judge sees that are
// empty in some records (Applier.EmptyFields).
func (t *Table) ApplyNoting(m Mapping) ([]Row, []EmptyField, error) {
	rows, empties, _, err := t.ApplyWithNotes(m)
	return rows, empties, err
}

// ApplyWithNotes is ApplyNoting that also returns how ratings written out
// of a maximum were read (Applier.ScaleNotes).
func (t *Table) ApplyWithNotes(m Mapping) ([]Row, []EmptyField, []string, error) {
	a := NewApplier(t.Columns, t.Format, m, func(fn func(Record) error) error {
		for _, rec := range t.Records {
			if err := fn(rec); err != nil {
				return err
			}
		}
		return nil
	})
	rows := make([]Row, 0, len(t.Records))
	for _, rec := range t.Records {
		rows = append(rows, a.Add(rec))
	}
	if err := a.finish(); err != nil {
		return nil, nil, nil, err
	}
	if m.AnnotatorColumn != "" && a.exists[m.AnnotatorColumn] && a.idOK {
		rows = mergeAnnotators(rows, t, m, a.fieldCols, a.ratingCols, &a.probs, a.item)
	} else if m.AnnotatorColumn != "" && !a.exists[m.AnnotatorColumn] {
		a.missingColumn(ChoiceAnnotator, m.AnnotatorColumn)
	}
	if err := a.err(); err != nil {
		return nil, nil, nil, err
	}
	return rows, a.EmptyFields(), a.ScaleNotes(), nil
}

// Applier applies a mapping one record at a time, for imports that stream
// the file instead of holding it: feed it every record with Add, in file
// order, then call Finish. It keeps neither the rows nor the ids: to find
// repeated ids it keeps a 64-bit hash of each (8 bytes a row, where a
// million string keys took more memory than the file). When a hash comes
// back, it reads the file again (the reread function given to NewApplier)
// to tell a repeated id from two ids that share a hash, and to name the
// line where the id first appeared. It does not merge one-row-per-annotator
// files, which need every row of a sample together: use Table.Apply for
// those.
type Applier struct {
	m          Mapping
	columns    []string
	exists     map[string]bool
	item       bool
	idOK       bool
	fieldCols  []string
	ratingCols []string
	probs      problems
	nonEmpty   map[string]bool
	empty      emptyTally
	// unrated counts the empty rating cells of records that are samples
	// (not of a file with one row per annotator, where an annotator may
	// leave a criterion unrated).
	unrated emptyTally
	n       int // records added

	reread func(fn func(Record) error) error
	hash   func(id string) uint64 // maphash by a seed of its own; tests force collisions
	hashes map[uint64]struct{}    // hash of every id seen
	// exact holds, for hashes that came back before any problem was
	// found, every id with that hash and the line where it first
	// appears: records are checked against it exactly.
	exact map[uint64]map[string]int
	// deferred are the records whose id hash came back once the import
	// had failed anyway: Finish reads the file once more to check them
	// all together.
	deferred []deferredID
	// scales are the rating columns' scores written out of a maximum
	// ("4/5"), by column (fractions.go).
	scales map[string]*fractionScale
}

// readRating reads the rating of column c in rec: a number, nothing
// (empty, N/A), or a score out of the column's one maximum ("4/5", see
// fractionScale); anything else is a problem, described by msg.
func (a *Applier) readRating(c string, rec Record) (*float64, string) {
	v, msg := parseRating(rec.Values[c], rec.DecimalComma)
	s := strings.TrimSpace(rec.Values[c])
	if a.scales == nil {
		a.scales = map[string]*fractionScale{}
	}
	f := a.scales[c]
	if f == nil {
		f = &fractionScale{}
		a.scales[c] = f
	}
	where := lineWord(a.item)
	if msg == "" {
		if v != nil {
			if m := f.plain(*v, s, rec.Line, where); m != "" {
				return nil, m
			}
		}
		return v, ""
	}
	if fv, fmsg, ok := f.readFraction(s, rec.DecimalComma, rec.Line, where); ok {
		return fv, fmsg
	}
	return v, msg
}

// ScaleNotes say, a sentence each, which rating columns had ratings
// written out of a maximum ("4/5") and how they were read, for the
// import notes.
func (a *Applier) ScaleNotes() []string {
	var out []string
	for _, c := range a.ratingCols {
		if n := a.scales[c].note(c, lineWord(a.item)); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// deferredID is a record whose id's hash was seen before.
type deferredID struct {
	record int // 1-based index of the record
	hash   uint64
}

// errStopReading ends a reread early.
var errStopReading = errors.New("stop reading")

// NewApplier checks the mapping against the file's columns (all of them,
// as a scan of the whole file found them) and gets ready for its records.
// reread reads the file again from the start, calling fn with every record
// in order until fn returns an error, which it returns; it is called only
// when an id's hash repeats, and must be given unless the mapping has no
// id column.
func NewApplier(columns []string, f Format, m Mapping, reread func(fn func(Record) error) error) *Applier {
	a := &Applier{m: m, columns: columns, exists: make(map[string]bool, len(columns)), item: f == JSON,
		nonEmpty: map[string]bool{}, reread: reread, hashes: map[uint64]struct{}{}}
	seed := maphash.MakeSeed()
	a.hash = func(id string) uint64 { return maphash.String(seed, id) }
	for _, c := range columns {
		a.exists[c] = true
	}
	a.idOK = m.IDColumn != "" && !a.missingColumn(ChoiceID, m.IDColumn)
	if len(m.Fields) == 0 {
		a.probs.addAt(ParseError{Msg: "no column is shown to the judge: choose at least one field", Choice: ChoiceField}, 0, 0)
	}
	shown := map[string]bool{}
	// The judge reads each field as "<label>: <text>"; two fields with one
	// label (ignoring case and spaces, as a reader would) give it two
	// "Response:" lines it cannot tell apart.
	labelled := map[string]string{} // folded label -> the column that has it
	for _, f := range m.Fields {
		label := strings.TrimSpace(f.Label)
		key := strings.ToLower(label)
		switch {
		case strings.TrimSpace(f.Column) == "":
			a.probs.addAt(ParseError{Msg: fmt.Sprintf("the field labelled %s names no column", quote.Quoted(f.Label)), Choice: ChoiceField}, 0, 0)
		case shown[f.Column]:
			a.probs.addAt(ParseError{Column: f.Column, Msg: "this column is chosen twice as a field", Choice: ChoiceField}, 0, 0)
		case evaluator.OneLineProblem(f.Label) != "":
			a.probs.addAt(ParseError{Column: f.Column, Msg: fmt.Sprintf(
				"the label %s holds %s; the judge reads it as one line of its prompt: write the label on one line, without control characters",
				quote.Quoted(f.Label), evaluator.OneLineProblem(f.Label)), Choice: ChoiceLabel}, 0, 0)
		case labelled[key] != "" && label != "":
			a.probs.addAt(ParseError{Column: f.Column, Msg: fmt.Sprintf(
				"columns %s and %s have the same label %s: the judge would see two lines starting %s and could not tell them apart; give each field its own label",
				quote.Quoted(labelled[key]), quote.Quoted(f.Column), quote.Quoted(label), quote.Quoted(label+":")), Choice: ChoiceLabel}, 0, 0)
		case !a.missingColumn(ChoiceField, f.Column):
			shown[f.Column] = true
			a.fieldCols = append(a.fieldCols, f.Column)
			if label != "" {
				labelled[key] = f.Column
			}
		}
	}
	rated := map[string]bool{}
	for _, c := range m.RatingColumns {
		if rated[c] {
			a.probs.addAt(ParseError{Column: c, Msg: "this column is chosen twice as a rating: choose it once", Choice: ChoiceRating}, 0, 0)
			continue
		}
		rated[c] = true
		switch {
		case shown[c]:
			a.probs.addAt(ParseError{Column: c, Msg: "this column is both shown to the judge and used as a human rating, so the judge would see the answer: make it one or the other", Choice: ChoiceRating}, 0, 0)
		case !a.missingColumn(ChoiceRating, c):
			a.ratingCols = append(a.ratingCols, c)
		}
	}
	return a
}

// CheckMapping lists the problems of the mapping m itself against the
// file's columns, before any record is read: choices that conflict (a
// column both shown and rated, two fields with one label...) or name no
// column of the file. Each names its Choice. Nil when the choices agree;
// the import checks them again with the records.
func CheckMapping(columns []string, f Format, m Mapping) []ParseError {
	a := NewApplier(columns, f, m, nil)
	if m.AnnotatorColumn != "" {
		a.missingColumn(ChoiceAnnotator, m.AnnotatorColumn)
	}
	if len(a.probs.list) == 0 {
		return nil
	}
	return a.probs.errors()
}

// missingColumn records a mapped column that is not in the file.
func (a *Applier) missingColumn(role, col string) bool {
	if a.exists[col] {
		return false
	}
	at := 0 // a problem of the mapping, listed first
	if a.n > 0 {
		at = afterRecords
	}
	a.probs.addAt(ParseError{Column: col, Msg: fmt.Sprintf("the %s column is not in the file; the columns are: %s", role, strings.Join(a.columns, ", ")), Choice: role}, at, 0)
	return true
}

// Add maps the next record of the file to a row, noting its problems. The
// row's Data is the record's Values when the record has every column (so
// a caller that reuses its records must be done with the row first).
func (a *Applier) Add(rec Record) Row {
	a.n++
	row := Row{
		Position: a.n,
		Data:     rec.Values,
		Ratings:  make(map[string]*float64, len(a.ratingCols)),
	}
	if len(rec.Values) != len(a.columns) {
		row.Data = make(map[string]string, len(a.columns))
		for _, c := range a.columns {
			row.Data[c] = rec.Values[c]
		}
	}
	switch {
	case a.m.IDColumn == "":
		row.ExternalID = "row-" + strconv.Itoa(a.n)
	case a.idOK:
		id := strings.TrimSpace(rec.Values[a.m.IDColumn])
		row.ExternalID = id
		if id == "" {
			a.probs.addAt(ParseError{Line: rec.Line, Item: a.item, Column: a.m.IDColumn, Msg: "the id is empty: every row needs an id"}, a.n, 0)
		} else if a.m.AnnotatorColumn == "" {
			// Rows of one sample share their id when the file has a row
			// per annotator: only other files must have unique ids.
			a.checkID(id, rec.Line)
		}
	}
	textless := len(a.fieldCols) > 0
	for _, c := range a.fieldCols {
		if strings.TrimSpace(rec.Values[c]) == "" {
			a.empty.note(c, Place{Record: a.n, Line: rec.Line, Item: a.item})
		} else {
			textless = false
			if !a.nonEmpty[c] {
				a.nonEmpty[c] = true
			}
		}
	}
	if textless {
		a.summaryRow(rec)
	}
	for i, c := range a.ratingCols {
		v, msg := a.readRating(c, rec)
		if msg != "" {
			a.probs.addAt(ParseError{Line: rec.Line, Item: a.item, Column: c, Msg: msg}, a.n, i+1)
		} else if v == nil && a.m.AnnotatorColumn == "" {
			a.unrated.note(c, Place{Record: a.n, Line: rec.Line, Item: a.item})
		}
		row.Ratings[c] = v
	}
	return row
}

// summaryWords are the names a spreadsheet gives a row that sums up the
// rows above it, folded to lower case ("Total", "Mean:", "Grand total").
var summaryWords = map[string]bool{"total": true, "totals": true, "grand total": true, "subtotal": true, "sub-total": true,
	"sum": true, "average": true, "avg": true, "mean": true, "median": true, "overall": true}

// summaryRow refuses a record whose every field shown to the judge is
// empty and whose id (or, without an id column, first filled cell that is
// not a rating) is a summary's name such as "Total" or "Mean": a
// spreadsheet's summary line below the samples (often after blank lines),
// not a sample. Imported, it became a sample with nothing for the judge to
// read and its average as a human rating, said only among the import's
// notes. Whether it is a sample only its author knows, so the import
// stops naming its line and both ways on.
func (a *Applier) summaryRow(rec Record) {
	label, col := "", ""
	if a.idOK {
		label, col = rec.Values[a.m.IDColumn], a.m.IDColumn
	} else {
		rating := make(map[string]bool, len(a.ratingCols))
		for _, c := range a.ratingCols {
			rating[c] = true
		}
		for _, c := range a.columns {
			if v := strings.TrimSpace(rec.Values[c]); v != "" && !rating[c] {
				label, col = v, c
				break
			}
		}
	}
	folded := strings.ToLower(strings.Join(strings.Fields(strings.TrimRight(strings.TrimSpace(label), ":")), " "))
	if !summaryWords[folded] {
		return
	}
	a.probs.addAt(ParseError{Line: rec.Line, Item: a.item, Column: col, Msg: fmt.Sprintf(
		"the row %s has every field shown to the judge empty: it looks like a summary of the rows above, not a sample; delete this row from the file and upload it again, or fill in its texts if it is a sample",
		quote.Quoted(shorten(strings.TrimSpace(label), 40)))}, a.n, 0)
}

// checkID notes the id of the current record and reports it if an earlier
// record had it.
func (a *Applier) checkID(id string, line int) {
	h := a.hash(id)
	if ids, ok := a.exact[h]; ok {
		a.exactID(ids, id, line)
		return
	}
	if _, seen := a.hashes[h]; !seen {
		a.hashes[h] = struct{}{}
		return
	}
	if a.Failed() {
		// Nothing will be stored: check it with the others at the end.
		a.deferred = append(a.deferred, deferredID{record: a.n, hash: h})
		return
	}
	// Read the records before this one for the ids with this hash.
	ids := map[string]int{}
	k := 0
	err := a.reread(func(rec Record) error {
		k++
		if k >= a.n {
			return errStopReading
		}
		if prev := strings.TrimSpace(rec.Values[a.m.IDColumn]); prev != "" && a.hash(prev) == h {
			if _, dup := ids[prev]; !dup {
				ids[strings.Clone(prev)] = rec.Line
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopReading) {
		a.probs.addAt(ParseError{Line: line, Item: a.item, Column: a.m.IDColumn, Msg: fmt.Sprintf("the file could not be read again to check the id %s: %v", quote.Quoted(id), err)}, a.n, 0)
		return
	}
	if a.exact == nil {
		a.exact = map[uint64]map[string]int{}
	}
	a.exact[h] = ids
	a.exactID(ids, id, line)
}

// exactID checks id against the ids that share its hash.
func (a *Applier) exactID(ids map[string]int, id string, line int) {
	if first, dup := ids[id]; dup {
		a.probs.addAt(a.repeated(id, line, first), a.n, 0)
		return
	}
	ids[strings.Clone(id)] = line
}

func (a *Applier) repeated(id string, line, first int) ParseError {
	return ParseError{Line: line, Item: a.item, Column: a.m.IDColumn, Msg: fmt.Sprintf(
		"the id %s is also used on %s %d: ids must be unique", quote.Quoted(id), lineWord(a.item), first)}
}

// checkDeferred reads the file once more for the records whose id hash
// came back after the import had failed, and reports those whose id is
// indeed repeated, with the line where it first appears.
func (a *Applier) checkDeferred() error {
	if len(a.deferred) == 0 {
		return nil
	}
	if a.reread == nil {
		return errors.New("the file cannot be read again to check its repeated ids")
	}
	suspect := make(map[uint64]map[string]int, len(a.deferred))
	for _, d := range a.deferred {
		suspect[d.hash] = nil
	}
	next, k := 0, 0
	err := a.reread(func(rec Record) error {
		k++
		if next == len(a.deferred) {
			return errStopReading
		}
		id := strings.TrimSpace(rec.Values[a.m.IDColumn])
		if id == "" {
			return nil
		}
		h := a.hash(id)
		ids, ok := suspect[h]
		if !ok {
			return nil
		}
		if ids == nil {
			ids = map[string]int{}
			suspect[h] = ids
		}
		first, dup := ids[id]
		if !dup {
			ids[strings.Clone(id)] = rec.Line
		}
		if a.deferred[next].record == k {
			next++
			if dup {
				a.probs.addAt(a.repeated(id, rec.Line, first), k, 0)
			}
		}
		return nil
	})
	a.deferred = nil
	if err != nil && !errors.Is(err, errStopReading) {
		return fmt.Errorf("read the file again to check repeated ids: %w", err)
	}
	return nil
}

// Failed reports whether a problem has been found so far: the rows are
// not worth storing any more, though the rest of the file is still worth
// checking so every problem is listed at once.
func (a *Applier) Failed() bool { return len(a.probs.list) > 0 || len(a.deferred) > 0 }

// finish adds the problems only the whole file shows. Its error is the
// reread's, not a problem of the file.
func (a *Applier) finish() error {
	if err := a.checkDeferred(); err != nil {
		return err
	}
	if a.n == 0 {
		a.probs.add(ParseError{Msg: "the file has no rows"})
		return nil
	}
	for _, c := range a.fieldCols {
		if !a.nonEmpty[c] {
			a.probs.add(ParseError{Column: c, Msg: "this field is empty in every row: the judge would have nothing to read; choose another column", Choice: ChoiceField})
		}
	}
	return nil
}

func (a *Applier) err() error {
	if len(a.probs.list) > 0 {
		return &ValidationError{Problems: a.probs.errors(), More: a.probs.more}
	}
	return nil
}

// EmptyFields lists, for each field the judge sees, the records added so
// far whose value is empty (or only spaces), in field order; a field
// empty nowhere is left out. Such rows are imported (the file may mean
// it), but the judge reads nothing there, so the import says so. Then,
// marked Rating, each human-rating column with empty cells, in rating
// order: those samples count as missing in every comparison with the
// humans (not listed for a file with one row per annotator).
func (a *Applier) EmptyFields() []EmptyField {
	out := a.empty.list(a.m.Fields, a.fieldCols)
	for _, f := range a.unrated.list(nil, a.ratingCols) {
		f.Rating = true
		out = append(out, f)
	}
	return out
}

// EmptyField is a field the judge sees that is empty in some rows, or
// (Rating) a human-rating column with no rating in some rows.
type EmptyField struct {
	Column, Label string
	Rows          int     // records with an empty value
	First         []Place // the first of them, at most MaxEmptyShown
	Rating        bool
}

// MaxEmptyShown caps the rows an EmptyField names: a few to find the
// pattern, the count for the size.
const MaxEmptyShown = 5

// Place is where a record is: its 1-based position among the records (the
// dataset's row number when rows are not per annotator) and its line in
// the file (its item, for a JSON array).
type Place struct {
	Record, Line int
	Item         bool
}

// emptyTally counts the empty values of each field the judge sees (or of
// each rating column).
type emptyTally struct {
	rows  map[string]int
	first map[string][]Place
}

func (e *emptyTally) note(col string, p Place) {
	if e.rows == nil {
		e.rows, e.first = map[string]int{}, map[string][]Place{}
	}
	e.rows[col]++
	if len(e.first[col]) < MaxEmptyShown {
		e.first[col] = append(e.first[col], p)
	}
}

func (e *emptyTally) list(fields []evaluator.Field, cols []string) []EmptyField {
	var out []EmptyField
	for _, c := range cols {
		if e.rows[c] == 0 {
			continue
		}
		f := EmptyField{Column: c, Label: c, Rows: e.rows[c], First: e.first[c]}
		for _, mf := range fields {
			if mf.Column == c && strings.TrimSpace(mf.Label) != "" {
				f.Label = mf.Label
				break
			}
		}
		out = append(out, f)
	}
	return out
}

// Finish ends the file: nil when every record fitted the mapping, else a
// *ValidationError listing the problems, or the reread's error.
func (a *Applier) Finish() error {
	if a.m.AnnotatorColumn != "" {
		a.probs.add(ParseError{Column: a.m.AnnotatorColumn, Msg: "one row per annotator cannot be read one record at a time"})
	}
	if err := a.finish(); err != nil {
		return err
	}
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
						"rows with id %s disagree on this field: the rows of one sample must show the same text", quote.Quoted(row.ExternalID))})
				}
			}
		}
		for _, c := range ratingCols {
			v := row.Ratings[c]
			key := AnnotatorKey(c, ann)
			if _, twice := out[k].Ratings[key]; twice {
				probs.add(ParseError{Line: rec.Line, Item: item, Column: m.AnnotatorColumn, Msg: fmt.Sprintf(
					"annotator %s rates sample %s twice", quote.Quoted(ann), quote.Quoted(row.ExternalID))})
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

// readNumber reads a cell as a number; with decimalComma (a record of a
// semicolon-separated file, Record.DecimalComma) "3,5" is read as 3.5 too.
func readNumber(s string, decimalComma bool) (float64, error) {
	if decimalComma {
		if d, ok := DecimalCommaNumber(s); ok {
			s = d
		}
	}
	return strconv.ParseFloat(s, 64)
}

// finiteNumber reports a cell that readNumber reads as a finite number.
func finiteNumber(s string, decimalComma bool) bool {
	f, err := readNumber(s, decimalComma)
	return err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// notRatedWords are the ways spreadsheets write "no value" in a cell,
// folded to lower case: "N/A", "NA", Excel's "#N/A", and a dash.
var notRatedWords = map[string]bool{"n/a": true, "na": true, "#n/a": true, "-": true, "–": true, "—": true}

// notRated reports a cell that says in words that it holds no value (a
// row not rated): it is read as an empty cell, not as a rating that is
// not a number.
func notRated(v string) bool {
	return len(v) <= len("#N/A") && notRatedWords[strings.ToLower(strings.TrimSpace(v))]
}

// parseRating reads one rating cell: empty (or "N/A", see notRated) is nil
// (not rated); anything but a finite number is a problem, described by the
// returned message.
// decimalComma reads "3,5" as 3.5 (Record.DecimalComma).
func parseRating(cell string, decimalComma bool) (*float64, string) {
	s := strings.TrimSpace(cell)
	if s == "" || notRated(s) {
		return nil, ""
	}
	v, err := readNumber(s, decimalComma)
	if err != nil && strings.HasPrefix(s, "[") {
		// A JSON list (flattened to its text): several annotators' ratings.
		return nil, fmt.Sprintf("the rating %s is a list; a rating cell holds one number: give each annotator's rating its own column, or the file one row per annotator", quote.Quoted(shorten(s, 40)))
	}
	if err != nil {
		msg := fmt.Sprintf("the rating %s is not a number", quote.Quoted(shorten(s, 40)))
		plain, ok := plainRating(s)
		switch {
		case decimalComma && ok:
			// A comma is a decimal point here: "4/5", "80%".
			msg += " (write the number alone: " + strings.ReplaceAll(plain, ".", ",") + ")"
		case decimalComma:
		case ok && strings.Contains(s, ","):
			msg += " (write decimals with a dot: " + plain + ")"
		case ok:
			msg += " (write the number alone: " + plain + ")"
		case strings.Contains(s, ","):
			msg += " (write decimals with a dot, e.g. 2.5)"
		}
		return nil, msg + "; leave the cell empty if the row was not rated"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Sprintf("the rating %s is not a finite number; leave the cell empty if the row was not rated", quote.Quoted(s))
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
// A header is compared with them as idNameKey writes it, so that "Sample ID"
// and "item-id", as spreadsheets name such columns, are ids too.
var idNames = []string{"id", "uuid", "guid", "_id", "key", "sample_id", "item_id", "example_id", "row_id", "dialogue_id", "dialog_id"}

// idNameKey is a column name as idNames spell theirs: lower case, with each
// run of spaces, hyphens and dots between words written as one underscore
// ("Sample ID", "sample-id" and "Sample.Id" are all "sample_id"). QA: a
// spreadsheet's "Sample ID" column was not offered as the id, so the import
// generated row-1, row-2… and the judge's scores no longer carried the ids
// the person knew their rows by.
func idNameKey(col string) string {
	words := strings.FieldsFunc(strings.ToLower(col), func(r rune) bool {
		return r == '-' || r == '.' || unicode.IsSpace(r)
	})
	return strings.Join(words, "_")
}

// SuggestMapping guesses a mapping for the person to confirm: an id column
// with a familiar name (id, uuid...) whose values are present and unique;
// text-like columns (words, many distinct values, or sentences even when
// repeated) as fields labelled as SuggestedLabel says; numeric columns (every non-empty value a finite number, in
// more than half of the rows) as ratings.
func SuggestMapping(t *Table) Mapping {
	var m Mapping
	stats := make(map[string]columnStats, len(t.Columns))
	for _, c := range t.Columns {
		stats[c] = statsOf(t, c)
	}
	for _, name := range idNames {
		for _, c := range t.Columns {
			if idNameKey(c) == name && stats[c].uniqueComplete {
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
		case looksLikeID(c):
			// An identifier (system_id, context_id) is metadata, kept in
			// the sample's data: shown to the judge, a system's name
			// ("Original Ground Truth") tells it what it is scoring.
		case s.numeric:
			// Only a column most rows have a number in is taken for the
			// humans' ratings: rating a subset leaves gaps, but a key
			// present in a few rows (a retry count, an optional flag) is
			// metadata, and a ticked rating column becomes a criterion's
			// "Human rating column" choice. The person can still tick it.
			// Nor is a count or a measure of the sample (num_annotators,
			// length, tokens): its numbers are no one's judgement.
			if !looksLikeID(c) && !looksLikeCount(c) && s.numbers*2 > len(t.Records) {
				m.RatingColumns = append(m.RatingColumns, c)
			}
		default:
			// A column of mostly numbers with a stray word ("good", "n/a"),
			// or of ratings written as text ("4 stars", "4/5"), is a
			// rating column with typos: showing it to the judge would
			// hand it the humans' scores, so it is neither ticked for the
			// judge nor the fallback (WhyNotRating says how to correct it).
			if s.ratingLike() {
				continue
			}
			// Nor ratings in words ("very good") under a rating's name.
			if namedLikeRating(c) && !s.sentences() {
				continue
			}
			if s.textLike(len(t.Records)) {
				m.Fields = append(m.Fields, evaluator.Field{Column: c, Label: SuggestedLabel(c)})
			}
			if longest == "" || s.meanLen() > stats[longest].meanLen() {
				longest = c
			}
		}
	}
	if len(m.Fields) == 0 && longest != "" {
		m.Fields = []evaluator.Field{{Column: longest, Label: SuggestedLabel(longest)}}
	}
	return m
}

// WhyNotRating says why SuggestMapping did not tick a column that holds
// numbers as a human rating ("4 of 9 rows are not numbers, e.g. \"good\""),
// so the person can tell a typo from a column that is no rating. "" for a
// column it ticks, and for one with few or no numbers (text, an id).
func WhyNotRating(t *Table, col string) string {
	s := statsOf(t, col)
	rows := len(t.Records)
	if note := writtenRatingsNote(t, col, s); note != "" {
		return note
	}
	if list := numberListExample(t, col); list != "" && s.numbers == 0 {
		// QA: a JSON Lines file's "scores": [4, 5] (two annotators) was
		// said to hold words, with "write them as numbers" as the fix.
		return fmt.Sprintf("Not ticked: its rows hold lists of numbers (e.g. %s), such as several annotators' ratings of each sample; a human rating column holds one number a row. "+
			"Give each annotator's rating a column of its own (in JSON, e.g. {\"scores\": {\"ann\": 4, \"bob\": 5}} is read as the columns scores.ann and scores.bob), or the file one row per annotator, upload it again, then tick them.",
			quote.Quoted(firstRunes(list, 20)))
	}
	switch {
	case s.numbers == 0 && s.written == 0 && namedLikeRating(col) && !s.sentences():
		// Ratings in words ("good", "bad"): the judge would be shown
		// them if ticked, and they cannot be compared as they are.
		return fmt.Sprintf("Not ticked: its name reads like a rating, but its rows hold words (e.g. %s), not numbers; a human rating column holds numbers. "+
			"To compare the judge with these ratings, write them as numbers (e.g. 1 for the worst to 5 for the best), upload the file again, then tick it.",
			quote.Quoted(firstRunes(s.example, 20)))
	case s.numbers == 0 || !s.mostlyNumbers():
		return ""
	case looksLikeID(col):
		// Before the count of values that are no numbers: QA saw an "id"
		// column of JSON numbers with one true in it told that "a rating
		// column holds only numbers", as if ids had to be numbers.
		return "Not ticked: its name looks like an id or a row number."
	case looksLikeCount(col):
		// QA: a SummEval-style file's num_annotators column (3 on every
		// row) was ticked beside coherence and fluency, and offered to
		// rubrics as a column of human ratings.
		return "Not ticked: its name reads as a count or a measure of the sample (how many, how long), not as someone's rating of it. Tick it if it holds the humans' ratings."
	case !s.numeric:
		example := ""
		for _, r := range t.Records {
			v := strings.TrimSpace(r.Values[col])
			if v != "" && !notRated(v) && !finiteNumber(v, r.DecimalComma) {
				example = v
				break
			}
		}
		n := s.filled - s.numbers
		verb := "is"
		if n != 1 {
			verb = "are"
		}
		return fmt.Sprintf("Not ticked: %d of %d rows %s not numbers (e.g. %s); a rating column holds only numbers or empty cells.", n, rows, verb, quote.Quoted(firstRunes(example, 20)))
	case s.numbers*2 <= rows:
		return fmt.Sprintf("Not ticked: only %d of %d rows have a number in it.", s.numbers, rows)
	}
	return ""
}

// numberListExample returns the first of a column's cells when every filled
// cell is a JSON list of numbers ("[4,5]", as the JSON readers flatten a list
// to its text), and "" otherwise.
func numberListExample(t *Table, col string) string {
	example := ""
	for _, r := range t.Records {
		v := strings.TrimSpace(r.Values[col])
		if v == "" || notRated(v) {
			continue
		}
		var list []float64
		if !strings.HasPrefix(v, "[") || json.Unmarshal([]byte(v), &list) != nil || len(list) == 0 {
			return ""
		}
		if example == "" {
			example = v
		}
	}
	return example
}

// WhyNotShown says why SuggestMapping did not tick a column of words for
// the judge to read: its values are a few short ones repeated over many
// rows, so it reads as a category (QA: a "Customer question" column of six
// questions over fourteen rows was left unticked without a word, and the
// judge scored answers without seeing the questions; questions now read as
// sentences and are ticked). "" for a column it ticks or would tick, for
// numbers (WhyNotRating speaks of those) and for columns of single words.
func WhyNotShown(t *Table, col string) string {
	s := statsOf(t, col)
	rows := len(t.Records)
	if !s.words || s.textLike(rows) || s.ratingLike() {
		return ""
	}
	values := "values"
	if s.distinct == 1 {
		values = "value"
	}
	return fmt.Sprintf("Not ticked: its %d rows hold only %d different short %s (e.g. %s), so it reads as a category, such as a channel or a system's name, "+
		"rather than text to judge. Tick it if the judge needs it to judge, e.g. the question the answers reply to.",
		rows, s.distinct, values, quote.Quoted(firstRunes(s.example, 30)))
}

// writtenRatingsNote says that a column's ratings are written in a way
// that is not a plain number ("4/5", a decimal comma "4,5", "80%"), with
// the number to write instead, when such cells and numbers make up at
// least half of its filled cells: a rating column as people type it in a
// spreadsheet. "" otherwise.
func writtenRatingsNote(t *Table, col string, s columnStats) string {
	if n, den, example, one := columnFractions(t, col); n > 0 && !one {
		return fmt.Sprintf("Not ticked: its ratings are written out of a maximum (such as %s, out of %s), but not all out of the same one, or some are above it, so they are on no one scale: "+
			"write every rating out of one maximum, or all as plain numbers on one scale, upload the file again, then tick it.", quote.Quoted(example), numberText(den))
	} else if n > 0 {
		return "" // read as their scores: not written as text
	}
	n, example, fixed := 0, "", ""
	for _, r := range t.Records {
		v := strings.TrimSpace(r.Values[col])
		if r.DecimalComma && finiteNumber(v, true) {
			continue // "4,5" is a number in a semicolon-separated file
		}
		if plain, ok := plainRating(v); ok {
			if n == 0 {
				example, fixed = v, plain
			}
			n++
		}
	}
	if n == 0 || (s.numbers+n)*2 < s.filled {
		return ""
	}
	verb := "holds a rating"
	if n != 1 {
		verb = "hold ratings"
	}
	decimals := "with a dot for decimals"
	if t.Records[0].DecimalComma {
		decimals, fixed = "with a comma or a dot for decimals", strings.ReplaceAll(fixed, ".", ",")
	}
	return fmt.Sprintf("Not ticked: %d of %d rows %s written as text, such as %s: a rating column holds plain numbers (write %s), "+
		"%s. Correct the file and upload it again, then tick it.", n, len(t.Records), verb, quote.Quoted(example), fixed, decimals)
}

// plainRating reads a rating written as "4/5", "4 / 5" or "4 out of 5"
// (the score out of a maximum), "4,5" (a decimal comma), "80%" or "4
// stars", and gives the plain number to write instead ("4", "4.5", "80");
// ok is false for anything else.
func plainRating(v string) (plain string, ok bool) {
	number := func(s string) bool {
		f, err := strconv.ParseFloat(s, 64)
		return err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && !strings.ContainsAny(s, "eEnN")
	}
	if a, b, found := strings.Cut(v, "/"); found {
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if number(a) && number(b) {
			return a, true
		}
		return "", false
	}
	if a, b, found := strings.Cut(v, ","); found && a != "" && b != "" && !strings.Contains(b, ",") && number(a) && number(b) && !strings.ContainsAny(a+b, ".+-") {
		return a + "." + b, true
	}
	if a, found := strings.CutSuffix(v, "%"); found && number(strings.TrimSpace(a)) {
		return strings.TrimSpace(a), true
	}
	lower := strings.ToLower(v)
	if a, b, found := strings.Cut(lower, " out of "); found && number(strings.TrimSpace(a)) && number(strings.TrimSpace(b)) {
		return strings.TrimSpace(a), true
	}
	for _, unit := range []string{"stars", "star", "★"} {
		if a, found := strings.CutSuffix(lower, unit); found && number(strings.TrimSpace(a)) {
			return strings.TrimSpace(a), true
		}
	}
	return "", false
}

// columnStats summarises one column for SuggestMapping.
type columnStats struct {
	filled         int    // non-empty cells
	numbers        int    // non-empty cells that are finite numbers
	written        int    // non-empty cells that are ratings written as text (plainRating)
	numeric        bool   // every non-empty cell is a finite number
	words          bool   // some cell has a space or a line break
	distinct       int    // distinct non-empty values
	totalLen       int    // characters over non-empty cells
	uniqueComplete bool   // every row has a value and no value repeats
	sentenceValues int    // distinct values that read as sentences (sentenceLike)
	example        string // the first non-empty value
}

// mostlyNumbers reports a column at least half of whose values are numbers.
func (s columnStats) mostlyNumbers() bool {
	return s.filled > 0 && s.numbers*2 >= s.filled
}

// ratingLike reports a column at least half of whose values are numbers
// or ratings written as text (plainRating: "4/5", "4 stars").
func (s columnStats) ratingLike() bool {
	return s.filled > 0 && (s.numbers+s.written)*2 >= s.filled
}

func (s columnStats) meanLen() float64 {
	if s.filled == 0 {
		return 0
	}
	return float64(s.totalLen) / float64(s.filled)
}

// textLike tells prose from labels: a column of words whose values are
// mostly different, or read as sentences. A handful of short values
// repeated across many rows (a system name, a category) is a label, not
// something to judge; a handful of questions repeated across many rows
// (several answers to each) is what the answers reply to, and the judge
// needs it.
func (s columnStats) textLike(rows int) bool {
	if !s.words {
		return false
	}
	return !s.categorical(rows) || s.sentences()
}

// categorical reports a column of few values repeated over many rows:
// twenty distinct values or fewer over more than twice as many rows. More
// variety than that is text.
func (s columnStats) categorical(rows int) bool {
	return s.distinct <= 20 && s.distinct*2 < rows
}

// sentences reports a column at least half of whose distinct values read
// as sentences (sentenceLike).
func (s columnStats) sentences() bool {
	return s.distinct > 0 && s.sentenceValues*2 >= s.distinct
}

// sentenceLike tells a sentence from a label: five words or more ("Open
// Settings and choose Reset"), or three or more ending as a sentence ends
// ("Where is my order?"). Categories and names are a word or a few
// without a full stop ("web chat", "Llama 3.1 8B Instruct").
func sentenceLike(v string) bool {
	n := len(strings.Fields(v))
	return n >= 5 || (n >= 3 && strings.ContainsAny(v[len(v)-1:], ".?!"))
}

func statsOf(t *Table, col string) columnStats {
	s := columnStats{numeric: true}
	values := map[string]bool{}
	empty := false
	for _, r := range t.Records {
		v := strings.TrimSpace(r.Values[col])
		if v == "" || notRated(v) {
			empty = true
			continue
		}
		if s.filled == 0 {
			s.example = v
		}
		s.filled++
		s.totalLen += utf8.RuneCountInString(v)
		if strings.ContainsAny(v, " \n") {
			s.words = true
		}
		if !finiteNumber(v, r.DecimalComma) {
			s.numeric = false
			if _, ok := plainRating(v); ok {
				s.written++
			}
		} else {
			s.numbers++
		}
		values[v] = true
	}
	// Scores out of the column's one maximum ("4/5") are numbers, as the
	// import reads them (fractions.go); out of several, text to correct.
	if n, _, _, one := columnFractions(t, col); n > 0 && one {
		s.written -= n
		s.numbers += n
		s.numeric = s.numbers == s.filled
	}
	s.distinct = len(values)
	for v := range values {
		if sentenceLike(v) {
			s.sentenceValues++
		}
	}
	s.numeric = s.numeric && s.filled > 0
	s.uniqueComplete = !empty && s.filled > 0 && s.distinct == s.filled
	return s
}

// namedLikeRating reports a column name that reads as a human rating:
// rating, score, grade or stars as a word of it ("human_rating", "Score").
func namedLikeRating(col string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(col), func(r rune) bool { return !unicode.IsLetter(r) }) {
		switch w {
		case "rating", "ratings", "score", "scores", "grade", "stars", "rated":
			return true
		}
	}
	return false
}

// looksLikeID reports names of bookkeeping columns that are numeric but are
// not ratings (row numbers, foreign ids).
func looksLikeID(col string) bool {
	c := strings.ToLower(col)
	return c == "id" || c == "index" || c == "idx" || c == "row" || strings.HasSuffix(c, "_id") || strings.HasSuffix(c, " id")
}

// looksLikeCount reports names of numeric columns that count or measure
// something about a sample rather than rate it: a word of the name (split
// at anything but letters) is one of countWords ("num_annotators",
// "n_turns", "Word count", "length", "latency_ms"). It wins over a rating's
// name: "num_ratings" counts ratings.
func looksLikeCount(col string) bool {
	words := strings.FieldsFunc(strings.ToLower(col), func(r rune) bool { return !unicode.IsLetter(r) })
	if len(words) > 1 && countPrefixes[words[0]] {
		return true
	}
	for _, w := range words {
		if countWords[w] {
			return true
		}
	}
	return false
}

// countPrefixes make a name of several words a count when it starts with
// one (n_annotators, "Number of turns"); elsewhere in a name they are no
// count ("score (n=3)" is a score).
var countPrefixes = map[string]bool{"n": true, "num": true, "number": true}

// countWords make a column name a count or a measure wherever they stand
// in it (looksLikeCount). Kept to words no rating is named by, never
// "quality" or "level".
var countWords = map[string]bool{
	"count": true, "counts": true, "length": true, "len": true, "tokens": true,
	"chars": true, "characters": true, "latency": true, "ms": true, "duration": true, "seconds": true,
}

// SuggestedLabel is the label a column is offered under, ticked or not:
// the header as its author wrote it, with its separators tidied
// ("system_response" and "system.response" become "System response") and
// its first letter a capital, the rest of its case kept ("Bot answer"
// stays "Bot answer", "GPT answer" stays "GPT answer"). Title Case for
// ticked columns only gave "Bot Answer" beside an unticked "Customer
// question".
func SuggestedLabel(col string) string {
	words := strings.FieldsFunc(col, func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || unicode.IsSpace(r)
	})
	if len(words) == 0 {
		return col
	}
	label := strings.Join(words, " ")
	r, size := utf8.DecodeRuneInString(label)
	return string(unicode.ToUpper(r)) + label[size:]
}
