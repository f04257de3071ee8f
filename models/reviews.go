package models

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
)

// ReviewRating is one submission of the review form in the browser: a
// reviewer's own rating of a sample on a criterion's scale, whether they
// agree with the judge's analysis (and why not), a comment and tags. Every
// submission is kept; a reviewer's current review of a sample is their
// latest one.
type ReviewRating struct {
	ID          int64
	WorkspaceID int64
	DatasetID   int64
	RowID       int64
	// Criterion is the rubric criterion's name; HumanColumn its human
	// rating column in the rubric of the rating ("" when none).
	Criterion   string
	HumanColumn string
	// Reviewer is who rated: an account's name and email, or the name a
	// local user typed.
	Reviewer string
	UserID   *int64
	// RunID is the run whose judge was under review, when there was one.
	RunID *int64
	// Score is nil when the reviewer left the rating empty (a comment only).
	Score *float64
	// Lo and Hi are the criterion's scale when the rating was made.
	Lo, Hi float64
	// Agree: true agrees with the judge's analysis, false disagrees, nil
	// did not say.
	Agree     *bool
	Reason    string
	Comment   string
	Tags      []string `gorm:"serializer:json"`
	CreatedAt time.Time
	// FormerMember and Excluded are set by the pages that list reviews,
	// never stored: the reviewer's account is no longer a member of the
	// workspace (its ratings still count), and an owner excluded its
	// ratings (SetRatingsExcluded), which then count nowhere.
	FormerMember bool `gorm:"-"`
	Excluded     bool `gorm:"-"`
	// ReviewerName is the account's display name now, beside Reviewer
	// (its email, the name its reviews are keyed and exported under); ""
	// for an account without one and a name typed without accounts. Set
	// where Reviewer is the account's current email (withCurrentReviewers),
	// never stored.
	ReviewerName string `gorm:"-"`
	// NameRank numbers the accounts that reviewed in the workspace under
	// the same display name, in the order they first reviewed there (1:
	// the first, or the only one; 0 when unset: no display name, or not
	// read by withCurrentReviewers). AnnotatorName adds it from 2 on.
	NameRank int `gorm:"-"`
}

// Limits of the review form: a reason and a comment are notes, not
// documents; a handful of short tags is enough to sort samples by.
const (
	maxReviewText     = 4000
	maxReviewTags     = 10
	maxReviewTagChars = 40
	maxReviewerName   = 100
)

// RatingScaleError refuses a rating that is not a number on the scale lo
// to hi: the one wording of the API, the browser's form (which also says
// it of a rating that is not a number at all) and the checks here.
func RatingScaleError(lo, hi float64) error {
	return Errorf(EInvalid, "the rating must be a number from %g to %g", lo, hi)
}

// Validate reports the first problem of a review.
func (r ReviewRating) Validate() error {
	switch {
	case strings.TrimSpace(r.Reviewer) == "":
		return Errorf(EInvalid, "say who is reviewing: type your name")
	case utf8.RuneCountInString(r.Reviewer) > maxReviewerName:
		return Errorf(EInvalid, "a reviewer name has at most %d characters", maxReviewerName)
	case strings.TrimSpace(r.Criterion) == "":
		return Errorf(EInvalid, "Name the criterion the review is for: its criterion is empty.")
	case r.Score != nil && (math.IsNaN(*r.Score) || *r.Score < r.Lo || *r.Score > r.Hi):
		return RatingScaleError(r.Lo, r.Hi)
	case r.Agree == nil && strings.TrimSpace(r.Reason) != "":
		return Errorf(EInvalid, "a reason goes with agreeing or disagreeing: choose one")
	case utf8.RuneCountInString(r.Reason) > maxReviewText || utf8.RuneCountInString(r.Comment) > maxReviewText:
		return Errorf(EInvalid, "a reason or comment has at most %d characters", maxReviewText)
	case len(r.Tags) > maxReviewTags:
		return Errorf(EInvalid, "a review takes at most %d tags and this one has %d: remove %d, then save again", maxReviewTags, len(r.Tags), len(r.Tags)-maxReviewTags)
	case r.Score == nil && r.Agree == nil && strings.TrimSpace(r.Comment) == "" && len(r.Tags) == 0:
		return Errorf(EInvalid, "the review is empty: rate the sample, agree or disagree, or comment")
	}
	if err := CheckOneLine("reviewer name", r.Reviewer); err != nil {
		return err
	}
	for _, t := range r.Tags {
		if utf8.RuneCountInString(t) > maxReviewTagChars {
			return Errorf(EInvalid, "a tag has at most %d characters", maxReviewTagChars)
		}
		if err := CheckOneLine(fmt.Sprintf("tag %q", OneLine(t)), t); err != nil {
			return err
		}
	}
	return nil
}

