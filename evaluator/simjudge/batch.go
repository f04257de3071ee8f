package simjudge

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/batcheval/batcheval/evaluator"
)

// The markers below are the wording of evaluator.BuildBatchPrompt and
// evaluator.BuildRepairMessages; the tests send real prompts built by those
// functions, so a change of wording there fails here first.
const (
	samplesHeading = "# Samples\n"
	formatHeading  = "# Output format\n"
	fieldsIntro    = "Every sample shows these fields: "
	emptyValue     = "(empty)"
	repairMarker   = "Reply with ONLY the scores of"
)

var (
	scaleRE       = regexp.MustCompile(`\b(float|integer) score within \[([^,\]]+), ([^\]]+)\]`)
	criterionRE   = regexp.MustCompile(`(?m)^Your job is to rate every sample on one criterion, (.*?)\. Read the whole batch`)
	fieldsRE      = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(fieldsIntro) + `(.*)\.$`)
	sampleHeadRE  = regexp.MustCompile(`(?m)^Sample(\d+):$`)
	templateLabel = regexp.MustCompile(`Sample(\d+):<score>`)
)

// batchPrompt is what the simulated judge reads from a batch prompt.
type batchPrompt struct {
	criterion string
	lo, hi    float64
	integer   bool
	procedure evaluator.Procedure
	samples   [][]evaluator.Text // samples[i] is Sample(i+1)'s fields
	text      string             // the samples section, which seeds the noise
}

// parseBatchPrompt reads a user message written by BuildBatchPrompt.
func parseBatchPrompt(content string) (*batchPrompt, bool) {
	si := strings.Index(content, "\n"+samplesHeading)
	fi := strings.LastIndex(content, "\n"+formatHeading)
	if si < 0 || fi < si {
		return nil, false
	}
	head, section, format := content[:si], content[si+1+len(samplesHeading):fi], content[fi:]
	m := scaleRE.FindStringSubmatch(head)
	if m == nil {
		return nil, false
	}
	lo, err1 := strconv.ParseFloat(m[2], 64)
	hi, err2 := strconv.ParseFloat(m[3], 64)
	if err1 != nil || err2 != nil || !(lo < hi) {
		return nil, false
	}
	p := &batchPrompt{lo: lo, hi: hi, integer: m[1] == "integer", text: section, procedure: evaluator.TwoStage}
	if cm := criterionRE.FindStringSubmatch(head); cm != nil {
		p.criterion = cm[1]
	}
	switch {
	case strings.Contains(format, "Score of Sample1:"):
		p.procedure = evaluator.OneStage
	case strings.Contains(format, `"Ranking:"`):
		p.procedure = evaluator.ThreeStage
	}
	var labels []string
	if fm := fieldsRE.FindStringSubmatch(head); fm != nil {
		labels = strings.Split(fm[1], ", ")
	}
	heads := sampleHeadRE.FindAllStringSubmatchIndex(section, -1)
	for i, h := range heads {
		if n, err := strconv.Atoi(section[h[2]:h[3]]); err != nil || n != i+1 {
			return nil, false // labels must run Sample1, Sample2, ... in order
		}
		end := len(section)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		p.samples = append(p.samples, splitFields(section[h[1]:end], labels))
	}
	if len(p.samples) == 0 {
		return nil, false
	}
	return p, true
}

// splitFields splits one sample block into its "<Label>: <Value>" fields.
// A line starting with a known label opens a field; other lines continue
// the current one (values may span lines).
func splitFields(block string, labels []string) []evaluator.Text {
	var fields []evaluator.Text
	for _, line := range strings.Split(strings.Trim(block, "\n"), "\n") {
		opened := false
		for _, l := range labels {
			if v, ok := strings.CutPrefix(line, l+": "); ok {
				fields = append(fields, evaluator.Text{Label: l, Value: v})
				opened = true
				break
			}
		}
		switch {
		case opened:
		case len(fields) == 0:
			fields = append(fields, evaluator.Text{Label: "Text", Value: line})
		default:
			fields[len(fields)-1].Value += "\n" + line
		}
	}
	for i := range fields {
		fields[i].Value = strings.TrimSpace(fields[i].Value)
		if fields[i].Value == emptyValue {
			fields[i].Value = ""
		}
	}
	return fields
}

// matchBatch answers a batch prompt in the format it asks for.
func matchBatch(c *call) (answerFunc, bool) {
	last := c.Messages[len(c.Messages)-1]
	if last.Role != "user" {
		return nil, false
	}
	p, ok := parseBatchPrompt(last.Content)
	if !ok {
		return nil, false
	}
	return func(choice int) reply { return reply{Content: writeBatchAnswer(c, p, choice)} }, true
}

