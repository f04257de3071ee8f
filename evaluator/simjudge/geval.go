package simjudge

// The sample-wise prompts (G-Eval, LLM-Eval, analyze-rate) show one sample
// under "# Sample". The simulated judge scores it with the same features
// and weights as a batch sample (see the package comment), so the methods
// can be compared on the demo data. This file has what they share and
// G-Eval's two prompts.

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
)

// The markers below are the wording of evaluator's sample-wise prompt
// builders; the tests send real prompts built by them, so a change of
// wording there fails here first.
const (
	sampleHeading   = "\n# Sample\n"
	outputHeading   = "\n# Output format\n"
	stepsRequest    = `Write "Evaluation Steps:" on a line of its own`
	formLine        = "\nEvaluation Form (scores ONLY):\n- "
	gevalDisclaimer = "(Simulated judge: these steps describe how batcheval's built-in simulator scores, from word counts, " +
		"lexical variety, questions and word overlap. No language model wrote them.)"
)

var (
	sampleFieldsRE   = regexp.MustCompile(`(?m)^The sample shows these fields: (.*)\.$`)
	stepsCriterionRE = regexp.MustCompile(`(?m)^Your job is to write the steps an evaluator should follow to rate one sample on one criterion, (.*)\. Do not rate anything yet\.$`)
	gevalScaleRE     = regexp.MustCompile(`(?m)^Scale: an integer score from (-?\d+) to (-?\d+)\.$`)
)

// spreadSigma is the standard deviation, in score steps, of the simulated
// probability of each form score around the feature score. Why 0.6: on an
// integer that puts about two thirds of the mass on it and a sixth on each
// neighbour, about as sure as GPT-4-class judges are on a 1-5 form.
const spreadSigma = 0.6

// maxTopLogprobs is OpenAI's limit for top_logprobs; larger requests get
// at most this many alternatives.
const maxTopLogprobs = 20

// lastUser returns the last message when it is the user's.
func lastUser(c *call) (string, bool) {
	last := c.Messages[len(c.Messages)-1]
	return last.Content, last.Role == "user"
}

// readOneSample reads the fields of the "# Sample" part of a sample-wise
// prompt and returns them with the part's text, which seeds the noise.
func readOneSample(content string) ([]evaluator.Text, string, bool) {
	si := strings.LastIndex(content, sampleHeading)
	fi := strings.LastIndex(content, outputHeading)
	if si < 0 || fi < si {
		return nil, "", false
	}
	var labels []string
	if m := sampleFieldsRE.FindStringSubmatch(content[:si]); m != nil {
		labels = strings.Split(m[1], ", ")
	}
	section := content[si+len(sampleHeading) : fi]
	fields := splitFields(section, labels)
	return fields, section, len(fields) > 0
}

// quality is the weighted feature mean, in [0, 1], of sample i of p on
// p's criterion, before noise.
func quality(p *batchPrompt, i int) float64 {
	f := measure(p.samples[i])
	w := weightsFor(p.criterion)
	q := 0.0
	for k := range f.values {
		q += w[k] * f.values[k]
	}
	return q
}

// choiceRNG seeds the draws of one choice of a sample-wise answer from the
// request's seed, the method, the temperature, the choice and the prompt's
// sample, so identical requests get identical answers.
func choiceRNG(c *call, p *batchPrompt, method string, choice int) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%x|%d|%s|", method, math.Float64bits(c.Temperature), choice, p.criterion)
	h.Write([]byte(p.text))
	return rand.New(rand.NewPCG(uint64(c.Seed), h.Sum64()))
}

// matchGEvalSteps answers G-Eval's auto chain-of-thought prompt with steps
// that say what the simulator actually measures.
func matchGEvalSteps(c *call) (answerFunc, bool) {
	content, ok := lastUser(c)
	if !ok || !strings.Contains(content, stepsRequest) {
		return nil, false
	}
	name := "the criterion"
	if m := stepsCriterionRE.FindStringSubmatch(content); m != nil {
		name = m[1]
	}
	w := weightsFor(name)
	text := gevalDisclaimer + "\n\nEvaluation Steps:\n" +
		"1. Read the last field of the sample (the text being judged) and count its words: up to about 40 words, longer scores higher on " + name + ".\n" +
		"2. Check its lexical variety: the share of distinct words, discounted for very short texts.\n" +
		"3. Count its questions: up to two question marks add credit.\n" +
		"4. Measure the share of its content words that also appear in the earlier fields.\n" +
		fmt.Sprintf("5. Weigh the four features for %s (length %.2f, variety %.2f, questions %.2f, overlap %.2f) and place the result on the scale.",
			name, w[featLength], w[featVariety], w[featQuestions], w[featOverlap])
	return func(int) reply { return reply{Content: text} }, true
}

