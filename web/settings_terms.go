package web

import (
	"strings"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
)

// SettingTerm is one term of a run's settings line with what it means to
// a reader who has not read the method's paper.
type SettingTerm struct {
	Term    string
	Meaning string
}

// settingTerms explains the terms of a run's settings line (the method's
// Summary, as runSettingsSummary shows it) in the order the line shows
// them: each part of the line between " · " that holds a term of art gets
// one entry, and parts that read plainly (a spending cap) get none.
func settingTerms(summary string) []SettingTerm {
	parts := strings.Split(summary, " · ")
	hasTopP, sampled, batched := false, false, false
	for _, p := range parts {
		if strings.Contains(p, " rounds × batches of ") {
			batched = true
		}
		if strings.HasPrefix(p, "top_p ") {
			hasTopP = true
		}
		// G-Eval's and CloserLook's temperature is that of their n
		// sampled answers, which must differ.
		if strings.Contains(p, " samples at temperature ") || strings.HasPrefix(p, "mean of ") {
			sampled = true
		}
	}
	var out []SettingTerm
	add := func(term, meaning string) { out = append(out, SettingTerm{Term: term, Meaning: meaning}) }
	for _, p := range parts {
		// A part may name a method's way of scoring and, after it, the
		// temperature it samples at: the way comes first, as on the line.
		switch {
		case strings.HasPrefix(p, "probability-weighted form score from "):
			from := "the shares of n sampled answers (" + firstNumber(strings.TrimPrefix(p, "probability-weighted form score from ")) + " here) that gave each score"
			if strings.Contains(p, "log-probabilities") {
				from = "the odds the endpoint reports for each score it could write (its log-probabilities) when it reports them, else from " + from
			}
			add("Probability-weighted form score", "the judge fills in a short form that asks for the score alone, in whole numbers. Instead of the one number it writes, each allowed score counts as much as the judge was likely to give it (60% on 4 and 40% on 3 gives 3.6), so the scores spread finely and ties are rare. How likely each score is comes from "+from+".")
		case strings.HasPrefix(p, "mean of ") && strings.HasSuffix(p, " ratings"):
			n := firstNumber(p)
			kind := "decimal ratings may be 3.5 as well as 3 or 4"
			if strings.Contains(p, " integer ratings") {
				kind = "integer ratings are whole numbers only"
			}
			add("Sampled ratings", "each sample is judged alone: the judge first analyses it, then rates it. The same request is answered "+n+" times and the score is the mean of the ratings that could be read, so one answer's luck weighs little ("+kind+").")
		case strings.HasPrefix(p, "every criterion in one JSON answer on the "):
			scale := strings.TrimSuffix(strings.TrimPrefix(p, "every criterion in one JSON answer on the "), " scale")
			add("One JSON answer", "one call per sample scores every criterion at once, answered as structured data (JSON) on the "+scale+" scale rather than each criterion's own range; correlations with your ratings are unaffected.")
		case strings.HasPrefix(p, "at least ") && strings.Contains(p, " of the probability on allowed scores"):
			share := firstNumber(p)
			add("Least probability on allowed scores", "when the judge writes a score outside the scale (say 6 on a 1 to 5 scale), its odds are still used if the allowed scores together got at least "+share+" of the odds at that place (1 would be all of them); below that the sample is scored from sampled answers instead.")
		}
		switch {
		case strings.Contains(p, " rounds × batches of "):
			add("Rounds × batches", "each sample was scored once per round, each time in a batch of samples the judge compared side by side; its final score is the mean of its rounds.")
		case strings.HasPrefix(p, "temperature ") || strings.Contains(p, " at temperature "):
			term := "Temperature"
			if hasTopP {
				term = "Temperature and top_p"
			}
			meaning := "how freely the judge words its answers. Low values give steadier scores that repeat from run to run."
			if sampled {
				meaning = "how freely the judge words each of the n sampled answers. They must differ for their mix to say anything, so the papers sample at temperature 1; at 0 every answer would be the same."
			}
			if hasTopP {
				meaning += " top_p lets the judge pick each word only among its likeliest choices, those that make up that share of the odds (0.9 is 90%)."
			}
			add(term, meaning)
		case strings.HasPrefix(p, "seed "):
			if batched {
				add("Seed", "fixes the run's random choices, such as which samples share a batch, so the run can be repeated.")
			} else {
				add("Seed", "is sent with every call, so an endpoint that honours seeds gives the same answers again and the run can be repeated.")
			}
		case strings.HasSuffix(p, "-stage prompt"):
			switch strings.TrimSuffix(p, "-stage prompt") {
			case "one":
				add("One-stage prompt", "the judge analyses and scores each sample of a batch in turn.")
			case "two":
				add("Two-stage prompt", "the judge first writes an analysis of every sample in the batch, then gives all the scores at once (the paper found this best).")
			case "three":
				add("Three-stage prompt", "the judge analyses the samples, ranks them, then scores them (the paper found the ranking sways the scores).")
			}
		case strings.Contains(p, " batches sorted by "):
			comp, key, _ := strings.Cut(p, " batches sorted by ")
			order := " Which samples go together follows each sample's " + key + "."
			switch comp {
			case "heterogeneous":
				add("Heterogeneous batches", "after the first round, each batch mixes samples that scored low with samples that scored high, so the judge compares across the whole scale (the paper found this best)."+order)
			case "homogeneous":
				add("Homogeneous batches", "after the first round, samples with similar scores share a batch."+order)
			case "random":
				add("Random batches", "the samples are reshuffled into new batches at random every round.")
			}
		case p == "decimal scores":
			add("Decimal scores", "the judge may give 3.5 as well as 3 or 4.")
		case p == "integer scores":
			add("Integer scores", "the judge gives whole numbers only.")
		}
	}
	return out
}

// firstNumber is the first number a settings part shows ("20" of "mean of
// 20 sampled integer ratings"), "" when it shows none.
func firstNumber(part string) string {
	for _, w := range strings.Fields(part) {
		if w != "" && (w[0] >= '0' && w[0] <= '9') {
			return w
		}
	}
	return ""
}

// runSettings is the method's account of the run's settings, part by part,
// with the run's spending cap after them when it has one.
func runSettings(r models.Run) methods.Summary {
	s := runMethod(r).Parts(methods.Run{Settings: r.Settings, MethodSettings: r.MethodSettings, Rubric: r.RubricSnapshot})
	if c := r.Settings.SpendCapUSD; c != nil {
		s = append(s, methods.SummaryPart{Text: "spending cap " + Money(*c), Plain: true})
	}
	return s
}
