package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/internal/stamp"
	"github.com/batcheval/batcheval/models"
)

// APIReview is one review of a sample by a reviewer: their rating on the
// criterion's scale, whether they agree with the judge, and notes. Every
// submission is kept; a reviewer's current review of a sample is their
// latest.
type APIReview struct {
	ID          int64  `json:"id"`
	DatasetID   int64  `json:"dataset_id"`
	Reviewer    string `json:"reviewer"`
	UserID      *int64 `json:"user_id"`
	Criterion   string `json:"criterion"`
	HumanColumn string `json:"human_column"`
	// SampleID is the sample's id in the dataset; RowID its stored row.
	SampleID string `json:"sample_id"`
	RowID    int64  `json:"row_id"`
	// RunID is the run whose judge was under review; nil when none.
	RunID *int64 `json:"run_id"`
	// Rating is nil when the reviewer gave none (a comment only).
	Rating *float64 `json:"rating"`
	Lo     float64  `json:"lo"`
	Hi     float64  `json:"hi"`
	// Agree: true agrees with the judge's analysis, false disagrees, nil
	// did not say.
	Agree     *bool      `json:"agree"`
	Reason    string     `json:"reason"`
	Comment   string     `json:"comment"`
	Tags      []string   `json:"tags"`
	CreatedAt stamp.Time `json:"created_at"`
	// FormerMember: the review's account is no longer a member of the
	// workspace; its ratings still count unless Excluded.
	FormerMember bool `json:"former_member"`
	// Excluded: an owner excluded the account's ratings, which no report,
	// alignment or export reads.
	Excluded bool `json:"excluded"`
}

func apiReview(r models.ReviewRating, sampleID string, marks raterMarks) APIReview {
	former, excluded := marks.of(r)
	return APIReview{ID: r.ID, DatasetID: r.DatasetID, Reviewer: r.Reviewer, UserID: r.UserID, Criterion: r.Criterion,
		HumanColumn: r.HumanColumn, SampleID: sampleID, RowID: r.RowID, RunID: r.RunID, Rating: r.Score, Lo: r.Lo, Hi: r.Hi,
		Agree: r.Agree, Reason: r.Reason, Comment: r.Comment, Tags: nonNil(r.Tags), FormerMember: former, Excluded: excluded,
		// Microseconds (package stamp): what PostgreSQL keeps, so the
		// answer to a post and the list show the same time.
		CreatedAt: stamp.Of(r.CreatedAt)}
}

// APIReviewInput is a review posted through the API. The run names the
// judge under review and gives the criterion its scale; the sample is
// named by its id in the dataset (sample_id) or its stored row (row_id).
// The reviewer is the token's account.
//
// A reviewer's latest review is their current one. A review without a
// rating keeps the reviewer's current rating of the sample (a comment
// added later must not withdraw it); clear_rating withdraws it.
type APIReviewInput struct {
	RunID       int64    `json:"run_id"`
	Criterion   string   `json:"criterion"`
	SampleID    string   `json:"sample_id"`
	RowID       int64    `json:"row_id"`
	Rating      *float64 `json:"rating"`
	ClearRating bool     `json:"clear_rating"`
	Agree       *bool    `json:"agree"`
	Reason      string   `json:"reason"`
	Comment     string   `json:"comment"`
	Tags        []string `json:"tags"`
}

// apiListReviews lists every review of a dataset, all criteria, oldest
// first, a page at a time; ?criterion= keeps one criterion's.
func (h *Handlers) apiListReviews(c echo.Context) error {
	ctx := c.Request().Context()
	ds, err := h.datasetOfParam(c)
	if err != nil {
		return err
	}
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	// The page's reviews and one more, read in the database: a dataset of
	// 100,000 reviews reads a page, not every review
	// (TestAPIListsReadTheirPage).
	rs, err := h.DB.ListReviewsAfter(ctx, ds.WorkspaceID, ds.ID, c.QueryParam("criterion"), after, limit+1)
	if err != nil {
		return err
	}
	if crit := c.QueryParam("criterion"); crit != "" && len(rs) == 0 {
		// No review of it: a criterion of the dataset not reviewed yet,
		// or a name the dataset has no criterion of (a typo, another
		// dataset's), which an empty list would pass off as "no reviews".
		if err := h.checkReviewCriterion(c, ds, crit); err != nil {
			return err
		}
	}
	page := keysetPage(rs, limit, func(r models.ReviewRating) int64 { return r.ID }, func(r models.ReviewRating) models.ReviewRating { return r })
	// Sample ids of this page's rows only.
	var rowIDs []int64
	for _, r := range page.Items {
		rowIDs = append(rowIDs, r.RowID)
	}
	rows := map[int64]models.DatasetRow{}
	if len(rowIDs) > 0 {
		if rows, err = h.DB.FindDatasetRows(ctx, ds.ID, rowIDs); err != nil {
			return err
		}
	}
	marks, err := h.raterMarksOf(ctx, ds.WorkspaceID)
	if err != nil {
		return err
	}
	out := Page[APIReview]{Items: []APIReview{}, NextCursor: page.NextCursor}
	for _, r := range page.Items {
		out.Items = append(out.Items, apiReview(r, rows[r.RowID].ExternalID, marks))
	}
	return c.JSON(http.StatusOK, out)
}

