package evaluator

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// batchSystemPrompt sets the judge's role for every batch call. It is short
// on purpose: the rubric and the format live in the user message, where the
// judge reads them next to the samples.
const batchSystemPrompt = "You are an impartial, experienced evaluator of text quality. " +
	"You judge samples side by side, apply the rubric the same way to every sample, " +
	"and follow the requested output format exactly."

// Section headings of the batch prompt. The simulated judge finds the parts
// of a prompt by these headings, so change them together with simjudge.
const (
	headingTask     = "# Task"
	headingCriteria = "# Criterion"
	headingSamples  = "# Samples"
	headingFormat   = "# Output format"
)

// emptyValue stands in for an empty field value, so the judge sees that the
// field is blank rather than suspecting a formatting glitch.
const emptyValue = "(empty)"

// BuildBatchPrompt builds the BatchEval prompt that asks the judge to score
// samples on criterion c: a system message and one user message holding the
// task, an instruction to compare the samples with one another, the
// criterion with its range and level descriptions, the samples labelled
// Sample1..SampleK with their fields, and the output instructions of
// s.Procedure (two-stage when unset) in s.Scoring (decimal when unset).
func BuildBatchPrompt(r Rubric, c Criterion, samples []Sample, s Settings) []Message {
	k := len(samples)
	var b strings.Builder
	// Room for the samples and the instructions around them at once: grown
	// by doubling, the builder copied the prompt several times over.
	size := 4096
	for _, smp := range samples {
		for _, f := range smp.Fields {
			size += len(f.Label) + len(f.Value) + 4
		}
		size += 16
	}
	b.Grow(size)

	b.WriteString(headingTask + "\n")
	fmt.Fprintf(&b, "You will be given a batch of %d %s. %s\n", k, plural(k, "sample", "samples"), describeSample(r.Task, k))
	if labels := fieldLabels(samples); len(labels) > 0 {
		fmt.Fprintf(&b, "Every sample shows these fields: %s.\n", strings.Join(labels, ", "))
	}
	fmt.Fprintf(&b, "Your job is to rate every sample on one criterion, %s. "+
		"Read the whole batch before you judge any sample, and compare the samples with each other, side by side: "+
		"a sample's score should reflect how it stands against the other samples in this batch as well as how well it meets the criterion. "+
		"Judge each sample on its own merits; its position in the batch means nothing.\n\n", c.Name)

	b.WriteString(headingCriteria + "\n")
	if d := strings.TrimSpace(c.Description); d != "" {
		fmt.Fprintf(&b, "%s: %s\n", c.Name, d)
	} else {
		fmt.Fprintf(&b, "%s\n", c.Name)
	}
	fmt.Fprintf(&b, "Scale: %s.\n", scaleText(c, s.Scoring))
	for _, lv := range []struct {
		at   float64
		text string
	}{{c.Lo, c.Levels.Low}, {(c.Lo + c.Hi) / 2, c.Levels.Middle}, {c.Hi, c.Levels.High}} {
		if t := strings.TrimSpace(lv.text); t != "" {
			fmt.Fprintf(&b, "- %s means %s\n", levelText(lv.at, s.Scoring), t)
		}
	}
	b.WriteString("\n")
	writeExamples(&b, c, c.Lo, c.Hi)

	b.WriteString(headingSamples + "\n")
	for i, smp := range samples {
		fmt.Fprintf(&b, "%s:\n", sampleLabel(i+1))
		for _, f := range smp.Fields {
			v := strings.TrimSpace(f.Value)
			if v == "" {
				v = emptyValue
			}
			fmt.Fprintf(&b, "%s: %s\n", f.Label, v)
		}
		b.WriteString("\n")
	}

	b.WriteString(headingFormat + "\n")
	b.WriteString(formatInstructions(c, s.Scoring, s.Procedure, k))

	return []Message{
		{Role: "system", Content: batchSystemPrompt},
		{Role: "user", Content: b.String()},
	}
}

