package handlers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// The experiment page's headline says which setup agrees best with the
// person's ratings only when the data support it: the best row (by average
// Pearson) must be significantly better than the next one, by a paired
// permutation test on the samples both runs judged, Holm-corrected over
// all the rows it is compared with, and by more than the spread the same
// setup shows across seeds. Otherwise it names the rows that are tied.
// Reseed runs are never contenders: they measure that spread.

// contender is one row the headline weighs.
type contender struct {
	fig runFigures
	// test compares the best row with this one (A = best); zero for the
	// best row itself.
	test stats.AveragedDifference
	// adjP is test.P after Holm's correction over the rows compared.
	adjP float64
}

// repeatBand is the spread of a run's average Pearson over itself and its
// succeeded reseeds.
type repeatBand struct {
	parent   models.Run
	runs     int
	min, max float64
}

func (b repeatBand) width() float64 { return b.max - b.min }

// bandDigits is how many decimals a seed band's bounds and spread are
// printed with, and the spread as printed. A reader checks a band by
// subtracting its printed bounds: the spread must be that difference, and
// also the true max − min rounded (stats.CoefDecimal), or it overstates
// the seeds' disagreement. So the decimals start where the spread shows
// as not zero (web.SpreadDecimals) and grow, up to six, until the printed
// bounds' difference is the rounded spread (0.1004 to 0.1016 is "0.1004
// to 0.1016 (spread 0.0012)", not "0.100 to 0.102 (spread 0.001)").
// Should six decimals not do, the spread is the printed bounds'
// difference; empty when they print alike.
func bandDigits(lo, hi float64) (int, string) {
	printed := func(v float64, d int) *big.Rat {
		r, ok := new(big.Rat).SetString(stats.CoefDecimal(v, d))
		if !ok {
			return new(big.Rat)
		}
		return r
	}
	d := web.SpreadDecimals(hi-lo, 3)
	for ; ; d++ {
		diff := new(big.Rat).Sub(printed(hi, d), printed(lo, d))
		if s := diff.FloatString(d); s == stats.CoefDecimal(hi-lo, d) || d >= 6 {
			if diff.Sign() <= 0 {
				return d, ""
			}
			return d, s
		}
	}
}

// isContender tells whether a row competes for the headline: a succeeded
// run of its own setup (not a reseed or robustness variant) with a figure.
func isContender(f runFigures) bool {
	// Every finished run the table ranks, gaps or not (QA: a run that
	// finished with gaps was bold in the table and absent here).
	return f.run.Completed() && f.rep != nil && !math.IsNaN(f.avgP) && ownSetup(f)
}

// ownSetup tells whether a row is a run of its own setup, not a reseed or
// robustness variant (noisy copy, reworded rubric) of a run: only those
// compete, for the headline, the cost sentence and the table's bold.
func ownSetup(f runFigures) bool {
	return !(f.run.ParentRunID != nil && isRobustnessVariant(f.run.Variant))
}

// repeatBands collects, per run with succeeded reseeds in the experiment,
// the range of average Pearson over the run and its reseeds, in the
// order of the parents' rows.
func repeatBands(figs []runFigures) []repeatBand {
	byParent := map[int64][]float64{}
	for _, f := range figs {
		if f.run.ParentRunID != nil && f.run.Variant == runner.VariantReseed &&
			f.run.Completed() && !math.IsNaN(f.avgP) {
			byParent[*f.run.ParentRunID] = append(byParent[*f.run.ParentRunID], f.avgP)
		}
	}
	var out []repeatBand
	for _, f := range figs {
		seeds, ok := byParent[f.run.ID]
		if !ok || !f.run.Completed() || math.IsNaN(f.avgP) {
			continue
		}
		vals := append([]float64{f.avgP}, seeds...)
		out = append(out, repeatBand{parent: f.run, runs: len(vals), min: slices.Min(vals), max: slices.Max(vals)})
	}
	return out
}

