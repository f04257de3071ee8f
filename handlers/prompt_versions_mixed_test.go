package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestResumedRunSaysEachPromptVersion: a run launched with an older prompt
// wording was resumed on code whose BatchEval wording had changed. Its
// first batch was built with the launch version, the batch sent by the
// resume with the code's; the run page's "Produced by", the CSV and the
// JSON export all stated the launch version alone. They now say it is
// mixed, which version held before the resume and which after, and the
// JSON lists both with their times; a run executed again on the same
// code adds nothing.
func TestResumedRunSaysEachPromptVersion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const old = "batcheval/2026-11-01.before"
		d := env.ratedDataset("Twelve rated", 12)
		// Eight samples answered, four still pending: the run stopped
		// there (a crash, a pause) under the old wording.
		run := env.partialRun(d, "Resumed after an upgrade", -1, false)
		judge := env.demo().judge
		must(t, env.db.Gorm.Model(&models.Run{ID: run.ID}).Select("prompt_template_version", "judge_id", "judge_snapshot").
			Updates(&models.Run{PromptTemplateVersion: old, JudgeID: &judge.ID, JudgeSnapshot: judge.Snapshot()}).Error)
		must(t, env.runner.Execute(ctx, run.ID))
		got, err := env.db.GetRun(ctx, run.ID)
		must(t, err)
		if !got.Finished() || len(got.PromptVersions) != 1 || got.PromptVersions[0].Version != evaluator.BatchEvalPromptVersion {
			t.Fatalf("after the resume: status %s, versions %+v; want finished with %s recorded", got.Status, got.PromptVersions, evaluator.BatchEvalPromptVersion)
		}
		since := got.PromptVersions[0].Since.UTC().Format("2006-01-02 15:04:05 UTC")
		want := "mixed: " + old + " (launch) for the answers stored before " + since + ", " + evaluator.BatchEvalPromptVersion + " from " + since + " on"

		page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if shown := testidText(t, page, "prompt-version"); !strings.HasPrefix(shown, want) {
			t.Errorf("run page: prompt template %q, want it to start %q", shown, want)
		}
		lines, err := csv.NewReader(strings.NewReader(env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String())).ReadAll()
		must(t, err)
		col := slices.Index(lines[0], "prompt template version")
		if col < 0 || len(lines) < 2 || !strings.HasPrefix(lines[1][col], want) {
			t.Errorf("CSV: header %v, first row %v; want the prompt template column to start %q", lines[0], lines[1:2], want)
		}
		var doc struct {
			Report struct {
				Provenance struct {
					Version  string `json:"prompt_template_version"`
					Versions []struct {
						Version *string `json:"version"`
						From    *string `json:"from"`
						Until   *string `json:"until"`
					} `json:"prompt_template_versions"`
				} `json:"provenance"`
			} `json:"report"`
		}
		must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &doc))
		p := doc.Report.Provenance
		if !strings.HasPrefix(p.Version, want) {
			t.Errorf("JSON prompt_template_version %q, want it to start %q", p.Version, want)
		}
		if len(p.Versions) != 2 || p.Versions[0].Version == nil || *p.Versions[0].Version != old || p.Versions[0].From != nil ||
			p.Versions[0].Until == nil || p.Versions[1].Version == nil || *p.Versions[1].Version != evaluator.BatchEvalPromptVersion ||
			p.Versions[1].From == nil || *p.Versions[1].From != *p.Versions[0].Until || p.Versions[1].Until != nil {
			t.Errorf("JSON prompt_template_versions = %+v; want %s from the launch, then %s", p.Versions, old, evaluator.BatchEvalPromptVersion)
		}

		// Executed again on the same code: no new entry.
		if wrote, err := env.db.RecordPromptVersion(ctx, run.ID, evaluator.BatchEvalPromptVersion); err != nil || wrote {
			t.Errorf("the same version again: wrote %v, err %v; want nothing written", wrote, err)
		}
	})
}
