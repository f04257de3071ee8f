package web

import "strings"

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
	hasTopP := false
	for _, p := range parts {
		if strings.HasPrefix(p, "top_p ") {
			hasTopP = true
		}
	}
	var out []SettingTerm
	add := func(term, meaning string) { out = append(out, SettingTerm{Term: term, Meaning: meaning}) }
	for _, p := range parts {
		switch {
		case strings.Contains(p, " rounds × batches of "):
			add("Rounds × batches", "each sample was scored once per round, each time in a batch of samples the judge compared side by side; its final score is the mean of its rounds.")
		case strings.HasPrefix(p, "temperature ") || strings.Contains(p, " at temperature "):
			term := "Temperature"
			if hasTopP {
				term = "Temperature and top_p"
			}
			add(term, "how freely the judge words its answers. Low values give steadier scores that repeat from run to run.")
		case strings.HasPrefix(p, "seed "):
			add("Seed", "fixes the run's random choices, such as which samples share a batch, so the run can be repeated.")
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
