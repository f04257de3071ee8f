package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/excerpt"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/internal/stamp"
	"github.com/batcheval/batcheval/models"
)

// SafeCell defuses spreadsheet formulas: a text cell starting with = + - @
// or a tab/CR is prefixed with a quote so spreadsheets show it as text. So
// is one where such a character follows leading blanks (" =1+1", "\n@x",
// "\u00a0+1"), because spreadsheets trim those on import and then run the
// rest. Every CSV the product writes from uploaded or typed text goes
// through it (the run export here, the dataset export in handlers), so a
// cell like =HYPERLINK(...) from an upload never runs in the spreadsheet
// of whoever opens the export. A cell that is a signed number and nothing
// else (-0.5, +3, " -2") is no formula and is left as it is; numeric
// columns do not go through it: a score of -0.5 stays a number.
func SafeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '\t', '\r':
		return "'" + s
	}
	rest := strings.TrimLeftFunc(s, blankRune)
	if rest == "" {
		return s
	}
	switch rest[0] {
	case '+', '-':
		// A signed number (-0.5, +3, -1e-3) is a number to a spreadsheet,
		// never a formula: it stays one, as a score does, so an id or a
		// field of -1 reads and imports again as -1, not '-1.
		if isPlainNumber(strings.TrimRightFunc(rest, blankRune)) {
			return s
		}
		return "'" + s
	case '=', '@':
		return "'" + s
	}
	return s
}

