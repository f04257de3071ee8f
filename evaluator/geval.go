package evaluator

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file holds G-Eval (Liu et al., EMNLP 2023) and the prompt parts that
// the three sample-wise baselines share (G-Eval, LLM-Eval, CloserLook): one
// sample per prompt, laid out with the same headings as the batch prompt so
// that the simulated judge and a human reader find their way the same way.

// sampleSystemPrompt sets the judge's role for every sample-wise call.
const sampleSystemPrompt = "You are an impartial, experienced evaluator of text quality. " +
	"You judge one sample at a time, apply the rubric exactly as written, " +
	"and follow the requested output format exactly."

// Headings and fixed phrases of the sample-wise prompts. The simulated
// judge recognises the prompts by them, so change them together with
// simjudge (its tests send prompts built here).
const (
	headingSample   = "# Sample"
	headingSteps    = "# Evaluation steps"
	headingAllCrit  = "# Criteria"
	sampleFieldsFmt = "The sample shows these fields: %s.\n"

	// gevalStepsTitle is what G-Eval's auto chain-of-thought answer starts with.
	gevalStepsTitle = "Evaluation Steps:"
	// gevalFormTitle opens G-Eval's form; the prompt ends with the form's
	// one line, "- <Criterion>:", for the judge to complete.
	gevalFormTitle = "Evaluation Form (scores ONLY):"
)

// Sources of a G-Eval estimate.
const (
	GEvalSourceLogprobs = "logprobs" // read from the endpoint's top_logprobs
	GEvalSourceSamples  = "samples"  // counted over n sampled completions
)

// maxGEvalScores bounds the integer scores of a G-Eval form. Why 1000: GPT
// tokenizers write 0..999 as one token, so a form score beyond that cannot
// be read from one position's log-probabilities anyway, and a criterion
// such as [0, 1e9] must not allocate a billion candidates.
const maxGEvalScores = 1000

// GEvalScores returns the integer scores G-Eval's form allows on c: every
// integer from ceil(c.Lo) to floor(c.Hi), e.g. 1, 2, 3 for [1, 3].
//
// A range that holds fewer than two integers (such as [1.5, 2.5] or
// [0.2, 0.8]) cannot express a judgement on an integer form: the result
// then has one score or none, the estimates built on it are trivial or nil,
// and such a criterion should be scored with another method. A range holding
// more than 1000 integers also returns nil (see maxGEvalScores).
func GEvalScores(c Criterion) []int {
	lo, hi := math.Ceil(c.Lo), math.Floor(c.Hi)
	if math.IsNaN(lo) || math.IsNaN(hi) || hi < lo || hi-lo+1 > maxGEvalScores {
		return nil
	}
	out := make([]int, 0, int(hi-lo)+1)
	for s := int(lo); s <= int(hi); s++ {
		out = append(out, s)
	}
	return out
}

// BuildGEvalStepsPrompt builds G-Eval's auto chain-of-thought prompt: the
// task and criterion c of rubric r, and a request for "Evaluation Steps:"
// followed by a short numbered list saying how to rate one sample on c.
// The answer is read by ParseGEvalSteps, stored once per criterion and
// editable by the user before the form prompts use it.
func BuildGEvalStepsPrompt(r Rubric, c Criterion) []Message {
	var b strings.Builder
	b.WriteString(headingTask + "\n")
	b.WriteString("Samples of the following kind will be rated one at a time.")
	if d := describeSample(r.Task, 2); d != "" {
		b.WriteString(" " + d)
	}
	b.WriteString("\n")
	if labels := fieldLabelsOf(r); len(labels) > 0 {
		fmt.Fprintf(&b, "Every sample shows these fields: %s.\n", strings.Join(labels, ", "))
	}
	fmt.Fprintf(&b, "Your job is to write the steps an evaluator should follow to rate one sample on one criterion, %s. Do not rate anything yet.\n\n", c.Name)

	writeGEvalCriterion(&b, c)

	b.WriteString(headingFormat + "\n")
	fmt.Fprintf(&b, "Write %q on a line of its own, followed by 3 to 5 short numbered steps (1., 2., ...), one per line. "+
		"The steps should say what to read, what to look for with respect to %s, and how to arrive at the score. Write nothing else.\n",
		gevalStepsTitle, c.Name)
	return []Message{{Role: "system", Content: sampleSystemPrompt}, {Role: "user", Content: b.String()}}
}

