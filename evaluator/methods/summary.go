package methods

import "strings"

// Summary is a run's settings as its method uses them, part by part in
// the order a reader sees them: Line writes them as the run's one-line
// settings summary, Terms lists what its terms of art mean.
type Summary []SummaryPart

// SummaryPart is one part of a run's settings summary ("seed 42").
//
// A part either explains itself (Terms) or says it needs no explanation
// (Plain); a part with neither is a setting nobody has explained yet, which
// the methods' tests refuse.
type SummaryPart struct {
	// Text is the part as the line shows it.
	Text string
	// Terms are the terms of art the part holds, in the order the text
	// names them (G-Eval's scoring, then the temperature it samples at).
	Terms []Term
	// Plain says the part reads plainly (a spending cap) or is explained
	// by the term of another part (top_p, by the temperature's).
	Plain bool
}

// Term is a term of art of a run's settings with what it means to a
// reader who has not read the method's paper.
type Term struct {
	// Term is the term's name as the help list shows it ("Seed").
	Term string
	// Meaning says what the run's setting does, in plain words.
	Meaning string
}

// Line writes the summary in one line, its parts joined by " · ".
func (s Summary) Line() string {
	texts := make([]string, len(s))
	for i, p := range s {
		texts[i] = p.Text
	}
	return strings.Join(texts, " · ")
}

// Terms lists the terms of art of every part, in the line's order.
func (s Summary) Terms() []Term {
	var out []Term
	for _, p := range s {
		out = append(out, p.Terms...)
	}
	return out
}

// explained is a part holding terms.
func explained(text string, terms ...Term) SummaryPart {
	return SummaryPart{Text: text, Terms: terms}
}

// plain is a part that needs no explanation of its own.
func plain(text string) SummaryPart {
	return SummaryPart{Text: text, Plain: true}
}

// temperatureTerm explains a run's temperature: of each answer, or of the
// n sampled answers whose mix a sample-wise method reads (sampled); with
// topP, the run's top_p too (the part after it is then plain).
func temperatureTerm(sampled, topP bool) Term {
	t := Term{Term: "Temperature", Meaning: "how freely the judge words its answers. Low values give steadier scores that repeat from run to run."}
	if sampled {
		t.Meaning = "how freely the judge words each of the n sampled answers. They must differ for their mix to say anything, so the papers sample at temperature 1; at 0 every answer would be the same."
	}
	if topP {
		t.Term = "Temperature and top_p"
		t.Meaning += " top_p lets the judge pick each word only among its likeliest choices, those that make up that share of the odds (0.9 is 90%)."
	}
	return t
}

// seedTerm explains a run's seed: what it fixes depends on whether the
// method forms batches.
func seedTerm(batched bool) Term {
	if batched {
		return Term{Term: "Seed", Meaning: "fixes the run's random choices, such as which samples share a batch, so the run can be repeated."}
	}
	return Term{Term: "Seed", Meaning: "is sent with every call, so an endpoint that honours seeds gives the same answers again and the run can be repeated."}
}
