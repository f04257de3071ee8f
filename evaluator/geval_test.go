package evaluator

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestGEvalScores(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float64
		want   string
	}{
		{"1 to 3", 1, 3, "[1 2 3]"},
		{"fractional ends round inwards", 0.5, 3.2, "[1 2 3]"},
		{"negative range", -2, 2, "[-2 -1 0 1 2]"},
		{"one integer only", 1.5, 2.5, "[2]"},
		{"no integer", 0.2, 0.8, "[]"},
		{"too many to list", 0, 1e9, "[]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(GEvalScores(Criterion{Lo: tt.lo, Hi: tt.hi})); got != tt.want {
			t.Errorf("%s: GEvalScores = %s, want %s", tt.name, got, tt.want)
		}
	}
}

const gevalSteps = "1. Read the conversation and the response.\n2. Check whether the response adds something new.\n3. Give 1, 2 or 3."

func TestBuildGEvalPromptsGolden(t *testing.T) {
	r, c := dialogueRubric()
	checkGolden(t, "prompt_geval_steps.golden", renderMessages(BuildGEvalStepsPrompt(r, c)))
	checkGolden(t, "prompt_geval_form.golden", renderMessages(BuildGEvalFormPrompt(r, c, gevalSteps, dialogueSamples()[0])))
}