var (
	// stepsTitleRE finds "Evaluation Steps:" in any case, bold removed.
	stepsTitleRE = regexp.MustCompile(`(?i)evaluation\s+steps\s*:`)
	// numberedStepRE is one numbered step: "1. Read", "2) Check",
	// "Step 3: Score", "### Step 4 - Decide". Group 1 is the text.
	numberedStepRE = regexp.MustCompile(`(?i)^[ \t>#]*(?:step\s*)?\d+[ \t]*[.):\-–—][ \t]*(.*)$`)
	// bulletStepRE is a bulleted step, used when the list has no numbers.
	bulletStepRE = regexp.MustCompile(`^[ \t>]*[-*•+][ \t]+(.*)$`)
)

// ParseGEvalSteps reads the evaluation steps of an answer to
// BuildGEvalStepsPrompt and returns them cleaned and renumbered, one per
// line ("1. ...\n2. ..."). It reads the list after the last "Evaluation
// Steps:" that has one (or, without that title, the first list in the
// answer); markdown emphasis is dropped, a line that directly follows a step
// continues it, and the list ends at the first paragraph of other text. A
// bulleted list is accepted when there is no numbered one. It returns an
// error when no step is found.
func ParseGEvalSteps(text string) (string, error) {
	text, _ = StripReasoning(text)
	clean := cleanMarkdown(text)
	titles := stepsTitleRE.FindAllStringIndex(clean, -1)
	for i := len(titles) - 1; i >= 0; i-- {
		if steps := readStepList(clean[titles[i][1]:]); len(steps) > 0 {
			return numberSteps(steps), nil
		}
	}
	if steps := readStepList(clean); len(steps) > 0 {
		return numberSteps(steps), nil
	}
	return "", errors.New(`no evaluation steps found: the answer has no numbered list (expected "Evaluation Steps:" followed by "1. ...", "2. ...")`)
}

// readStepList reads the first numbered list of text, or its first bulleted
// list when it has no numbered one.
func readStepList(text string) []string {
	if steps := readList(text, numberedStepRE); len(steps) > 0 {
		return steps
	}
	return readList(text, bulletStepRE)
}

// readList collects the items of the first list whose items match item.
func readList(text string, item *regexp.Regexp) []string {
	var steps []string
	gap := false // a blank line since the last step line
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch m := item.FindStringSubmatch(line); {
		case trimmed == "":
			gap = len(steps) > 0
		case m != nil:
			if s := strings.TrimSpace(m[1]); s != "" {
				steps = append(steps, s)
			}
			gap = false
		case len(steps) == 0:
			// Text before the list, e.g. "Here are the steps".
		case !gap || line != strings.TrimLeft(line, " \t"):
			// A wrapped or indented line continues the current step.
			steps[len(steps)-1] += " " + strings.TrimLeft(trimmed, "-*•+ \t")
			gap = false
		default:
			return steps // a new paragraph of other text ends the list
		}
	}
	return steps
}

func numberSteps(steps []string) string {
	lines := make([]string, len(steps))
	for i, s := range steps {
		lines[i] = strconv.Itoa(i+1) + ". " + s
	}
	return strings.Join(lines, "\n")
}

// BuildGEvalFormPrompt builds G-Eval's form-filling prompt for one sample:
// the task, criterion c on its integer scale (GEvalScores) with its level
// descriptions, the evaluation steps (left out when steps is blank), the
// sample's fields, and the form "Evaluation Form (scores ONLY):" whose one
// line "- <Criterion>:" the judge completes with a single integer.
func BuildGEvalFormPrompt(r Rubric, c Criterion, steps string, s Sample) []Message {
	var b strings.Builder
	b.WriteString(headingTask + "\n")
	writeSampleIntro(&b, r.Task, fieldLabels([]Sample{s}))
	if strings.TrimSpace(steps) != "" {
		fmt.Fprintf(&b, "Your job is to rate the sample on one criterion, %s, following the evaluation steps below.\n\n", c.Name)
	} else {
		fmt.Fprintf(&b, "Your job is to rate the sample on one criterion, %s.\n\n", c.Name)
	}

	writeGEvalCriterion(&b, c)

	if st := strings.TrimSpace(steps); st != "" {
		b.WriteString(headingSteps + "\n")
		b.WriteString(st + "\n\n")
	}

	writeSampleSection(&b, s)

	b.WriteString(headingFormat + "\n")
	fmt.Fprintf(&b, "Fill in the form below with the score only: %s, with no words, no explanation and nothing after it.\n\n", gevalScaleText(c))
	b.WriteString(gevalFormTitle + "\n")
	fmt.Fprintf(&b, "- %s:", c.Name)
	return []Message{{Role: "system", Content: sampleSystemPrompt}, {Role: "user", Content: b.String()}}
}

