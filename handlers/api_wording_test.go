package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPILaunchRefusalReadsAsOneSentence: the launch form's sentences
// follow "nothing was launched:" in lower case; an acronym keeps its
// capitals. The refusal read "nothing was launched: The chosen dataset".
func TestAPILaunchRefusalReadsAsOneSentence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"The chosen dataset does not exist.", "the chosen dataset does not exist."},
		{"CSV files only.", "CSV files only."},
		{"already lower", "already lower"},
		{"", ""},
		{"Éé", "éé"},
	} {
		if got := continueSentence(tc.in); got != tc.want {
			t.Errorf("continueSentence(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	a := newAPIClient(t, env)
	rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), "",
		map[string]any{"dataset_id": 999999, "rubric_id": 999999, "judge_id": 999999})
	var e APIError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("launch naming nothing that exists: %d %s", rec.Code, rec.Body)
	}
	if !strings.HasPrefix(e.Error.Message, "nothing was launched: the chosen dataset") {
		t.Errorf("refusal = %q, want it to go on with \"nothing was launched: the chosen dataset\"", e.Error.Message)
	}
}
