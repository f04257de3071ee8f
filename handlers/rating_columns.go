package handlers

import (
	"fmt"
	"slices"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// criterionColumns are the rating columns one criterion of a rubric names,
// as the editor's form or the API's body gives them.
type criterionColumns struct {
	Name       string // the criterion's name, "" when not given yet
	Human      string
	Annotators []string
	// Kept are the rating columns the stored criterion this one edits
	// already named (the editor's save): one no dataset has any more is
	// reported as kept, not refused.
	Kept []string
}

// columnsOf gives the rating columns of stored criteria.
func columnsOf(criteria []evaluator.Criterion) []criterionColumns {
	out := make([]criterionColumns, len(criteria))
	for i, cr := range criteria {
		out[i] = criterionColumns{Name: cr.Name, Human: cr.HumanColumn, Annotators: cr.AnnotatorColumns}
	}
	return out
}

// columnWords name the two settings as the caller's reader knows them: the
// editor's labels or the API's keys.
// HumanNone and AnnotatorsNone say how to choose no column.
type columnWords struct {
	Human, HumanNone, Annotators, AnnotatorsNone string
}

var (
	editorColumnWords = columnWords{Human: "human rating column", HumanNone: "choose None",
		Annotators: "individual annotators' columns", AnnotatorsNone: "tick none"}
	apiColumnWords = columnWords{Human: "human_column", HumanNone: "leave human_column out",
		Annotators: "annotator_columns", AnnotatorsNone: "leave annotator_columns out"}
)

// ratingColumnProblem is a criterion naming a rating column that none of
// the project's datasets has.
type ratingColumnProblem struct {
	Criterion int    // index in the rubric
	Field     string // "human" or "annotators", as the editor's input ids
	Message   string
	// Kept says the columns were already the stored criterion's: the
	// dataset that had them was deleted or uploaded again without them. The
	// editor saves them, marked and warned about, so that saving a rubric
	// unchanged never fails; only a newly chosen column is refused.
	Kept bool
}

// unknownRatingColumns refuses the human and annotator columns that are
// none of the project's datasets' rating columns (a hand-made post, a
// typo): the runs would find no rating and could not measure agreement.
// A project without datasets refuses nothing: its data may come later.
func unknownRatingColumns(criteria []criterionColumns, datasets []models.Dataset, w columnWords) []ratingColumnProblem {
	if len(datasets) == 0 {
		return nil
	}
	ratings := ratingColumnsOf(datasets)
	have := func(none string) string {
		if len(ratings) == 0 {
			return "they have no rating columns: " + none + ", or upload a dataset with ratings first"
		}
		return "their rating columns are " + joinQuoted(ratings) + ": use one of them, or " + none
	}
	var out []ratingColumnProblem
	for i, cr := range criteria {
		who := fmt.Sprintf("Criterion %d", i+1)
		if cr.Name != "" {
			who = fmt.Sprintf("Criterion %s", web.Quoted(cr.Name))
		}
		if cr.Human != "" && !slices.Contains(ratings, cr.Human) {
			out = append(out, ratingColumnProblem{Criterion: i, Field: "human", Kept: slices.Contains(cr.Kept, cr.Human),
				Message: fmt.Sprintf("%s: the %s %s is in none of this project's datasets; %s.", who, w.Human, web.Quoted(cr.Human), have(w.HumanNone))})
		}
		var unknown, kept []string
		for _, a := range cr.Annotators {
			switch {
			case slices.Contains(ratings, a) || slices.Contains(unknown, a) || slices.Contains(kept, a):
			case slices.Contains(cr.Kept, a):
				kept = append(kept, a)
			default:
				unknown = append(unknown, a)
			}
		}
		for _, g := range []struct {
			cols []string
			kept bool
		}{{unknown, false}, {kept, true}} {
			if len(g.cols) > 0 {
				out = append(out, ratingColumnProblem{Criterion: i, Field: "annotators", Kept: g.kept,
					Message: fmt.Sprintf("%s: of its %s, %s %s in none of this project's datasets; %s.", who, w.Annotators, joinQuoted(g.cols), launchPlural(len(g.cols), "is", "are"), have(w.AnnotatorsNone))})
			}
		}
	}
	return out
}