// GEvalEstimate is G-Eval's probability-weighted score of one sample.
type GEvalEstimate struct {
	// Score is sum_i p(s_i) * s_i over the allowed scores; nil when
	// nothing usable was found (see Problem).
	Score *float64
	// Probs is the probability of each allowed score, renormalised over the
	// allowed scores; every allowed score has an entry, 0 included. Nil
	// when Score is nil.
	Probs map[int]float64
	// Source is GEvalSourceLogprobs or GEvalSourceSamples.
	Source string
	// Used and Total count the usable samples and the samples drawn; for
	// log-probabilities they are 1/1 or 0/1.
	Used, Total int
	// Mass is, for log-probabilities, the probability the judge gave the
	// allowed scores at the score's position before renormalising (near 1
	// when it answered as asked); for samples it is Used/Total.
	Mass float64
	// Problem says, in plain English, why Score is nil.
	Problem string
}

// GEvalMinAllowedMass is the least probability the judge must give the
// allowed scores, together, at the score's position when the score it
// generated is not one of them (e.g. "4" on a 1-3 scale). Why one half:
// below it the renormalised distribution would describe answers the judge
// mostly did not give, so the estimate is left to sampling instead; above
// it the allowed scores are still the judge's main intent at that position.
// It is recorded with every G-Eval run (MethodSettings.MinAllowedMass).
const GEvalMinAllowedMass = 0.5

// generatedNumberRE is a generated token that is a number: " 3", "4", "2.5".
var generatedNumberRE = regexp.MustCompile(`^\s*[-+]?\d+(?:\.\d+)?\s*$`)

// GEvalFromLogprobs estimates the score from the log-probabilities of a
// form answer. The score's position is the generated token that is a
// number where the form's text reading (formScore, as GEvalFromSamples
// reads a sampled answer) finds the score, so an echo of the scale before
// it ("Coherence (1-5): 4") does not stand in for it; the distribution is read there and nowhere else, so a faint
// "1" among the alternatives of an earlier word ("Co" of "Coherence: 3")
// never stands in for the score. p(s) sums exp(logprob) over the distinct
// candidate tokens that read as s at that position (the top alternatives
// and the generated token), renormalised over the allowed scores. When the
// generated number is not an allowed score, the allowed scores must hold
// at least minMass of the probability there (GEvalMinAllowedMass when
// minMass is 0), else there is no estimate. A minus sign generated as a
// token of its own ("-", "2") is read with the digits after it
// (signToken, signedMass), never dropped; so is a plus sign. A score
// written with a typeset minus ("−2") or full-width digits ("２") is read
// as the sampled reader reads it. Sums run in a fixed order
// (ascending score, then token), so the same probabilities give the same
// bits whatever order the endpoint listed them in.
func GEvalFromLogprobs(tokens []TokenAlternatives, c Criterion, minMass float64) GEvalEstimate {
	e := GEvalEstimate{Source: GEvalSourceLogprobs, Total: 1}
	threshold := GEvalMinAllowedMass
	if minMass > 0 {
		threshold = minMass
	}
	allowed := GEvalScores(c)
	if len(allowed) == 0 {
		e.Problem = noIntegerScores(c)
		return e
	}
	if !HasTopLogprobs(tokens) {
		e.Problem = "the answer came without token log-probabilities (the endpoint may not support logprobs)"
		return e
	}
	lo, hi := allowed[0], allowed[len(allowed)-1]
	// The answer's text is read in ASCII; the candidates' probabilities
	// are read from the tokens as sent, each token read in ASCII
	// (readScoreToken), so that "２" and "2" stay two candidates.
	text := asciiNumberTokens(tokens)
	pos := scorePosition(text, c)
	if pos < 0 {
		e.Problem = fmt.Sprintf("no generated token is a number, so the score's position is unknown (expected an integer from %d to %d)", lo, hi)
		if slices.ContainsFunc(text, func(t TokenAlternatives) bool { return generatedNumberRE.MatchString(t.Token) }) {
			e.Problem = fmt.Sprintf("the only numbers the judge wrote are the ends of a range (such as \"1-5\"), so the score's position is unknown (expected an integer from %d to %d)", lo, hi)
		}
		return e
	}
	if why := formScoreAside(text, c, lo, hi); why != "" {
		e.Problem = "the judge's answer " + why
		return e
	}
	var whole strings.Builder
	for _, t := range text {
		whole.WriteString(t.Token)
	}
	if why := formScoresDisagree(whole.String(), formNameRE(c)); why != "" {
		e.Problem = "the judge's answer " + why + "; none kept"
		return e
	}
	_, generatedAllowed := readScoreToken(tokens[pos].Token, lo, hi)
	mass := map[int]float64{}
	written := strings.TrimSpace(text[pos].Token)
	sign, signChar, problem := signToken(text, pos, c)
	switch {
	case problem != "":
		e.Problem = problem
		return e
	case sign >= 0:
		// "-" (or "+") and "2" came as two tokens: the scores'
		// probabilities are spread over both positions (signToken).
		written = signChar + written
		_, generatedAllowed = readScoreToken(written, lo, hi)
		mass = signedMass(tokens[sign], tokens[pos], lo, hi, signChar)
	default:
		for _, lp := range scoreCandidates(tokens[pos], lo, hi) {
			mass[lp.score] += math.Exp(lp.logprob)
		}
	}
	total := 0.0
	for _, s := range allowed {
		total += mass[s]
	}
	e.Mass = total
	if !(total > 0) {
		e.Problem = fmt.Sprintf("the judge wrote %q and gave the allowed scores (%d to %d) no probability at that position", written, lo, hi)
		return e
	}
	if !generatedAllowed && total < threshold {
		e.Problem = fmt.Sprintf("the judge wrote %q, not an allowed score, and gave the allowed scores (%d to %d) only %.3f of the probability at that position (at least %.2f needed)",
			written, lo, hi, total, threshold)
		return e
	}
	e.Used = 1
	e.Probs = make(map[int]float64, len(allowed))
	for _, s := range allowed {
		e.Probs[s] = mass[s] / total
	}
	e.Score = weightedScore(allowed, e.Probs)
	return e
}

