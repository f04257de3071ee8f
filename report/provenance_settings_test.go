package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
)

// TestProvenanceSettingsFollowTheMethod: the settings a report states
// (the CSV's settings cell, the run page's "Produced by" section and the
// JSON export's settings object) are the ones the run's method reads; a
// G-Eval run has no batch size, rounds or batch composition to state, nor
// max_tokens (TestProvenanceSettingsFollowTheMethod/geval). The JSON's
// method_settings too: an LLM-Eval run states its scale, not the samples,
// sample temperature or log-probability choice it never used
// (TestProvenanceSettingsFollowTheMethod/llmeval), nor the API's run.
func TestProvenanceSettingsFollowTheMethod(t *testing.T) {
	sharedJSON, err := json.Marshal(evaluator.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	batchOnly := []string{"rounds", "batch_size", "procedure", "composition", "sort_key", "scoring"}
	for _, tc := range []struct {
		name   string
		method evaluator.Method
		legacy bool     // a CloserLook run stored before it recorded its top_p
		want   []string // settings that must be stated
		absent []string // settings that must not be
	}{
		{"batcheval", evaluator.MethodBatchEval, false, append([]string{"temperature", "top_p", "seed", "max_tokens"}, batchOnly...), []string{"samples"}},
		// G-Eval's form answer has its own fixed limit: max_tokens is not its.
		{"geval", evaluator.MethodGEval, false, []string{"seed", "samples", "use_logprobs", "sample_temperature", "min_allowed_mass"},
			append([]string{"temperature", "top_p", "max_tokens", "llmeval_scale", "closerlook_top_p", "closerlook_scoring"}, batchOnly...)},
		{"llmeval", evaluator.MethodLLMEval, false, []string{"temperature", "seed", "max_tokens", "llmeval_scale"},
			append([]string{"top_p", "samples", "use_logprobs", "sample_temperature", "geval_steps", "min_allowed_mass", "closerlook_top_p", "closerlook_scoring"}, batchOnly...)},
		{"closerlook", evaluator.MethodCloserLook, false, []string{"seed", "max_tokens", "samples", "sample_temperature", "closerlook_top_p", "closerlook_scoring"},
			append([]string{"temperature", "top_p", "use_logprobs", "llmeval_scale", "geval_steps", "min_allowed_mass"}, batchOnly...)},
		// Such a run sampled with the run's own top_p, so that is stated.
		{"closerlook stored before its top_p", evaluator.MethodCloserLook, true, []string{"seed", "top_p"},
			append([]string{"temperature", "use_logprobs", "llmeval_scale"}, batchOnly...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			run.Method, run.Settings, run.MethodSettings = string(tc.method), evaluator.DefaultSettings(), evaluator.DefaultMethodSettings()
			mr := methods.Run{Settings: run.Settings, MethodSettings: run.MethodSettings, Rubric: run.RubricSnapshot}
			if err := methods.For(run.Method).Prepare(&mr); err != nil {
				t.Fatal(err)
			}
			run.Settings, run.MethodSettings = mr.Settings, mr.MethodSettings
			if tc.legacy {
				run.MethodSettings.CloserLookTopP, run.MethodSettings.CloserLookScoring = 0, ""
			}
			r := Compute(run, ds, rows, batches, scores)

			text := r.Provenance().SettingsText()
			_, doc := exportJSON(t, r)
			prov := doc.(map[string]any)["report"].(map[string]any)["provenance"].(map[string]any)
			settings := prov["settings"].(map[string]any)
			methodSettings, _ := prov["method_settings"].(map[string]any) // null for BatchEval
			// The API states the same keys (handlers' APIRun).
			apiJSON, err := json.Marshal(struct {
				S  JSONSettings       `json:"settings"`
				MS MethodSettingsJSON `json:"method_settings"`
			}{SettingsJSON(run), RunMethodSettingsJSON(run)})
			if err != nil {
				t.Fatal(err)
			}
			var api struct{ Settings, MethodSettings map[string]any }
			if err := json.Unmarshal(apiJSON, &struct {
				S  *map[string]any `json:"settings"`
				MS *map[string]any `json:"method_settings"`
			}{&api.Settings, &api.MethodSettings}); err != nil {
				t.Fatal(err)
			}
			isShared := func(k string) bool { return strings.Contains(string(sharedJSON), `"`+k+`"`) }
			for _, k := range tc.want {
				if !stated(text, k) {
					t.Errorf("settings text %q lacks %s", text, k)
				}
				obj, apiObj := methodSettings, api.MethodSettings
				if isShared(k) {
					obj, apiObj = settings, api.Settings
				}
				if _, ok := obj[k]; !ok {
					t.Errorf("JSON export's settings %v lack %s", obj, k)
				}
				if _, ok := apiObj[k]; !ok {
					t.Errorf("API's settings %s lack %s", apiJSON, k)
				}
			}
			for _, k := range tc.absent {
				if stated(text, k) {
					t.Errorf("settings text %q states %s, which this run does not read", text, k)
				}
				for what, obj := range map[string]map[string]any{"JSON export's settings": settings, "JSON export's method_settings": methodSettings,
					"API's settings": api.Settings, "API's method_settings": api.MethodSettings} {
					if _, ok := obj[k]; ok {
						t.Errorf("%s %v state %s, which this run does not read", what, obj, k)
					}
				}
			}
		})
	}
}

// TestBatchEvalSettingsExportAsBefore: a BatchEval run reads every
// setting, so its JSON settings are evaluator.Settings as encoding/json
// writes them, byte for byte, and read back into it.
func TestBatchEvalSettingsExportAsBefore(t *testing.T) {
	cp := 2.5
	s := evaluator.DefaultSettings()
	s.SpendCapUSD, s.NoCache, s.MaxTokens = &cp, true, 300
	for _, s := range []evaluator.Settings{evaluator.DefaultSettings(), s} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(JSONSettings{Settings: s})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("JSONSettings = %s, want %s", got, want)
		}
		var back JSONSettings
		if err := json.Unmarshal(got, &back); err != nil || back.Settings.Rounds != s.Rounds || back.Settings.SortKey != s.SortKey {
			t.Errorf("read back %+v (%v), want %+v", back.Settings, err, s)
		}
	}
}

// stated reports whether a settings text has a "name=value" pair for name.
func stated(text, name string) bool {
	for p := range strings.SplitSeq(text, "; ") {
		if strings.HasPrefix(p, name+"=") {
			return true
		}
	}
	return false
}
