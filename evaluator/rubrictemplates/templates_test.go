package rubrictemplates

import (
	"testing"
)

func TestTemplates(t *testing.T) {
	want := map[string][]string{
		"dialogue-response":   {"Engaging", "Understandable", "Natural", "Coherent", "Overall"},
		"dialogue":            {"Coherent", "Consistent", "Engaging", "Informative", "Overall"},
		"summary":             {"Coherence", "Consistency", "Fluency", "Relevance"},
		"story":               {"Relevant", "Coherent", "Interesting", "Well written", "Overall"},
		"factual-consistency": {"Factually consistent"},
	}
	if got := len(All()); got != len(want) {
		t.Errorf("%d templates, want %d", got, len(want))
	}
	for _, tpl := range All() {
		t.Run(tpl.Key, func(t *testing.T) {
			_, r, err := Rubric(tpl.Key)
			if err != nil {
				t.Fatal(err)
			}
			names := want[tpl.Key]
			if len(r.Criteria) != len(names) {
				t.Fatalf("%d criteria, want %v", len(r.Criteria), names)
			}
			for i, c := range r.Criteria {
				if c.Name != names[i] {
					t.Errorf("criterion %d = %q, want %q", i+1, c.Name, names[i])
				}
				// A template is a complete rubric: every criterion says
				// what it measures and what its ends mean.
				if c.Description == "" || c.Levels.Low == "" || c.Levels.High == "" {
					t.Errorf("criterion %q lacks a description or level texts", c.Name)
				}
				if c.HumanColumn != "" || len(r.Fields) != 0 {
					t.Errorf("criterion %q names dataset columns: a template cannot know them", c.Name)
				}
			}
			if tpl.Name == "" || tpl.Summary == "" {
				t.Errorf("template %q has no name or summary", tpl.Key)
			}
		})
	}
	if _, _, err := Rubric("no-such"); err == nil {
		t.Error("an unknown key gave a template")
	}
}