// BuildRepairMessages continues a batch conversation whose answer lacked
// some scores: the original messages, the judge's answer, and a short
// request for ONLY the scores of the missing samples (1-based labels) in the
// score-list template, e.g. "Float Scores: [Sample3:<score>, Sample7:<score>]".
func BuildRepairMessages(original []Message, answer string, c Criterion, s Settings, missing []int) []Message {
	msgs := make([]Message, 0, len(original)+2)
	msgs = append(msgs, original...)
	msgs = append(msgs, Message{Role: "assistant", Content: answer})

	labels := make([]string, len(missing))
	for i, m := range missing {
		labels[i] = sampleLabel(m)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your answer is missing a readable, in-range score for %s. ", joinAnd(labels))
	fmt.Fprintf(&b, "Reply with ONLY the scores of %s on %s, in exactly this format and with nothing else:\n", joinAnd(labels), c.Name)
	b.WriteString(scoreTemplate(s.Scoring, missing) + "\n")
	fmt.Fprintf(&b, "Replace each <score> with %s.", scaleText(c, s.Scoring))
	return append(msgs, Message{Role: "user", Content: b.String()})
}

// charsPerToken is the usual rule of thumb for English text with GPT-style
// tokenizers. Counting bytes rather than characters makes the estimate
// roughly right for non-Latin scripts too, where one character often costs
// a token or more and takes 2-4 bytes.
const charsPerToken = 4

// tokensPerMessage covers the role name and the delimiters a chat template
// wraps around every message (OpenAI documents 3-4 for its models).
const tokensPerMessage = 4

// tokensPerReply is what chat templates add to prime the assistant's reply.
const tokensPerReply = 3

// EstimateTextTokens estimates how many tokens s costs: about one token per
// 4 bytes, rounded up. It is a heuristic for cost previews, shown as an
// estimate; the judge's own usage figures are what a run records.
func EstimateTextTokens(s string) int {
	return (len(s) + charsPerToken - 1) / charsPerToken
}

// EstimateTokens estimates the prompt tokens of a chat request: the text of
// every message by EstimateTextTokens, plus a small fixed overhead per
// message and per request for the chat template.
func EstimateTokens(msgs []Message) int {
	if len(msgs) == 0 {
		return 0
	}
	total := tokensPerReply
	for _, m := range msgs {
		total += tokensPerMessage + EstimateTextTokens(m.Role) + EstimateTextTokens(m.Content)
	}
	return total
}

// formatInstructions is the "# Output format" part for one procedure.
func formatInstructions(c Criterion, sc Scoring, p Procedure, k int) string {
	all := make([]int, k)
	for i := range all {
		all[i] = i + 1
	}
	last := sampleLabel(k)
	scale := scaleText(c, sc)
	var b strings.Builder
	switch p {
	case OneStage:
		fmt.Fprintf(&b, "Go through the samples in order, from Sample1 to %s. For each sample, start a new line with its label (e.g. \"Sample1:\"), "+
			"write a concise analysis of it on %s, and then give its score on a line of its own, exactly like this:\n", last, c.Name)
		b.WriteString("Score of Sample1: <score>\n")
		fmt.Fprintf(&b, "Replace <score> with %s. Finish one sample, score included, before you start the next.\n", scale)
	case ThreeStage:
		b.WriteString("Work in three steps.\n")
		fmt.Fprintf(&b, "Step 1, analysis: write a concise analysis of every sample on %s, in order. "+
			"Start each analysis on a new line with the sample's label (e.g. \"Sample1:\"). Give no scores in this step.\n", c.Name)
		fmt.Fprintf(&b, "Step 2, ranking: start a line with \"Ranking:\" and rank all %d samples from best to worst on %s, "+
			"one per line, each with a short reason for its place. Give no scores in this step.\n", k, c.Name)
		b.WriteString("Step 3, scores: write the scores of all samples in exactly one line, using this template:\n")
		b.WriteString(scoreTemplate(sc, all) + "\n")
		fmt.Fprintf(&b, "Replace each <score> with %s. Give a score for every sample, from Sample1 to %s.\n", scale, last)
	default: // TwoStage, the paper's best and our default
		fmt.Fprintf(&b, "First, write a concise analysis of every sample on %s, in order. "+
			"Start each analysis on a new line with the sample's label (e.g. \"Sample1:\"). "+
			"Do not give any score while you analyse.\n", c.Name)
		b.WriteString("Then, after all the analyses, write the scores of all samples in exactly one line, using this template:\n")
		b.WriteString(scoreTemplate(sc, all) + "\n")
		fmt.Fprintf(&b, "Replace each <score> with %s. Give a score for every sample, from Sample1 to %s.\n", scale, last)
	}
	return b.String()
}

// scoreTemplate is the one-line score list the judge must fill in, e.g.
// "Float Scores: [Sample1:<score>, Sample2:<score>]".
func scoreTemplate(sc Scoring, labels []int) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = sampleLabel(l) + ":<score>"
	}
	return scoreListName(sc) + ": [" + strings.Join(parts, ", ") + "]"
}