// signToken returns the index of the token that holds the sign of the
// score at pos when the judge wrote it as a token of its own ("-", then
// "2": GPT tokenizers split " -2" so; or "+", then "2"), and the sign; or
// -1 when the score carries no sign or carries it itself ("-2", "+2").
// The number formScore reads decides whether there is a sign. When the
// sign came with other text in one token (": -"), the probabilities of the
// scores cannot be read, and the problem says so. Before fix-parse28 the
// minus was dropped: "-2" was read from the "2" token's alternatives as
// the scores 1, 2, ...; the plus is read so since fix-parse29.
func signToken(tokens []TokenAlternatives, pos int, c Criterion) (int, string, string) {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString(t.Token)
	}
	text := b.String()
	i, _ := formScore(text, formNameRE(c))
	if i < 0 || (text[i] != '-' && text[i] != '+') || pos == 0 {
		return -1, "", ""
	}
	sign := text[i : i+1]
	if strings.Contains(tokens[pos].Token, sign) {
		return -1, "", ""
	}
	if strings.TrimSpace(tokens[pos-1].Token) == sign {
		return pos - 1, sign, ""
	}
	what := "minus"
	if sign == "+" {
		what = "plus"
	}
	return -1, "", fmt.Sprintf("the judge wrote the score's %s sign in one token with other text (%q), so the probabilities of the scores cannot be read from the log-probabilities (sampling can)", what, tokens[pos-1].Token)
}

// signedMass is the probability of each score in [lo, hi] when the sign
// (sign, "-" or "+") is the token at one position (at) and the digits the
// next (num): at at, the judge chose between the sign (p) and a score
// written whole in one token, "1", "-1" or "+1" (its probability there);
// at num, having written the sign, between the digits k, so the score
// sign·k has p·p(k). The other sign's branch at at, whose digits were
// not generated, is not counted. Sums run in a fixed order (ascending
// score, then token), as in GEvalFromLogprobs. Tokens are read in ASCII
// ("−" is "-", "２" is 2).
func signedMass(at, num TokenAlternatives, lo, hi int, sign string) map[int]float64 {
	mass := map[int]float64{}
	for _, lp := range scoreCandidates(at, lo, hi) {
		mass[lp.score] += math.Exp(lp.logprob)
	}
	var signs []TokenProb
	seen := map[string]bool{}
	for _, alt := range append(slices.Clone(at.Top), TokenProb{at.Token, at.Logprob}) {
		if asciiNumber(strings.TrimSpace(alt.Token)) == sign && !seen[alt.Token] && !math.IsNaN(alt.Logprob) {
			seen[alt.Token] = true
			signs = append(signs, alt)
		}
	}
	slices.SortFunc(signs, func(a, b TokenProb) int { return strings.Compare(a.Token, b.Token) })
	p := 0.0
	for _, m := range signs {
		p += math.Exp(math.Min(m.Logprob, 0))
	}
	// The digits after the sign: "2", not "-2" or "+2", which would make
	// "--2" or "+-2".
	digits := func(lp scoredToken) bool { return isDigit(asciiNumber(strings.TrimSpace(lp.token))[0]) }
	switch {
	case sign == "-" && lo < 0:
		for _, lp := range scoreCandidates(num, 1, -lo) {
			if digits(lp) {
				mass[-lp.score] += p * math.Exp(lp.logprob)
			}
		}
	case sign == "+" && hi >= 0:
		for _, lp := range scoreCandidates(num, max(lo, 0), hi) {
			if digits(lp) {
				mass[lp.score] += p * math.Exp(lp.logprob)
			}
		}
	}
	return mass
}

