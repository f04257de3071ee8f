package handlers

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestProducedByStatesTheRunsPromptVersion: the run page's "Produced by"
// and the JSON export state the prompt template version stored with the
// run, not the code's: a run launched before a prompt change keeps the
// version it was built with, and one stored before versions were kept
// says "not recorded" (null in JSON).
func TestProducedByStatesTheRunsPromptVersion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tt := range []struct {
			stored, wantPage string
			wantJSON         any
		}{
			{evaluator.LLMEvalPromptVersion, evaluator.LLMEvalPromptVersion, evaluator.LLMEvalPromptVersion},
			{"llmeval/2026-12-01.examples", "llmeval/2026-12-01.examples", "llmeval/2026-12-01.examples"},
			{"", "not recorded", nil},
		} {
			run := env.startRun(env.demo().dataset, "versions "+tt.stored, models.MethodLLMEval, func(r *models.Run) {
				r.MethodSettings = evaluator.DefaultMethodSettings()
			})
			if got := env.waitRun(run.ID, 90*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("run %s: %s", got.Status, got.Error)
			}
			// As a run launched before the prompt change, or before
			// versions were stored, has it.
			must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("prompt_template_version", tt.stored).Error)
			page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
			if got := testidText(t, page, "prompt-version"); got != tt.wantPage {
				t.Errorf("stored %q: page says prompt template %q, want %q", tt.stored, got, tt.wantPage)
			}
			var doc struct {
				Report struct {
					Provenance map[string]any `json:"provenance"`
				} `json:"report"`
			}
			must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &doc))
			if v, ok := doc.Report.Provenance["prompt_template_version"]; !ok || v != tt.wantJSON {
				t.Errorf("stored %q: JSON prompt_template_version = %v, want %v", tt.stored, v, tt.wantJSON)
			}
		}
	})
}
