package evaluator

// Prompt template versions name the wording each method's prompt builders
// produce, so a report can say which prompts made its scores (each method
// states its own: methods.Method.PromptVersion). Bump a
// method's version whenever its builders' output changes for the same
// rubric, settings and sample (promptversion_test.go fails until you do:
// it keeps a fingerprint of the current wording beside each version).
// The versions are dated so two branches that both change a prompt do not
// silently reuse one name.
const (
	// BatchEvalPromptVersion covers BuildBatchPrompt (every procedure and
	// scoring format) and BuildRepairMessages.
	BatchEvalPromptVersion = "batcheval/2026-12-01.examples"
	// GEvalPromptVersion covers BuildGEvalStepsPrompt and BuildGEvalFormPrompt.
	GEvalPromptVersion = "geval/2026-12-01.examples"
	// LLMEvalPromptVersion covers BuildLLMEvalPrompt and LLMEvalSchema.
	// ".example-scale": a run's examples are mapped from the rubric's range
	// onto LLM-Eval's scale (writeExamples); before, a prepared run wrote
	// them with the rubric's numbers.
	LLMEvalPromptVersion = "llmeval/2026-12-05.example-scale"
	// CloserLookPromptVersion covers BuildAnalyzeRatePrompt.
	CloserLookPromptVersion = "closerlook/2026-12-01.examples"
)

// The ".examples" versions added a criterion's labelled examples (rubric
// versions accepted from an alignment carry them) to every method's prompt.