// asciiNumber is s with numberForms written in ASCII; s itself, without
// a copy, when it has none (the usual token).
func asciiNumber(s string) string {
	if !strings.Contains(s, "\u2212") && !strings.Contains(s, "\xef\xbc") {
		return s
	}
	return numberForms.Replace(s)
}

// asciiNumberTokens returns tokens with the generated tokens' typeset
// minus and full-width digits and signs written in ASCII (numberForms), as
// the sampled reader sees them through cleanMarkdown, so that the answer's
// text reads "−2" as -2 and "２" as 2 (fix-parse29; they used to be no
// number at all). The alternatives are left as sent. tokens itself is
// returned when no generated token needs it.
func asciiNumberTokens(tokens []TokenAlternatives) []TokenAlternatives {
	if !slices.ContainsFunc(tokens, func(t TokenAlternatives) bool { return asciiNumber(t.Token) != t.Token }) {
		return tokens
	}
	out := slices.Clone(tokens)
	for i := range out {
		out[i].Token = asciiNumber(out[i].Token)
	}
	return out
}

// HasTopLogprobs reports whether any position carries top alternatives:
// an answer whose top_logprobs are all empty has no distribution to read,
// whatever its generated tokens' own log-probabilities say.
func HasTopLogprobs(tokens []TokenAlternatives) bool {
	for _, t := range tokens {
		if len(t.Top) > 0 {
			return true
		}
	}
	return false
}

// scoredToken is one candidate token that reads as an allowed score.
type scoredToken struct {
	token   string
	score   int
	logprob float64
}

// scoreCandidates returns the distinct candidate tokens of one position
// (its top alternatives and the generated token, which the alternatives
// usually repeat) that read as a score in [lo, hi], sorted by score, then
// token, so that sums over them do not depend on the endpoint's order.
func scoreCandidates(t TokenAlternatives, lo, hi int) []scoredToken {
	var out []scoredToken
	seen := map[string]bool{}
	add := func(tok string, lp float64) {
		if seen[tok] || math.IsNaN(lp) {
			return
		}
		if s, ok := readScoreToken(tok, lo, hi); ok {
			seen[tok] = true
			out = append(out, scoredToken{token: tok, score: s, logprob: math.Min(lp, 0)})
		}
	}
	for _, alt := range t.Top {
		add(alt.Token, alt.Logprob)
	}
	add(t.Token, t.Logprob)
	slices.SortFunc(out, func(a, b scoredToken) int {
		if a.score != b.score {
			return a.score - b.score
		}
		return strings.Compare(a.token, b.token)
	})
	return out
}

// readScoreToken reads a token such as "3", " 3", "-2", "+1", "−2" or "２"
// as an integer in [lo, hi], in ASCII (numberForms) as cleanMarkdown
// writes the sampled answers.
func readScoreToken(tok string, lo, hi int) (int, bool) {
	s, err := strconv.Atoi(strings.TrimSpace(asciiNumber(tok)))
	if err != nil || s < lo || s > hi {
		return 0, false
	}
	return s, true
}

// sampleNumberRE finds a number that is not part of a word or a range's
// second end: "3", "-2", "3.0".
var sampleNumberRE = regexp.MustCompile(`(?:^|[^\w.\-+])([-+]?\d+(?:\.\d+)?)`)

// scoreLabelRE finds a number written right after a "Score" or "Rating"
// label on its line: "Score: 3", "Final rating (1-5): 4".
var scoreLabelRE = regexp.MustCompile(`(?im)\b(?:score|rating)[^:\n]{0,30}:[ \t]*([-+]?\d+(?:\.\d+)?)`)

