package judge

import (
	"reflect"
	"testing"
)

// TestClosestModels: Test connection names the listed model a typo was
// meant to be, only ever a listed one.
func TestClosestModels(t *testing.T) {
	openai := []string{"gpt-4o", "gpt-4o-mini", "o3", "text-embedding-3-small"}
	tests := []struct {
		name   string
		model  string
		listed []string
		want   []string
	}{
		{"swapped letters", "gpt-4o-mnii", openai, []string{"gpt-4o-mini"}},
		{"missing dash", "gpt4o", openai, []string{"gpt-4o"}},
		{"another case", "GPT-4o", openai, []string{"gpt-4o"}},
		{"listed: no suggestion", "gpt-4o", openai, nil},
		{"nothing close: none invented", "claude-sonnet", openai, nil},
		{"empty list", "gpt-4o", nil, nil},
		{"Ollama tag left off", "llama3.1", []string{"llama3.1:8b", "qwen2.5:7b"}, []string{"llama3.1:8b"}},
		{"router prefix left off", "gpt-4o", []string{"openai/gpt-4o", "anthropic/claude-3.5-sonnet"}, []string{"openai/gpt-4o"}},
		{"ties named together", "gpt-4", []string{"gpt-4o", "gpt-4.1", "gpt-3"}, []string{"gpt-4o", "gpt-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClosestModels(tt.model, tt.listed); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ClosestModels(%q) = %q, want %q", tt.model, got, tt.want)
			}
		})
	}
}