// apiCreateReview stores one review by the token's account, with the
// same checks as the review form (models.AddReviewRating).
func (h *Handlers) apiCreateReview(c echo.Context) error {
	ctx := c.Request().Context()
	ds, err := h.datasetOfParam(c)
	if err != nil {
		return err
	}
	var in APIReviewInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if in.RunID == 0 {
		return models.Errorf(models.EInvalid, "run_id names the run whose judge is under review (it gives the criterion its scale)")
	}
	run, err := h.DB.FindRun(ctx, ds.WorkspaceID, in.RunID)
	if err != nil {
		return err
	}
	if run.DatasetID != ds.ID {
		return models.Errorf(models.EInvalid, "run %d did not judge this dataset", run.ID)
	}
	ci := -1
	for i, cr := range run.RubricSnapshot.Criteria {
		if cr.Name == in.Criterion {
			ci = i
		}
	}
	if ci < 0 {
		return models.Errorf(models.EInvalid, "the run's rubric has no criterion %q", in.Criterion)
	}
	crit := run.RubricSnapshot.Criteria[ci]
	// On the rubric's scale, whatever scale the run's method judged on.
	scale, err := h.DB.RunHumanScale(ctx, run, ci)
	if err != nil {
		return err
	}
	rowID, sampleID, err := h.apiReviewRow(c, ds, in)
	if err != nil {
		return err
	}
	name, userID, _ := h.reviewer(c)
	if in.ClearRating && in.Rating != nil {
		return models.Errorf(models.EInvalid, "a review either gives a rating or clears the current one (clear_rating), not both")
	}
	if in.ClearRating && in.Agree == nil && strings.TrimSpace(in.Comment) == "" && len(in.Tags) == 0 {
		// The withdrawal is a review like any other, kept with the rest:
		// it says why.
		return models.Errorf(models.EInvalid, "clear_rating withdraws your rating of the sample: say why in comment")
	}
	score := in.Rating
	if score == nil && !in.ClearRating {
		// What the reviewer's current review of the sample rated, kept.
		if score, err = h.keptRating(ctx, ds, crit.Name, scale, rowID, models.ReviewerKeyOf(name, userID)); err != nil {
			return err
		}
	}
	tags := models.ParseReviewTags(strings.Join(in.Tags, ","))
	r, err := h.DB.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ds.WorkspaceID, DatasetID: ds.ID, RowID: rowID,
		Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: name, UserID: userID, RunID: &run.ID, Score: score,
		Lo: scale.Lo, Hi: scale.Hi, Agree: in.Agree, Reason: in.Reason, Comment: in.Comment, Tags: tags})
	if err != nil {
		return err
	}
	marks, err := h.raterMarksOf(ctx, ds.WorkspaceID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, apiReview(r, sampleID, marks))
}

// apiReviewRow finds the reviewed sample of the dataset by its sample id
// or its row id (both must agree when both are given).
func (h *Handlers) apiReviewRow(c echo.Context, ds models.Dataset, in APIReviewInput) (int64, string, error) {
	ctx := c.Request().Context()
	if in.SampleID == "" && in.RowID == 0 {
		return 0, "", models.Errorf(models.EInvalid, "name the sample: sample_id (its id in the dataset) or row_id")
	}
	if in.SampleID == "" {
		rows, err := h.DB.FindDatasetRows(ctx, ds.ID, []int64{in.RowID})
		if err != nil {
			return 0, "", err
		}
		row, ok := rows[in.RowID]
		if !ok {
			return 0, "", models.Errorf(models.ENotFound, "sample %d is not part of this dataset", in.RowID)
		}
		return row.ID, row.ExternalID, nil
	}
	// Through the sample id's index: reading every row to find one made a
	// review of a large dataset cost a scan of it.
	r, found, err := h.DB.FindDatasetRowByExternalID(ctx, ds.ID, in.SampleID)
	switch {
	case err != nil:
		return 0, "", err
	case !found:
		return 0, "", models.Errorf(models.ENotFound, "the dataset has no sample %q", in.SampleID)
	case in.RowID != 0 && in.RowID != r.ID:
		return 0, "", models.Errorf(models.EInvalid, "sample_id %q is row %d, not row %d", in.SampleID, r.ID, in.RowID)
	}
	return r.ID, r.ExternalID, nil
}

// raterMarks say of a review's account whether it is still a member of
// the workspace and whether an owner excluded its ratings
// (models.SetRatingsExcluded), for the pages and answers that list
// reviews.
type raterMarks struct {
	members, excluded map[int64]bool
}

// raterMarksOf reads the workspace's members and excluded raters.
func (h *Handlers) raterMarksOf(ctx context.Context, wsID int64) (raterMarks, error) {
	members, err := h.DB.MemberIDs(ctx, wsID)
	if err != nil {
		return raterMarks{}, err
	}
	excluded, err := h.DB.ExcludedRaters(ctx, wsID)
	return raterMarks{members: members, excluded: excluded}, err
}

// of says whether the review's account left the workspace and whether its
// ratings are excluded; a review without an account (a name typed in
// local mode) is neither.
func (m raterMarks) of(r models.ReviewRating) (former, excluded bool) {
	if r.UserID == nil {
		return false, false
	}
	return !m.members[*r.UserID], m.excluded[*r.UserID]
}

// mark sets the reviews' FormerMember and Excluded, for a page that lists
// them.
func (m raterMarks) mark(rs []models.ReviewRating) {
	for i := range rs {
		rs[i].FormerMember, rs[i].Excluded = m.of(rs[i])
	}
}

// checkReviewCriterion refuses (400) a ?criterion= the dataset has no
// criterion of, naming the ones it has (models.DatasetCriteria).
func (h *Handlers) checkReviewCriterion(c echo.Context, ds models.Dataset, crit string) error {
	names, err := h.DB.DatasetCriteria(c.Request().Context(), ds.WorkspaceID, ds.ID)
	if err != nil {
		return err
	}
	if slices.Contains(names, crit) {
		return nil
	}
	has := "it has none yet (no run of it and no review names one)"
	if len(names) > 0 {
		has = "its criteria are " + quotedList(names) + " (names are matched exactly, case included)"
	}
	return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("dataset %d has no criterion %q: %s", ds.ID, crit, has))
}