// rangeRE finds a range of numbers, "1-5", "1 – 5", "1 to 5", "-2 to 2":
// an echo of the scale, whose ends are never the score.
var rangeRE = regexp.MustCompile(`(?i)[-+]?\d+(?:\.\d+)?[ \t]*(?:[-–—]|\bto\b)[ \t]*[-+]?\d+(?:\.\d+)?`)

// formNameRE finds a number written right after criterion c's name on its
// line ("- Coherence: 2", "Coherence (1-3): 2"), or is nil for a criterion
// without a name.
func formNameRE(c Criterion) *regexp.Regexp {
	name := strings.TrimSpace(c.Name)
	if name == "" {
		return nil
	}
	return regexp.MustCompile(`(?im)` + regexp.QuoteMeta(name) + `[^:\n]{0,30}:[ \t]*([-+]?\d+(?:\.\d+)?)`)
}

// formScore finds the score in the text of a form answer and returns where
// its number starts and ends in t, or -1, -1. It is the first number, not
// an end of a range (rangeRE), written right after the criterion's name
// and a colon (named, from formNameRE; may be nil); or else right after a
// "Score" or "Rating" label; or else anywhere. Ranges are passed over
// because a judge that echoes the scale ("Score (1-5): 4", "On a scale of
// 1 to 5, I give 4") would otherwise be read as giving its lower end.
func formScore(t string, named *regexp.Regexp) (int, int) {
	ranges := rangeRE.FindAllStringIndex(t, -1)
	inRange := func(i int) bool {
		return slices.ContainsFunc(ranges, func(r []int) bool { return r[0] <= i && i < r[1] })
	}
	var markers [][]int
	if m := listMarkerRE.FindAllStringSubmatchIndex(t, -1); len(m) > 1 {
		markers = m
	}
	isMarker := func(i int) bool {
		return slices.ContainsFunc(markers, func(m []int) bool { return m[2] == i })
	}
	for _, re := range []*regexp.Regexp{named, scoreLabelRE, sampleNumberRE} {
		if re == nil {
			continue
		}
		for _, m := range re.FindAllStringSubmatchIndex(t, -1) {
			if !inRange(m[2]) && (re != sampleNumberRE || !isMarker(m[2])) {
				return m[2], m[3]
			}
		}
	}
	return -1, -1
}

// listMarkerRE finds the number of a numbered list's item, "1. Read the
// dialogue." or "2) Judge it.", at the start of a line with words after it.
// When an answer has two or more such lines, it is a list (a judge echoing
// the evaluation steps), and its item numbers are never read as the score
// by formScore's last resort, the first number anywhere: a list of steps
// without a score used to count as a score of 1. One such line alone ("3.
// The dialogue is coherent.") is still read as its number.
var listMarkerRE = regexp.MustCompile(`(?m)^[ \t]*(\d+)[.)][ \t]+\S`)

// formScoresDisagree says how the form answer t gives its criterion two
// different scores, or "". It looks where formScore finds the score: at
// every number written after the criterion's name and a colon (named), or,
// when there is none, after a "Score" or "Rating" label, ends of ranges
// left out. "- Coherence: 2 ... Coherence: 3" cannot be read as one score
// (a correction, or an example?), so the answer is not used, as BatchEval
// and CloserLook do with disagreeing scores; the same number written twice
// is no conflict. A bare number found anywhere (formScore's last resort)
// is not compared: prose numbers would make every chatty answer conflict.
func formScoresDisagree(t string, named *regexp.Regexp) string {
	ranges := rangeRE.FindAllStringIndex(t, -1)
	for _, re := range []*regexp.Regexp{named, scoreLabelRE} {
		if re == nil {
			continue
		}
		var raws []string
		var values []float64
		for _, m := range re.FindAllStringSubmatchIndex(t, -1) {
			if slices.ContainsFunc(ranges, func(r []int) bool { return r[0] <= m[2] && m[2] < r[1] }) {
				continue
			}
			raw := t[m[2]:m[3]]
			if v, err := strconv.ParseFloat(raw, 64); err == nil && !slices.Contains(values, v) {
				values, raws = append(values, v), append(raws, raw)
			}
		}
		if len(raws) > 1 {
			return fmt.Sprintf("gives %d different scores (%s)", len(raws), strings.Join(raws, ", "))
		}
		if len(raws) == 1 {
			return ""
		}
	}
	return ""
}