// plainNumber is a number as a rating cell holds it: digits with an
// optional sign, decimal point and exponent, and nothing a spreadsheet
// could read as a name or a formula (not even -Inf).
var plainNumber = regexp.MustCompile(`^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)

// isPlainNumber is plainNumber.MatchString without the regular
// expression, which cost SafeCell about 100 ns a signed cell (BENCHMARKS.md,
// "CSV cells that are signed numbers"): an optional sign, digits with an
// optional decimal point (or a point and digits), an optional exponent.
func isPlainNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	whole := digits()
	frac := 0
	if i < len(s) && s[i] == '.' {
		i++
		frac = digits()
	}
	if whole == 0 && frac == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// RatingCell writes a cell of a human-rating column as it was imported:
// a number, with the blanks a file may pad it with dropped (" 4", "3.5 ",
// "\u00a0-2" are written 4, 3.5, -2), so a spreadsheet reads a number and
// the file imports again; -2 stays minus two, not a formula. Anything else
// in a rating cell is text and goes through SafeCell. The dataset's CSV
// export (handlers) writes its rating columns with it.
func RatingCell(s string) string {
	if t := strings.TrimFunc(s, blankRune); plainNumber.MatchString(t) {
		return t
	}
	return SafeCell(s)
}

// blankRune reports whether a spreadsheet may drop r from the start of a
// cell before reading it: Unicode white space (space, tab, line breaks,
// no-break space...) and the invisible byte-order mark and zero-width space.
func blankRune(r rune) bool {
	return unicode.IsSpace(r) || r == '\ufeff' || r == '\u200b'
}

// csvDecimals is how many decimals a score or rating gets in the CSV: four
// keep the thirds and quarters of averaged human ratings apart (2.3333,
// 2.25) and hide binary floating-point noise (3.0799999999999996 is
// written 3.08). The JSON export keeps full precision, but for the noise of
// its means (FinalNumber, MeanNumber).
const csvDecimals = 4

// num writes a score for the CSV; a missing score is an empty cell, never 0.
func num(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return ""
	}
	return HumanNumber(*v)
}

// HumanNumber writes a score or rating for people: at most csvDecimals
// decimals, trailing zeros dropped (3.08, 2.3333, 2). It rounds as a
// reader of the JSON export rounds the number written there, and as the
// pages do (web.Decimal): that decimal (MeanNumber) half away from zero.
// Rounding the float itself wrote the final 1.00125 (the mean of 1 and
// 1.0025, the float 1.0012499999…) as 1.0012 beside the pages' 1.0013.
func HumanNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= 1e9 {
		return humanNumberOfFloat(v) // no scale this product reads
	}
	// v written with one decimal more than shown, correctly rounded, tells
	// how v rounds: down below a 5 there, up above it. A 5 there is a half
	// when that decimal is v but for noise (it is then what the export
	// writes: a shorter decimal within noise would have a 0 there), which
	// rounds away from zero; otherwise the float decides.
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], v, 'f', csvDecimals+1, 64)
	last := b[len(b)-1]
	switch {
	case last < '5':
		b = b[:len(b)-1]
	case last > '5':
		b = awayFromZero(b[:len(b)-1])
	default:
		x, err := strconv.ParseFloat(string(b), 64)
		if err != nil || !withinNoise(x, v) {
			return humanNumberOfFloat(v)
		}
		b = awayFromZero(b[:len(b)-1])
	}
	b = bytes.TrimRight(bytes.TrimRight(b, "0"), ".")
	if string(b) == "-0" {
		return "0"
	}
	return string(b)
}

// humanNumberOfFloat is HumanNumber by rounding the float itself.
func humanNumberOfFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', csvDecimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// awayFromZero adds one unit in the last place to the magnitude of the
// decimal d ("-1.0012" becomes "-1.0013", "2.9999" becomes "3.0000").
func awayFromZero(d []byte) []byte {
	for i := len(d) - 1; i >= 0; i-- {
		switch c := d[i]; {
		case c == '.':
			continue
		case c == '-':
			i = -1 // the carry passed every digit
		case c < '9':
			d[i]++
			return d
		default:
			d[i] = '0'
			continue
		}
		break
	}
	lead := 0
	if len(d) > 0 && d[0] == '-' {
		lead = 1
	}
	return slices.Concat(d[:lead], []byte{'1'}, d[lead:])
}

// csvProvenanceHeader names the CSV's last columns, the same on every
// line: what produced the scores (see docs/export-schema.md).
var csvProvenanceHeader = []string{"product version", "method", "judge model", "prompt template version", "seed", "settings", "human rating columns", "human ratings used", "rubric version", "labelled examples"}

// WriteCSV writes one line per sample: its id and fields, then per
// criterion the human rating, the final score, each round's score and the
// count of unreadable rounds, then the provenance columns. Missing values
// are empty cells; numbers are rounded for people (csvDecimals).
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if len(r.Criteria) == 0 {
		return errNoCriteria
	}
	names := make([]string, len(r.Criteria))
	for i, c := range r.Criteria {
		names[i] = c.Criterion.Name
	}
	var labels []evaluator.Text
	if len(r.Criteria[0].Samples) > 0 {
		labels = r.Criteria[0].Samples[0].Fields
	}
	tooFew := hasReadableMinimum(r.Run)
	if err := cw.Write(csvHeader(labels, names, r.Run.Settings.Rounds, tooFew)); err != nil {
		return err
	}
	provCells := csvProvenanceCells(r.Provenance())
	line := []string{}
	for i, s := range r.Criteria[0].Samples {
		line = csvSampleCells(line[:0], s)
		for _, c := range r.Criteria {
			line = csvScoreCells(line, c.Samples[i], tooFew)
		}
		line = append(line, provCells...)
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// errNoCriteria: an export needs at least one criterion.
var errNoCriteria = fmt.Errorf("the run has no criteria")

// csvHeader is the CSV's first line: the id, the labels of the fields the
// judge saw (none for a run without samples), per criterion its human,
// final, round and unreadable-count columns, then the provenance columns.
//
// With tooFew (a run with a fewest readable answers for a score:
// hasReadableMinimum), each criterion also has a "too few readable"
// column after its unreadable count: the rounds left missing because too
// few of their sampled answers could be read. Runs without the setting
// keep the columns they had.
func csvHeader(fields []evaluator.Text, criteria []string, rounds int, tooFew bool) []string {
	head := []string{"id"}
	for _, f := range fields {
		head = append(head, SafeCell(f.Label))
	}
	for _, c := range criteria {
		name := SafeCell(c)
		head = append(head, name+" human", name+" final")
		for k := range rounds {
			head = append(head, fmt.Sprintf("%s round %d", name, k+1))
		}
		head = append(head, name+" unreadable rounds")
		if tooFew {
			head = append(head, name+" too few readable")
		}
	}
	return append(head, csvProvenanceHeader...)
}

// csvProvenanceCells are the provenance columns' values, the same on
// every line.
func csvProvenanceCells(prov Provenance) []string {
	return []string{prov.ProductVersion, string(prov.Method), SafeCell(prov.JudgeText()), SafeCell(prov.PromptVersionText()),
		strconv.FormatInt(prov.Seed, 10), SafeCell(prov.SettingsText()), SafeCell(prov.HumanColumnsText()), SafeCell(prov.HumanSourceText()),
		rubricVersionCell(prov.RubricVersion), strconv.Itoa(prov.Examples)}
}

// csvSampleCells appends a sample's id and field values to line.
func csvSampleCells(line []string, s SampleResult) []string {
	line = append(line, SafeCell(s.ExternalID))
	for _, f := range s.Fields {
		line = append(line, SafeCell(f.Value))
	}
	return line
}

// csvScoreCells appends one criterion's cells of a sample to line: the
// human rating, the final score, each round's score and the count of
// unreadable rounds (and, with tooFew, of the rounds with too few readable
// answers: csvHeader).
func csvScoreCells(line []string, cs SampleResult, tooFew bool) []string {
	// The final as the JSON export writes it (FinalNumber), rounded.
	line = append(line, num(cs.Human), num(FinalNumber(cs.Final, cs.Rounds)))
	for _, v := range cs.Rounds {
		line = append(line, num(v))
	}
	// Unreadable rounds only: a round whose call failed got no answer to
	// read (its cell is empty all the same); nor is a round whose unit
	// read too few of its sampled answers.
	line = append(line, strconv.Itoa(int(cs.Missing-cs.NoAnswer-cs.TooFew)))
	if tooFew {
		line = append(line, strconv.Itoa(int(cs.TooFew)))
	}
	return line
}

// hasReadableMinimum reports whether run's sampled scores rest on a stored
// fewest readable answers (evaluator.MethodSettings.MinReadableShare): a
// run of a sampling method launched since it existed.
func hasReadableMinimum(run models.Run) bool {
	return run.MethodSettings.MinReadableShare != nil && methods.SamplesAnswers(methods.For(run.Method))
}

// rubricVersionCell writes the rubric version for the CSV; empty when
// none was recorded.
func rubricVersionCell(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

// Samples0Fields returns the field labels of the first sample, for headers.
func (c CriterionReport) Samples0Fields() []evaluator.Text {
	if len(c.Samples) == 0 {
		return nil
	}
	return c.Samples[0].Fields
}

// jsonFloat encodes NaN as null (JSON has no NaN).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(f), 'g', -1, 64)), nil
}

// JSONMean is a computed mean (an averaged human rating, a mean error, a
// batch bias...) in the JSON export: written as the shortest decimal that
// differs from it only by floating-point noise (MeanNumber), so that
// (2.1 + 2.2) / 2 reads 2.15, not 2.1500000000000004. NaN is null.
type JSONMean float64

func (f JSONMean) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(MeanNumber(float64(f))), nil
}

// JSONScore is a score in the JSON export: its shortest decimal that
// reads back as the same 64-bit float. A sample's final is made one by
// FinalNumber. NaN is null.
type JSONScore float64

func (f JSONScore) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(f), 'g', -1, 64)), nil
}

// meanNoiseULPs is how many units in the last place a decimal may lie
// from a computed mean and still be taken as that mean: summing a few
// dozen figures and dividing errs by a few, and no score or rating means
// anything at the sixteenth digit.
const meanNoiseULPs = 64

// maxMeanDecimals bounds the decimals MeanNumber looks for: a mean with
// no shorter decimal (a third, 2.3333333333333335) keeps every digit.
const maxMeanDecimals = 10

// withinNoise reports whether x is v but for floating-point noise.
func withinNoise(x, v float64) bool {
	a := math.Abs(v)
	return math.Abs(x-v) <= meanNoiseULPs*(math.Nextafter(a, math.Inf(1))-a)
}

// MeanNumber writes a computed mean as the shortest decimal, of at most
// maxMeanDecimals places, within floating-point noise of it (2.15 for
// 2.1500000000000004, 2 for 2.0000000000000004); a value without one
// keeps full precision (the shortest decimal that reads back as the same
// 64-bit float). It changes how a figure is printed, not the figure.
func MeanNumber(v float64) string {
	full := strconv.FormatFloat(v, 'g', -1, 64)
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return full
	}
	for d := 0; d <= maxMeanDecimals; d++ {
		s := strconv.FormatFloat(v, 'f', d, 64)
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			break
		}
		if withinNoise(x, v) {
			if len(s) > len(full) {
				return full // 1e+21, not its 22 digits
			}
			return s
		}
	}
	return full
}

// FinalNumber is a sample's final score as the export writes it: the mean
// of its readable rounds is worked out in decimals from the rounds as the
// export writes them, and when that mean is a decimal of at most 17
// places and the stored final is it but for floating-point noise, the
// final is that decimal: the mean of 1.01 and 2.63 is 1.82, not
// 1.8199999999999998. A mean without such a decimal (a third) and a
// final that is not the rounds' mean are the stored value as it is, so a
// score is never changed: one round's final is that round's score.
func FinalNumber(final *float64, rounds []*float64) *float64 {
	if final == nil || math.IsNaN(*final) || math.IsInf(*final, 0) {
		return final
	}
	x, ok := finalNumberFast(*final, rounds)
	if !ok {
		x = finalNumberRat(*final, rounds)
	}
	if x == nil {
		return final
	}
	return x
}

// finalNumberRat is FinalNumber in big.Rat, for any rounds: nil keeps the
// final.
func finalNumberRat(final float64, rounds []*float64) *float64 {
	sum, n := new(big.Rat), 0
	for _, r := range rounds {
		if r == nil || math.IsNaN(*r) || math.IsInf(*r, 0) {
			continue
		}
		x, ok := new(big.Rat).SetString(strconv.FormatFloat(*r, 'g', -1, 64))
		if !ok {
			return nil
		}
		sum.Add(sum, x)
		n++
	}
	if n == 0 {
		return nil
	}
	mean := sum.Quo(sum, new(big.Rat).SetInt64(int64(n)))
	for d := 0; d <= 17; d++ {
		s := mean.FloatString(d)
		if back, ok := new(big.Rat).SetString(s); !ok || back.Cmp(mean) != 0 {
			continue
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !withinNoise(x, final) {
			return nil
		}
		return &x
	}
	return nil
}

func gcd64(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// finalNumberFast is FinalNumber in integers, for the usual rounds of a
// few decimals each (a JSON export writes one a sample: big.Rat cost 6 µs
// and 150 allocations there): the rounds as integers of 10^-scale, their
// sum over n times 10^scale, written with the fewest decimals that end it.
// ok is false when the rounds need more digits than an int64 keeps safely;
// then FinalNumber works in big.Rat. A nil result with ok keeps the final.
func finalNumberFast(final float64, rounds []*float64) (*float64, bool) {
	const maxDigits = 15 // of a round's shortest decimal, all told
	var buf [32]byte
	scale, n := 0, 0
	for _, r := range rounds {
		if r == nil || math.IsNaN(*r) || math.IsInf(*r, 0) {
			continue
		}
		n++
		// The round as the export writes it: its shortest decimal.
		b := strconv.AppendFloat(buf[:0], *r, 'f', -1, 64)
		if len(b) > maxDigits {
			return nil, false
		}
		if i := bytes.IndexByte(b, '.'); i >= 0 {
			scale = max(scale, len(b)-i-1)
		}
	}
	if n == 0 {
		return nil, true
	}
	pow := int64(1)
	for range scale {
		pow *= 10
	}
	var sum int64
	for _, r := range rounds {
		if r == nil || math.IsNaN(*r) || math.IsInf(*r, 0) {
			continue
		}
		// Its digits as an integer of 10^-scale, exactly.
		b := strconv.AppendFloat(buf[:0], *r, 'f', scale, 64)
		var v int64
		neg := false
		for _, c := range b {
			switch {
			case c == '-':
				neg = true
			case c >= '0' && c <= '9':
				v = v*10 + int64(c-'0')
			}
		}
		if neg {
			v = -v
		}
		sum += v
	}
	// mean = sum / (n * pow): the fewest decimals d with sum*10^d a
	// multiple of n*pow end it; none within int64 (a third) keeps it.
	den := int64(n) * pow
	num := sum
	// A mean ends in decimals only if its reduced denominator has no
	// prime factor but 2 and 5: a third never does, and keeps the final.
	r := den / gcd64(abs64(num), den)
	for r%2 == 0 {
		r /= 2
	}
	for r%5 == 0 {
		r /= 5
	}
	if r != 1 {
		return nil, true
	}
	for d := 0; d <= 17; d++ {
		if num%den == 0 {
			q := num / den
			s := strconv.FormatInt(q, 10)
			if d > 0 {
				neg := q < 0
				if neg {
					s = s[1:]
				}
				for len(s) <= d {
					s = "0" + s
				}
				s = s[:len(s)-d] + "." + s[len(s)-d:]
				if neg {
					s = "-" + s
				}
			}
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || !withinNoise(x, final) {
				return nil, true
			}
			return &x, true
		}
		if num > math.MaxInt64/10 || num < math.MinInt64/10 {
			return nil, false
		}
		num *= 10
	}
	return nil, true
}

type jsonCorrelation struct {
	Coef    jsonFloat `json:"coef"`
	P       jsonFloat `json:"p"`
	N       int       `json:"n"`
	Missing int       `json:"missing"`
	CILow   jsonFloat `json:"ci_low"`
	CIHigh  jsonFloat `json:"ci_high"`
	// Resamples and ResamplesUsed say how many bootstrap resamples the
	// interval is taken from, and ResamplesNote says it as the run page
	// does; present only when some were left out (the coefficient
	// undefined on them), as on the compare page and its API.
	Resamples     *int   `json:"resamples,omitempty"`
	ResamplesUsed *int   `json:"resamples_used,omitempty"`
	ResamplesNote string `json:"resamples_note,omitempty"`
}

func jc(c stats.Correlation) jsonCorrelation {
	out := jsonCorrelation{Coef: jsonFloat(c.Coef), P: jsonFloat(c.P), N: c.N, Missing: c.Missing, CILow: jsonFloat(c.CILow), CIHigh: jsonFloat(c.CIHigh)}
	if c.LeftOutResamples() {
		drawn, used := c.Resamples, c.ResamplesUsed
		out.Resamples, out.ResamplesUsed, out.ResamplesNote = &drawn, &used, stats.ResamplesNote(drawn, used)
	}
	return out
}

// ExportSchemaVersion is the version of the JSON export's shape, written
// as its schema_version and described in docs/export-schema.md. Bump it
// when a field is renamed, removed or changes meaning; adding a field does
// not need a bump. Version 1 was the unversioned export before it.
const ExportSchemaVersion = 2

// JSON shapes of the export: also what `batcheval run --out` writes. Every
// key is snake_case; a value that cannot be computed (a missing score, an
// undefined correlation) is null, never 0.
type (
	// JSONExport is the whole run: the envelope says which stored run it
	// is, the report holds everything that follows from the inputs. Two
	// runs of the same inputs give byte-identical reports.
	JSONExport struct {
		SchemaVersion int          `json:"schema_version"`
		Envelope      JSONEnvelope `json:"envelope"`
		Report        JSONReport   `json:"report"`
	}
	// JSONEnvelope identifies the stored run: ids, name and times, which
	// differ between two runs of the same inputs by nature.
	JSONEnvelope struct {
		RunID        int64       `json:"run_id"`
		RunName      string      `json:"run_name"`
		ParentRunID  *int64      `json:"parent_run_id"`
		ExperimentID *int64      `json:"experiment_id"`
		CreatedAt    stamp.Time  `json:"created_at"`
		FinishedAt   *stamp.Time `json:"finished_at"`
		// ElapsedSeconds is how long the run was going (null before it
		// started), paused time and time finished before a resume left
		// out; PausedSeconds is that time. As the API's run says them.
		ElapsedSeconds *float64 `json:"elapsed_seconds"`
		PausedSeconds  float64  `json:"paused_seconds"`
		// Events are what happened to the run's execution that its
		// counters do not show, oldest first, as the API's run lists them
		// to the workspace's members: stored-run facts, so in the
		// envelope, not the reproducible report. An empty list when none.
		Events []JSONRunEvent `json:"events"`
	}
	// JSONRunEvent is one of a run's events: kind is lease_lost,
	// taken_over, resumed, requeued or late_count; worker the worker
	// (lease owner) it is about; message the stored sentence that tells
	// it. The same fields as the API's events[].
	JSONRunEvent struct {
		At      stamp.Time `json:"at"`
		Kind    string     `json:"kind"`
		Worker  string     `json:"worker"`
		Message string     `json:"message"`
	}
	// JSONReport is what the run found, with what produced it.
	JSONReport struct {
		Provenance JSONProvenance  `json:"provenance"`
		Run        JSONRun         `json:"run"`
		Criteria   []JSONCriterion `json:"criteria"`
	}
	// JSONPromptVersion is one prompt template version a run used: from
	// (null: the launch) until (null: its last) the times its executions
	// changed version.
	JSONPromptVersion struct {
		Version *string     `json:"version"`
		From    *stamp.Time `json:"from"`
		Until   *stamp.Time `json:"until"`
	}
	// JSONProvenance says what produced the report.
	JSONProvenance struct {
		ProductVersion string              `json:"product_version"`
		Method         string              `json:"method"`
		MethodLabel    string              `json:"method_label"`
		Settings       JSONSettings        `json:"settings"`
		MethodSettings *JSONMethodSettings `json:"method_settings"`
		Judge          JSONJudge           `json:"judge"`
		// PromptTemplateVersion is null for a run stored before its
		// version was recorded. For a run whose executions used several
		// versions it is the provenance's "mixed: ..." sentence
		// (Provenance.PromptVersionText), never one version alone.
		PromptTemplateVersion *string `json:"prompt_template_version"`
		// PromptTemplateVersions lists each version the run's prompts were
		// built with and from when to when (null ends: from the launch, up
		// to now); one entry for a run that used one.
		PromptTemplateVersions []JSONPromptVersion `json:"prompt_template_versions"`
		HumanColumns           []JSONHumanColumns  `json:"human_columns"`
		HumanRatings           JSONHumanRatings    `json:"human_ratings"`
		Seed                   int64               `json:"seed"`
		Variant                string              `json:"variant"`
		// RubricVersion is the stored rubric's version the run used (null
		// when none was recorded); LabelledExamples counts the labelled
		// examples its criteria showed the judge in every prompt.
		RubricVersion    *int `json:"rubric_version"`
		LabelledExamples int  `json:"labelled_examples"`
	}
	// JSONHumanRatings says which human ratings the figures used: the
	// imported column, the ratings made in the browser, or both, chosen by
	// a person at a moment ("Recompute with browser ratings").
	JSONHumanRatings struct {
		Source string `json:"source"`
		Label  string `json:"label"`
		// BrowserRatings counts the browser reviewers' current ratings
		// (with a score) read; 0 for the imported column.
		BrowserRatings int `json:"browser_ratings"`
		// UptoRatingID is the newest browser rating that may be read; 0
		// for the imported column.
		UptoRatingID int64       `json:"upto_rating_id"`
		AsOf         *stamp.Time `json:"as_of"`
		ChosenBy     string      `json:"chosen_by"`
		// ScaleNotes say how imported ratings were put on the browser
		// ratings' scale before averaging, or why they were not (empty
		// when nothing needed saying).
		ScaleNotes []string `json:"scale_notes"`
		// ExcludedRatings counts the browser ratings left out because an
		// owner excluded their reviewers, ExcludedPeople those reviewers
		// (0 when none).
		ExcludedRatings int `json:"excluded_ratings"`
		ExcludedPeople  int `json:"excluded_people"`
	}
	// JSONJudge is the judge that answered.
	JSONJudge struct {
		Model     string `json:"model"`
		Simulated bool   `json:"simulated"`
	}
	// JSONMethodSettings are a baseline method's own settings.
	JSONMethodSettings struct {
		Samples           int              `json:"samples"`
		UseLogprobs       bool             `json:"use_logprobs"`
		SampleTemperature float64          `json:"sample_temperature"`
		LLMEvalScale      string           `json:"llmeval_scale"`
		GEvalSteps        []JSONGEvalSteps `json:"geval_steps"`
		// MinAllowedMass is G-Eval's threshold of probability on allowed
		// scores (null in runs stored before it was recorded).
		MinAllowedMass    *float64 `json:"min_allowed_mass"`
		CloserLookTopP    *float64 `json:"closerlook_top_p"`
		CloserLookScoring string   `json:"closerlook_scoring"`
		// MinReadableShare is the fewest readable answers a sampled
		// score rests on, as a share of the answers asked for (null in
		// runs stored before it existed: no minimum but one).
		MinReadableShare *float64      `json:"min_readable_share"`
		Learned          []JSONLearned `json:"learned"`
		// unread are the keys left out: the settings the run's method
		// does not read (Provenance.Unread).
		unread []methods.Setting
	}
	// JSONLearned is one thing the run found out about the endpoint, once
	// for the run (e.g. whether it returns log-probabilities).
	JSONLearned struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	// JSONGEvalSteps are G-Eval's evaluation steps for one criterion (a
	// list rather than an object keyed by criterion name, so that every
	// key of the export stays a snake_case field name).
	JSONGEvalSteps struct {
		Criterion string `json:"criterion"`
		Steps     string `json:"steps"`
	}
	// JSONHumanColumns are the human-rating columns of one criterion.
	JSONHumanColumns struct {
		Criterion        string   `json:"criterion"`
		HumanColumn      *string  `json:"human_column"`
		AnnotatorColumns []string `json:"annotator_columns"`
	}
	// JSONRun is the run's outcome and its costs.
	JSONRun struct {
		Status string `json:"status"`
		// StatusReason says why a run failed or finished with gaps.
		StatusReason string `json:"status_reason,omitempty"`
		Dataset      string `json:"dataset"`
		Task         string `json:"task"`
		Calls        int    `json:"calls"`
		// CachedCalls are the calls answered from the judge answer cache
		// (no request, no cost); left out when none, so runs without any
		// export as before.
		CachedCalls      int  `json:"cached_calls,omitempty"`
		PromptTokens     int  `json:"prompt_tokens"`
		CompletionTokens int  `json:"completion_tokens"`
		CostUSD          *USD `json:"cost_usd"`
		BatchesFailed    int  `json:"batches_failed"`
		MissingScores    int  `json:"missing_scores"`
		// ShortScores are the scores computed from fewer sampled answers
		// than the method asked for (G-Eval's sampling, CloserLook); left
		// out when none.
		ShortScores int `json:"short_scores,omitempty"`
		// Probes are the tiny requests sent while the run waited for its
		// judge to answer again, outside Calls, the tokens and CostUSD
		// (the batches' figures); left out when none.
		Probes *JSONProbes `json:"probes,omitempty"`
		// GEvalSources says how a G-Eval run's scores were estimated;
		// left out for other methods.
		GEvalSources *JSONGEvalSources `json:"geval_sources,omitempty"`
	}
	// JSONSampledAnswers counts every answer sampled for a criterion
	// (CloserLook's ratings, G-Eval's sampled answers), those of units
	// whose score is missing included, and those that could not be read:
	// a score is computed from the readable ones.
	JSONSampledAnswers struct {
		Answers    int `json:"answers"`
		Unreadable int `json:"unreadable"`
	}
	// JSONGEvalSources counts a G-Eval run's scored units by the way
	// their score was estimated (method.md: "report which way was used").
	JSONGEvalSources struct {
		Logprobs int `json:"logprobs"`
		Samples  int `json:"samples"`
	}
	// JSONProbes counts a run's probes of its judge: how many were sent,
	// the tokens the endpoint reported for them and what they cost at the
	// run's prices (null when unknown).
	JSONProbes struct {
		Calls            int  `json:"calls"`
		PromptTokens     int  `json:"prompt_tokens"`
		CompletionTokens int  `json:"completion_tokens"`
		CostUSD          *USD `json:"cost_usd"`
	}
	// JSONCriterion is one criterion's statistics and samples.
	JSONCriterion struct {
		Name string  `json:"name"`
		Lo   float64 `json:"lo"`
		Hi   float64 `json:"hi"`
		// HumanColumn is the column the criterion's human ratings were read
		// from, as provenance.human_columns names it: null when none was
		// read, and HumanColumnNote then says why (the rubric may name a
		// column the dataset lacks; it is never given here as if read).
		HumanColumn     *string         `json:"human_column"`
		HumanColumnNote string          `json:"human_column_note,omitempty"`
		Pearson         jsonCorrelation `json:"pearson"`
		Spearman        jsonCorrelation `json:"spearman"`
		Kendall         jsonCorrelation `json:"kendall"`
		// IntervalMethod says how ci_low/ci_high were computed: "bootstrap"
		// (1000 resamples) up to 5,000 pairs, "fisher-z" above.
		IntervalMethod string            `json:"interval_method,omitempty"`
		Reading        string            `json:"reading"`
		Entropy        jsonFloat         `json:"entropy_bits"`
		MeanBatchBias  JSONMean          `json:"mean_batch_bias"`
		Rounds         []JSONRound       `json:"rounds"`
		Decomposition  JSONDecomposition `json:"ensemble_decomposition"`
		Histogram      []JSONBin         `json:"histogram"`
		Scored         int               `json:"scored"`
		Unreadable     int               `json:"unreadable"`
		NoAnswer       int               `json:"no_answer"`
		// TooFewReadable are the round scores left missing because too
		// few of their unit's sampled answers could be read (fewer than
		// the run's min_readable_share of those asked for); absent for
		// runs without that setting.
		TooFewReadable *int      `json:"too_few_readable,omitempty"`
		UnreadableRate jsonFloat `json:"unreadable_rate"`
		// SampledAnswers counts the sampled answers behind the scores of
		// a method that samples, and the unreadable ones; absent for
		// methods that do not sample.
		SampledAnswers *JSONSampledAnswers `json:"sampled_answers,omitempty"`
		Grouped        *JSONGrouped        `json:"grouped,omitempty"`
		SystemLevel    *JSONSystemLevel    `json:"system_level,omitempty"`
		HumanCeiling   *JSONCeiling        `json:"human_ceiling,omitempty"`
		Positions      []JSONPosition      `json:"position_effect,omitempty"`
		// HumanScaleNote says how the human ratings were put on the
		// criterion's scale for every error (position_effect, the
		// decomposition, the samples' differences); absent without them.
		HumanScaleNote string       `json:"human_scale_note,omitempty"`
		Samples        []JSONSample `json:"samples"`
	}
	// JSONGrouped is the correlation within groups of a column, averaged.
	JSONGrouped struct {
		Column   string    `json:"column"`
		Pearson  jsonFloat `json:"pearson"`
		Spearman jsonFloat `json:"spearman"`
		Kendall  jsonFloat `json:"kendall"`
		Groups   int       `json:"groups"`
		Skipped  int       `json:"skipped_groups"`
		// Ungrouped is the samples with both scores but no group value
		// (empty or whitespace), which belong to no group and are left out.
		Ungrouped int `json:"samples_without_group"`
	}
	// JSONSystemLevel is the correlation of per-system mean judge scores
	// with per-system mean human ratings, for datasets whose rows name the
	// system that produced them.
	JSONSystemLevel struct {
		Column   string                `json:"column"`
		Pearson  JSONSystemCorrelation `json:"pearson"`
		Spearman JSONSystemCorrelation `json:"spearman"`
		Kendall  JSONSystemCorrelation `json:"kendall"`
	}
	// JSONSystemCorrelation is one system-level coefficient with its p-value
	// and its 95% interval over the systems' means (Pearson and Spearman:
	// Fisher's z; Kendall: the bootstrap over the means); null when it
	// cannot be measured.
	JSONSystemCorrelation struct {
		Coef    jsonFloat `json:"coef"`
		P       jsonFloat `json:"p"`
		CILow   jsonFloat `json:"ci_low"`
		CIHigh  jsonFloat `json:"ci_high"`
		Systems int       `json:"systems"`
		N       int       `json:"n"`
		// IntervalMethod: "fisher-z-systems" (Pearson, Spearman) or
		// "bootstrap-systems" (Kendall).
		IntervalMethod string `json:"interval_method,omitempty"`
		// IntervalNote says why a defined coefficient has no interval
		// (too few systems; a coefficient of exactly ±1, whose Fisher
		// interval would be a single point); absent otherwise.
		IntervalNote string `json:"interval_note,omitempty"`
		// UndefinedNote says why the coefficient is undefined (null):
		// fewer than 3 systems, or every system with one mean on a side
		// (SystemUndefinedWhy); absent when it is defined.
		UndefinedNote string `json:"undefined_note,omitempty"`
		// Resamples, ResamplesUsed and ResamplesNote: as a sample-level
		// correlation's, for Kendall's bootstrap over the means; present
		// only when some resamples were left out.
		Resamples     *int   `json:"resamples,omitempty"`
		ResamplesUsed *int   `json:"resamples_used,omitempty"`
		ResamplesNote string `json:"resamples_note,omitempty"`
	}
	// JSONCeiling is the inter-annotator agreement.
	JSONCeiling struct {
		Annotators int `json:"annotators"`
		// Items are the samples rated by two or more annotators, which the
		// humans' figures are over; JudgeSamples those the judge's
		// correlation with the average human is over (its n), and
		// SamplesInBoth those in both: the two are compared over different
		// samples unless the three are one number.
		Items         int       `json:"items"`
		JudgeSamples  int       `json:"judge_samples"`
		SamplesInBoth int       `json:"samples_in_both"`
		Alpha         jsonFloat `json:"krippendorff_alpha"`
		LeaveOneOut   jsonFloat `json:"leave_one_out_pearson"`
		Reading       string    `json:"reading"`
	}
	// JSONPosition is the mean score and error at one batch position.
	JSONPosition struct {
		Position      int      `json:"position"`
		N             int      `json:"n"`
		Rated         int      `json:"n_rated"`
		MeanScore     JSONMean `json:"mean_score"`
		MeanAbsErr    JSONMean `json:"mean_abs_error"`
		MeanSignedErr JSONMean `json:"mean_signed_error"`
	}
	// JSONRound is one round's figures.
	JSONRound struct {
		Round     int             `json:"round"`
		Single    jsonCorrelation `json:"single_round_pearson"`
		Ensemble  jsonCorrelation `json:"ensemble_pearson"`
		BatchBias JSONMean        `json:"batch_bias"`
	}
	// JSONDecomposition is Err(mean,y) = Err(S,y) - Var(S).
	JSONDecomposition struct {
		EnsembleErr  JSONMean `json:"ensemble_error"`
		MeanRoundErr JSONMean `json:"mean_round_error"`
		MeanVariance JSONMean `json:"mean_variance"`
		N            int      `json:"n"`
		Note         string   `json:"note"`
	}
	// JSONBin is one histogram bin: [lo, hi), the last bin also holding hi.
	JSONBin struct {
		Lo    float64 `json:"lo"`
		Hi    float64 `json:"hi"`
		Count int     `json:"count"`
	}
	// JSONSample is one sample's scores.
	JSONSample struct {
		ID     string     `json:"id"`
		Final  *JSONScore `json:"final"`
		Rounds []*float64 `json:"rounds"`
		Human  *JSONMean  `json:"human"`
	}
)

// NewJSONSample is a sample of the JSON export.
func NewJSONSample(id string, final *float64, rounds []*float64, human *float64) JSONSample {
	return JSONSample{ID: id, Final: (*JSONScore)(FinalNumber(final, rounds)), Rounds: rounds, Human: (*JSONMean)(human)}
}

// Export builds the JSON export value.
func (r *Report) Export() JSONExport {
	run := r.Run
	prov := r.Provenance()
	out := JSONExport{SchemaVersion: ExportSchemaVersion,
		Envelope: JSONEnvelope{RunID: run.ID, RunName: run.Name, ParentRunID: run.ParentRunID, ExperimentID: run.ExperimentID,
			CreatedAt: stamp.Of(run.CreatedAt), FinishedAt: stamp.OfPtr(run.FinishedAt)},
		Report: JSONReport{Provenance: exportProvenance(prov),
			Run: JSONRun{Status: run.Status, StatusReason: run.ShownError(), Dataset: r.Dataset.Name, Task: run.RubricSnapshot.Task, Calls: run.Calls, CachedCalls: run.CachedCalls,
				PromptTokens: run.PromptTokens, CompletionTokens: run.CompletionTokens, CostUSD: USDOf(run.CostSoFar()),
				BatchesFailed: run.BatchesFailed, MissingScores: run.MissingScores, ShortScores: run.ShortScores},
			Criteria: []JSONCriterion{}}}
	// Times, not results: in the envelope, outside the reproducible report.
	out.Envelope.ElapsedSeconds, out.Envelope.PausedSeconds = RunSeconds(run, time.Now())
	out.Envelope.Events = make([]JSONRunEvent, 0, len(r.Events))
	for _, ev := range r.Events {
		out.Envelope.Events = append(out.Envelope.Events, JSONRunEvent{At: stamp.Of(ev.At), Kind: ev.Kind, Worker: ev.Worker, Message: ev.Message})
	}
	if g := r.GEvalSources; g != nil {
		out.Report.Run.GEvalSources = &JSONGEvalSources{Logprobs: g.Logprobs, Samples: g.Samples}
	}
	if run.ProbeCalls > 0 {
		out.Report.Run.Probes = &JSONProbes{Calls: run.ProbeCalls, PromptTokens: run.ProbePromptTokens,
			CompletionTokens: run.ProbeCompletionTokens, CostUSD: USDOf(run.ProbeCostUSD())}
	}
	batched := methods.For(run.Method).Batched()
	for ci, c := range r.Criteria {
		jcr := JSONCriterion{Name: c.Criterion.Name, Lo: c.Criterion.Lo, Hi: c.Criterion.Hi,
			Pearson: jc(c.Pearson), Spearman: jc(c.Spearman), Kendall: jc(c.Kendall), IntervalMethod: string(c.Interval), Reading: c.Reading,
			Entropy: jsonFloat(c.Entropy), MeanBatchBias: JSONMean(c.MeanBatchBias), Histogram: []JSONBin{},
			Scored: c.Scored, Unreadable: c.Unreadable(), NoAnswer: c.NoAnswer,
			Decomposition: JSONDecomposition{JSONMean(c.Decomposition.EnsembleErr), JSONMean(c.Decomposition.MeanRoundErr),
				JSONMean(c.Decomposition.MeanVariance), c.Decomposition.N, c.DecompositionNote}}
		jcr.UnreadableRate = jsonFloat(c.UnreadableRate)
		if ci < len(prov.HumanColumns) {
			h := prov.HumanColumns[ci]
			if h.HumanColumn != "" {
				col := h.HumanColumn
				jcr.HumanColumn = &col
			}
			if h.HumanColumn == "" || len(h.MeanOf) > 0 {
				jcr.HumanColumnNote = h.NoneWhy()
			}
		}
		if c.Scored+c.Unreadable() == 0 {
			// No answer yet (a run cancelled or read before its first
			// answer, or every call failed): the share is undefined,
			// null, never 0.
			jcr.UnreadableRate = jsonFloat(math.NaN())
		}
		if hasReadableMinimum(run) {
			n := c.TooFew
			jcr.TooFewReadable = &n
		}
		if a, ok := r.SampledAnswers[c.Index]; ok {
			jcr.SampledAnswers = &JSONSampledAnswers{Answers: a.Answers, Unreadable: a.Unreadable}
		}
		for _, b := range c.Histogram {
			jcr.Histogram = append(jcr.Histogram, JSONBin{Lo: b.Lo, Hi: b.Hi, Count: b.Count})
		}
		if c.GroupColumn != "" {
			g := c.Grouped
			jcr.Grouped = &JSONGrouped{Column: c.GroupColumn, Pearson: jsonFloat(g[stats.MethodPearson].Coef),
				Spearman: jsonFloat(g[stats.MethodSpearman].Coef), Kendall: jsonFloat(g[stats.MethodKendall].Coef),
				Groups: g[stats.MethodPearson].Groups, Skipped: g[stats.MethodPearson].Skipped, Ungrouped: g[stats.MethodPearson].Ungrouped}
		}
		if c.SystemColumn != "" {
			sc := func(m stats.Method) JSONSystemCorrelation {
				v := c.System[m]
				out := JSONSystemCorrelation{Coef: jsonFloat(v.Coef), P: jsonFloat(v.P), CILow: jsonFloat(v.CILow), CIHigh: jsonFloat(v.CIHigh),
					Systems: v.Systems, N: v.N, IntervalMethod: string(v.Interval), IntervalNote: v.IntervalWhy, UndefinedNote: SystemUndefinedWhy(v)}
				if note := stats.ResamplesNote(v.Resamples, v.ResamplesUsed); note != "" {
					drawn, used := v.Resamples, v.ResamplesUsed
					out.Resamples, out.ResamplesUsed, out.ResamplesNote = &drawn, &used, note
				}
				return out
			}
			jcr.SystemLevel = &JSONSystemLevel{Column: c.SystemColumn, Pearson: sc(stats.MethodPearson),
				Spearman: sc(stats.MethodSpearman), Kendall: sc(stats.MethodKendall)}
		}
		if c.Ceiling != nil {
			jcr.HumanCeiling = &JSONCeiling{Annotators: c.Ceiling.Annotators, Items: c.Ceiling.Items, JudgeSamples: c.Ceiling.Judged, SamplesInBoth: c.Ceiling.Both,
				Alpha: jsonFloat(c.Ceiling.Alpha), LeaveOneOut: jsonFloat(c.Ceiling.LeaveOneOut), Reading: c.Ceiling.Reading}
		}
		jcr.HumanScaleNote = c.HumanScaleNote
		// The position effect is a figure of positions inside a batch:
		// absent for a method that judges each sample alone, as the schema
		// says and the pages do (every score there was "position 1").
		for _, p := range c.Positions {
			if !batched {
				break
			}
			jcr.Positions = append(jcr.Positions, JSONPosition{p.Position, p.N, p.Rated, JSONMean(p.MeanScore), JSONMean(p.MeanAbsErr), JSONMean(p.MeanSignedErr)})
		}
		for _, rs := range c.Rounds {
			jcr.Rounds = append(jcr.Rounds, JSONRound{rs.Round, jc(rs.Single), jc(rs.Ensemble), JSONMean(rs.BatchBias)})
		}
		for _, s := range c.Samples {
			jcr.Samples = append(jcr.Samples, NewJSONSample(s.ExternalID, s.Final, s.Rounds, s.Human))
		}
		out.Report.Criteria = append(out.Report.Criteria, jcr)
	}
	return out
}

// JSONSettings are the run's settings as the export states them: the
// fields of evaluator.Settings in their order, without the launch
// settings the run's method does not read (Provenance.Unread). It reads
// back as evaluator.Settings, the unread fields zero.
type JSONSettings struct {
	evaluator.Settings
	unread []methods.Setting
}

// MarshalJSON writes the settings the method reads, as encoding/json
// writes evaluator.Settings otherwise (omitempty included).
func (s JSONSettings) MarshalJSON() ([]byte, error) { return marshalRead(s.Settings, s.unread) }

// SettingsJSON is a run's settings as the API states them: the export's
// JSONSettings, without the settings its method does not read.
func SettingsJSON(run models.Run) JSONSettings {
	return JSONSettings{Settings: run.Settings, unread: runUnread(run)}
}

// MethodSettingsJSON is a run's method settings as the API states them:
// the keys of evaluator.MethodSettings its method reads (none for
// BatchEval), with what the run learned about the endpoint. It reads back
// as evaluator.MethodSettings, the unread fields zero.
type MethodSettingsJSON struct {
	evaluator.MethodSettings
	unread []methods.Setting
}

// MarshalJSON writes the method settings the method reads.
func (s MethodSettingsJSON) MarshalJSON() ([]byte, error) {
	return marshalRead(s.MethodSettings, s.unread)
}

// RunMethodSettingsJSON is run's MethodSettingsJSON.
func RunMethodSettingsJSON(run models.Run) MethodSettingsJSON {
	return MethodSettingsJSON{MethodSettings: run.MethodSettings, unread: runUnread(run)}
}

// runUnread is methods.Unread for a stored run; nothing for a method this
// version does not know.
func runUnread(run models.Run) []methods.Setting {
	m, err := methods.Lookup(run.Method)
	if err != nil {
		return nil
	}
	return methods.Unread(m, methods.Run{Settings: run.Settings, MethodSettings: run.MethodSettings, Rubric: run.RubricSnapshot})
}

// MarshalJSON writes the method settings the run's method reads (and
// what it learned): an LLM-Eval run states no samples, no sample
// temperature and no log-probability choice, which it never used.
func (s JSONMethodSettings) MarshalJSON() ([]byte, error) {
	type plain JSONMethodSettings // without this method
	return marshalRead(plain(s), s.unread)
}

// marshalRead writes the exported fields of struct v as encoding/json
// would (its tags' names, omitempty honoured), leaving out the keys whose
// setting is unread (methods.SettingOfKey).
func marshalRead(v any, unread []methods.Setting) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || slices.Contains(unread, methods.SettingOfKey(name)) || (opts == "omitempty" && rv.Field(i).IsZero()) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		js, err := json.Marshal(rv.Field(i).Interface())
		if err != nil {
			return nil, err
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", name, js)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// promptVersionJSON is a run's stored prompt template version, nil (null)
// when none was recorded.
func promptVersionJSON(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// exportPromptVersions lists the versions the run's prompts were built
// with: the launch version, then each later execution's.
func exportPromptVersions(p Provenance) []JSONPromptVersion {
	stampOf := func(t time.Time) *stamp.Time { s := stamp.Of(t); return &s }
	out := []JSONPromptVersion{{Version: promptVersionJSON(p.PromptTemplateVersion)}}
	for _, s := range p.PromptVersions {
		out[len(out)-1].Until = stampOf(s.Since)
		out = append(out, JSONPromptVersion{Version: promptVersionJSON(s.Version), From: stampOf(s.Since)})
	}
	return out
}

// exportProvenance turns the provenance into its JSON shape.
func exportProvenance(p Provenance) JSONProvenance {
	out := JSONProvenance{ProductVersion: p.ProductVersion, Method: string(p.Method), MethodLabel: p.MethodLabel,
		Settings: JSONSettings{Settings: p.Settings, unread: p.Unread}, Judge: JSONJudge{Model: p.JudgeModel, Simulated: p.SimulatedJudge},
		PromptTemplateVersion: promptVersionJSON(p.PromptTemplateVersion), HumanColumns: []JSONHumanColumns{}, HumanRatings: exportHumanUse(p.HumanUse), Seed: p.Seed, Variant: p.Variant,
		RubricVersion: p.RubricVersion, LabelledExamples: p.Examples}
	if len(p.PromptVersions) > 0 {
		text := p.PromptVersionText()
		out.PromptTemplateVersion = &text
	}
	out.PromptTemplateVersions = exportPromptVersions(p)
	if ms := p.MethodSettings; ms != nil {
		out.MethodSettings = &JSONMethodSettings{Samples: ms.Samples, UseLogprobs: ms.UseLogprobs, SampleTemperature: ms.SampleTemperature,
			LLMEvalScale: string(ms.LLMEvalScale), GEvalSteps: []JSONGEvalSteps{}, CloserLookScoring: string(ms.CloserLookScoring),
			Learned: []JSONLearned{}, unread: p.Unread}
		if ms.MinAllowedMass != 0 {
			v := ms.MinAllowedMass
			out.MethodSettings.MinAllowedMass = &v
		}
		if ms.CloserLookTopP != 0 {
			v := ms.CloserLookTopP
			out.MethodSettings.CloserLookTopP = &v
		}
		if ms.MinReadableShare != nil {
			v := *ms.MinReadableShare
			out.MethodSettings.MinReadableShare = &v
		}
		for _, k := range slices.Sorted(maps.Keys(ms.Learned)) {
			out.MethodSettings.Learned = append(out.MethodSettings.Learned, JSONLearned{Key: k, Value: ms.Learned[k]})
		}
		// In rubric order, so the bytes do not depend on map order.
		for _, h := range p.HumanColumns {
			if steps, ok := ms.GEvalSteps[h.Criterion]; ok {
				out.MethodSettings.GEvalSteps = append(out.MethodSettings.GEvalSteps, JSONGEvalSteps{Criterion: h.Criterion, Steps: steps})
			}
		}
	}
	for _, h := range p.HumanColumns {
		jh := JSONHumanColumns{Criterion: h.Criterion, AnnotatorColumns: []string{}}
		if h.HumanColumn != "" {
			col := h.HumanColumn
			jh.HumanColumn = &col
		}
		jh.AnnotatorColumns = append(jh.AnnotatorColumns, h.AnnotatorColumns...)
		out.HumanColumns = append(out.HumanColumns, jh)
	}
	return out
}

// exportHumanUse turns which human ratings were used into its JSON shape.
func exportHumanUse(u HumanUse) JSONHumanRatings {
	src := u.Source
	if src == "" {
		src = models.HumansImported
	}
	out := JSONHumanRatings{Source: string(src), Label: src.Label(), BrowserRatings: u.BrowserRatings,
		UptoRatingID: u.UptoRatingID, ChosenBy: u.ChosenBy, ScaleNotes: append([]string{}, u.ScaleNotes...),
		ExcludedRatings: u.ExcludedRatings, ExcludedPeople: u.ExcludedPeople}
	out.AsOf = stamp.OfPtr(u.AsOf)
	return out
}

// WriteJSON writes the whole run as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Export())
}

// CorrelationTable renders a plain-text table per criterion for terminals.
func (r *Report) CorrelationTable() string {
	var b strings.Builder
	if r.Simulated {
		b.WriteString("(scores from the simulated judge, not a language model)\n")
	}
	p := r.Provenance()
	fmt.Fprintf(&b, "produced by BatchEval %s · method %s · judge %s · prompt template %s · seed %d\n",
		p.ProductVersion, p.MethodLabel, p.JudgeText(), p.PromptVersionText(), p.Seed)
	if why, none := r.NoScoresRead(); none {
		// A table of "undefined" would hide the one thing to know.
		fmt.Fprintf(&b, "no scores could be read, so there are no correlations: %s\n", why)
	} else {
		r.writeCorrelationRows(&b)
	}
	for _, c := range r.Criteria {
		if c.Ceiling == nil {
			continue
		}
		fmt.Fprintf(&b, "human ceiling of %s: Krippendorff's alpha %s, leave-one-annotator-out pearson %s (%d annotators, %d samples rated by two or more; the judge's pearson is over %d samples, %d of them in both). %s\n",
			c.Criterion.Name, f3(c.Ceiling.Alpha), f3(c.Ceiling.LeaveOneOut), c.Ceiling.Annotators, c.Ceiling.Items, c.Ceiling.Judged, c.Ceiling.Both, c.Ceiling.Reading)
	}
	return b.String()
}

// writeCorrelationRows writes the table's header and a row per criterion.
func (r *Report) writeCorrelationRows(b *strings.Builder) {
	// Columns are 9 wide so that "undefined" fits. n and missing are the
	// correlation's, as the run page's table and the JSON export state
	// them: the samples correlated and those left out for want of a judge
	// score or a human rating (not the unreadable round scores, below).
	fmt.Fprintf(b, "%-20s %9s %9s %9s %9s %9s %6s %8s\n", "criterion", "pearson", "p", "spearman", "p", "kendall", "n", "missing")
	for _, c := range r.Criteria {
		fmt.Fprintf(b, "%-20s %9s %9s %9s %9s %9s %6d %8d\n", trunc(c.Criterion.Name, 20),
			f3(c.Pearson.Coef), fp(c.Pearson.P), f3(c.Spearman.Coef), fp(c.Spearman.P), f3(c.Kendall.Coef), c.Pearson.N, c.Pearson.Missing)
	}
	// "undefined" alone leaves the reader guessing: say why, in the words
	// the run page uses (too few samples, a constant side, no ratings).
	for _, c := range r.Criteria {
		if math.IsNaN(c.Pearson.Coef) && c.Reading != "" {
			fmt.Fprintf(b, "undefined for %s: %s\n", c.Criterion.Name, c.Reading)
		}
	}
	// A coefficient the samples cannot tell from chance reads as a verdict
	// in a table column: say so beside it in the run page's own sentence
	// (c.Reading, which names its coefficient), not a second wording.
	for _, c := range r.Criteria {
		if c.HasHuman && stats.TooFewToTell(c.Pearson) {
			fmt.Fprintf(b, "too few samples for %s: %s\n", c.Criterion.Name, c.Reading)
		}
	}
	for _, c := range r.Criteria {
		if c.Unreadable() > 0 {
			fmt.Fprintf(b, "unreadable answers of %s: %d of %d answered round scores could not be read from the judge's answers.\n",
				c.Criterion.Name, c.Unreadable(), c.Scored+c.Unreadable())
		}
		if c.NoAnswer > 0 {
			scores := "scores"
			if c.NoAnswer == 1 {
				scores = "score"
			}
			fmt.Fprintf(b, "no answer for %s: %d round %s got no answer: the judge call failed.\n",
				c.Criterion.Name, c.NoAnswer, scores)
		}
		if c.TooFew > 0 {
			scores := "scores were"
			if c.TooFew == 1 {
				scores = "score was"
			}
			fmt.Fprintf(b, "too few readable answers for %s: %d %s left missing: some of the sampled answers could be read, but fewer than the run's fewest readable answers for a score.\n",
				c.Criterion.Name, c.TooFew, scores)
		}
	}
}

// NoScoresRead reports whether no criterion has a single readable score,
// and why: nothing judged, every call failed, or the judge's answers
// could not be read.
func (r *Report) NoScoresRead() (why string, none bool) {
	if len(r.Criteria) == 0 {
		return "", false
	}
	for _, c := range r.Criteria {
		if c.Scored > 0 {
			return "", false
		}
	}
	run := r.Run
	units := methods.For(run.Method).Words().Units
	answered := run.BatchesDone - run.BatchesFailed
	switch {
	case run.BatchesDone == 0:
		return "nothing was judged", true
	case answered <= 0:
		why = fmt.Sprintf("every judge call failed (%d of %d %s)", run.BatchesFailed, run.BatchesTotal, units)
		if run.Error != "" {
			why += ": " + run.ShownError()
		}
		return why, true
	}
	why = fmt.Sprintf("%d of %d %s got the judge's answer, but no score could be read from it", answered, run.BatchesTotal, units)
	if run.BatchesFailed > 0 {
		why += fmt.Sprintf(", and %d failed", run.BatchesFailed)
	}
	return why + " (each " + methods.For(run.Method).Words().Unit + "'s page in the dashboard shows the answer and what was wrong)", true
}

// undefinedText is how the terminal shows a figure that cannot be
// measured (a correlation of constant scores, its p-value), as the pages do.
const undefinedText = "undefined"

// f3 writes a coefficient with three decimals as the pages round it
// (stats.CoefDecimal).
func f3(v float64) string {
	if math.IsNaN(v) {
		return undefinedText
	}
	s := stats.CoefDecimal(v, 3)
	if s == "-0.000" {
		return "0.000" // a coefficient just below zero, as the pages print it
	}
	return s
}

// fp writes a p-value by the pages' one rule (stats.PCell), as one
// whitespace-free field ("<0.001") so the table's columns split on spaces.
func fp(v float64) string {
	return strings.ReplaceAll(stats.PCell(v), "< ", "<")
}

func trunc(s string, n int) string { return excerpt.Cut(s, n) }

// SystemUndefinedWhy says why a system-level coefficient is undefined, as
// the run page, the shared and downloaded reports and the JSON export
// state it beside "undefined": fewer than 3 systems have a sample with
// both a judge score and a human rating, or the systems' mean judge scores
// or mean human ratings are all the same. "" when it is defined (or the
// coefficient is unknown to stats).
func SystemUndefinedWhy(sl stats.SystemLevel) string {
	if !math.IsNaN(sl.Coef) {
		return ""
	}
	if sl.Systems < 3 {
		systems := "systems have"
		if sl.Systems == 1 {
			systems = "system has"
		}
		return fmt.Sprintf("undefined: only %d %s a sample with both a judge score and a human rating, and a correlation needs 3", sl.Systems, systems)
	}
	return fmt.Sprintf("undefined: the %d systems' mean judge scores, or their mean human ratings, are all the same", sl.Systems)
}
