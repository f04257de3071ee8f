package runner

import (
	"context"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestLaunchStoresPromptVersion: a launched run stores its method's prompt
// template version, and keeps it when the code's version moves on (a run
// launched before a prompt change was built the old way); a variant of
// such a run is built with the code's wording, so it stores the current
// version, not its parent's.
func TestLaunchStoresPromptVersion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		for _, tt := range []struct {
			method evaluator.Method
			want   string
		}{
			{evaluator.MethodBatchEval, evaluator.BatchEvalPromptVersion},
			{evaluator.MethodGEval, evaluator.GEvalPromptVersion},
			{evaluator.MethodLLMEval, evaluator.LLMEvalPromptVersion},
			{evaluator.MethodCloserLook, evaluator.CloserLookPromptVersion},
		} {
			t.Run(string(tt.method), func(t *testing.T) {
				run := env.newRun("http://127.0.0.1:1/v1", 1, 1, 30)
				run.Method, run.MethodSettings = string(tt.method), evaluator.DefaultMethodSettings()
				run = env.launch(env.jobs, run)
				if got := env.getRun(run.ID).PromptTemplateVersion; got != tt.want {
					t.Fatalf("stored prompt template version = %q, want %q", got, tt.want)
				}
				// The code's version moved on since the run was launched
				// (as LLM-Eval's did on 2026-12-05): the run keeps its own.
				const old = "old/2026-11-30.before"
				if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("prompt_template_version", old).Error; err != nil {
					t.Fatal(err)
				}
				if got := env.getRun(run.ID).PromptTemplateVersion; got != old {
					t.Errorf("reread prompt template version = %q, want %q", got, old)
				}
				child, err := env.jobs.LaunchReseed(ctx, env.ws.ID, run.ID, run.Settings.Seed+1)
				if err != nil {
					t.Fatal(err)
				}
				if got := env.getRun(child.ID).PromptTemplateVersion; got != tt.want {
					t.Errorf("reseeded variant's prompt template version = %q, want the current %q", got, tt.want)
				}
			})
		}
	})
}