// scorePosition is the index of the token that holds the score of a form
// answer written token by token: the first generated number that does not
// end before the place formScore finds in the whole text, or -1.
func scorePosition(tokens []TokenAlternatives, c Criterion) int {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString(t.Token)
	}
	at, _ := formScore(b.String(), formNameRE(c))
	if at < 0 {
		return -1
	}
	end := 0
	for i, t := range tokens {
		end += len(t.Token)
		if end > at && generatedNumberRE.MatchString(t.Token) {
			return i
		}
	}
	return -1
}

// formScoreAside is why the score of a form answer written token by token
// is not one score on the form's scale (lo to hi): "3 or 4", "4/10" on 1
// to 5 (scoreAside); or "".
func formScoreAside(tokens []TokenAlternatives, c Criterion, lo, hi int) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString(t.Token)
	}
	text := b.String()
	i, j := formScore(text, formNameRE(c))
	if i < 0 {
		return ""
	}
	if why := formListed(text, i, j); why != "" {
		return why
	}
	// An en or em dash against the digits ("Coherence: –2"): by the scale,
	// as dashSign reads it. A reading as a negative score cannot be taken
	// from the digit's log-probabilities.
	formScale := Criterion{Lo: float64(lo), Hi: float64(hi)}
	if raw, why := dashSign(text, 0, i, j, formScale); why != "" {
		return why
	} else if raw != text[i:j] {
		return fmt.Sprintf("%q has a dash against the digits, read as a minus, which the log-probabilities of the digits cannot give", text[max(i-len("–"), 0):j])
	}
	after, _, _ := strings.Cut(text[j:], "\n")
	return scoreAside(text[i:j], after, Criterion{Lo: float64(lo), Hi: float64(hi)})
}

// formListed says why the score t[i:j] of a form answer is not one score
// when it opens a bracketed list of numbers ("[-1, 0, 2]", which used to
// be read as -1), as CloserLook's ratingList does, or "".
func formListed(t string, i, j int) string {
	if i == 0 || t[i-1] != '[' || !ratingListRE.MatchString(t[j:]) {
		return ""
	}
	list := t[i-1:]
	if k := strings.IndexByte(list, ']'); k >= 0 {
		list = list[:k+1]
	}
	return fmt.Sprintf("%q is a list of numbers, not one score", list)
}

// GEvalFromSamples estimates the score from n sampled form answers. Each
// answer's score is the number formScore finds: the first number after
// "<criterion name> ...:" on a line ("- Coherence: 2", "Coherence (1-3):
// 2"), or else after "Score ...:" ("Score (1-3): 2"), or else the first
// number in the answer ("3", "3/5"), never an end of a range such as
// "1-3" nor the number of an item of a numbered list (listMarkerRE). An answer whose number is not an allowed integer score (out of
// range, 2.5), is one of a choice ("3 or 4"), is out of another maximum
// than the form's ("4/10" on 1 to 5; scoreAside) or that has no number
// does not count; p(s) is the share of
// the usable answers that gave s. Nor does an answer that gives the
// criterion two different scores (formScoresDisagree).
func GEvalFromSamples(texts []string, c Criterion) GEvalEstimate {
	e := GEvalEstimate{Source: GEvalSourceSamples, Total: len(texts)}
	allowed := GEvalScores(c)
	if len(allowed) == 0 {
		e.Problem = noIntegerScores(c)
		return e
	}
	if len(texts) == 0 {
		e.Problem = "no sampled answers to count"
		return e
	}
	lo, hi := allowed[0], allowed[len(allowed)-1]
	named := formNameRE(c)
	// The form asks for one integer from lo to hi: a score out of another
	// maximum is on another scale.
	formScale := Criterion{Lo: float64(lo), Hi: float64(hi)}
	counts := map[int]int{}
	for _, t := range texts {
		t, only := StripReasoning(t)
		if only {
			continue // all thinking, cut off before the form was filled
		}
		t = cleanMarkdown(t)
		if formScoresDisagree(t, named) != "" {
			continue // "Coherence: 2 ... Coherence: 3": which is meant cannot be told
		}
		var raw string
		if i, j := formScore(t, named); i >= 0 {
			// "–2" (an en dash against the digits) is read by the scale,
			// and not at all when -2 and 2 are both on it (dashSign).
			var why string
			raw, why = dashSign(t, 0, i, j, formScale)
			after, _, _ := strings.Cut(t[j:], "\n")
			if why != "" || scoreAside(t[i:j], after, formScale) != "" || formListed(t, i, j) != "" {
				continue // "3 or 4", "4/10", "[1, 2]": not one score on the form's scale
			}
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
			continue
		}
		counts[int(v)]++
		e.Used++
	}
	e.Mass = float64(e.Used) / float64(e.Total)
	if e.Used == 0 {
		e.Problem = fmt.Sprintf("none of the %d sampled answers held a readable integer score from %d to %d", e.Total, lo, hi)
		return e
	}
	e.Probs = make(map[int]float64, len(allowed))
	for _, s := range allowed {
		e.Probs[s] = float64(counts[s]) / float64(e.Used)
	}
	e.Score = weightedScore(allowed, e.Probs)
	return e
}

