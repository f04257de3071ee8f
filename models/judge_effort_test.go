package models_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestJudgeReasoningEffort: a judge's reasoning effort (migration 00097) is
// stored in lower case and read back, blank is none, an unknown word is
// refused naming the field and the three values (nothing stored), and a
// run's snapshot records it only when set, so every other judge's
// snapshot reads as before.
func TestJudgeReasoningEffort(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, effort string
			want         judge.ReasoningEffort
			wantErr      bool
		}{
			{"unset", "", judge.ReasoningEffortUnset, false},
			{"low", "low", judge.ReasoningEffortLow, false},
			{"typed in capitals", " HIGH ", judge.ReasoningEffortHigh, false},
			{"unknown", "minimal", "", true},
		} {
			j := models.Judge{WorkspaceID: ws.ID, Name: "effort " + tc.name, BaseURL: "https://api.openai.com/v1", Model: "o3",
				TokenLimit: "max_completion_tokens", ReasoningEffort: tc.effort}
			err := db.SaveJudge(ctx, &j)
			if tc.wantErr {
				msg := models.ErrorMessage(err)
				if models.ErrorCode(err) != models.EInvalid || !strings.Contains(msg, "reasoning effort") || !strings.Contains(msg, "low, medium and high") {
					t.Errorf("%s: %v, want a refusal naming the reasoning effort and its values", tc.name, err)
				}
				if j.ID != 0 {
					t.Errorf("%s: refused, yet stored as judge %d", tc.name, j.ID)
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
			if got.ReasoningEffort != string(tc.want) || got.SendsReasoningEffort() != tc.want {
				t.Errorf("%s: stored %q, want %q", tc.name, got.ReasoningEffort, tc.want)
			}
			snap := got.Snapshot()
			if snap.ReasoningEffort != string(tc.want) || snap.SendsReasoningEffort() != tc.want {
				t.Errorf("%s: snapshot %q, want %q", tc.name, snap.ReasoningEffort, tc.want)
			}
			// Cleared by an edit: none sent again.
			got.ReasoningEffort = ""
			if err := db.SaveJudge(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if again, _ := db.FindJudge(ctx, ws.ID, j.ID); again.ReasoningEffort != "" {
				t.Errorf("%s: cleared, but stored %q", tc.name, again.ReasoningEffort)
			}
		}
		// An edit to an unknown word keeps what was stored.
		j := models.Judge{WorkspaceID: ws.ID, Name: "kept", BaseURL: "https://api.openai.com/v1", Model: "o3", ReasoningEffort: "medium"}
		if err := db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		j.ReasoningEffort = "turbo"
		if err := db.SaveJudge(ctx, &j); models.ErrorCode(err) != models.EInvalid {
			t.Errorf("edit to turbo: %v, want invalid", err)
		}
		if kept, _ := db.FindJudge(ctx, ws.ID, j.ID); kept.ReasoningEffort != "medium" {
			t.Errorf("after a refused edit: %q, want medium kept", kept.ReasoningEffort)
		}
		// The simulated judge sends none.
		sim, err := db.EnsureSimulatedJudge(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sim.Snapshot().ReasoningEffort != "" {
			t.Errorf("the simulated judge's snapshot sends %q", sim.Snapshot().ReasoningEffort)
		}
	})
}