// matchRepair answers a repair request with only the requested scores.
func matchRepair(c *call) (answerFunc, bool) {
	last := c.Messages[len(c.Messages)-1]
	if last.Role != "user" || !strings.Contains(last.Content, repairMarker) {
		return nil, false
	}
	var p *batchPrompt
	for _, m := range c.Messages[:len(c.Messages)-1] {
		if q, ok := parseBatchPrompt(m.Content); ok && m.Role == "user" {
			p = q
			break
		}
	}
	if p == nil {
		return nil, false
	}
	var labels []int
	for _, m := range templateLabel.FindAllStringSubmatch(last.Content, -1) {
		if l, err := strconv.Atoi(m[1]); err == nil && l >= 1 && l <= len(p.samples) && !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	return func(choice int) reply {
		parts := make([]string, len(labels))
		for i, l := range labels {
			parts[i] = fmt.Sprintf("Sample%d:%s", l, formatScore(p, judge(c, p, l-1, choice).score))
		}
		return reply{Content: scoreListName(p) + ": [" + strings.Join(parts, ", ") + "]"}
	}, true
}

// verdict is the simulated judgement of one sample.
type verdict struct {
	feat  features
	score float64 // on the criterion's scale, noise included
	omit  bool    // leave the score out (Options.MissRate)
}

// judge scores sample i of p for choice number choice.
func judge(c *call, p *batchPrompt, i, choice int) verdict {
	f := measure(p.samples[i])
	w := weightsFor(p.criterion)
	q := 0.0
	for k := range f.values {
		q += w[k] * f.values[k]
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%x|%d|%d|", math.Float64bits(c.Temperature), choice, i)
	for _, t := range p.samples[i] {
		fmt.Fprintf(h, "%s\x00%s\x00", t.Label, t.Value)
	}
	h.Write([]byte(p.text))
	rng := rand.New(rand.NewPCG(uint64(c.Seed), h.Sum64()))
	span := p.hi - p.lo
	x := p.lo + q*span + rng.NormFloat64()*c.opts.Noise*span
	v := verdict{feat: f, omit: rng.Float64() < c.opts.MissRate}
	if p.integer {
		x = math.Round(x)
		v.score = math.Min(math.Max(x, math.Ceil(p.lo)), math.Floor(p.hi))
	} else {
		x = math.Round(x*10) / 10 // judges write one decimal
		v.score = math.Min(math.Max(x, p.lo), p.hi)
	}
	return v
}

// writeBatchAnswer writes the whole answer to a batch prompt.
func writeBatchAnswer(c *call, p *batchPrompt, choice int) string {
	vs := make([]verdict, len(p.samples))
	for i := range vs {
		vs[i] = judge(c, p, i, choice)
	}
	var b strings.Builder
	b.WriteString("(Simulated judge: these analyses and scores are computed from word counts, lexical variety, " +
		"questions and word overlap. No language model read the samples.)\n\n")
	switch p.procedure {
	case evaluator.OneStage:
		for i, v := range vs {
			fmt.Fprintf(&b, "Sample%d:\n%s\n", i+1, analysis(p, i, v))
			if !v.omit {
				fmt.Fprintf(&b, "Score of Sample%d: %s\n", i+1, formatScore(p, v.score))
			}
			b.WriteString("\n")
		}
		return strings.TrimRight(b.String(), "\n")
	case evaluator.ThreeStage:
		b.WriteString("Step 1: Analysis\n")
		writeAnalyses(&b, p, vs)
		b.WriteString("Step 2: Ranking\nRanking:\n")
		order := make([]int, len(vs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(x, y int) int {
			if vs[x].score != vs[y].score {
				if vs[x].score > vs[y].score {
					return -1
				}
				return 1
			}
			return 0
		})
		for r, i := range order {
			fmt.Fprintf(&b, "%d. Sample%d - %s; %s\n", r+1, i+1, band((vs[i].score-p.lo)/(p.hi-p.lo)), reason(vs[i].feat, p.criterion))
		}
		b.WriteString("\nStep 3: Scores\n")
	default:
		writeAnalyses(&b, p, vs)
	}
	var parts []string
	for i, v := range vs {
		if !v.omit {
			parts = append(parts, fmt.Sprintf("Sample%d:%s", i+1, formatScore(p, v.score)))
		}
	}
	b.WriteString(scoreListName(p) + ": [" + strings.Join(parts, ", ") + "]")
	return b.String()
}

func writeAnalyses(b *strings.Builder, p *batchPrompt, vs []verdict) {
	for i, v := range vs {
		fmt.Fprintf(b, "Sample%d: %s\n\n", i+1, analysis(p, i, v))
	}
}

// analysis names the features behind a sample's score, without the score.
func analysis(p *batchPrompt, i int, v verdict) string {
	fields := p.samples[i]
	what := "text"
	if len(fields) > 0 {
		what = strings.ToLower(fields[len(fields)-1].Label)
	}
	f := v.feat
	if f.words == 0 {
		return fmt.Sprintf("The %s is empty, so every feature is at its minimum.", what)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The %s has %d %s (length %.2f), %d of them distinct (variety %.2f), and asks %d %s (questions %.2f).",
		what, f.words, plural(f.words, "word", "words"), f.values[featLength], f.distinct, f.values[featVariety],
		f.questions, plural(f.questions, "question", "questions"), f.values[featQuestions])
	if len(fields) > 1 {
		fmt.Fprintf(&b, " %.0f%% of its content words also appear in the %s (overlap %.2f).",
			100*f.values[featOverlap], strings.ToLower(fields[len(fields)-2].Label), f.values[featOverlap])
	}
	name := p.criterion
	if name == "" {
		name = "the criterion"
	}
	// The band follows the final score, noise included, so that the words
	// never contradict the number.
	fmt.Fprintf(&b, " On %s that makes it %s.", name, band((v.score-p.lo)/(p.hi-p.lo)))
	return b.String()
}

// reason names the feature that helped a sample most, for its ranking line.
func reason(f features, criterion string) string {
	w := weightsFor(criterion)
	best := 0
	for k := range f.values {
		if w[k]*f.values[k] > w[best]*f.values[best] {
			best = k
		}
	}
	if f.words == 0 {
		return "it is empty"
	}
	return fmt.Sprintf("its best feature is %s (%.2f)", featureNames[best], f.values[best])
}

// band puts a position in the score range, in [0, 1], into words. The
// thirds match the low, middle and high level descriptions of a criterion.
func band(q float64) string {
	switch {
	case q >= 2.0/3:
		return "one of the stronger samples"
	case q >= 1.0/3:
		return "a middling sample"
	default:
		return "one of the weaker samples"
	}
}

func scoreListName(p *batchPrompt) string {
	if p.integer {
		return "Integer Scores"
	}
	return "Float Scores"
}

// formatScore writes a score as a judge would: "2", or "2.4" and "2.0".
func formatScore(p *batchPrompt, v float64) string {
	if p.integer {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	if v == math.Round(v*10)/10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64) // a range end with more decimals
}

// Feature indexes into features.values and weights.
const (
	featLength = iota
	featVariety
	featQuestions
	featOverlap
	numFeatures
)

var featureNames = [numFeatures]string{"length", "variety", "questions", "overlap"}

const (
	// lengthSaturation is the word count at which the length feature
	// reaches 1: about a full, substantial chat turn or a short summary.
	lengthSaturation = 40
	// varietyMinWords damps variety for shorter texts, whose distinct/total
	// ratio is trivially near 1.
	varietyMinWords = 8
	// questionSaturation is the number of question marks worth full credit.
	questionSaturation = 2
	// contentWordLen is the shortest word counted for overlap; shorter
	// words are mostly function words ("the", "and", "you").
	contentWordLen = 4
	// noContextOverlap is the overlap of a single-field sample: neutral.
	noContextOverlap = 0.5
)

// features are the measurements of a sample's last field.
type features struct {
	words, distinct, questions int
	values                     [numFeatures]float64
}

// measure computes the features of a sample from its last field, against
// the fields before it.
func measure(fields []evaluator.Text) features {
	var f features
	if len(fields) == 0 {
		return f
	}
	target := fields[len(fields)-1].Value
	words := tokenize(target)
	f.words = len(words)
	f.questions = strings.Count(target, "?")
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	f.distinct = len(seen)
	if f.words > 0 {
		f.values[featLength] = math.Min(1, math.Log1p(float64(f.words))/math.Log1p(lengthSaturation))
		f.values[featVariety] = float64(f.distinct) / float64(f.words) * math.Min(1, float64(f.words)/varietyMinWords)
	}
	f.values[featQuestions] = math.Min(1, float64(f.questions)/questionSaturation)

	if len(fields) == 1 {
		f.values[featOverlap] = noContextOverlap
		return f
	}
	earlier := map[string]bool{}
	for _, t := range fields[:len(fields)-1] {
		for _, w := range tokenize(t.Value) {
			earlier[w] = true
		}
	}
	content, shared := 0, 0
	for w := range seen {
		if len([]rune(w)) >= contentWordLen {
			content++
			if earlier[w] {
				shared++
			}
		}
	}
	if content > 0 {
		f.values[featOverlap] = float64(shared) / float64(content)
	}
	return f
}

// weightsFor picks feature weights (summing to 1) from the criterion's name.
// The keyword lists are deliberately simple; the point is that different
// criteria rank samples differently, not that the ranking is right.
func weightsFor(criterion string) [numFeatures]float64 {
	name := strings.ToLower(criterion)
	has := func(words ...string) bool {
		return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(name, w) })
	}
	switch {
	case has("engag", "interest", "likeab", "inquisit"):
		return [numFeatures]float64{0.30, 0.25, 0.35, 0.10}
	case has("coheren", "relevan", "understand", "consisten", "context", "topic", "factual", "faithful"):
		return [numFeatures]float64{0.15, 0.15, 0.05, 0.65}
	case has("natural", "fluen", "grammar", "readab"):
		return [numFeatures]float64{0.30, 0.50, 0.05, 0.15}
	default:
		return [numFeatures]float64{0.35, 0.25, 0.15, 0.25}
	}
}

// tokenize lower-cases s and splits it into words of letters and digits.
func tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