func TestBuildGEvalPromptsContent(t *testing.T) {
	r, c := dialogueRubric()
	wide := c
	wide.Lo, wide.Hi = 1, 5
	tests := []struct {
		name    string
		msgs    []Message
		want    []string
		notWant []string
		suffix  string
	}{
		{"steps", BuildGEvalStepsPrompt(r, c),
			[]string{`"Evaluation Steps:"`, "numbered steps", "one criterion, Engagingness", "an integer score from 1 to 3",
				"A score of 2 means", "Conversation history, Response"},
			[]string{"# Sample\n", "Evaluation Form"}, ""},
		{"form", BuildGEvalFormPrompt(r, wide, gevalSteps, dialogueSamples()[2]),
			[]string{"# Evaluation steps\n" + gevalSteps, "an integer score from 1 to 5", "A score of 3 means",
				"# Sample\n", "Response: (empty)", "one integer from 1 to 5"},
			[]string{"float", "Sample1"}, "Evaluation Form (scores ONLY):\n- Engagingness:"},
		{"form without steps", BuildGEvalFormPrompt(r, c, "  ", dialogueSamples()[1]),
			[]string{"Response: ok"}, []string{"# Evaluation steps", "following the evaluation steps"}, "- Engagingness:"},
	}
	for _, tt := range tests {
		if len(tt.msgs) != 2 || tt.msgs[0].Role != "system" || tt.msgs[1].Role != "user" {
			t.Errorf("%s: want a system and a user message, got %d messages", tt.name, len(tt.msgs))
			continue
		}
		user := tt.msgs[1].Content
		for _, w := range tt.want {
			if !strings.Contains(user, w) {
				t.Errorf("%s: prompt lacks %q", tt.name, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(user, w) {
				t.Errorf("%s: prompt should not contain %q", tt.name, w)
			}
		}
		if !strings.HasSuffix(user, tt.suffix) {
			t.Errorf("%s: prompt should end with %q, ends with %q", tt.name, tt.suffix, user[max(0, len(user)-60):])
		}
	}
}

func TestParseGEvalSteps(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    string
		wantErr bool
	}{
		{"plain", "Evaluation Steps:\n1. Read it.\n2. Judge it.\n3. Score it.", "1. Read it.\n2. Judge it.\n3. Score it.", false},
		{"preamble, markdown, wrapped line and trailing chat",
			"Sure! Here you go.\n\n**Evaluation Steps:**\n\n1) **Read** the response\n   and the context.\n2) Check the topic.\n\nLet me know if you need more.",
			"1. Read the response and the context.\n2. Check the topic.", false},
		{"step labels renumbered", "Evaluation steps:\nStep 1: Read.\nStep 3 - Rate.", "1. Read.\n2. Rate.", false},
		{"the last titled list wins", "Evaluation Steps: below.\nEvaluation Steps:\n1. Only this.", "1. Only this.", false},
		{"title on the same line as the first step", "Evaluation Steps: 1. Read. \n2. Rate.", "1. Read.\n2. Rate.", false},
		{"no title, numbered list", "1. Read.\n2. Rate.", "1. Read.\n2. Rate.", false},
		{"bullets when there are no numbers", "Evaluation Steps:\n- Read.\n- Rate.", "1. Read.\n2. Rate.", false},
		{"sub-bullets continue a numbered step", "Evaluation Steps:\n1. Read:\n   - the context\n2. Rate.", "1. Read: the context\n2. Rate.", false},
		{"no list at all", "I think the response is engaging.", "", true},
		{"title but nothing after it", "Evaluation Steps:\n", "", true},
		{"empty", "", "", true},
	}
	for _, tt := range tests {
		got, err := ParseGEvalSteps(tt.text)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// formatEstimate renders an estimate compactly: "2.2 [1:0.1 2:0.6 3:0.3] logprobs 1/1",
// or "- logprobs 0/1: <problem>".
func formatEstimate(e GEvalEstimate) string {
	if e.Score == nil {
		return fmt.Sprintf("- %s %d/%d: %s", e.Source, e.Used, e.Total, e.Problem)
	}
	keys := make([]int, 0, len(e.Probs))
	for k := range e.Probs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d:%.3g", k, e.Probs[k])
	}
	return fmt.Sprintf("%.3g [%s] %s %d/%d", *e.Score, strings.Join(parts, " "), e.Source, e.Used, e.Total)
}

func TestGEvalFromLogprobs(t *testing.T) {
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	ln := math.Log
	tests := []struct {
		name   string
		tokens []TokenAlternatives
		c      Criterion
		want   string
	}{
		{"one position, all scores", []TokenAlternatives{
			{Token: "2", Logprob: ln(0.6), Top: []TokenProb{{"2", ln(0.6)}, {"3", ln(0.3)}, {"1", ln(0.1)}}},
		}, c13, "2.2 [1:0.1 2:0.6 3:0.3] logprobs 1/1"},
		{"renormalised over allowed scores; spaced tokens add up", []TokenAlternatives{
			{Token: "3", Logprob: ln(0.4), Top: []TokenProb{{"3", ln(0.4)}, {" 3", ln(0.1)}, {"\n", ln(0.3)}, {"1", ln(0.2)}, {"7", ln(0.1)}}},
		}, c13, "2.43 [1:0.286 2:0 3:0.714] logprobs 1/1"},
		{"generated token missing from top list still counts", []TokenAlternatives{
			{Token: "1", Logprob: ln(0.5), Top: []TokenProb{{"2", ln(0.5)}}},
		}, c13, "1.5 [1:0.5 2:0.5 3:0] logprobs 1/1"},
		{"the generated score wins over an earlier faint alternative", []TokenAlternatives{
			{Token: "Co", Logprob: ln(0.9), Top: []TokenProb{{"Co", ln(0.9)}, {"1", ln(0.01)}}},
			{Token: "herence", Logprob: 0},
			{Token: ":", Logprob: 0},
			{Token: " 3", Logprob: ln(0.8), Top: []TokenProb{{" 3", ln(0.8)}, {" 2", ln(0.2)}}},
		}, c13, "2.8 [1:0 2:0.2 3:0.8] logprobs 1/1"},
		{"no generated number: the alternatives of a word are not read", []TokenAlternatives{
			{Token: "Three", Logprob: ln(0.5), Top: []TokenProb{{"Three", ln(0.5)}, {"3", ln(0.25)}, {"2", ln(0.25)}}},
		}, c13, "- logprobs 0/1: no generated token is a number, so the score's position is unknown (expected an integer from 1 to 3)"},
		// Regression: "Score: 4" on a 1-3 scale was read from the "Score"
		// token's alternatives and gave 2.0 with p = 1.
		{"out-of-range generated score: only its own position, too little mass", []TokenAlternatives{
			{Token: "Score", Logprob: ln(0.9), Top: []TokenProb{{"Score", ln(0.9)}, {"2", ln(0.05)}}},
			{Token: ":", Logprob: 0, Top: []TokenProb{{":", 0}}},
			{Token: " 4", Logprob: ln(0.7), Top: []TokenProb{{" 4", ln(0.7)}, {" 3", ln(0.2)}, {" 2", ln(0.1)}}},
		}, c13, "- logprobs 0/1: the judge wrote \"4\", not an allowed score, and gave the allowed scores (1 to 3) only 0.300 of the probability at that position (at least 0.50 needed)"},
		{"out-of-range generated score with enough mass on allowed scores", []TokenAlternatives{
			{Token: "Score", Logprob: ln(0.9), Top: []TokenProb{{"Score", ln(0.9)}, {"1", ln(0.05)}}},
			{Token: " 4", Logprob: ln(0.3), Top: []TokenProb{{" 3", ln(0.6)}, {" 4", ln(0.3)}, {" 2", ln(0.1)}}},
		}, c13, "2.86 [1:0 2:0.143 3:0.857] logprobs 1/1"},
		{"negative range", []TokenAlternatives{
			{Token: "-1", Logprob: ln(0.5), Top: []TokenProb{{"-1", ln(0.5)}, {"1", ln(0.5)}}},
		}, Criterion{Name: "Sentiment", Lo: -1, Hi: 1}, "0 [-1:0.5 0:0 1:0.5] logprobs 1/1"},
		// Regression: a score out of another maximum was read as on the
		// form's scale ("2/5" on 1 to 3 gave about 2).
		{"a score out of another maximum is no score", []TokenAlternatives{
			{Token: "Coherence", Logprob: 0},
			{Token: ":", Logprob: 0},
			{Token: " 2", Logprob: ln(0.8), Top: []TokenProb{{" 2", ln(0.8)}, {" 3", ln(0.2)}}},
			{Token: "/", Logprob: 0},
			{Token: "5", Logprob: 0},
		}, c13, "- logprobs 0/1: the judge's answer \"2/5\" is a score out of 5, not on the scale [1, 3]"},
		{"a score out of the form's maximum is read", []TokenAlternatives{
			{Token: " 2", Logprob: ln(0.8), Top: []TokenProb{{" 2", ln(0.8)}, {" 3", ln(0.2)}}},
			{Token: "/", Logprob: 0},
			{Token: "3", Logprob: 0},
		}, c13, "2.2 [1:0 2:0.8 3:0.2] logprobs 1/1"},
		{"no numeric token", []TokenAlternatives{
			{Token: "Good", Logprob: ln(0.7), Top: []TokenProb{{"Good", ln(0.7)}, {"Fine", ln(0.2)}}},
		}, c13, "- logprobs 0/1: no generated token is a number, so the score's position is unknown (expected an integer from 1 to 3)"},
		{"only out-of-range numbers", []TokenAlternatives{
			{Token: "4", Logprob: ln(0.7), Top: []TokenProb{{"4", ln(0.7)}, {"0", ln(0.2)}, {"2.5", ln(0.1)}}},
		}, c13, "- logprobs 0/1: the judge wrote \"4\" and gave the allowed scores (1 to 3) no probability at that position"},
		// Regression: top_logprobs: [] used to become greedy scoring
		// labelled "logprobs".
		{"empty top_logprobs is no logprobs", []TokenAlternatives{{Token: "2", Logprob: 0, Top: []TokenProb{}}}, c13,
			"- logprobs 0/1: the answer came without token log-probabilities (the endpoint may not support logprobs)"},
		// Regression: the score was read at the first generated number,
		// the "1" of an echoed scale.
		{"the scale echoed before the score", []TokenAlternatives{
			{Token: "Co", Logprob: 0}, {Token: "herence", Logprob: 0}, {Token: " (", Logprob: 0},
			{Token: "1", Logprob: 0, Top: []TokenProb{{"1", 0}}},
			{Token: "-", Logprob: 0}, {Token: "3", Logprob: 0, Top: []TokenProb{{"3", 0}}}, {Token: "):", Logprob: 0},
			{Token: " 2", Logprob: ln(0.7), Top: []TokenProb{{" 2", ln(0.7)}, {" 3", ln(0.3)}}},
		}, c13, "2.3 [1:0 2:0.7 3:0.3] logprobs 1/1"},
		{"numbered steps echoed before the score", []TokenAlternatives{
			{Token: "1", Logprob: 0, Top: []TokenProb{{"1", 0}}}, {Token: ". Read it.\n", Logprob: 0},
			{Token: "2", Logprob: 0, Top: []TokenProb{{"2", 0}}}, {Token: ". Rate it.\nScore:", Logprob: 0},
			{Token: " 3", Logprob: ln(0.5), Top: []TokenProb{{" 3", ln(0.5)}, {" 1", ln(0.5)}}},
		}, c13, "2 [1:0.5 2:0 3:0.5] logprobs 1/1"},
		{"only a range", []TokenAlternatives{
			{Token: "1", Logprob: 0, Top: []TokenProb{{"1", 0}}}, {Token: " to ", Logprob: 0}, {Token: "3", Logprob: 0, Top: []TokenProb{{"3", 0}}},
		}, c13, "- logprobs 0/1: the only numbers the judge wrote are the ends of a range (such as \"1-5\"), so the score's position is unknown (expected an integer from 1 to 3)"},
		// Regression (fix-parse28): the first of two different scores for
		// the criterion was read; which one is meant cannot be told.
		{"two different scores for the criterion", []TokenAlternatives{
			{Token: "Coherence", Logprob: 0}, {Token: ":", Logprob: 0},
			{Token: " 2", Logprob: ln(0.7), Top: []TokenProb{{" 2", ln(0.7)}, {" 3", ln(0.3)}}},
			{Token: "\nCoherence", Logprob: 0}, {Token: ":", Logprob: 0}, {Token: " 3", Logprob: 0, Top: []TokenProb{{" 3", 0}}},
		}, c13, "- logprobs 0/1: the judge's answer gives 2 different scores (2, 3); none kept"},
		{"one score written twice", []TokenAlternatives{
			{Token: "Coherence", Logprob: 0}, {Token: ":", Logprob: 0},
			{Token: " 2", Logprob: ln(0.7), Top: []TokenProb{{" 2", ln(0.7)}, {" 3", ln(0.3)}}},
			{Token: "\nScore", Logprob: 0}, {Token: ":", Logprob: 0}, {Token: " 3", Logprob: 0, Top: []TokenProb{{" 3", 0}}},
			{Token: "\nCoherence", Logprob: 0}, {Token: ":", Logprob: 0}, {Token: " 2", Logprob: 0, Top: []TokenProb{{" 2", 0}}},
		}, c13, "2.3 [1:0 2:0.7 3:0.3] logprobs 1/1"},
		// Regression (fix-parse28): with the minus as a token of its own
		// ("-", "2"), "-2" was read from the "2" token's alternatives as
		// 2 and 1. Now the minus's position gives p(minus) and the scores
		// written without one; the next, the digits after the minus.
		{"the minus sign as a token of its own", []TokenAlternatives{
			{Token: "Sentiment", Logprob: 0}, {Token: ":", Logprob: 0},
			{Token: " -", Logprob: ln(0.6), Top: []TokenProb{{" -", ln(0.6)}, {" 1", ln(0.3)}, {" 0", ln(0.1)}}},
			{Token: "2", Logprob: ln(0.7), Top: []TokenProb{{"2", ln(0.7)}, {"1", ln(0.3)}}},
		}, Criterion{Name: "Sentiment", Lo: -2, Hi: 2}, "-0.72 [-2:0.42 -1:0.18 0:0.1 1:0.3 2:0] logprobs 1/1"},
		{"the minus sign glued to other text", []TokenAlternatives{
			{Token: "Sentiment", Logprob: 0}, {Token: ": -", Logprob: 0},
			{Token: "2", Logprob: ln(0.7), Top: []TokenProb{{"2", ln(0.7)}, {"1", ln(0.3)}}},
		}, Criterion{Name: "Sentiment", Lo: -2, Hi: 2}, "- logprobs 0/1: the judge wrote the score's minus sign in one token with other text (\": -\"), so the probabilities of the scores cannot be read from the log-probabilities (sampling can)"},
		{"a split minus on a scale without negatives", []TokenAlternatives{
			{Token: "-", Logprob: ln(0.9), Top: []TokenProb{{"-", ln(0.9)}, {"1", ln(0.1)}}},
			{Token: "2", Logprob: 0, Top: []TokenProb{{"2", 0}}},
		}, c13, "- logprobs 0/1: the judge wrote \"-2\", not an allowed score, and gave the allowed scores (1 to 3) only 0.100 of the probability at that position (at least 0.50 needed)"},
		{"a list of numbers", []TokenAlternatives{
			{Token: "[", Logprob: 0}, {Token: "-1", Logprob: 0, Top: []TokenProb{{"-1", 0}}}, {Token: ", 0, 2]", Logprob: 0},
		}, Criterion{Name: "Sentiment", Lo: -2, Hi: 2}, "- logprobs 0/1: the judge's answer \"[-1, 0, 2]\" is a list of numbers, not one score"},
		{"no logprobs at all", nil, c13,
			"- logprobs 0/1: the answer came without token log-probabilities (the endpoint may not support logprobs)"},
		{"range without integers", []TokenAlternatives{{Token: "1", Top: []TokenProb{{"1", 0}}}}, Criterion{Name: "X", Lo: 0.2, Hi: 0.8},
			"- logprobs 0/1: the range [0.2, 0.8] of X holds no integer score a G-Eval form could use (or too many to list)"},
	}
	for _, tt := range tests {
		got := GEvalFromLogprobs(tt.tokens, tt.c, 0)
		if s := formatEstimate(got); s != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, s, tt.want)
		}
		if got.Score != nil {
			sum := 0.0
			for _, p := range got.Probs {
				sum += p
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("%s: probabilities sum to %g", tt.name, sum)
			}
		}
	}
}