// matchGEvalForm answers G-Eval's form with one integer score. The
// feature score plus the choice's noise is the centre of a probability
// spread over the allowed scores; at temperature 0 the answer is the most
// likely score, above it a draw from the spread sharpened or flattened by
// the temperature. With logprobs the spread is returned as the score
// token's top_logprobs, most likely first.
func matchGEvalForm(c *call) (answerFunc, bool) {
	content, ok := lastUser(c)
	if !ok {
		return nil, false
	}
	i := strings.LastIndex(content, formLine)
	m := gevalScaleRE.FindStringSubmatch(content)
	if i < 0 || m == nil {
		return nil, false
	}
	lo, err1 := strconv.Atoi(m[1])
	hi, err2 := strconv.Atoi(m[2])
	fields, section, ok := readOneSample(content)
	if err1 != nil || err2 != nil || hi < lo || !ok {
		return nil, false
	}
	name := strings.TrimSuffix(strings.TrimSpace(content[i+len(formLine):]), ":")
	p := &batchPrompt{criterion: name, lo: float64(lo), hi: float64(hi), integer: true,
		samples: [][]evaluator.Text{fields}, text: section}
	q := quality(p, 0)
	return func(choice int) reply {
		rng := choiceRNG(c, p, "geval", choice)
		span := p.hi - p.lo
		x := p.lo + q*span + rng.NormFloat64()*c.opts.Noise*span
		dist := scoreSpread(x, lo, hi)
		pick := dist[0]
		if c.Temperature > 0 {
			pick = drawTempered(dist, c.Temperature, rng)
		}
		rep := reply{Content: pick.token}
		if c.Logprobs {
			rep.Logprobs = &choiceLogprobs{Content: []tokenLogprob{scoreLogprob(pick, dist, c.TopLogprobs)}}
		}
		return rep
	}, true
}

// scoreProb is one allowed score as a token and its log-probability.
type scoreProb struct {
	token   string
	logprob float64
}

// scoreSpread gives every integer score in [lo, hi] a Gaussian weight
// around x (spreadSigma wide), normalised in log space so that far scores
// keep a finite log-probability; most likely first.
func scoreSpread(x float64, lo, hi int) []scoreProb {
	out := make([]scoreProb, 0, hi-lo+1)
	for s := lo; s <= hi; s++ {
		d := (float64(s) - x) / spreadSigma
		out = append(out, scoreProb{token: strconv.Itoa(s), logprob: -d * d / 2})
	}
	z := logSumExp(out, 1)
	for i := range out {
		out[i].logprob -= z
	}
	slices.SortStableFunc(out, func(a, b scoreProb) int {
		switch {
		case a.logprob > b.logprob:
			return -1
		case a.logprob < b.logprob:
			return 1
		}
		return 0
	})
	return out
}

// drawTempered draws one score from dist with its log-probabilities
// divided by the temperature.
func drawTempered(dist []scoreProb, temperature float64, rng *rand.Rand) scoreProb {
	z := logSumExp(dist, temperature)
	u := rng.Float64()
	for _, d := range dist {
		u -= math.Exp(d.logprob/temperature - z)
		if u < 0 {
			return d
		}
	}
	return dist[len(dist)-1]
}

func logSumExp(dist []scoreProb, temperature float64) float64 {
	m := math.Inf(-1)
	for _, d := range dist {
		m = math.Max(m, d.logprob/temperature)
	}
	sum := 0.0
	for _, d := range dist {
		sum += math.Exp(d.logprob/temperature - m)
	}
	return m + math.Log(sum)
}

// scoreLogprob is the OpenAI logprobs entry of the score token, with at
// most k alternatives (none when k is 0, as OpenAI does).
func scoreLogprob(pick scoreProb, dist []scoreProb, k int) tokenLogprob {
	k = min(max(k, 0), maxTopLogprobs, len(dist))
	t := tokenLogprob{Token: pick.token, Logprob: pick.logprob, Bytes: tokenBytes(pick.token), TopLogprobs: []topLogprob{}}
	for _, d := range dist[:k] {
		t.TopLogprobs = append(t.TopLogprobs, topLogprob{Token: d.token, Logprob: d.logprob, Bytes: tokenBytes(d.token)})
	}
	return t
}

// tokenBytes is a token's UTF-8 bytes, as OpenAI lists them.
func tokenBytes(s string) []int {
	out := make([]int, 0, len(s))
	for _, b := range []byte(s) {
		out = append(out, int(b))
	}
	return out
}