// rankContenders orders the contenders by average Pearson (best first,
// ties by run id so the order is stable) and runs the paired test of the
// best against each other one, with Holm's correction across them.
func rankContenders(figs []runFigures, compare func(best, other runFigures) stats.AveragedDifference) []contender {
	var cs []contender
	for _, f := range figs {
		if isContender(f) {
			cs = append(cs, contender{fig: f, adjP: math.NaN()})
		}
	}
	slices.SortStableFunc(cs, func(a, b contender) int {
		if a.fig.avgP != b.fig.avgP {
			if a.fig.avgP > b.fig.avgP {
				return -1
			}
			return 1
		}
		return int(a.fig.run.ID - b.fig.run.ID)
	})
	if len(cs) < 2 {
		return cs
	}
	ps := make([]float64, len(cs)-1)
	for i := 1; i < len(cs); i++ {
		best, other := cs[0].fig, cs[i].fig
		cs[i].test = compare(best, other)
		ps[i-1] = cs[i].test.P
	}
	for i, p := range stats.Holm(ps) {
		cs[i+1].adjP = p
	}
	return cs
}

// experimentVerdict is the headline of the experiment page, its paired
// tests averaging over the criteria the table's averages do (criteria;
// all both runs have when nil). The paired
// tests read the runs' per-sample scores from storage (pairedScores), each
// run's once, and only for the pairs not already in the cache.
func (h *Handlers) experimentVerdict(ctx context.Context, figs []runFigures, criteria []int) (web.ExperimentVerdict, error) {
	scores := h.pairedScores(ctx)
	var failed error
	pending, retried := false, false
	cs := rankContenders(figs, func(best, other runFigures) stats.AveragedDifference {
		d, err := h.compareAverage(scores, best, other, criteria)
		switch {
		case errors.Is(err, errPairPending):
			pending = true
			retried = retried || errors.Is(err, errPairRetried)
		case err != nil && failed == nil:
			failed = err
		}
		return d
	})
	if failed != nil {
		return web.ExperimentVerdict{}, failed
	}
	if pending {
		// Every test is computed in the background and cached; the page
		// names no winner until they all are.
		return web.ExperimentVerdict{TestsPending: true, TestsRetried: retried, RefreshSeconds: preparingRetrySeconds}, nil
	}
	v := verdictOf(cs, repeatBands(figs))
	if v.Kind == web.VerdictAlone {
		v.Text = aloneBesideRobustness(v.Text, cs[0], figs)
	}
	return v, nil
}

// aloneBesideRobustness rewords the headline of an experiment whose only
// ranked run has finished robustness runs beside it (a reseed, a noisy
// copy, a reworded rubric): "the only finished run with figures to
// compare" read as if those runs had none. They are read against their
// parent in the table, not ranked with it.
func aloneBesideRobustness(text string, only contender, figs []runFigures) string {
	n := 0
	for _, f := range figs {
		if f.run.Completed() && f.rep != nil && !math.IsNaN(f.avgP) && !isContender(f) {
			n++
		}
	}
	if n == 0 {
		return text
	}
	runs := "the robustness run beside it is"
	if n > 1 {
		runs = fmt.Sprintf("the %d robustness runs beside it are", n)
	}
	return fmt.Sprintf("%s (average Pearson %s) is the only finished setup ranked here: %s read as a change from the run it repeats (the table's robustness line), not ranked with it. Run another setup to see whether it does better.",
		only.fig.run.Name, fmtNum(only.fig.avgP, 2), runs)
}

