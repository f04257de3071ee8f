package align

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
)

// draftSystemPrompt sets the judge's role when it is asked to improve its
// own rubric.
const draftSystemPrompt = "You help people write evaluation rubrics that a judge applies the way they would. " +
	"You answer with one JSON object and nothing else."

// BuildDraftPrompt asks the judge to rewrite criterion c's level
// descriptions and to pick labelled examples, given the calibration samples
// where its scores were furthest from the human ratings (worst, largest
// first; they are numbered Case1, Case2... in the prompt).
func BuildDraftPrompt(r evaluator.Rubric, c evaluator.Criterion, worst []Item) []evaluator.Message {
	var b strings.Builder
	b.WriteString("# Task\n")
	fmt.Fprintf(&b, "A judge scored samples (%s) on the criterion below, and people rated the same samples. "+
		"On the cases listed, the judge's score was far from the people's rating. "+
		"Rewrite the criterion's three level descriptions so that a judge reading them would score these cases as the people did, "+
		"and choose up to %d of the cases as labelled examples to show the judge.\n\n", strings.TrimSpace(r.Task), DraftExamples)
	b.WriteString("# Criterion\n")
	if d := strings.TrimSpace(c.Description); d != "" {
		fmt.Fprintf(&b, "%s: %s\n", c.Name, d)
	} else {
		fmt.Fprintf(&b, "%s\n", c.Name)
	}
	fmt.Fprintf(&b, "Scale: a score within [%g, %g].\n", c.Lo, c.Hi)
	fmt.Fprintf(&b, "Low end (%g) now reads: %s\n", c.Lo, orNone(c.Levels.Low))
	fmt.Fprintf(&b, "Middle (%g) now reads: %s\n", (c.Lo+c.Hi)/2, orNone(c.Levels.Middle))
	fmt.Fprintf(&b, "High end (%g) now reads: %s\n\n", c.Hi, orNone(c.Levels.High))
	b.WriteString("# Cases\n")
	for i, it := range worst {
		fmt.Fprintf(&b, "Case%d (judge %s, people %s):\n", i+1, fmtScore(it.Judge), fmtScore(it.Human))
		for _, f := range it.Fields {
			v := strings.TrimSpace(f.Value)
			if v == "" {
				v = "(empty)"
			}
			fmt.Fprintf(&b, "%s: %s\n", f.Label, v)
		}
		b.WriteString("\n")
	}
	b.WriteString("# Output format\n")
	b.WriteString(`Answer with exactly one JSON object, no code fence and no explanation outside it:` + "\n")
	b.WriteString(`{"low": "<new low-end description>", "middle": "<new middle description>", "high": "<new high-end description>", ` +
		`"examples": [{"case": <case number>, "reason": "<one sentence: why the people's rating is right>"}], "notes": "<one sentence on what you changed>"}` + "\n")
	b.WriteString("Each example's score is the people's rating of that case; do not invent cases.\n")
	return []evaluator.Message{{Role: "system", Content: draftSystemPrompt}, {Role: "user", Content: b.String()}}
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no description)"
	}
	return strings.TrimSpace(s)
}

// draftAnswer is the JSON the judge is asked for. Case is read leniently:
// a number, a numeric string or "Case3".
type draftAnswer struct {
	Low      string `json:"low"`
	Middle   string `json:"middle"`
	High     string `json:"high"`
	Examples []struct {
		Case   json.RawMessage `json:"case"`
		Reason string          `json:"reason"`
	} `json:"examples"`
	Notes string `json:"notes"`
}

// ParseDraft reads the judge's answer to BuildDraftPrompt. It finds the
// JSON object even inside a code fence or prose, keeps c's current wording
// for any level the answer leaves out, takes each example's score from the
// people's rating of its case (never from the judge), drops cases that do
// not exist or repeat, and keeps at most DraftExamples. It fails only when
// there is no readable object or it changes nothing at all.
func ParseDraft(text string, c evaluator.Criterion, worst []Item) (Draft, error) {
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return Draft{}, errors.New("the answer holds no JSON object")
	}
	var a draftAnswer
	if err := json.Unmarshal([]byte(text[start:end+1]), &a); err != nil {
		return Draft{}, fmt.Errorf("the answer's JSON object could not be read: %v", err)
	}
	d := Draft{Levels: c.Levels, Notes: strings.TrimSpace(a.Notes)}
	for _, lv := range []struct {
		got string
		dst *string
	}{{a.Low, &d.Levels.Low}, {a.Middle, &d.Levels.Middle}, {a.High, &d.Levels.High}} {
		if t := strings.TrimSpace(lv.got); t != "" {
			*lv.dst = t
		}
	}
	used := map[int]bool{}
	for _, ex := range a.Examples {
		k, ok := caseNumber(ex.Case)
		if !ok || k < 1 || k > len(worst) || used[k] || len(d.Examples) >= DraftExamples {
			continue
		}
		used[k] = true
		it := worst[k-1]
		d.Examples = append(d.Examples, evaluator.Example{SampleID: it.SampleID, Fields: it.Fields, Score: it.Human,
			Reason: strings.TrimSpace(ex.Reason)})
	}
	if d.Levels == c.Levels && len(d.Examples) == 0 {
		return Draft{}, errors.New("the answer changes no level description and picks no example")
	}
	if d.Notes == "" {
		d.Notes = "Drafted by the judge from the largest disagreements of the calibration part."
	}
	return d, nil
}

// caseNumber reads 3, "3" or "Case3" (any case, spaces allowed).
func caseNumber(raw json.RawMessage) (int, bool) {
	var f float64
	if json.Unmarshal(raw, &f) == nil && f == math.Trunc(f) {
		return int(f), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	s = strings.TrimSpace(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "case"))
	n, err := strconv.Atoi(s)
	return n, err == nil
}
