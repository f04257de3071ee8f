package handlers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// ratingsNotInDataset says which chosen criteria read their human ratings
// from a column the chosen dataset does not have (the project's first
// upload, the main one by default, may be a file without ratings while
// the rubric names another file's column), and which of the project's
// other datasets have those columns. "" when every rated criterion finds
// its column; criteria without a column are noHumanLead's. elsewhere is
// false when no other dataset has those ratings either (the page then
// points to the rubric).
func ratingsNotInDataset(chosen []evaluator.Criterion, d models.Dataset, datasets []models.Dataset) (text string, elsewhere bool) {
	var pairs, missing, names []string
	for _, c := range chosen {
		cols := c.AnnotatorColumns
		if c.HumanColumn != "" {
			cols = []string{c.HumanColumn}
		}
		if len(cols) == 0 || slices.ContainsFunc(cols, func(col string) bool { return slices.Contains(d.RatingColumns, col) }) {
			continue
		}
		pairs = append(pairs, fmt.Sprintf("%s for %s", joinQuotedOr(cols), web.Quoted(c.Name)))
		names = append(names, c.Name)
		for _, col := range cols {
			if !slices.Contains(missing, col) {
				missing = append(missing, col)
			}
		}
	}
	if len(pairs) == 0 {
		return "", false
	}
	s := fmt.Sprintf("Dataset %s has no rating column %s, so this run cannot compare the judge with your ratings of %s; it can still be launched.",
		web.Quoted(d.Name), strings.Join(pairs, "; "), joinQuoted(names))
	var others []string
	for _, o := range datasets {
		if o.ID != d.ID && slices.ContainsFunc(missing, func(col string) bool { return slices.Contains(o.RatingColumns, col) }) {
			others = append(others, o.Name)
		}
	}
	if len(others) > 0 {
		return s + fmt.Sprintf(" The ratings are in %s %s: %s under Dataset above.", launchPlural(len(others), "dataset", "datasets"), joinQuoted(others), launchPlural(len(others), "choose it", "choose one of them")), true
	}
	return s, false
}

// joinQuotedOr quotes names and joins them with "or": any one of them.
func joinQuotedOr(names []string) string { return web.QuotedList(names, "or") }

// maxOffScaleNamed is how many out-of-scale ratings a warning names one by
// one: enough to find a few typos, short enough to read; the rest are
// counted.
const maxOffScaleNamed = 5

// offScaleRatings says, per criterion (by index in crits) whose human
// rating column dataset d has, which of its ratings lie outside the
// criterion's scale (a -1 or a 10 in a 1 to 5 rubric's column, most
// likely typos), naming the rows and values, and what a run's report does
// with them: it keeps them (report.humanOnJudgeScale), so the correlations
// count them as given and the errors map the column from its lowest and
// highest ratings onto the scale. Criteria without such ratings have no
// entry. It reads the dataset's ratings only when a criterion needs them.
func (h *Handlers) offScaleRatings(ctx context.Context, d models.Dataset, crits []evaluator.Criterion) (map[int]string, error) {
	type found struct {
		rows     []string // row "r3": rating -1
		n        int
		rated    int     // ratings the column holds, within the scale or not
		lo, hi   float64 // the column's lowest and highest ratings
		anyValue bool
	}
	checks := map[int]*found{}
	for i, c := range crits {
		if c.HumanColumn != "" && slices.Contains(d.RatingColumns, c.HumanColumn) {
			checks[i] = &found{}
		}
	}
	if len(checks) == 0 {
		return nil, nil
	}
	// The dataset's stored summary holds each column's lowest and highest
	// rating: when they lie within the scale, no rating is outside it and
	// the rows are not read. Only a column with a rating outside it is
	// read, to name its rows.
	rs, err := h.DB.DatasetRatingStats(ctx, d)
	if err != nil {
		return nil, err
	}
	for i := range checks {
		c, s := rs.Column(crits[i].HumanColumn), crits[i].HumanScale()
		if c.N == 0 || (c.Min >= s.Lo-1e-9 && c.Max <= s.Hi+1e-9) {
			delete(checks, i)
		}
	}
	if len(checks) == 0 {
		return nil, nil
	}
	err = h.DB.EachDatasetRowRatings(ctx, d.ID, func(id string, ratings map[string]*float64) error {
		for i, f := range checks {
			v := ratings[crits[i].HumanColumn]
			if v == nil || math.IsNaN(*v) {
				continue
			}
			if !f.anyValue {
				f.lo, f.hi, f.anyValue = *v, *v, true
			}
			f.lo, f.hi = min(f.lo, *v), max(f.hi, *v)
			f.rated++
			s := crits[i].HumanScale()
			if *v >= s.Lo-1e-9 && *v <= s.Hi+1e-9 {
				continue
			}
			f.n++
			if len(f.rows) < maxOffScaleNamed {
				// The id, then the rating, each named: `"1" (4)` read as
				// a rating of 1 beside a count of 4.
				f.rows = append(f.rows, fmt.Sprintf("row %s: rating %s", web.Quoted(id), formatNumber(*v)))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for i, f := range checks {
		if f.n == 0 {
			continue
		}
		c := crits[i]
		s := c.HumanScale()
		scale := formatNumber(s.Lo) + " to " + formatNumber(s.Hi)
		rows := strings.Join(f.rows, ", ")
		if more := f.n - len(f.rows); more > 0 {
			rows += fmt.Sprintf(" and %d more", more)
		}
		// Most of the column outside the scale is no typo: the people
		// rated on another scale than the criterion's.
		otherScale := ""
		if f.n*2 > f.rated {
			otherScale = fmt.Sprintf("Most of the column's ratings lie outside the scale: if the people rated on another scale (the column holds %s to %s), set %s's lowest and highest score to that scale. ",
				formatNumber(f.lo), formatNumber(f.hi), web.Quoted(c.Name))
		}
		out[i] = fmt.Sprintf("Dataset %s has %d %s outside %s's scale of %s in rating column %s: %s. "+
			"%sIf %s, correct %s in the file (leave a cell empty for a sample nobody rated) and upload it again. "+
			"Otherwise a run's report keeps %s: its correlations count %s as given, and for its errors every rating of the column is mapped from its lowest and highest (%s to %s) onto the judge's scale, so %s every error.",
			web.Quoted(d.Name), f.n, launchPlural(f.n, "rating", "ratings"), web.Quoted(c.Name), scale, web.Quoted(c.HumanColumn), rows, otherScale,
			launchPlural(f.n, "it is a typo", "they are typos"), launchPlural(f.n, "it", "them"),
			launchPlural(f.n, "it", "them"), launchPlural(f.n, "it", "them"), formatNumber(f.lo), formatNumber(f.hi),
			launchPlural(f.n, "this one rating moves", "these ratings move"))
	}
	return out, nil
}
