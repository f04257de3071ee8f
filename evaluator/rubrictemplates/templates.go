// Package rubrictemplates holds the rubrics a new rubric can start from,
// one per common evaluation task. They are written for this product, in the
// rubric-file format (evaluator.ParseRubricFile), and carry no fields or
// human columns: those depend on the person's dataset.
package rubrictemplates

import (
	"embed"
	"fmt"

	"github.com/batcheval/batcheval/evaluator"
)

//go:embed *.yaml
var files embed.FS

// Template is one starting rubric.
type Template struct {
	// Key names it in addresses (?template=summary).
	Key string
	// Name is the rubric name it suggests; Summary says when to use it.
	Name, Summary string
}

// list is every template, in the order the pages offer them.
var list = []Template{
	{"dialogue-response", "Dialogue response", "one chatbot reply after a conversation: engaging, understandable, natural, coherent, overall"},
	{"dialogue", "Whole dialogue", "a whole conversation, judged as one: coherent, consistent, engaging, informative, overall"},
	{"summary", "Summary", "a summary of a document: coherence, consistency, fluency, relevance"},
	{"story", "Story", "a story written from a premise: relevant, coherent, interesting, well written, overall"},
	{"factual-consistency", "Factual consistency", "a generated text checked against its source: one criterion"},
}

// All lists the templates.
func All() []Template { return append([]Template(nil), list...) }

// Rubric returns the rubric of the template with the given key.
func Rubric(key string) (Template, evaluator.Rubric, error) {
	for _, t := range list {
		if t.Key != key {
			continue
		}
		b, err := files.ReadFile(key + ".yaml")
		if err != nil {
			return t, evaluator.Rubric{}, err
		}
		r, err := evaluator.ParseRubricFile(b)
		if err != nil {
			return t, r, fmt.Errorf("template %s: %w", key, err)
		}
		return t, r, nil
	}
	return Template{}, evaluator.Rubric{}, fmt.Errorf("there is no rubric template %q", key)
}
