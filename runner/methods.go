package runner

import (
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
)

// PrepareRun fills in what the run's method implies before the run is
// stored (the method's Prepare: its defaults, fixed settings, its own
// scale), and refuses an unknown method or settings that cannot run.
func PrepareRun(run *models.Run) error {
	m, err := methods.Lookup(run.Method)
	if err != nil {
		return models.Errorf(models.EInvalid, "%s", err.Error())
	}
	run.Method = string(m.Name())
	mr := methods.Run{Settings: run.Settings, MethodSettings: run.MethodSettings, Rubric: run.RubricSnapshot}
	// A new run (a variant too) finds out for itself what its endpoint
	// supports; only a resumed run starts from what it learned.
	mr.MethodSettings.Learned = nil
	if err := m.Prepare(&mr); err != nil {
		return &models.Error{Code: models.EInvalid, Message: err.Error()}
	}
	run.Settings, run.MethodSettings, run.RubricSnapshot = mr.Settings, mr.MethodSettings, mr.Rubric
	// The wording its prompts are built with from now on: what its reports
	// state, whatever version the code has when they are read.
	run.PromptTemplateVersion = m.PromptVersion()
	// A new run (a variant copied from its parent too) has no later
	// versions: its executions add them (Runner.execute).
	run.PromptVersions = nil
	return nil
}
