package report

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// HumanUse says which human ratings a report used: the imported column,
// the ratings made in the browser, or both, and up to when. A report reads
// browser ratings only when a person asked for it (models.SetRunHumanSource),
// and then only those stored until that moment, so a new rating never
// changes a report silently.
type HumanUse struct {
	Source models.HumanSource
	// AsOf is when the source was chosen; nil for the default (imported).
	AsOf     *time.Time
	ChosenBy string
	// UptoRatingID is the newest browser rating the report may read.
	UptoRatingID int64
	// BrowserRatings counts the browser reviewers' current ratings (with a
	// score) the report read, over all criteria.
	BrowserRatings int
}

// Text says in words which human ratings were used.
func (u HumanUse) Text() string {
	src := u.Source
	if src == "" {
		src = models.HumansImported
	}
	s := src.Label()
	if src != models.HumansImported {
		s += fmt.Sprintf(" (%d browser ratings", u.BrowserRatings)
		if u.AsOf != nil {
			s += " made up to " + u.AsOf.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		s += ")"
	}
	return s
}

// HumanSourceText says which human ratings the report used.
func (p Provenance) HumanSourceText() string { return p.HumanUse.Text() }

// chosenReviews reads the run's choice of human ratings: what a report
// states it used, and per criterion the browser ratings it may read (nil
// under the imported source, and before any browser rating was made).
func chosenReviews(ctx context.Context, db *models.DB, wsID int64, run models.Run) (HumanUse, [][]models.ReviewRating, error) {
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return HumanUse{}, nil, err
	}
	return reviewsOfChoice(ctx, db, wsID, run, choice)
}

// reviewsOfChoice is chosenReviews for a choice already read.
func reviewsOfChoice(ctx context.Context, db *models.DB, wsID int64, run models.Run, choice models.RunHumanSource) (HumanUse, [][]models.ReviewRating, error) {
	use := HumanUse{Source: choice.Source}
	if choice.Source == models.HumansImported || choice.Source == "" {
		use.Source = models.HumansImported
		return use, nil, nil
	}
	at := choice.AsOf
	use.AsOf, use.ChosenBy, use.UptoRatingID = &at, choice.ChosenBy, choice.UptoRatingID
	reviews := make([][]models.ReviewRating, len(run.RubricSnapshot.Criteria))
	if choice.UptoRatingID == 0 { // there was no browser rating yet
		return use, reviews, nil
	}
	// Only the ratings given on the criterion's human scale (the rubric's
	// range): a rating given on another scale is not one on this scale. A
	// run that cannot say its human scale reads none.
	scales := make([]*evaluator.Scale, len(reviews))
	var names []string
	all, refused, err := db.RunHumanScales(ctx, run)
	if err != nil {
		return use, nil, err
	}
	for i := range run.RubricSnapshot.Criteria {
		if refused[i] != nil {
			continue
		}
		scales[i] = &all[i]
		names = append(names, run.RubricSnapshot.Criteria[i].Name)
	}
	// Every criterion's reviews in one query.
	byName, err := db.ListCriteriaReviews(ctx, wsID, run.DatasetID, names, choice.UptoRatingID)
	if err != nil {
		return use, nil, err
	}
	for i, crit := range run.RubricSnapshot.Criteria {
		if scales[i] == nil {
			continue
		}
		reviews[i] = models.OnScale(byName[crit.Name], *scales[i])
		for _, r := range models.CurrentReviews(reviews[i]) {
			if r.Score != nil {
				use.BrowserRatings++
			}
		}
	}
	return use, reviews, nil
}

// applyHumanSource reads the run's chosen human ratings into the rows and
// the run's criteria (copies; nothing stored changes), ready for
// ComputeWith, and says what it used.
func applyHumanSource(ctx context.Context, db *models.DB, wsID int64, run models.Run, rows []models.DatasetRow) (models.Run, []models.DatasetRow, HumanUse, error) {
	use, reviews, err := chosenReviews(ctx, db, wsID, run)
	if err != nil || use.Source == models.HumansImported {
		return run, rows, use, err
	}
	crits := append(run.RubricSnapshot.Criteria[:0:0], run.RubricSnapshot.Criteria...)
	for i, crit := range crits {
		rows, crits[i] = models.MergeHumanRatings(rows, crit, use.Source, reviews[i])
	}
	run.RubricSnapshot.Criteria = crits
	return run, rows, use, nil
}

// usedRatingsKey hashes the browser ratings a report of the run reads
// under the choice (reviewsOfChoice: up to the choice's cut-off and on the
// criterion's human scale), "" under the imported source. The stored
// summary and per-sample results are keyed by it, so a change in which
// ratings count (a rule such as models.OnScale, a run whose human scale
// can no longer be told) makes them stale: the source and cut-off alone
// do not say which ratings were read.
func usedRatingsKey(ctx context.Context, db *models.DB, run models.Run, choice models.RunHumanSource) (string, error) {
	use, reviews, err := reviewsOfChoice(ctx, db, run.WorkspaceID, run, choice)
	if err != nil || use.Source == models.HumansImported {
		return "", err
	}
	h := sha256.New()
	for ci, rs := range reviews {
		fmt.Fprintf(h, "criterion %d:", ci)
		for _, r := range rs {
			score := "-"
			if r.Score != nil {
				score = strconv.FormatFloat(*r.Score, 'g', -1, 64)
			}
			// Who rated, by name and by identity (models.ReviewerKey): an
			// account and a typed name that read alike are two annotators
			// (models.BrowserAnnotatorKeys), and a summary stored when they
			// were merged into one must not be served.
			who := r.ReviewerKey()
			fmt.Fprintf(h, "%d,%d,%s,%g,%g,%d:%s,%d:%s;", r.ID, r.RowID, score, r.Lo, r.Hi, len(r.Reviewer), r.Reviewer, len(who), who)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