// weightedScore is sum p(s)·s over the allowed scores in ascending order:
// a fixed order of summation, so equal probabilities give equal bits (a
// map's order would make 3.15 come out as 3.1500000000000004 or
// 3.1499999999999995 from one run to the next).
func weightedScore(allowed []int, probs map[int]float64) *float64 {
	sum := 0.0
	for _, s := range allowed {
		sum += probs[s] * float64(s)
	}
	return &sum
}

func noIntegerScores(c Criterion) string {
	return fmt.Sprintf("the range [%s, %s] of %s holds no integer score a G-Eval form could use (or too many to list)", formatNumber(c.Lo), formatNumber(c.Hi), c.Name)
}

// gevalScaleText says what a form score is: "one integer from 1 to 3".
func gevalScaleText(c Criterion) string {
	if s := GEvalScores(c); len(s) > 0 {
		return fmt.Sprintf("one integer from %d to %d", s[0], s[len(s)-1])
	}
	return scaleText(c, Integer)
}

// writeGEvalCriterion writes the criterion part of G-Eval's prompts, on
// the integer scale.
func writeGEvalCriterion(b *strings.Builder, c Criterion) {
	b.WriteString(headingCriteria + "\n")
	writeCriterionName(b, c)
	lo, hi := c.Lo, c.Hi
	if s := GEvalScores(c); len(s) > 0 {
		lo, hi = float64(s[0]), float64(s[len(s)-1])
		fmt.Fprintf(b, "Scale: an integer score from %d to %d.\n", s[0], s[len(s)-1])
	} else {
		fmt.Fprintf(b, "Scale: %s.\n", scaleText(c, Integer))
	}
	writeLevels(b, c.Levels, lo, hi, func(at float64) string { return levelText(at, Integer) })
	b.WriteString("\n")
	writeExamples(b, c, c.Lo, c.Hi)
}

// writeCriterionName writes "Name: description", or the bare name.
func writeCriterionName(b *strings.Builder, c Criterion) {
	if d := strings.TrimSpace(c.Description); d != "" {
		fmt.Fprintf(b, "%s: %s\n", c.Name, d)
	} else {
		fmt.Fprintf(b, "%s\n", c.Name)
	}
}

// writeLevels writes the level descriptions placed at lo, the middle and hi,
// each introduced by intro(at), e.g. "- A score of 1 means ...".
func writeLevels(b *strings.Builder, lv Levels, lo, hi float64, intro func(at float64) string) {
	for _, l := range []struct {
		at   float64
		text string
	}{{lo, lv.Low}, {(lo + hi) / 2, lv.Middle}, {hi, lv.High}} {
		if t := strings.TrimSpace(l.text); t != "" {
			fmt.Fprintf(b, "- %s means %s\n", intro(l.at), t)
		}
	}
}

// writeSampleIntro writes what one sample is and which fields it shows.
func writeSampleIntro(b *strings.Builder, task string, labels []string) {
	b.WriteString("You will be given one sample.")
	if d := describeSample(task, 1); d != "" {
		b.WriteString(" " + d)
	}
	b.WriteString("\n")
	if len(labels) > 0 {
		fmt.Fprintf(b, sampleFieldsFmt, strings.Join(labels, ", "))
	}
}

// writeSampleSection writes the "# Sample" part: one "Label: value" per
// field, "(empty)" for a blank value.
func writeSampleSection(b *strings.Builder, s Sample) {
	b.WriteString(headingSample + "\n")
	for _, f := range s.Fields {
		v := strings.TrimSpace(f.Value)
		if v == "" {
			v = emptyValue
		}
		fmt.Fprintf(b, "%s: %s\n", f.Label, v)
	}
	b.WriteString("\n")
}

// fieldLabelsOf lists the rubric's field labels (the column name when a
// field has no label), for prompts that show no sample.
func fieldLabelsOf(r Rubric) []string {
	var labels []string
	for _, f := range r.Fields {
		l := strings.TrimSpace(f.Label)
		if l == "" {
			l = f.Column
		}
		labels = append(labels, l)
	}
	return labels
}