// verdictOf words the headline from ranked contenders and the
// repeatability bands.
func verdictOf(cs []contender, bands []repeatBand) web.ExperimentVerdict {
	var v web.ExperimentVerdict
	noise := 0.0    // the widest spread across seeds: smaller differences are noise
	noiseText := "" // that spread as its band prints it
	for _, b := range bands {
		if b.width() == 0 {
			// Every seed gave the same figure: a "spread 0.000" would read
			// as a spread measured to be below half a thousandth.
			v.Bands = append(v.Bands, fmt.Sprintf("%s over %d seeds: average Pearson %s in every run (no spread)",
				b.parent.Name, b.runs, fmtNum(b.min, 3)))
			continue
		}
		d, spread := bandDigits(b.min, b.max)
		if b.width() > noise {
			noise, noiseText = b.width(), spread
		}
		if spread == "" {
			// The seeds differ only past the sixth decimal: their bounds
			// print alike, and a spread would read as none or as a
			// made-up figure.
			v.Bands = append(v.Bands, fmt.Sprintf("%s over %d seeds: average Pearson %s in every run to six decimals (spread below 0.000001)",
				b.parent.Name, b.runs, fmtNum(b.min, d)))
			continue
		}
		v.Bands = append(v.Bands, fmt.Sprintf("%s over %d seeds: average Pearson %s to %s (spread %s)",
			b.parent.Name, b.runs, fmtNum(b.min, d), fmtNum(b.max, d), spread))
	}
	if noise > 0 && noiseText == "" {
		noiseText = "below 0.000001"
	}
	switch len(cs) {
	case 0:
		return v
	case 1:
		v.Kind = web.VerdictAlone
		v.Text = fmt.Sprintf("%s (average Pearson %s) is the only finished run with figures to compare; run another setup to see whether it does better.",
			cs[0].fig.run.Name, fmtNum(cs[0].fig.avgP, 2))
		return v
	}
	best := cs[0]
	// A row is tied with the best unless the best is significantly better
	// (Holm-adjusted p below 5%) and by more than the seeds' spread.
	// A significant difference counts by its sign: on the samples both
	// runs scored (the paired test's) a row ahead in the table can be
	// significantly behind, and then the best row has not beaten it.
	tied := []contender{best}
	var beaten, reversed []contender
	for _, c := range cs[1:] {
		significant := c.adjP < report.SignificanceLevel && math.Abs(c.test.Diff) > noise
		switch {
		case significant && c.test.Diff > 0:
			beaten = append(beaten, c)
			continue
		case significant && c.test.Diff < 0:
			reversed = append(reversed, c)
		}
		tied = append(tied, c)
	}
	for _, c := range cs[1:] {
		line := fmt.Sprintf("%s − %s: %s in average Pearson (95%% interval %s to %s, permutation %s, Holm-adjusted %s)",
			best.fig.run.Name, c.fig.run.Name, web.SignedCoef(c.test.Diff, 3), web.IntervalBound(c.test.CILow), web.IntervalBound(c.test.CIHigh),
			web.PValueText(c.test.P), web.PValueText(c.adjP))
		if pairedDiffers(best, c) {
			// A run with unreadable scores is averaged in the table over
			// its own samples, here over those both runs scored: the two
			// can differ, even in sign, and the line would read as wrong.
			line += fmt.Sprintf("; on the samples both runs scored, %s against %s (the table averages each run over the samples it scored)",
				fmtNum(c.test.A, 3), fmtNum(c.test.B, 3))
		}
		v.Tests = append(v.Tests, line)
	}
	if len(reversed) > 0 {
		// The table and the paired test rank these rows differently: name
		// no best, and say what the test found.
		v.Kind = web.VerdictTied
		c := reversed[0]
		v.Text = fmt.Sprintf("On your data, no run can be named best: %s has the highest average Pearson in the table (%s), but %s agrees better than %s on the samples both runs scored (%s against %s; difference %s, Holm-adjusted %s). The table averages each run over the samples it has figures for, the test over those both runs share.",
			best.fig.run.Name, fmtNum(best.fig.avgP, 2), c.fig.run.Name, best.fig.run.Name,
			fmtNum(c.test.B, 3), fmtNum(c.test.A, 3), web.SignedCoef(-c.test.Diff, 3), web.PValueText(c.adjP))
		return v
	}
	if len(tied) == 1 {
		next := cs[1]
		v.Kind = web.VerdictBetter
		v.Text = fmt.Sprintf("On your data, %s agrees best with your ratings (average Pearson %s): significantly better than the next, %s (%s; difference %s, Holm-adjusted %s).",
			best.fig.run.Name, fmtNum(best.fig.avgP, 2), next.fig.run.Name, fmtNum(next.fig.avgP, 2), web.SignedCoef(next.test.Diff, 3), web.PValueText(next.adjP))
		if noise > 0 {
			v.Text += fmt.Sprintf(" The difference is larger than the spread across seeds (%s).", noiseText)
		}
		// The verdict follows the test whose p it quotes; its interval,
		// computed otherwise, can still include 0, and is then not left
		// to contradict "significantly better" unsaid.
		if lo, hi := web.BoundAsPrinted(next.test.CILow), web.BoundAsPrinted(next.test.CIHigh); lo <= 0 && hi >= 0 {
			v.Text += fmt.Sprintf(" Its 95%% interval (%s to %s) still includes no difference, though: the evidence is borderline, and more samples would settle it.",
				web.IntervalBound(next.test.CILow), web.IntervalBound(next.test.CIHigh))
		}
		return v
	}
	v.Kind = web.VerdictTied
	names := make([]string, len(tied))
	for i, c := range tied {
		names[i] = fmt.Sprintf("%s (%s)", c.fig.run.Name, fmtNum(c.fig.avgP, 2))
	}
	// Each tied row says why, in what is true of it: a test that came out
	// above 5% (or below it but within the seeds' spread) is a tie; a test
	// that could not be computed (no criterion with both runs' Pearson r on
	// enough shared samples; p missing) showed nothing either way, and
	// its row is not called "statistically tied" nor given a p it has not.
	var tested, untested []string
	for _, c := range tied[1:] {
		if math.IsNaN(c.adjP) || math.IsNaN(c.test.Diff) {
			untested = append(untested, c.fig.run.Name)
		} else {
			tested = append(tested, c.fig.run.Name)
		}
	}
	chance := "the differences are within what chance gives on these samples (Holm-adjusted p ≥ 0.05)"
	if noise > 0 {
		chance = fmt.Sprintf("the differences are within what chance gives on these samples (Holm-adjusted p ≥ 0.05) or smaller than the spread across seeds (%s), so they are noise", noiseText)
	}
	undefined := fmt.Sprintf("the paired test of %s against %s is undefined (no criterion averaged has a Pearson r for both runs on the samples both scored: fewer than %d such samples, or scores that do not vary), so %s not tested",
		best.fig.run.Name, joinNames(untested), minPairedShown, plural(len(untested), "that difference was", "those differences were"))
	switch {
	case len(untested) == 0:
		v.Text = fmt.Sprintf("On your data, %s are statistically tied in average Pearson with your ratings: %s.", joinNames(names), chance)
	case len(tested) == 0:
		v.Text = fmt.Sprintf("On your data, no run can be named best among %s: %s.", joinNames(names), undefined)
	default:
		if len(tested) == 1 {
			chance = strings.Replace(chance, "the differences are", "the difference is", 1)
			chance = strings.Replace(chance, "so they are noise", "so it is noise", 1)
		}
		v.Text = fmt.Sprintf("On your data, no run can be named best among %s: against %s, %s; %s.",
			joinNames(names), joinNames(tested), chance, undefined)
	}
	if len(beaten) > 0 {
		bn := make([]string, len(beaten))
		for i, c := range beaten {
			bn[i] = c.fig.run.Name
		}
		v.Text += fmt.Sprintf(" %s significantly behind.", joinNames(bn)+" "+plural(len(beaten), "is", "are"))
	}
	return v
}

// pairedDiffers reports whether the paired test's averages, over the
// samples both runs scored, read differently from the table's at its
// three decimals.
// minPairedShown is the fewest samples both runs must have scored for
// their paired test to be computed (stats' minPairedSamples), as the
// headline names it.
const minPairedShown = 4

func pairedDiffers(best, other contender) bool {
	differs := func(paired, table float64) bool {
		return !math.IsNaN(paired) && !math.IsNaN(table) && math.Abs(paired-table) >= 0.0005
	}
	return differs(other.test.A, best.fig.avgP) || differs(other.test.B, other.fig.avgP)
}

// joinNames lists names as "a, b and c".
func joinNames(ns []string) string {
	switch len(ns) {
	case 0:
		return ""
	case 1:
		return ns[0]
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
