package evaluator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// promptFingerprints records, per prompt template version, a hash of what
// the builders write for a fixed rubric and samples. A change of wording
// changes the hash: give the method a new version in promptversion.go and
// record the new hash here, so reports never claim an old version for new
// prompts.
var promptFingerprints = map[string]string{
	BatchEvalPromptVersion:  "6bbcbe8446805f80",
	GEvalPromptVersion:      "7296c8c84ca79c88",
	LLMEvalPromptVersion:    "78a096543796a1ae",
	CloserLookPromptVersion: "6034c6d532cd98a3",
}

func TestPromptTemplateVersionsMatchTheWording(t *testing.T) {
	rub := Rubric{Task: "a reply to a question", Fields: []Field{{Column: "q", Label: "Question"}, {Column: "a", Label: "Answer"}},
		Criteria: []Criterion{
			{Name: "Helpful", Description: "Does the reply help?", Lo: 1, Hi: 5, Levels: Levels{Low: "no help", Middle: "some help", High: "solves it"},
				Examples: []Example{{SampleID: "e1", Fields: []Text{{Label: "Question", Value: "Where is Paris?"}, {Label: "Answer", Value: "In France."}},
					Score: 4, Reason: "right but terse"}}},
			{Name: "Polite", Description: "Is it polite?", Lo: 0, Hi: 2},
		}}
	samples := []Sample{
		{ID: "s1", Fields: []Text{{Label: "Question", Value: "How far is the moon?"}, {Label: "Answer", Value: "About 384,000 km."}}},
		{ID: "s2", Fields: []Text{{Label: "Question", Value: "What is 2+2?"}, {Label: "Answer", Value: ""}}},
	}
	c := rub.Criteria[0]
	var batch [][]Message
	for _, p := range []Procedure{OneStage, TwoStage, ThreeStage} {
		for _, sc := range []Scoring{Decimal, Integer} {
			s := DefaultSettings()
			s.Procedure, s.Scoring = p, sc
			msgs := BuildBatchPrompt(rub, c, samples, s)
			batch = append(batch, msgs, BuildRepairMessages(msgs, "Float Scores: [Sample1:2]", c, s, []int{2}))
		}
	}
	rendered := map[Method]any{
		MethodBatchEval: batch,
		MethodGEval: [][]Message{BuildGEvalStepsPrompt(rub, c),
			BuildGEvalFormPrompt(rub, c, "1. Read the question.\n2. Judge the answer.", samples[0])},
		MethodLLMEval: []any{BuildLLMEvalPrompt(rub, samples[0], LLMEvalFive), BuildLLMEvalPrompt(rub, samples[0], LLMEvalHundred),
			LLMEvalSchema(rub, LLMEvalFive), LLMEvalSchema(rub, LLMEvalHundred)},
		MethodCloserLook: []any{BuildAnalyzeRatePrompt(rub, c, samples[0], Integer), BuildAnalyzeRatePrompt(rub, c, samples[0], Decimal)},
	}
	versions := map[Method]string{MethodBatchEval: BatchEvalPromptVersion, MethodGEval: GEvalPromptVersion,
		MethodLLMEval: LLMEvalPromptVersion, MethodCloserLook: CloserLookPromptVersion}
	for _, m := range []Method{MethodBatchEval, MethodGEval, MethodLLMEval, MethodCloserLook} {
		b, err := json.Marshal(rendered[m])
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		got := hex.EncodeToString(sum[:8])
		v := versions[m]
		if want := promptFingerprints[v]; got != want {
			t.Errorf("%s prompts changed (fingerprint %s, recorded %q for %s): give %s a new prompt template version and record the fingerprint",
				m, got, want, v, m)
		}
	}
}