// scoreListName names the score list: "Float Scores" or "Integer Scores".
func scoreListName(sc Scoring) string {
	if sc == Integer {
		return "Integer Scores"
	}
	return "Float Scores"
}

// scaleText says what a score is, e.g. "a float score within [1, 3]".
func scaleText(c Criterion, sc Scoring) string {
	if sc == Integer {
		return fmt.Sprintf("an integer score within [%s, %s]", formatNumber(c.Lo), formatNumber(c.Hi))
	}
	return fmt.Sprintf("a float score within [%s, %s]", formatNumber(c.Lo), formatNumber(c.Hi))
}

// levelText introduces one level description, e.g. "A float score near 1".
func levelText(at float64, sc Scoring) string {
	if sc == Integer {
		if at == math.Trunc(at) {
			return "A score of " + formatNumber(at)
		}
		// The middle of an even-sized integer range is not itself a score.
		return "A score around " + formatNumber(at)
	}
	return "A float score near " + formatNumber(at)
}

// describeSample turns the rubric's task into the sentence after "You will
// be given a batch of K samples." A task written as a noun phrase ("a
// dialogue and its next response") reads "Each sample is ..."; a task
// written as full sentences is quoted as it is.
func describeSample(task string, k int) string {
	task = strings.TrimSpace(task)
	if task == "" {
		return ""
	}
	if !strings.ContainsAny(task[len(task)-1:], ".!?") {
		task += "."
	}
	first := strings.ToLower(strings.Fields(task)[0])
	r := []rune(task)
	if unicode.IsLower(r[0]) || first == "a" || first == "an" || first == "the" {
		if unicode.IsUpper(r[0]) && (first == "a" || first == "an" || first == "the") {
			task = strings.ToLower(string(r[0])) + string(r[1:])
		}
		if k == 1 {
			return "The sample is " + task
		}
		return "Each sample is " + task
	}
	return task
}

// fieldLabels lists the distinct field labels of the samples, in order of
// first appearance.
func fieldLabels(samples []Sample) []string {
	var labels []string
	seen := map[string]bool{}
	for _, s := range samples {
		for _, f := range s.Fields {
			if !seen[f.Label] {
				seen[f.Label] = true
				labels = append(labels, f.Label)
			}
		}
	}
	return labels
}

// sampleLabel is the label of the i-th sample of a batch (1-based): "Sample3".
func sampleLabel(i int) string { return "Sample" + strconv.Itoa(i) }

// formatNumber writes a number in its shortest form: 1, 2.5, 0.25.
func formatNumber(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// joinAnd joins items as English: "A", "A and B", "A, B and C".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