// ParseReviewTags splits a comma-separated tag list, trimmed, without
// empty or repeated tags.
func ParseReviewTags(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// AddReviewRating stores a review of a sample of a dataset of the
// workspace; the sample must belong to the dataset.
func (db *DB) AddReviewRating(ctx context.Context, r ReviewRating) (ReviewRating, error) {
	r.Reviewer = strings.TrimSpace(r.Reviewer)
	r.Reason, r.Comment = strings.TrimSpace(r.Reason), strings.TrimSpace(r.Comment)
	if r.Tags == nil {
		r.Tags = []string{}
	}
	if err := r.Validate(); err != nil {
		return ReviewRating{}, err
	}
	if _, err := db.FindDataset(ctx, r.WorkspaceID, r.DatasetID); err != nil {
		return ReviewRating{}, err
	}
	rows, err := db.FindDatasetRows(ctx, r.DatasetID, []int64{r.RowID})
	if err != nil {
		return ReviewRating{}, err
	}
	if _, ok := rows[r.RowID]; !ok {
		return ReviewRating{}, Errorf(ENotFound, "sample %d is not part of this dataset", r.RowID)
	}
	r.ID = 0
	r.CreatedAt = time.Now().UTC()
	return r, db.Gorm.WithContext(ctx).Create(&r).Error
}

// ListReviewRatings returns every review of a dataset's criterion, oldest
// first; uptoID > 0 keeps those with an id up to it.
func (db *DB) ListReviewRatings(ctx context.Context, wsID, datasetID int64, criterion string, uptoID int64) ([]ReviewRating, error) {
	q := db.Reader(ctx).Where("workspace_id = ? AND dataset_id = ? AND criterion = ?", wsID, datasetID, criterion)
	if uptoID > 0 {
		q = q.Where("id <= ?", uptoID)
	}
	var rs []ReviewRating
	if err := q.Order("id").Find(&rs).Error; err != nil {
		return nil, err
	}
	return rs, db.withCurrentReviewers(ctx, wsID, rs)
}

// ListCriteriaRatings returns the ratings of every review of the
// dataset's named criteria, oldest first, by criterion name, in one query
// (and one more for the reviewers' current emails); uptoID > 0 keeps those
// with an id up to it. Only what reading human ratings needs is read and
// set: the id, sample, criterion, human column, reviewer (name and
// account), rating and scale; the review's run, agreement, reason,
// comment, tags and time are not (ListRowsCriteriaReviews reads whole
// reviews, of the samples a page shows). A report, a run's page and an
// alignment read every rating of a run's dataset: at 100,000 reviews,
// reading whole reviews through GORM's struct scan was most of their time
// (BENCHMARKS.md, "Browser ratings read by their columns").
func (db *DB) ListCriteriaRatings(ctx context.Context, wsID, datasetID int64, criteria []string, uptoID int64) (map[string][]ReviewRating, error) {
	out := map[string][]ReviewRating{}
	if len(criteria) == 0 {
		return out, nil
	}
	q := "SELECT id, row_id, criterion, human_column, reviewer, user_id, score, lo, hi FROM review_ratings WHERE workspace_id = ? AND dataset_id = ? AND criterion IN ?"
	args := []any{wsID, datasetID, criteria}
	if uptoID > 0 {
		q += " AND id <= ?"
		args = append(args, uptoID)
	}
	// In no order: the index the query reads gives them by criterion and
	// sample, and sorting them by id in SQL (SQLite's sorter) cost more
	// than sorting each criterion's here.
	return db.ratingsByCriterion(ctx, wsID, datasetID, q, args, out)
}

// scanRatings runs q, which selects review_ratings' id, row_id, criterion,
// human_column, reviewer, user_id, score, lo and hi (in that order), and
// calls fn with each review read, streamed: only those fields are set.
func (db *DB) scanRatings(ctx context.Context, wsID, datasetID int64, q string, args []any, fn func(ReviewRating)) error {
	rows, err := db.Reader(ctx).Raw(q, args...).Rows()
	if err != nil {
		return fmt.Errorf("read the ratings of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	// The criterion, column and reviewer texts repeat from review to
	// review: each is kept once (a lookup by the scanned bytes allocates
	// nothing), where scanning them as strings made three each.
	texts := map[string]string{}
	text := func(b sql.RawBytes) string {
		if t, ok := texts[string(b)]; ok {
			return t
		}
		t := string(b)
		texts[t] = t
		return t
	}
	var crit, col, who sql.RawBytes
	var user sql.NullInt64
	var score sql.NullFloat64
	for rows.Next() {
		r := ReviewRating{WorkspaceID: wsID, DatasetID: datasetID}
		if err := rows.Scan(&r.ID, &r.RowID, &crit, &col, &who, &user, &score, &r.Lo, &r.Hi); err != nil {
			return fmt.Errorf("read the ratings of dataset %d: %w", datasetID, err)
		}
		r.Criterion, r.HumanColumn, r.Reviewer = text(crit), text(col), text(who)
		if user.Valid {
			id := user.Int64
			r.UserID = &id
		}
		if score.Valid {
			x := score.Float64
			r.Score = &x
		}
		fn(r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the ratings of dataset %d: %w", datasetID, err)
	}
	return nil
}

// ListCurrentRatings returns, of a dataset's criteria (the keys of
// scales), each reviewer's current review of each sample on the
// criterion's scale as it stood with the reviews stored up to uptoID (0:
// all of them), by criterion name, oldest first: their latest review of
// the sample on that scale with an id up to it, a reviewer as ReviewerKey
// identifies them (the account, else the name typed), whether it holds a
// rating or withdrew one. It is what CurrentReviews(OnScale(reviews up to
// uptoID, scale)) keeps of ListCriteriaRatings' reviews, with the same
// fields set, but picked in SQL (the largest id of each sample, reviewer
// and scale), in one query streamed: a report reads the reviews it uses, not every review of
// the dataset with the ratings they replaced, withdrew or gave on another
// scale. Excluded raters are not left out (WithoutExcluded).
func (db *DB) ListCurrentRatings(ctx context.Context, wsID, datasetID int64, scales map[string]evaluator.Scale, uptoID int64) (map[string][]ReviewRating, error) {
	return db.listCurrentRatings(ctx, wsID, datasetID, scales, uptoID, false)
}

// ListCurrentRatingsNowAndAt is ListCurrentRatings at two moments in one
// query: of each reviewer's reviews of each sample on the criterion's
// scale, the current one now and the current one as of uptoID (often one
// and the same review), by criterion name, oldest first. Of what it
// returns, CurrentReviews(OnScale(reviews with an id up to uptoID, scale))
// is what ListCurrentRatings(uptoID) returns and CurrentReviews of all of
// them what ListCurrentRatings(0) returns: a page that shows the ratings a
// run's report read (as of its cut-off) beside those given since (a
// rating since given, changed or withdrawn) reads these, never the
// reviews they replaced. uptoID 0 is ListCurrentRatings(0).
func (db *DB) ListCurrentRatingsNowAndAt(ctx context.Context, wsID, datasetID int64, scales map[string]evaluator.Scale, uptoID int64) (map[string][]ReviewRating, error) {
	return db.listCurrentRatings(ctx, wsID, datasetID, scales, uptoID, uptoID > 0)
}

// listCurrentRatings is ListCurrentRatings (andNow false) and
// ListCurrentRatingsNowAndAt (andNow true, uptoID > 0): the one place
// that says which review is a reviewer's current one.
func (db *DB) listCurrentRatings(ctx context.Context, wsID, datasetID int64, scales map[string]evaluator.Scale, uptoID int64, andNow bool) (map[string][]ReviewRating, error) {
	out := map[string][]ReviewRating{}
	if len(scales) == 0 {
		return out, nil
	}
	var args []any
	if andNow {
		args = append(args, uptoID)
	}
	args = append(args, wsID, datasetID)
	var each []string
	for _, name := range slices.Sorted(maps.Keys(scales)) {
		each = append(each, "(m.criterion = ? AND m.lo = ? AND m.hi = ?)")
		args = append(args, name, scales[name].Lo, scales[name].Hi)
	}
	upto := ""
	if uptoID > 0 && !andNow {
		upto = " AND m.id <= ?"
		args = append(args, uptoID)
	}
	// The latest review of each sample by each reviewer on the criterion's
	// scale (the scale is the criterion's, so grouping by criterion is by
	// scale too): the largest id of its group, a reviewer grouped by the
	// account, else (no account) by the name typed. One pass over the
	// criteria's reviews and a sort in the database, then each current
	// review read by its key; an anti-join that looked for a later review
	// of each review cost more than reading them all (BENCHMARKS.md,
	// reviews46). Both moments come from the same pass: the group's
	// largest id, and its largest id up to the cut-off.
	pick := "MAX(m.id)"
	if andNow {
		pick = "MAX(m.id) AS now_id, MAX(CASE WHEN m.id <= ? THEN m.id END) AS then_id"
	}
	groups := "SELECT " + pick + " FROM review_ratings m WHERE m.workspace_id = ? AND m.dataset_id = ? AND (" + strings.Join(each, " OR ") + ")" + upto +
		" GROUP BY m.criterion, m.row_id, m.user_id, CASE WHEN m.user_id IS NULL THEN m.reviewer END"
	const cols = "SELECT r.id, r.row_id, r.criterion, r.human_column, r.reviewer, r.user_id, r.score, r.lo, r.hi FROM review_ratings r"
	q := cols + " WHERE r.id IN (" + groups + ")"
	if andNow {
		q = "WITH g AS (" + groups + ") " + cols + " WHERE r.id IN (SELECT now_id FROM g UNION SELECT then_id FROM g WHERE then_id IS NOT NULL)"
	}
	return db.ratingsByCriterion(ctx, wsID, datasetID, q, args, out)
}

// ListRowsCriteriaReviews returns the whole reviews of the dataset's named
// criteria on some of its samples only (rowIDs, at most a chunk of rows: a
// report written a chunk at a time reads the reviews of each chunk, and a
// page those of the samples it shows), oldest first, by criterion name.
func (db *DB) ListRowsCriteriaReviews(ctx context.Context, wsID, datasetID int64, criteria []string, rowIDs []int64) (map[string][]ReviewRating, error) {
	out := map[string][]ReviewRating{}
	if len(criteria) == 0 || len(rowIDs) == 0 {
		return out, nil
	}
	// Sorted by id here, not in SQL: asked for in id order, SQLite reads
	// them through an index in id order (review_ratings_dataset), every
	// review of the dataset, where review_ratings_sample finds the rows'
	// own (TestRowsReviewsReadThroughTheirSamples).
	var rs []ReviewRating
	if err := db.Reader(ctx).Where("workspace_id = ? AND dataset_id = ? AND criterion IN ? AND row_id IN ?", wsID, datasetID, criteria, rowIDs).
		Find(&rs).Error; err != nil {
		return nil, err
	}
	slices.SortFunc(rs, func(a, b ReviewRating) int { return cmp.Compare(a.ID, b.ID) })
	if err := db.withCurrentReviewers(ctx, wsID, rs); err != nil {
		return nil, err
	}
	for _, r := range rs {
		out[r.Criterion] = append(out[r.Criterion], r)
	}
	return out, nil
}

// ListDatasetReviews returns every review of a dataset, all criteria,
// oldest first.
func (db *DB) ListDatasetReviews(ctx context.Context, wsID, datasetID int64) ([]ReviewRating, error) {
	var rs []ReviewRating
	if err := db.Reader(ctx).Where("workspace_id = ? AND dataset_id = ?", wsID, datasetID).Order("id").Find(&rs).Error; err != nil {
		return nil, err
	}
	return rs, db.withCurrentReviewers(ctx, wsID, rs)
}

// DatasetCriteria names the criteria a dataset's reviews can be of,
// sorted: those its reviews name and those of the rubrics its runs were
// launched with (trashed runs included: their reviews stay). The API's
// reviews list says them when asked for a criterion the dataset has not.
func (db *DB) DatasetCriteria(ctx context.Context, wsID, datasetID int64) ([]string, error) {
	var names []string
	if err := db.Reader(ctx).Model(&ReviewRating{}).Where("workspace_id = ? AND dataset_id = ?", wsID, datasetID).
		Distinct("criterion").Pluck("criterion", &names).Error; err != nil {
		return nil, err
	}
	var runs []Run
	if err := db.Reader(ctx).Select("id", "rubric_snapshot").Where("workspace_id = ? AND dataset_id = ?", wsID, datasetID).
		Find(&runs).Error; err != nil {
		return nil, err
	}
	for _, r := range runs {
		for _, c := range r.RubricSnapshot.Criteria {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// ListReviewsAfter is a page of a dataset's reviews, oldest first, each
// whole: at most limit of those with an id above afterID, of one criterion
// (or every criterion when criterion is ""), read in the database (through
// review_ratings_dataset, skipping other criteria's), as the API's keyset
// pages ask; ListDatasetReviews and ListReviewRatings read them all.
func (db *DB) ListReviewsAfter(ctx context.Context, wsID, datasetID int64, criterion string, afterID int64, limit int) ([]ReviewRating, error) {
	q := db.Reader(ctx).Where("workspace_id = ? AND dataset_id = ?", wsID, datasetID)
	if criterion != "" {
		q = q.Where("criterion = ?", criterion)
	}
	var rs []ReviewRating
	if err := q.Where("id > ?", afterID).Order("id").Limit(limit).Find(&rs).Error; err != nil {
		return nil, err
	}
	return rs, db.withCurrentReviewers(ctx, wsID, rs)
}

// withCurrentReviewers names each review of a signed-in reviewer (one with
// a user id) by the account's current email, the name an account reviews
// under: the email stored with a review is the one it had then, and a
// changed email must not make the account's earlier reviews someone
// else's. It sets the account's display name beside it (ReviewerName),
// which the pages show with the email and reports name the account by
// among the annotators (AnnotatorName). Reviews without a user id (a name
// typed without accounts, or an account since deleted) keep the name
// stored with them.
func (db *DB) withCurrentReviewers(ctx context.Context, wsID int64, rs []ReviewRating) error {
	seen := map[int64]bool{}
	var ids []int64
	for _, r := range rs {
		if r.UserID != nil && !seen[*r.UserID] {
			seen[*r.UserID] = true
			ids = append(ids, *r.UserID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var users []User
	if err := db.Reader(ctx).Select("id", "email", "name").Where("id IN ?", ids).Find(&users).Error; err != nil {
		return err
	}
	byID := make(map[int64]User, len(users))
	for _, u := range users {
		byID[u.ID] = u
	}
	for i := range rs {
		if rs[i].UserID == nil {
			continue
		}
		if u, ok := byID[*rs[i].UserID]; ok {
			rs[i].Reviewer = u.Email
			if n := strings.TrimSpace(u.Name); n != u.Email {
				rs[i].ReviewerName = n // "" when it has none
			}
		}
	}
	return db.rankReviewerNames(ctx, wsID, rs, users)
}

// rankReviewerNames sets NameRank on the reviews (of workspace wsID) of
// accounts with a display name: among the accounts that reviewed in the
// workspace under that name, in the order they first reviewed there (then
// by account), whichever reviews this read holds. So an account is the
// same annotator ("Ann (2)") on every page, export, report and criterion;
// a reviewer's key never moves because someone of the same name reviews
// later, even an account made earlier (the order of creation would hand
// the older account the plain name and move the other's past reviews to
// "Ann (2)", and every report computed before would read differently); and
// an account renamed to a name in use that had not reviewed before the
// others comes after them.
func (db *DB) rankReviewerNames(ctx context.Context, wsID int64, rs []ReviewRating, users []User) error {
	seen := map[string]bool{}
	var names []string
	for _, u := range users {
		if n := strings.TrimSpace(u.Name); n != "" && n != u.Email && !seen[u.Name] {
			seen[u.Name] = true
			names = append(names, u.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	reviewed := "EXISTS (SELECT 1 FROM review_ratings rr WHERE rr.user_id = users.id AND rr.workspace_id = ?)"
	var same []User
	if err := db.Reader(ctx).Select("id", "name").Where("name IN ?", names).Where(reviewed, wsID).Find(&same).Error; err != nil {
		return fmt.Errorf("find the reviewers who share a display name: %w", err)
	}
	byName := map[string][]int64{}
	for _, u := range same {
		n := strings.TrimSpace(u.Name)
		byName[n] = append(byName[n], u.ID)
	}
	rank := map[int64]int{}
	var shared []int64
	for _, ids := range byName {
		if len(ids) == 1 {
			rank[ids[0]] = 1 // the usual case: no first review to look up
		} else {
			shared = append(shared, ids...)
		}
	}
	if len(shared) > 0 {
		type first struct {
			UserID, First int64
		}
		var firsts []first
		if err := db.Reader(ctx).Table("review_ratings").Select("user_id, MIN(id) AS first").
			Where("workspace_id = ? AND user_id IN ?", wsID, shared).Group("user_id").Scan(&firsts).Error; err != nil {
			return fmt.Errorf("order the reviewers who share a display name: %w", err)
		}
		firstOf := map[int64]int64{}
		for _, f := range firsts {
			firstOf[f.UserID] = f.First
		}
		for _, ids := range byName {
			if len(ids) < 2 {
				continue
			}
			slices.SortFunc(ids, func(a, b int64) int {
				return cmp.Or(cmp.Compare(firstOf[a], firstOf[b]), cmp.Compare(a, b))
			})
			for i, id := range ids {
				rank[id] = i + 1
			}
		}
	}
	for i := range rs {
		if rs[i].UserID != nil && rs[i].ReviewerName != "" {
			rs[i].NameRank = rank[*rs[i].UserID]
		}
	}
	return nil
}

// ReviewerKeyOf identifies a reviewer: the account (its user id) when
// signed in, whatever its email is now; otherwise the name typed (reviews
// made without accounts, or by an account since deleted).
func ReviewerKeyOf(name string, userID *int64) string {
	if userID != nil {
		return "user:" + strconv.FormatInt(*userID, 10)
	}
	return "name:" + name
}

// ReviewerKey identifies who gave the review (ReviewerKeyOf).
func (r ReviewRating) ReviewerKey() string { return ReviewerKeyOf(r.Reviewer, r.UserID) }

// AnnotatorName is the reviewer as reports, figures and exports name them
// among a criterion's annotators (BrowserAnnotatorKeys): an account by its
// display name (ReviewerName, when the reader set it), not its email,
// which those would spread to wherever they are sent; an account without
// a display name of its own, and a name typed without an account, as
// Reviewer.
func (r ReviewRating) AnnotatorName() string {
	if r.UserID != nil && r.ReviewerName != "" {
		if r.NameRank > 1 {
			// Another account that reviewed here first has the name.
			return r.ReviewerName + " (" + strconv.Itoa(r.NameRank) + ")"
		}
		return r.ReviewerName
	}
	return r.Reviewer
}

// RunHumanScale is the scale people rate criterion ci of the run on: the
// rubric's own range, whatever scale the run's method asked the judge to
// use. LLM-Eval rescales every criterion to its 0 to 5 or 0 to 100 and now
// keeps the rubric's range beside it (evaluator.Criterion.RubricScale);
// for an LLM-Eval run stored before that, the range comes from the rubric
// version the run records. A run that records neither cannot say what
// people rate on: an EInvalid error says so and what to do.
func (db *DB) RunHumanScale(ctx context.Context, run Run, ci int) (evaluator.Scale, error) {
	return runHumanScale(run, ci, func() (*RubricVersion, error) { return db.findRunRubricVersion(ctx, run) })
}

// RunHumanScales is RunHumanScale for every criterion of the run, reading
// the run's rubric version at most once (only an LLM-Eval run stored before
// it kept the rubric's scale needs it): refused[i] is criterion i's
// EInvalid error, and scales[i] holds where it is nil. Another error
// (the database's) is err.
func (db *DB) RunHumanScales(ctx context.Context, run Run) (scales []evaluator.Scale, refused []error, err error) {
	var ver *RubricVersion
	var verErr error
	read := false
	version := func() (*RubricVersion, error) {
		if !read {
			ver, verErr = db.findRunRubricVersion(ctx, run)
			read = true
		}
		return ver, verErr
	}
	n := len(run.RubricSnapshot.Criteria)
	scales, refused = make([]evaluator.Scale, n), make([]error, n)
	for ci := range n {
		s, err := runHumanScale(run, ci, version)
		switch {
		case ErrorCode(err) == EInvalid:
			refused[ci] = err
		case err != nil:
			return nil, nil, err
		default:
			scales[ci] = s
		}
	}
	return scales, refused, nil
}

// findRunRubricVersion is the rubric version the run records; nil when it
// records none or the version is gone.
func (db *DB) findRunRubricVersion(ctx context.Context, run Run) (*RubricVersion, error) {
	if run.RubricID == nil || run.RubricVersion == nil {
		return nil, nil
	}
	ver, err := db.FindRubricVersion(ctx, run.WorkspaceID, *run.RubricID, *run.RubricVersion)
	if ErrorCode(err) == ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &ver, nil
}

// runHumanScale is RunHumanScale with the run's rubric version read by
// version, called only when the run's snapshot cannot say the scale.
func runHumanScale(run Run, ci int, version func() (*RubricVersion, error)) (evaluator.Scale, error) {
	if ci < 0 || ci >= len(run.RubricSnapshot.Criteria) {
		return evaluator.Scale{}, Errorf(EInvalid, "run %d has no criterion %d", run.ID, ci)
	}
	crit := run.RubricSnapshot.Criteria[ci]
	if crit.RubricScale != nil || run.Method != string(evaluator.MethodLLMEval) {
		return crit.HumanScale(), nil
	}
	refuse := Errorf(EInvalid, "run %d (LLM-Eval) scored %s on its own %g to %g scale and does not record the rubric's scale of it, "+
		"so ratings cannot be asked for on the rubric's scale from this run: open the review queue with another run of the rubric, or launch the LLM-Eval run again",
		run.ID, crit.Name, crit.Lo, crit.Hi)
	ver, err := version()
	if err != nil {
		return evaluator.Scale{}, err
	}
	if ver == nil {
		return evaluator.Scale{}, refuse
	}
	for _, c := range ver.Criteria {
		if c.Name == crit.Name {
			return c.HumanScale(), nil
		}
	}
	return evaluator.Scale{}, refuse
}

// OnScale keeps the reviews given on the scale: a review is a rating on
// the scale its form asked for (Lo, Hi), and one given on another scale
// (an LLM-Eval run's 0 to 5 before reviews were always asked for on the
// rubric's scale, or an older rubric version's range) is not a rating on
// this one. Filter before CurrentReviews, so a reviewer's current review on
// the scale is their latest on it.
func OnScale(all []ReviewRating, s evaluator.Scale) []ReviewRating {
	out := make([]ReviewRating, 0, len(all))
	for _, r := range all {
		if r.Lo == s.Lo && r.Hi == s.Hi {
			out = append(out, r)
		}
	}
	return out
}

// HumanKey is where the review's rating lives among a row's ratings, as
// the criterion's human rating: the criterion's human column in the rubric
// of the rating, or, without one, the criterion's name. Its reviewer is one
// more annotator of that key (BrowserAnnotatorKeys).
func (r ReviewRating) HumanKey() string {
	if r.HumanColumn != "" {
		return r.HumanColumn
	}
	return r.Criterion
}

// CurrentReviews keeps each reviewer's latest review of each sample (a
// reviewer as ReviewerKey identifies them), in order of sample and then
// reviewer.
func CurrentReviews(all []ReviewRating) []ReviewRating {
	type key struct {
		row      int64
		reviewer string
	}
	latest := map[key]ReviewRating{}
	for _, r := range all {
		k := key{r.RowID, r.ReviewerKey()}
		if cur, ok := latest[k]; !ok || r.ID > cur.ID {
			latest[k] = r
		}
	}
	out := make([]ReviewRating, 0, len(latest))
	for _, r := range latest {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].RowID != out[j].RowID {
			return out[i].RowID < out[j].RowID
		}
		if out[i].Reviewer != out[j].Reviewer {
			return out[i].Reviewer < out[j].Reviewer
		}
		return out[i].ReviewerKey() < out[j].ReviewerKey()
	})
	return out
}

// HumanSource says which human ratings a report uses.
type HumanSource string

// The human-rating sources.
const (
	// HumansImported: the ratings imported with the dataset (its rating
	// column and annotators' columns). The default.
	HumansImported HumanSource = "imported"
	// HumansBrowser: only the ratings made in the browser.
	HumansBrowser HumanSource = "browser"
	// HumansBoth: the imported ratings and the browser ratings together,
	// each browser reviewer counting as one more annotator.
	HumansBoth HumanSource = "both"
)

// ParseHumanSource reads a source name.
func ParseHumanSource(s string) (HumanSource, error) {
	switch HumanSource(s) {
	case HumansImported, HumansBrowser, HumansBoth:
		return HumanSource(s), nil
	}
	return "", Errorf(EInvalid, "human ratings come from %q, %q or %q, not %q", HumansImported, HumansBrowser, HumansBoth, s)
}

// Label names the source for people.
func (s HumanSource) Label() string {
	switch s {
	case HumansBrowser:
		return "browser ratings"
	case HumansBoth:
		return "imported column and browser ratings"
	}
	return "imported column"
}

// RunHumanSource is the human ratings a run's report uses, chosen by a
// person ("Recompute with browser ratings"): the source, and the browser
// ratings stored up to that moment (ids up to UptoRatingID).
type RunHumanSource struct {
	RunID        int64 `gorm:"primaryKey;autoIncrement:false"`
	Source       HumanSource
	AsOf         time.Time
	UptoRatingID int64
	ChosenBy     string
}

// FindRunHumanSource returns the run's choice; a run nobody chose for uses
// the imported ratings.
func (db *DB) FindRunHumanSource(ctx context.Context, runID int64) (RunHumanSource, error) {
	var s RunHumanSource
	err := db.Reader(ctx).Where("run_id = ?", runID).First(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return RunHumanSource{RunID: runID, Source: HumansImported}, nil
	}
	return s, err
}

// SetRunHumanSource makes a run's report use the source's ratings, with the
// browser ratings of the workspace stored until now.
func (db *DB) SetRunHumanSource(ctx context.Context, wsID, runID int64, source HumanSource, by string) (RunHumanSource, error) {
	if _, err := ParseHumanSource(string(source)); err != nil {
		return RunHumanSource{}, err
	}
	if _, err := db.FindRun(ctx, wsID, runID); err != nil {
		return RunHumanSource{}, err
	}
	var upto int64
	if err := db.Gorm.WithContext(ctx).Model(&ReviewRating{}).Where("workspace_id = ?", wsID).
		Select("COALESCE(MAX(id), 0)").Scan(&upto).Error; err != nil {
		return RunHumanSource{}, err
	}
	s := RunHumanSource{RunID: runID, Source: source, AsOf: time.Now().UTC(), UptoRatingID: upto, ChosenBy: by}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("run_id = ?", runID).Delete(&RunHumanSource{}).Error; err != nil {
			return err
		}
		if err := tx.Create(&s).Error; err != nil {
			return err
		}
		return tx.Model(&Run{}).Where("id = ?", runID).UpdateColumn("humans_version", gorm.Expr("humans_version + 1")).Error
	})
	return s, err
}

// browserAnnotatorPrefix marks a browser reviewer among a criterion's
// annotators ("<column>@browser:<reviewer>"), so a reviewer never takes
// the place of an imported annotator of the same name.
const browserAnnotatorPrefix = "browser:"

// BrowserAnnotatorKey names a browser reviewer's rating of a criterion
// whose human ratings live under key, as the dataset's rows and exports
// name it.
func BrowserAnnotatorKey(key, reviewer string) string {
	return key + "@" + browserAnnotatorPrefix + reviewer
}

// SplitBrowserAnnotatorKey splits an annotator key made by
// BrowserAnnotatorKey (or BrowserAnnotatorKeys) into the criterion's key
// and the reviewer as shown (with its "(account)" or "(typed name)" mark
// when it has one); ok is false for an imported annotator's column.
func SplitBrowserAnnotatorKey(annotator string) (key, reviewer string, ok bool) {
	return strings.Cut(annotator, "@"+browserAnnotatorPrefix)
}

// BrowserAnnotatorKeys names the reviewers of reviews as annotators of the
// criterion whose human ratings live under key, one per reviewer as
// ReviewerKey identifies them (an account, whatever its email is now, or a
// name typed without an account): keys lists their annotator keys, sorted
// by the name shown, and keyOf gives each reviewer's key by ReviewerKey.
// A reviewer's key is BrowserAnnotatorKey(key, name) unless an imported
// annotator (taken) or another reviewer shown under the same name has it:
// an account and a name typed without one can read alike (the account's
// email typed as a name), and a dataset imported from an export holds its
// reviewers' columns under those very keys. Those are told apart by what
// they are, "<key>@browser:<name> (typed name)" or "... (account)", and
// never merged into one annotator. An account comes before a typed name of
// the same text, so an account keeps the plain key.
func BrowserAnnotatorKeys(key string, reviews []ReviewRating, taken []string) (keys []string, keyOf map[string]string) {
	type reviewer struct{ id, name string }
	seen := map[string]bool{}
	var rs []reviewer
	for _, r := range reviews {
		if id := r.ReviewerKey(); !seen[id] {
			seen[id] = true
			rs = append(rs, reviewer{id, r.AnnotatorName()})
		}
	}
	account := func(id string) bool { return strings.HasPrefix(id, "user:") } // ReviewerKeyOf
	// Accounts by creation (their ids as numbers: "user:10" is made after
	// "user:9"), so the first keeps the plain key.
	accountID := func(id string) int64 {
		n, _ := strconv.ParseInt(strings.TrimPrefix(id, "user:"), 10, 64)
		return n
	}
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		switch {
		case a.name != b.name:
			return a.name < b.name
		case account(a.id) != account(b.id):
			return account(a.id)
		case account(a.id) && accountID(a.id) != accountID(b.id):
			return accountID(a.id) < accountID(b.id)
		}
		return a.id < b.id
	})
	used := make(map[string]bool, len(taken)+len(rs))
	for _, k := range taken {
		used[k] = true
	}
	keyOf = make(map[string]string, len(rs))
	for _, r := range rs {
		k := BrowserAnnotatorKey(key, r.name)
		what := "typed name"
		if account(r.id) {
			what = "account"
		}
		for n := 1; used[k]; n++ {
			k = BrowserAnnotatorKey(key, r.name) + " (" + what + ")"
			if n > 1 {
				k = BrowserAnnotatorKey(key, r.name) + " (" + what + " " + strconv.Itoa(n) + ")"
			}
		}
		used[k] = true
		keyOf[r.id] = k
		keys = append(keys, k)
	}
	return keys, keyOf
}

// HumanKey is where a criterion's human rating lives in a row's ratings:
// its human column, or, for a criterion without one, its name.
func HumanKey(crit evaluator.Criterion) string {
	if crit.HumanColumn != "" {
		return crit.HumanColumn
	}
	return crit.Name
}

// importedAnnotators lists a criterion's imported per-annotator rating
// keys: the explicit ones, else every "<column>@<annotator>" key of the
// rows (a dataset re-imported from an export holds its browser ratings as
// imported annotators' columns).
func importedAnnotators(crit evaluator.Criterion, rows []DatasetRow) []string {
	return AnnotatorColumns(crit.HumanColumn, crit.AnnotatorColumns, rows)
}

// AnnotatorColumns finds the per-annotator rating keys of a criterion: the
// explicit list when there is one, otherwise every "<human>@<annotator>"
// key the rows carry, sorted.
func AnnotatorColumns(human string, explicit []string, rows []DatasetRow) []string {
	if len(explicit) > 0 {
		return explicit
	}
	if human == "" {
		return nil
	}
	prefix := human + "@"
	seen := map[string]bool{}
	for _, r := range rows {
		for k := range r.Ratings {
			if strings.HasPrefix(k, prefix) {
				seen[k] = true
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AnnotatorMeanKey is the key a criterion with annotator columns and no
// human column holds its human rating under once read
// (WithAnnotatorMean), and what the pages and exports name as its human
// column: "mean of a1, a2, a3".
func AnnotatorMeanKey(cols []string) string {
	return "mean of " + strings.Join(cols, ", ")
}

// AnnotatorMeanKeyAmong is AnnotatorMeanKey made distinct from the
// dataset's own rating columns (taken): a real column named "mean of a1,
// a2, a3" (a file's own precomputed mean) keeps its ratings and its name,
// and the mean computed here is "mean of a1, a2, a3 (computed)" (or
// "(computed 2)"...). Before, the computed mean was stored over the real
// column's ratings, and a criterion reading that column read the
// computed mean under its name.
func AnnotatorMeanKeyAmong(cols []string, taken func(string) bool) string {
	key := AnnotatorMeanKey(cols)
	if !taken(key) {
		return key
	}
	for n := 1; ; n++ {
		k := key + " (computed)"
		if n > 1 {
			k = fmt.Sprintf("%s (computed %d)", key, n)
		}
		if !taken(k) {
			return k
		}
	}
}

// IsAnnotatorMeanKey reports whether key names the mean of cols computed
// by WithAnnotatorMean in a dataset whose rating columns are ratingCols.
func IsAnnotatorMeanKey(key string, cols, ratingCols []string) bool {
	if len(cols) == 0 {
		return false
	}
	return key == AnnotatorMeanKeyAmong(cols, func(k string) bool { return slices.Contains(ratingCols, k) })
}

// MeansAnnotators says whether a criterion's human rating is the mean of
// its annotator columns: it names annotator columns and no human column.
func MeansAnnotators(crit evaluator.Criterion) bool {
	return crit.HumanColumn == "" && len(crit.AnnotatorColumns) > 0
}

// AnnotatorMean is the mean of the row's readable ratings in cols; nil
// when none of them is readable (a sample nobody rated is missing, not 0).
func AnnotatorMean(row DatasetRow, cols []string) *float64 {
	var sum float64
	var k int
	for _, c := range cols {
		if v := row.Ratings[c]; v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
			sum += *v
			k++
		}
	}
	if k == 0 {
		return nil
	}
	m := sum / float64(k)
	return &m
}

// HumanOf is a row's imported human rating of crit: its human column's,
// or, for a criterion with annotator columns and no human column, the
// mean of the readable annotator ratings (MeansAnnotators); nil when
// there is none.
func HumanOf(row DatasetRow, crit evaluator.Criterion) *float64 {
	if MeansAnnotators(crit) {
		return AnnotatorMean(row, crit.AnnotatorColumns)
	}
	if crit.HumanColumn == "" {
		return nil
	}
	if v := row.Ratings[crit.HumanColumn]; v != nil && !math.IsNaN(*v) {
		return v
	}
	return nil
}

// WithAnnotatorMean returns the rows and the criterion as a report reads
// a criterion with annotator columns and no human column
// (MeansAnnotators) under the imported source: the rows' ratings (copied,
// never changed in place) hold each sample's human rating, the mean of
// its readable annotator ratings (nil when none), under
// AnnotatorMeanKey, which becomes the criterion's human column. Any other
// criterion comes back unchanged.
func WithAnnotatorMean(rows []DatasetRow, crit evaluator.Criterion) ([]DatasetRow, evaluator.Criterion) {
	return WithAnnotatorMeanAmong(rows, crit, RatingKeysOf(rows))
}

// RatingKeysOf reports the keys some row holds a rating under (every
// rating column of the dataset: the import stores each, empty or not).
func RatingKeysOf(rows []DatasetRow) func(string) bool {
	return func(k string) bool {
		for _, row := range rows {
			if _, ok := row.Ratings[k]; ok {
				return true
			}
		}
		return false
	}
}

// WithAnnotatorMeanAmong is WithAnnotatorMean with the rating keys the
// computed mean must not take given (AnnotatorMeanKeyAmong): a caller
// that applies it to several criteria in turn passes those of the rows it
// started from, so a mean stored for one criterion does not push another
// criterion's key aside.
func WithAnnotatorMeanAmong(rows []DatasetRow, crit evaluator.Criterion, taken func(string) bool) ([]DatasetRow, evaluator.Criterion) {
	if !MeansAnnotators(crit) {
		return rows, crit
	}
	// The key is not one of the rows' own ratings: a real column named
	// like it keeps its ratings.
	key := AnnotatorMeanKeyAmong(crit.AnnotatorColumns, taken)
	out := make([]DatasetRow, len(rows))
	for i, row := range rows {
		ratings := make(map[string]*float64, len(row.Ratings)+1)
		for k, v := range row.Ratings {
			ratings[k] = v
		}
		ratings[key] = AnnotatorMean(row, crit.AnnotatorColumns)
		row.Ratings = ratings
		out[i] = row
	}
	crit.HumanColumn = key
	return out, crit
}

// MergeHumanRatings returns the rows and the criterion as a report should
// read them for the source: the rows' ratings (copied, never changed in
// place) hold the criterion's human rating under its human key and each
// annotator's under the returned criterion's AnnotatorColumns.
//
//   - imported: unchanged, but for a criterion with annotator columns
//     and no human column, whose human rating is its annotators' mean
//     (WithAnnotatorMean).
//   - browser: the human rating is the mean of the browser reviewers'
//     current ratings; the annotators are those reviewers.
//   - both: the annotators are the imported ones (or, without any, the
//     imported rating as one annotator) and the browser reviewers; the
//     human rating is the mean of the annotators who rated the sample,
//     once the imported ratings are on the browser ratings' scale (the
//     rubric's; see ImportedOnScale). Without a browser rating of the
//     criterion, unchanged: the imported column as under imported.
//
// reviews are the criterion's browser reviews, all on one scale (OnScale;
// CurrentReviews is applied here); those without a score are skipped.
func MergeHumanRatings(rows []DatasetRow, crit evaluator.Criterion, source HumanSource, reviews []ReviewRating) ([]DatasetRow, evaluator.Criterion) {
	out, c, _ := MergeHumanRatingsOn(rows, crit, source, reviews, nil)
	return out, c
}

// ImportedSpan is the lowest and highest imported rating of a criterion
// that a merge under "both" averages (Seen false when there is none).
type ImportedSpan struct {
	Seen   bool
	Lo, Hi float64
}

// Add widens the span to hold v.
func (s *ImportedSpan) Add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if !s.Seen {
		s.Seen, s.Lo, s.Hi = true, v, v
		return
	}
	s.Lo, s.Hi = min(s.Lo, v), max(s.Hi, v)
}

// Join widens the span to hold o.
func (s *ImportedSpan) Join(o ImportedSpan) {
	if o.Seen {
		s.Add(o.Lo)
		s.Add(o.Hi)
	}
}

// ImportedRatingSpan is the span of the imported ratings that merging
// rows under "both" averages with browser ratings: every imported
// annotator's rating (or, without annotators, the imported column's),
// and the imported column's where no annotator rated the sample (there
// the column is the human rating). A span over part of the rows, joined
// over every part, is the span over all of them.
func ImportedRatingSpan(crit evaluator.Criterion, rows []DatasetRow) ImportedSpan {
	var sp ImportedSpan
	if crit.HumanColumn == "" {
		return sp
	}
	cols := importedAnnotators(crit, rows)
	for _, r := range rows {
		rated := false
		for _, c := range cols {
			if v := r.Ratings[c]; v != nil && !math.IsNaN(*v) {
				sp.Add(*v)
				rated = true
			}
		}
		if !rated {
			if v := r.Ratings[crit.HumanColumn]; v != nil {
				sp.Add(*v)
			}
		}
	}
	return sp
}

// ImportedOnScale says how a criterion's imported ratings were put on the
// browser ratings' scale (the rubric's) before the two were averaged,
// by the rule the reports use for imported ratings outside the rubric's
// range: ratings within the scale are taken as given; ratings outside it
// are mapped linearly from their lowest and highest values onto it; when
// those are one value, no mapping exists and the two are not averaged.
type ImportedOnScale struct {
	// Criterion is the criterion's name.
	Criterion string
	// Span is the imported ratings' lowest and highest values.
	Span ImportedSpan
	// Scale is the browser ratings' scale.
	Scale evaluator.Scale
	// Mapped: the imported ratings were mapped from Span onto Scale.
	Mapped bool
	// Apart: the imported ratings could not be put on the scale, so no
	// sample's human rating was combined (it is missing) and only the
	// browser reviewers count as annotators.
	Apart bool
}

// Note says in words what was done, "" when the imported ratings were
// taken as given (nothing to say).
func (m ImportedOnScale) Note() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	scale := num(m.Scale.Lo) + " to " + num(m.Scale.Hi)
	switch {
	case m.Mapped:
		return fmt.Sprintf("%s: the imported ratings (%s to %s) lie outside the rubric's %s, the browser ratings' scale, so before the two were averaged the imported ones were mapped linearly from their lowest and highest values onto it (%s becomes %s, %s becomes %s).",
			m.Criterion, num(m.Span.Lo), num(m.Span.Hi), scale, num(m.Span.Lo), num(m.Scale.Lo), num(m.Span.Hi), num(m.Scale.Hi))
	case m.Apart:
		return fmt.Sprintf("%s: the imported ratings (all %s) lie outside the rubric's %s, the browser ratings' scale, and one value cannot be mapped onto it, so they were not averaged with the browser ratings and the combined human rating is missing: recompute with the imported column or the browser ratings alone.",
			m.Criterion, num(m.Span.Lo), scale)
	}
	return ""
}

// DecideImportedOnScale applies ImportedOnScale's rule to a criterion's
// imported ratings spanning sp (over every row) and its browser reviews
// (all on one scale, OnScale): zero, nothing averaged, without a browser
// rating or an imported column.
func DecideImportedOnScale(crit evaluator.Criterion, sp ImportedSpan, reviews []ReviewRating) ImportedOnScale {
	var m ImportedOnScale
	if crit.HumanColumn == "" {
		return m
	}
	for _, r := range CurrentReviews(reviews) {
		if r.Score != nil {
			m = ImportedOnScale{Criterion: crit.Name, Span: sp, Scale: evaluator.Scale{Lo: r.Lo, Hi: r.Hi}}
			break
		}
	}
	if m.Criterion == "" || !sp.Seen || (sp.Lo >= m.Scale.Lo-1e-9 && sp.Hi <= m.Scale.Hi+1e-9) {
		return m
	}
	if sp.Hi > sp.Lo {
		m.Mapped = true
	} else {
		m.Apart = true
	}
	return m
}

// on puts an imported rating on the scale.
func (m ImportedOnScale) on(v float64) float64 {
	if !m.Mapped {
		return v
	}
	return m.Scale.Lo + (v-m.Span.Lo)*(m.Scale.Hi-m.Scale.Lo)/(m.Span.Hi-m.Span.Lo)
}

// MergeHumanRatingsOn is MergeHumanRatings with the decision how the
// imported ratings are put on the browser ratings' scale given (a merge
// of one page of rows at a time must decide as a merge of all of them:
// DecideImportedOnScale over every row and review; nil: decided here
// from rows and reviews), and says that decision (zero when nothing was
// averaged: another source, no browser or no imported rating).
func MergeHumanRatingsOn(rows []DatasetRow, crit evaluator.Criterion, source HumanSource, reviews []ReviewRating, pinned *ImportedOnScale) ([]DatasetRow, evaluator.Criterion, ImportedOnScale) {
	var onScale ImportedOnScale
	if source != HumansBrowser && source != HumansBoth {
		// The imported ratings: a criterion with annotator columns and no
		// human column is compared with its annotators' mean.
		rows, crit = WithAnnotatorMean(rows, crit)
		return rows, crit, onScale
	}
	key := HumanKey(crit)
	var cols []string // the annotators' keys
	var imported []string
	importedAlone := "" // the imported rating as one annotator
	if source == HumansBoth {
		imported = importedAnnotators(crit, rows)
		if len(imported) == 0 && crit.HumanColumn != "" {
			importedAlone = crit.HumanColumn + "@imported"
			imported = []string{importedAlone}
		}
		cols = append(cols, imported...)
	}
	// Each reviewer is one annotator by identity (the account, else the
	// name typed), under a key no imported annotator has.
	var scored []ReviewRating
	for _, r := range CurrentReviews(reviews) {
		if r.Score != nil {
			scored = append(scored, r)
		}
	}
	if source == HumansBoth && crit.HumanColumn != "" && len(scored) == 0 && (pinned == nil || pinned.Criterion == "") {
		// No reviewer rated the criterion (on any row: a decision pinned
		// over every row names the criterion when one did): its imported
		// ratings stay exactly as they are, the column as imported
		// (which the report and every comparison say it read), not the
		// mean of its imported annotators, which the column need not be
		// (a median, a mean rounded when released).
		return rows, crit, onScale
	}
	reviewers, keyOf := BrowserAnnotatorKeys(key, scored, imported)
	byRow := map[int64]map[string]float64{} // by row and annotator key
	for _, r := range scored {
		if byRow[r.RowID] == nil {
			byRow[r.RowID] = map[string]float64{}
		}
		byRow[r.RowID][keyOf[r.ReviewerKey()]] = *r.Score
	}
	// Imported and browser ratings are averaged only on one scale: the
	// browser ratings' (the rubric's, OnScale). Without browser ratings
	// nothing is averaged and the imported ratings stay as they are.
	if source == HumansBoth {
		if pinned != nil {
			onScale = *pinned
		} else {
			onScale = DecideImportedOnScale(crit, ImportedRatingSpan(crit, rows), scored)
		}
		if onScale.Apart {
			cols = cols[len(imported):] // the reviewers alone are annotators
		}
	}
	isImported := make(map[string]bool, len(imported))
	for _, c := range imported {
		isImported[c] = true
	}
	cols = append(cols, reviewers...)

	out := make([]DatasetRow, len(rows))
	for i, row := range rows {
		ratings := make(map[string]*float64, len(row.Ratings)+len(reviewers)+1)
		for k, v := range row.Ratings {
			// Under "browser" the imported annotators are not read.
			if source == HumansBrowser && strings.HasPrefix(k, key+"@") {
				continue
			}
			if onScale.Mapped && v != nil && (isImported[k] || k == key) {
				m := onScale.on(*v)
				v = &m
			}
			ratings[k] = v
		}
		if importedAlone != "" {
			ratings[importedAlone] = ratings[key]
		}
		for _, k := range reviewers {
			if v, ok := byRow[row.ID][k]; ok {
				ratings[k] = &v
			}
		}
		var sum float64
		var k int
		for _, c := range cols {
			if v := ratings[c]; v != nil && !math.IsNaN(*v) {
				sum += *v
				k++
			}
		}
		switch {
		case onScale.Apart:
			// Two scales and no sound mapping between them: no combined
			// rating (each stays under its own key).
			ratings[key] = nil
		case k > 0:
			mean := sum / float64(k)
			ratings[key] = &mean
		case source == HumansBrowser:
			ratings[key] = nil
		}
		row.Ratings = ratings
		out[i] = row
	}
	crit.HumanColumn = key
	crit.AnnotatorColumns = cols
	if len(cols) == 0 {
		// No annotators at all: an empty explicit list would let a report
		// look for "<column>@" keys again.
		crit.AnnotatorColumns = []string{}
	}
	return out, crit, onScale
}

// HumanRating is one sample's human rating of a criterion.
type HumanRating struct {
	RowID      int64
	ExternalID string
	// Score is the sample's human rating (the annotators' mean); nil when
	// nobody rated it.
	Score *float64
	// Annotators holds each annotator's rating by key (browser reviewers
	// as "<column>@browser:<name>").
	Annotators map[string]float64
}

// HumanRatings returns every sample's human rating of a criterion of a
// dataset from the source, in dataset order, with the browser ratings
// stored up to uptoID (0: all of them), without those of the people an
// owner excluded (SetRatingsExcluded). It is what a report reads.
func (db *DB) HumanRatings(ctx context.Context, wsID, datasetID int64, crit evaluator.Criterion, source HumanSource, uptoID int64) ([]HumanRating, error) {
	if _, err := db.FindDataset(ctx, wsID, datasetID); err != nil {
		return nil, err
	}
	// The rows' ids and the criterion's imported ratings only: their
	// texts were most of the read (TestHumanRatingsReadNoTexts).
	rows, err := db.listCriterionRatingRows(ctx, datasetID, crit)
	if err != nil {
		return nil, err
	}
	var reviews []ReviewRating
	if source != HumansImported {
		// The ratings' columns only (ListCriteriaRatings): what merging
		// them needs; whole reviews through GORM were most of the read
		// (TestHumanRatingsReadTheRatingsColumns).
		byName, err := db.ListCriteriaRatings(ctx, wsID, datasetID, []string{crit.Name}, uptoID)
		if err != nil {
			return nil, err
		}
		excluded, err := db.ExcludedRaters(ctx, wsID)
		if err != nil {
			return nil, err
		}
		reviews, _ = WithoutExcluded(byName[crit.Name], excluded)
		reviews = OnScale(reviews, crit.HumanScale())
	}
	rows, crit = MergeHumanRatings(rows, crit, source, reviews)
	cols := importedAnnotators(crit, rows)
	out := make([]HumanRating, len(rows))
	for i, r := range rows {
		h := HumanRating{RowID: r.ID, ExternalID: r.ExternalID, Annotators: map[string]float64{}}
		if crit.HumanColumn != "" {
			if v := r.Ratings[crit.HumanColumn]; v != nil && !math.IsNaN(*v) {
				s := *v
				h.Score = &s
			}
		}
		for _, c := range cols {
			if v := r.Ratings[c]; v != nil && !math.IsNaN(*v) {
				h.Annotators[c] = *v
			}
		}
		out[i] = h
	}
	return out, nil
}

// ListReviewerRatedRows returns the samples of a dataset's criterion that
// one reviewer (an account by userID, else the name typed) rates now on
// the scale lo to hi: those whose reviewer's latest review on that scale
// holds a rating (a later review without one withdrew it), in no order.
// It reads that reviewer's reviews of the criterion only, through
// review_ratings_reviewer (00089), and only their sample ids: the review
// queue counted them from every review of the run's dataset, which grows
// with the whole team's reviews. Excluded raters are not left out: a
// reviewer whose ratings an owner excluded still sees what they rated.
func (db *DB) ListReviewerRatedRows(ctx context.Context, wsID, datasetID int64, criterion, reviewer string, userID *int64, lo, hi float64) ([]int64, error) {
	who, args := "r.user_id IS NULL AND r.reviewer = ?", []any{reviewer}
	later := "l.user_id IS NULL AND l.reviewer = r.reviewer"
	if userID != nil {
		who, args, later = "r.user_id = ?", []any{*userID}, "l.user_id = r.user_id"
	}
	q := "SELECT DISTINCT r.row_id FROM review_ratings r WHERE r.dataset_id = ? AND r.criterion = ? AND " + who +
		" AND r.workspace_id = ? AND r.lo = ? AND r.hi = ? AND r.score IS NOT NULL AND NOT EXISTS (SELECT 1 FROM review_ratings l" +
		" WHERE l.dataset_id = r.dataset_id AND l.criterion = r.criterion AND " + later +
		" AND l.row_id = r.row_id AND l.workspace_id = r.workspace_id AND l.lo = r.lo AND l.hi = r.hi AND l.id > r.id)"
	all := append([]any{datasetID, criterion}, args...)
	all = append(all, wsID, lo, hi)
	var ids []int64
	if err := db.Reader(ctx).Raw(q, all...).Scan(&ids).Error; err != nil {
		return nil, fmt.Errorf("read the samples %s rated on %s in dataset %d: %w", reviewer, criterion, datasetID, err)
	}
	return ids, nil
}

// ReviewerRatings names one reviewer's ratings of a dataset's criterion on
// one scale: an account by UserID, else the name typed (Reviewer). A
// sample is rated by them when their latest review of it on the scale
// holds a rating (ListReviewerRatedRows' rule).
type ReviewerRatings struct {
	WorkspaceID, DatasetID int64
	Criterion, Reviewer    string
	UserID                 *int64
	Lo, Hi                 float64
}

// current is the SQL of the reviewer's current ratings (alias r): their
// reviews of the criterion on the scale that hold a rating and that no
// later review of theirs of the same sample on the scale replaced, led
// by review_ratings_reviewer (00089). rowCol, when not "", ties them to
// the sample whose row id it is.
func (w ReviewerRatings) current(rowCol string) (string, []any) {
	who, args := "r.user_id IS NULL AND r.reviewer = ?", []any{w.DatasetID, w.Criterion, w.Reviewer}
	later := "l.user_id IS NULL AND l.reviewer = r.reviewer"
	if w.UserID != nil {
		who, args, later = "r.user_id = ?", []any{w.DatasetID, w.Criterion, *w.UserID}, "l.user_id = r.user_id"
	}
	row := ""
	if rowCol != "" {
		row = " AND r.row_id = " + rowCol
	}
	q := "r.dataset_id = ? AND r.criterion = ? AND " + who + row +
		" AND r.workspace_id = ? AND r.lo = ? AND r.hi = ? AND r.score IS NOT NULL AND NOT EXISTS (SELECT 1 FROM review_ratings l" +
		" WHERE l.dataset_id = r.dataset_id AND l.criterion = r.criterion AND " + later +
		" AND l.row_id = r.row_id AND l.workspace_id = r.workspace_id AND l.lo = r.lo AND l.hi = r.hi AND l.id > r.id)"
	return q, append(args, w.WorkspaceID, w.Lo, w.Hi)
}

// ratedBy is the SQL condition that the reviewer rates the sample whose
// row id is rowCol now, with its arguments: a semi-join on the reviewer's
// own reviews, so a queue filters its samples in the database instead of
// reading the rated ids into Go and sending them back as IN lists.
func (w ReviewerRatings) ratedBy(rowCol string) (string, []any) {
	q, args := w.current(rowCol)
	return "EXISTS (SELECT 1 FROM review_ratings r WHERE " + q + ")", args
}

// resultRankColumn is the stored results' rank column of the order sort,
// dir, and whether it is read descending.
func resultRankColumn(sort, dir string) (string, bool, error) {
	order, ok := sampleOrders[[2]string{sort, dir}]
	if !ok {
		return "", false, Errorf(EInvalid, "unknown sample order %q %q", sort, dir)
	}
	col, desc := cutDesc(order)
	return col, desc, nil
}

// ReviewerQueueMarks counts the stored results of a run's criterion whose
// samples the reviewer rates now (ReviewerRatings), and finds the first
// rank, in the order sort, dir (as ListRunSampleRanks gives ranks), of
// one whose sample they do not rate (found false when they rate every
// one), in one statement: the count led by the reviewer's own reviews,
// each looked up in the results by key (a CROSS JOIN keeps SQLite's
// planner from walking every result of the run instead); the first
// unrated by the order's index from its start, stopping at the first
// sample without a current rating (an anti-join). No id leaves the
// database, where the queue read the rated ids and sent them back as IN
// lists for their ranks.
func (db *DB) ReviewerQueueMarks(ctx context.Context, runID int64, criterion int, sort, dir string, w ReviewerRatings) (rated, first int, found bool, err error) {
	col, desc, err := resultRankColumn(sort, dir)
	if err != nil {
		return 0, 0, false, err
	}
	cur, curArgs := w.current("")
	cond, condArgs := w.ratedBy("s.row_id")
	order := "s." + col
	if desc {
		order += " DESC"
	}
	// One current rating per sample, so no DISTINCT.
	q := "SELECT (SELECT COUNT(*) FROM review_ratings r CROSS JOIN run_sample_results s WHERE " + cur +
		" AND s.run_id = ? AND s.criterion_index = ? AND s.row_id = r.row_id) AS rated," +
		" (SELECT s." + col + " FROM run_sample_results s WHERE s.run_id = ? AND s.criterion_index = ? AND s." + col + " IS NOT NULL AND NOT " + cond +
		" ORDER BY " + order + " LIMIT 1) AS first_unrated"
	args := append(curArgs, runID, criterion, runID, criterion)
	args = append(args, condArgs...)
	var out struct {
		Rated        int64
		FirstUnrated sql.NullInt64
	}
	if err := db.Reader(ctx).Raw(q, args...).Scan(&out).Error; err != nil {
		return 0, 0, false, fmt.Errorf("count the samples of run %d %s rated: %w", runID, w.Reviewer, err)
	}
	if !out.FirstUnrated.Valid {
		return int(out.Rated), 0, false, nil
	}
	r := out.FirstUnrated.Int64
	if desc {
		r = -r
	}
	return int(out.Rated), int(r), true, nil
}

// EachReviewerRatedRank calls fn with the rank, in the order sort, dir
// (as ListRunSampleRanks gives ranks), of every stored result of the
// run's criterion whose sample the reviewer rates now, streamed in no
// order: a queue that places samples by a permutation of the ranks marks
// them without a list of ids.
func (db *DB) EachReviewerRatedRank(ctx context.Context, runID int64, criterion int, sort, dir string, w ReviewerRatings, fn func(rank int)) error {
	col, desc, err := resultRankColumn(sort, dir)
	if err != nil {
		return err
	}
	cur, args := w.current("")
	rows, err := db.Reader(ctx).Raw("SELECT s."+col+" FROM review_ratings r CROSS JOIN run_sample_results s WHERE "+cur+
		" AND s.run_id = ? AND s.criterion_index = ? AND s.row_id = r.row_id AND s."+col+" IS NOT NULL", append(args, runID, criterion)...).Rows()
	if err != nil {
		return fmt.Errorf("read the ranks of the samples of run %d %s rated: %w", runID, w.Reviewer, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return fmt.Errorf("read the ranks of the samples of run %d %s rated: %w", runID, w.Reviewer, err)
		}
		if desc {
			r = -r
		}
		fn(int(r))
	}
	return rows.Err()
}

// ratingsByCriterion adds the ratings q selects (as scanRatings reads
// them) to out by criterion, each criterion's oldest first, with their
// reviewers' current emails.
func (db *DB) ratingsByCriterion(ctx context.Context, wsID, datasetID int64, q string, args []any, out map[string][]ReviewRating) (map[string][]ReviewRating, error) {
	err := db.scanRatings(ctx, wsID, datasetID, q, args, func(r ReviewRating) {
		out[r.Criterion] = append(out[r.Criterion], r)
	})
	if err != nil {
		return nil, err
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b ReviewRating) int { return cmp.Compare(a.ID, b.ID) })
		if err := db.withCurrentReviewers(ctx, wsID, rs); err != nil {
			return nil, err
		}
	}
	return out, nil
}
