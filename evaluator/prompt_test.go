package evaluator

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// dialogueRubric is a Topical-Chat-like rubric used across the tests.
func dialogueRubric() (Rubric, Criterion) {
	c := Criterion{
		Name:        "Engagingness",
		Description: "Is the response dull or interesting? Does it invite the other person to keep talking?",
		Lo:          1,
		Hi:          3,
		Levels: Levels{
			Low:    "the response is dull and gives the other person nothing to reply to.",
			Middle: "the response is somewhat interesting but could be more engaging.",
			High:   "the response is interesting, adds something new and invites a reply.",
		},
	}
	r := Rubric{
		Task:     "a conversation history and one candidate next response",
		Fields:   []Field{{Column: "context", Label: "Conversation history"}, {Column: "response", Label: "Response"}},
		Criteria: []Criterion{c},
	}
	return r, c
}

func dialogueSamples() []Sample {
	return []Sample{
		{ID: "a", Fields: []Text{
			{Label: "Conversation history", Value: "A: Do you like jazz?\nB: I do, mostly older records."},
			{Label: "Response", Value: "Same here! Have you heard Kind of Blue? What draws you to the older recordings?"},
		}},
		{ID: "b", Fields: []Text{
			{Label: "Conversation history", Value: "A: I just got back from Lisbon."},
			{Label: "Response", Value: "ok"},
		}},
		{ID: "c", Fields: []Text{
			{Label: "Conversation history", Value: "A: Any tips for learning chess?"},
			{Label: "Response", Value: ""},
		}},
	}
}

// renderMessages writes messages in a stable, readable form for golden files.
func renderMessages(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("=== " + m.Role + " ===\n")
		b.WriteString(m.Content)
		if !strings.HasSuffix(m.Content, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// checkGolden compares got with testdata/name, or rewrites it under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./evaluator -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s\n(run with -update if the change is intended)", name, got)
	}
}

func TestBuildBatchPromptGolden(t *testing.T) {
	r, c := dialogueRubric()
	integer := c
	integer.Lo, integer.Hi = 1, 5
	tests := []struct {
		golden    string
		c         Criterion
		procedure Procedure
		scoring   Scoring
	}{
		{"prompt_two_stage_decimal.golden", c, TwoStage, Decimal},
		{"prompt_one_stage_integer.golden", integer, OneStage, Integer},
		{"prompt_three_stage_decimal.golden", c, ThreeStage, Decimal},
	}
	for _, tt := range tests {
		s := DefaultSettings()
		s.Procedure, s.Scoring = tt.procedure, tt.scoring
		checkGolden(t, tt.golden, renderMessages(BuildBatchPrompt(r, tt.c, dialogueSamples(), s)))
	}
}

func TestBuildBatchPromptContent(t *testing.T) {
	r, c := dialogueRubric()
	even := c
	even.Lo, even.Hi = 1, 4
	tests := []struct {
		name      string
		c         Criterion
		procedure Procedure
		scoring   Scoring
		want      []string
		notWant   []string
	}{
		{"two stage decimal", c, TwoStage, Decimal,
			[]string{"batch of 3 samples", "Each sample is a conversation history", "a float score within [1, 3]",
				"A float score near 2 means", "Sample3:\n", "Response: (empty)",
				"Float Scores: [Sample1:<score>, Sample2:<score>, Sample3:<score>]", "compare the samples with each other"},
			[]string{"Integer Scores", "Score of Sample1", "Ranking:", "1.000000"}},
		{"unset procedure is two stage", c, "", "",
			[]string{"Float Scores: [Sample1:<score>"}, []string{"Score of Sample1"}},
		{"one stage integer", even, OneStage, Integer,
			[]string{"an integer score within [1, 4]", "A score of 1 means", "A score around 2.5 means", "Score of Sample1: <score>"},
			[]string{"Float Scores", "Integer Scores", "float score"}},
		{"three stage", c, ThreeStage, Decimal,
			[]string{"Ranking:", "best to worst", "Float Scores: [Sample1:<score>, Sample2:<score>, Sample3:<score>]"},
			[]string{"Score of Sample1"}},
	}
	for _, tt := range tests {
		s := DefaultSettings()
		s.Procedure, s.Scoring = tt.procedure, tt.scoring
		msgs := BuildBatchPrompt(r, tt.c, dialogueSamples(), s)
		if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
			t.Errorf("%s: want a system and a user message, got %d messages", tt.name, len(msgs))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(msgs[1].Content, w) {
				t.Errorf("%s: prompt lacks %q", tt.name, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(msgs[1].Content, w) {
				t.Errorf("%s: prompt should not contain %q", tt.name, w)
			}
		}
	}
}

func TestDescribeSample(t *testing.T) {
	tests := []struct {
		task string
		k    int
		want string
	}{
		{"a dialogue and its next response", 10, "Each sample is a dialogue and its next response."},
		{"A news article and its summary.", 2, "Each sample is a news article and its summary."},
		{"a story", 1, "The sample is a story."},
		{"Each sample pairs a prompt with a story.", 5, "Each sample pairs a prompt with a story."},
		{"  ", 5, ""},
	}
	for _, tt := range tests {
		if got := describeSample(tt.task, tt.k); got != tt.want {
			t.Errorf("describeSample(%q) = %q, want %q", tt.task, got, tt.want)
		}
	}
}

func TestBuildRepairMessages(t *testing.T) {
	r, c := dialogueRubric()
	tests := []struct {
		name    string
		scoring Scoring
		missing []int
		want    string
	}{
		{"decimal two labels", Decimal, []int{3, 7}, "Float Scores: [Sample3:<score>, Sample7:<score>]"},
		{"integer one label", Integer, []int{2}, "Integer Scores: [Sample2:<score>]"},
	}
	for _, tt := range tests {
		s := DefaultSettings()
		s.Scoring = tt.scoring
		orig := BuildBatchPrompt(r, c, dialogueSamples(), s)
		msgs := BuildRepairMessages(orig, "my answer", c, s, tt.missing)
		if len(msgs) != len(orig)+2 {
			t.Errorf("%s: %d messages, want %d", tt.name, len(msgs), len(orig)+2)
			continue
		}
		if got := msgs[len(orig)]; got.Role != "assistant" || got.Content != "my answer" {
			t.Errorf("%s: message after the prompt = %+v, want the assistant's answer", tt.name, got)
		}
		last := msgs[len(msgs)-1]
		if last.Role != "user" || !strings.Contains(last.Content, tt.want) || !strings.Contains(last.Content, "ONLY") {
			t.Errorf("%s: repair request %q lacks %q", tt.name, last.Content, tt.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		want int
	}{
		{"none", nil, 0},
		{"one short", []Message{{Role: "user", Content: "12345678"}}, 3 + 4 + 1 + 2},
		{"two", []Message{{Role: "system", Content: "abcd"}, {Role: "user", Content: ""}}, 3 + (4 + 2 + 1) + (4 + 1 + 0)},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.msgs); got != tt.want {
			t.Errorf("%s: EstimateTokens = %d, want %d", tt.name, got, tt.want)
		}
	}
	texts := []struct {
		s    string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {strings.Repeat("x", 400), 100}}
	for _, tt := range texts {
		if got := EstimateTextTokens(tt.s); got != tt.want {
			t.Errorf("EstimateTextTokens(%d chars) = %d, want %d", len(tt.s), got, tt.want)
		}
	}
}