func TestGEvalFromSamples(t *testing.T) {
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	tests := []struct {
		name  string
		texts []string
		c     Criterion
		want  string
	}{
		{"bare integers", []string{"3", "2", "2", "3"}, c13, "2.5 [1:0 2:0.5 3:0.5] samples 4/4"},
		{"tolerated forms", []string{"Coherence: 3", "- Coherence: 2", "3/3", "**Coherence**: 1", " 2\n", "Coherence (1-3): 2", "2.0"}, c13,
			"2.14 [1:0.143 2:0.571 3:0.286] samples 7/7"},
		// Regression: a score out of another maximum was counted as if on
		// the form's scale ("3/5" on 1 to 3 counted as a 3, the top), and
		// a choice as its first number.
		{"a score out of another maximum or a choice is no score", []string{"3/5", "Coherence: 2 out of 5", "Coherence: 2 or 3", "2", "Coherence: 3 / 3", "1 out of 3"}, c13,
			"2 [1:0.333 2:0.333 3:0.333] samples 3/6"},
		{"unusable answers do not count", []string{"3", "7", "2.5", "I cannot rate this.", "", "0", "Coherence: high"}, c13,
			"3 [1:0 2:0 3:1] samples 1/7"},
		{"negative range", []string{"-2", "Sentiment: -1", "2"}, Criterion{Name: "Sentiment", Lo: -2, Hi: 2},
			"-0.333 [-2:0.333 -1:0.333 0:0 1:0 2:0.333] samples 3/3"},
		// Regression (fix-parse28): the first of two different scores for
		// the criterion was counted.
		{"an answer with two different scores does not count", []string{"Coherence: 2\nCoherence: 3", "Score: 1\nRating: 3",
			"Coherence: 2\nOn reflection, Coherence: 2", "Coherence: 3\nScore: 1", "3"}, c13, "2.67 [1:0 2:0.333 3:0.667] samples 3/5"},
		// Regression (fix-parse28): a list of numbers was counted as its first.
		{"a list of numbers is no score", []string{"[1, 2, 3]", "Coherence: [2, 3]", "[2]", "Coherence: 3"}, c13,
			"2.5 [1:0 2:0.5 3:0.5] samples 2/4"},
		{"nothing usable", []string{"good", "10"}, c13,
			"- samples 0/2: none of the 2 sampled answers held a readable integer score from 1 to 3"},
		{"no samples", nil, c13, "- samples 0/0: no sampled answers to count"},
		// Regression: an echo of the scale before the score was read as
		// its lower end (each of these counted as a 1).
		{"the scale echoed before the score", []string{"Score (1-3): 2", "On a scale of 1 to 3, I give 2.", "1-3: 2", "Coherence: 1 – 3 scale, so 2",
			"1. Read the summary.\n2. Check its order.\nScore: 3", "Engagingness (1-3): 3"}, c13, "2.33 [1:0 2:0.667 3:0.333] samples 6/6"},
		// Regression (explore43): an answer that only echoed the numbered
		// evaluation steps was read as a score of 1 (its first item's
		// number); a list with a labelled score, or one numbered line, is
		// still read.
		{"a numbered list of steps is no score", []string{"1. Read the dialogue.\n2. Judge it.\n3. Give a score.",
			"1) Read it\n 2) Judge it", "3. The dialogue is coherent.", "1. Read it.\n2. Judge it.\nCoherence: 2"}, c13,
			"2.5 [1:0 2:0.5 3:0.5] samples 2/4"},
		{"a range alone is no score", []string{"1-3", "Coherence: 2-3", "2"}, c13, "2 [1:0 2:1 3:0] samples 1/3"},
		{"negative ends of a range", []string{"Sentiment (-2 to 2): -1", "from -2 to 2, 1"}, Criterion{Name: "Sentiment", Lo: -2, Hi: 2},
			"0 [-2:0 -1:0.5 0:0 1:0.5 2:0] samples 2/2"},
	}
	for _, tt := range tests {
		if got := formatEstimate(GEvalFromSamples(tt.texts, tt.c)); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestGEvalDeterministic is the regression test for scores summed over a
// map: the same probabilities, listed by the endpoint in any order, must
// give bit-identical scores, masses and probabilities.
func TestGEvalDeterministic(t *testing.T) {
	c := Criterion{Name: "Coherence", Lo: 1, Hi: 5}
	ln := math.Log
	base := []TokenProb{{"1", ln(0.05)}, {"2", ln(0.15)}, {" 3", ln(0.35)}, {"3", ln(0.1)}, {"4", ln(0.3)}, {"5", ln(0.05)}}
	var first GEvalEstimate
	for perm := range 200 {
		top := slices.Clone(base)
		// A fixed family of orders: every rotation and its reverse, and a
		// few swaps, covers the orders a map or an endpoint would give.
		k := perm % len(top)
		top = append(top[k:], top[:k]...)
		if perm%2 == 1 {
			slices.Reverse(top)
		}
		if perm%3 == 2 {
			top[0], top[len(top)-1] = top[len(top)-1], top[0]
		}
		got := GEvalFromLogprobs([]TokenAlternatives{{Token: " 3", Logprob: ln(0.35), Top: top}}, c, 0)
		if got.Score == nil {
			t.Fatalf("no score: %s", got.Problem)
		}
		if perm == 0 {
			first = got
			continue
		}
		if math.Float64bits(*got.Score) != math.Float64bits(*first.Score) || math.Float64bits(got.Mass) != math.Float64bits(first.Mass) {
			t.Fatalf("order %d: score %v mass %v, first order gave %v and %v", perm, *got.Score, got.Mass, *first.Score, first.Mass)
		}
		for s, p := range got.Probs {
			if math.Float64bits(p) != math.Float64bits(first.Probs[s]) {
				t.Fatalf("order %d: p(%d) = %v, first order gave %v", perm, s, p, first.Probs[s])
			}
		}
	}
	// Samples: the same answers in another order give the same bits.
	texts := []string{"3", "1", "2", "3", "3", "2", "1", "2", "3", "3", "2", "1", "3", "3", "3", "2", "2", "1", "3", "2"}
	want := GEvalFromSamples(texts, c)
	for k := range len(texts) {
		rot := append(slices.Clone(texts[k:]), texts[:k]...)
		if got := GEvalFromSamples(rot, c); math.Float64bits(*got.Score) != math.Float64bits(*want.Score) {
			t.Fatalf("rotation %d: %v, want %v", k, *got.Score, *want.Score)
		}
	}
}
