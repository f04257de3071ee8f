package models_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestJudgeReasoningSettings: a judge's token limit name and default-only
// sampling (OpenAI's reasoning models) are stored and read back by
// SaveJudge, an unknown name is refused naming both, a run's snapshot
// records them only when they are not the default (every other judge's
// snapshot reads as before), and RecordJudgeRequestSettings (Test
// connection) stores them as a change of settings, and only while the
// judge still has the endpoint and model that were tested.
func TestJudgeReasoningSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name        string
			limit       string
			defaultOnly bool
			wantLimit   judge.TokenLimit
			wantErr     string
		}{
			{"unset is max_tokens", "", false, judge.TokenLimitMaxTokens, ""},
			{"max_completion_tokens", "max_completion_tokens", true, judge.TokenLimitMaxCompletionTokens, ""},
			{"typed in capitals", " MAX_COMPLETION_TOKENS ", false, judge.TokenLimitMaxCompletionTokens, ""},
			{"unknown", "max_output_tokens", false, "", `"max_tokens"`},
		}
		for _, tc := range cases {
			j := models.Judge{WorkspaceID: ws.ID, Name: tc.name, BaseURL: "https://api.openai.com/v1", Model: "o4-mini",
				TokenLimit: tc.limit, DefaultSamplingOnly: tc.defaultOnly}
			err := db.SaveJudge(ctx, &j)
			if tc.wantErr != "" {
				if models.ErrorCode(err) != models.EInvalid || !strings.Contains(models.ErrorMessage(err), tc.wantErr) || !strings.Contains(models.ErrorMessage(err), "max_completion_tokens") {
					t.Errorf("%s: %v, want a refusal naming both names", tc.name, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got, err := db.FindJudge(ctx, ws.ID, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.SendsTokenLimitAs() != tc.wantLimit || got.TokenLimit != string(tc.wantLimit) || got.DefaultSamplingOnly != tc.defaultOnly {
				t.Errorf("%s: stored %q, %v; want %q, %v", tc.name, got.TokenLimit, got.DefaultSamplingOnly, tc.wantLimit, tc.defaultOnly)
			}
			snap := got.Snapshot()
			wantSnap := ""
			if tc.wantLimit != judge.TokenLimitMaxTokens {
				wantSnap = string(tc.wantLimit)
			}
			if snap.TokenLimit != wantSnap || snap.DefaultSamplingOnly != tc.defaultOnly || snap.SendsTokenLimitAs() != tc.wantLimit {
				t.Errorf("%s: snapshot %q, %v", tc.name, snap.TokenLimit, snap.DefaultSamplingOnly)
			}
			// An edit that leaves them out (the API without the keys
			// keeps them by sending the stored values) stores what it is
			// given: back to the defaults.
			got.TokenLimit, got.DefaultSamplingOnly = "", false
			if err := db.SaveJudge(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if again, _ := db.FindJudge(ctx, ws.ID, j.ID); again.TokenLimit != string(judge.TokenLimitMaxTokens) || again.DefaultSamplingOnly {
				t.Errorf("%s: after an edit to the defaults: %q, %v", tc.name, again.TokenLimit, again.DefaultSamplingOnly)
			}
		}

		// What Test connection found.
		j := models.Judge{WorkspaceID: ws.ID, Name: "gpt-5", BaseURL: "https://api.openai.com/v1", Model: "gpt-5"}
		if err := db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		before, _ := db.FindJudge(ctx, ws.ID, j.ID)
		time.Sleep(2 * time.Millisecond) // updated_at must move past the save's
		if err := db.RecordJudgeRequestSettings(ctx, j, judge.TokenLimitMaxCompletionTokens, true); err != nil {
			t.Fatal(err)
		}
		after, _ := db.FindJudge(ctx, ws.ID, j.ID)
		if after.SendsTokenLimitAs() != judge.TokenLimitMaxCompletionTokens || !after.DefaultSamplingOnly || after.Revision() == before.Revision() {
			t.Errorf("recorded: %q, %v, revision moved %v", after.TokenLimit, after.DefaultSamplingOnly, after.Revision() != before.Revision())
		}
		// The judge was moved to another model while its test ran:
		// nothing is recorded.
		moved := j
		moved.Model = "gpt-4o"
		err = db.RecordJudgeRequestSettings(ctx, moved, judge.TokenLimitMaxTokens, false)
		if models.ErrorCode(err) != models.EChanged {
			t.Errorf("recording for another model: %v, want %s", err, models.EChanged)
		}
		if kept, _ := db.FindJudge(ctx, ws.ID, j.ID); kept.SendsTokenLimitAs() != judge.TokenLimitMaxCompletionTokens || !kept.DefaultSamplingOnly {
			t.Errorf("a stale test overwrote the settings: %q, %v", kept.TokenLimit, kept.DefaultSamplingOnly)
		}
	})
}
