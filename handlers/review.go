package handlers

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dataimport"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// Reviews in the browser (issue 10): a queue per dataset and criterion, a
// panel on every sample page, and the choice of which human ratings a
// run's report uses. Viewers read; reviewers, editors and owners rate; editors and owners recompute.

// reviewerCookie keeps the name a reviewer typed when there are no
// accounts (local mode); with accounts the account is the reviewer.
const reviewerCookie = "batcheval_reviewer"

// reviewerCookieAge: a year, so a reviewer types their name once.
const reviewerCookieAge = 365 * 24 * 3600

// Queue orders.
const (
	orderDisagreement = "disagreement"
	orderUncertain    = "uncertain"
	orderRandom       = "random"
)

// defaultQueueSeed seeds the random order when the reviewer gives none;
// any fixed value makes the same queue for everyone who opens it.
const defaultQueueSeed = 1

// queueQuery is where a reviewer is in a queue; every link and redirect of
// the queue carries it, so a rating brings the reviewer back to the same
// place.
type queueQuery struct {
	RunID     int64
	Criterion int
	Order     string
	Seed      int64
	Index     int // -1: the first sample the reviewer has not rated
	Blind     bool
	// A place is also said by the sample it holds, as the order stood
	// when the link was made: Sample is the sample itself, After (Before)
	// the one just before (after) it, by dataset row id; 0 when not said.
	// A recompute of the run's report reorders the queue by disagreement
	// under a reviewer: the index alone then led to another sample (the
	// one rated was shown another's place after saving, next skipped or
	// repeated samples). The sample wins over the index, which links made
	// before these (bookmarks, the run page's queues) still follow.
	Sample, After, Before int64
	// Version is the queue's version when the link was made
	// (queueVersion): when it is not the queue's now, the queue changed
	// under the reviewer (samples judged since, other human ratings, or
	// another run) even if the sample they were at kept its place, and
	// the page says so. "" in links made before versions.
	Version string
}

func parseQueueQuery(c echo.Context) queueQuery {
	q := queueQuery{Order: c.QueryParam("order"), Seed: defaultQueueSeed, Index: -1, Blind: c.QueryParam("blind") != "off"}
	q.RunID, _ = strconv.ParseInt(c.QueryParam("run"), 10, 64)
	q.Criterion, _ = strconv.Atoi(c.QueryParam("criterion"))
	if s, err := strconv.ParseInt(c.QueryParam("seed"), 10, 64); err == nil {
		q.Seed = s
	}
	if i, err := strconv.Atoi(c.QueryParam("i")); err == nil && i >= 0 {
		q.Index = i
	}
	for name, id := range map[string]*int64{"sample": &q.Sample, "after": &q.After, "before": &q.Before} {
		if v, err := strconv.ParseInt(c.QueryParam(name), 10, 64); err == nil && v > 0 {
			*id = v
		}
	}
	if v := c.QueryParam("qv"); len(v) <= 40 {
		q.Version = v
	}
	switch q.Order {
	case orderDisagreement, orderUncertain, orderRandom:
	default:
		q.Order = orderDisagreement
	}
	return q
}

// url is the queue page of the dataset at the given place.
func (q queueQuery) url(datasetID int64, index int) string {
	v := url.Values{}
	v.Set("run", strconv.FormatInt(q.RunID, 10))
	v.Set("criterion", strconv.Itoa(q.Criterion))
	v.Set("order", q.Order)
	v.Set("seed", strconv.FormatInt(q.Seed, 10))
	if index >= 0 {
		v.Set("i", strconv.Itoa(index))
	}
	if !q.Blind {
		v.Set("blind", "off")
	}
	for name, id := range map[string]int64{"sample": q.Sample, "after": q.After, "before": q.Before} {
		if id > 0 {
			v.Set(name, strconv.FormatInt(id, 10))
		}
	}
	if q.Version != "" {
		v.Set("qv", q.Version)
	}
	return "/datasets/" + strconv.FormatInt(datasetID, 10) + "/review?" + v.Encode()
}

// roundSpread is the spread between a sample's readable rounds
// (report.RoundSpread, which also orders the stored results by it).
func roundSpread(s models.SampleOutcome) (spread float64, ok bool) {
	return report.RoundSpread(s.Rounds)
}

// queueOrderNote says why the order ranks none of the samples, which then
// come in dataset order: no sample has two readable rounds to spread (an
// LLM-Eval run scores each sample once), or none has both a final score
// and a human rating to disagree. "" when the order ranks some.
func queueOrderNote(samples []models.SampleOutcome, order string) string {
	switch order {
	case orderUncertain:
		for _, s := range samples {
			if _, ok := roundSpread(s); ok {
				return ""
			}
		}
	case orderDisagreement:
		for _, s := range samples {
			if s.AbsDiff != nil {
				return ""
			}
		}
	}
	return unrankedNote(order)
}

// unrankedNote is queueOrderNote when the order ranks none of the samples.
func unrankedNote(order string) string {
	switch order {
	case orderUncertain:
		return "No sample of this run has two readable scores (a method that judges each sample once has no rounds to differ), " +
			"so there is no spread to order by: the samples come in dataset order. Order by the largest disagreement or at random instead."
	case orderDisagreement:
		return "No sample of this run has both a judge score and a human rating, so there is no disagreement to order by: " +
			"the samples come in dataset order."
	}
	return ""
}

// queueOrder returns the samples' indexes in queue order: the largest
// judge-human disagreement first, the largest spread between rounds first,
// or a seeded shuffle. Samples the order cannot place (no human rating, one
// readable round) come after the others; ties keep dataset order.
func queueOrder(samples []models.SampleOutcome, order string, seed int64) []int {
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	switch order {
	case orderRandom:
		return randomOrder(len(samples), seed)
	case orderUncertain:
		key := make([]float64, len(samples))
		for i, s := range samples {
			key[i] = -1
			if spread, ok := roundSpread(s); ok {
				key[i] = spread
			}
		}
		sort.SliceStable(idx, func(a, b int) bool { return key[idx[a]] > key[idx[b]] })
	default:
		key := make([]float64, len(samples))
		for i, s := range samples {
			key[i] = -1
			if s.AbsDiff != nil {
				key[i] = *s.AbsDiff
			}
		}
		sort.SliceStable(idx, func(a, b int) bool { return key[idx[a]] > key[idx[b]] })
	}
	return idx
}

// randomOrder is the queue's seeded shuffle of n samples: the indexes, in
// dataset order, of the samples in queue order.
func randomOrder(n int, seed int64) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	r := rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	return idx
}

// reviewer names who is rating: the account (its email, unique), or the
// name a local user typed (cookie). needName is true when it is not known.
func (h *Handlers) reviewer(c echo.Context) (name string, userID *int64, needName bool) {
	p := principalOf(c.Request().Context())
	if p.Kind == Account || p.Kind == Token {
		return p.User.Email, p.userID(), false
	}
	if ck, err := c.Cookie(reviewerCookie); err == nil {
		if v, err := url.QueryUnescape(ck.Value); err == nil && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil, false
		}
	}
	return "", nil, true
}

// reviewerKey identifies the request's reviewer as their reviews are
// keyed (models.ReviewerKeyOf): the account by its user id, so a changed
// email keeps its reviews; "" when a local user has not typed a name yet.
func (h *Handlers) reviewerKey(c echo.Context) string {
	name, userID, need := h.reviewer(c)
	if need {
		return ""
	}
	return models.ReviewerKeyOf(name, userID)
}

// canRate reports whether the request's principal may rate samples (save,
// edit and withdraw their own reviews): a reviewer and up, the rule of the
// rating routes.
func canRate(c echo.Context) bool {
	return principalOf(c.Request().Context()).Role.AtLeast(Reviewer.role())
}

// canRecomputeHumans reports whether the request's principal may recompute
// a report with the browser ratings (POST /runs/:id/humans): an editor and
// up, not a reviewer, who rates and changes no report.
func canRecomputeHumans(c echo.Context) bool {
	return principalOf(c.Request().Context()).Role.AtLeast(Editor.role())
}

// integerLevels lists the whole numbers of a scale when it is short enough
// to rate with one key press (at most 10 levels); nil otherwise.
func integerLevels(lo, hi float64) []float64 {
	if lo != math.Trunc(lo) || hi != math.Trunc(hi) || hi-lo > 9 || hi < lo {
		return nil
	}
	var out []float64
	for v := lo; v <= hi; v++ {
		out = append(out, v)
	}
	return out
}

// reviewLevels are the choices of a rating form on scale: its whole
// numbers when they are few (integerLevels), and its middle too when the
// rubric words the middle (middle) and it falls between two of them (0.5
// on 0 to 1, 2.5 on 1 to 4): the form shows what that rating means, so it
// offers it (no key rates it). nil: the rating is typed in a field.
func reviewLevels(scale evaluator.Scale, middle string) []float64 {
	levels := integerLevels(scale.Lo, scale.Hi)
	mid := (scale.Lo + scale.Hi) / 2
	if len(levels) == 0 || strings.TrimSpace(middle) == "" || mid == math.Trunc(mid) {
		return levels
	}
	i, _ := slices.BinarySearch(levels, mid)
	return slices.Insert(levels, i, mid)
}

// withShownRating adds to a form's choices (levels) the rating the form is
// filled in with (the refused one as typed, else the reviewer's saved one)
// when it is on the scale but none of them: a decimal given through the
// API or typed before (2.25 on 1 to 3). Without it no choice was checked,
// so the form hid the reviewer's own rating and a save that picked one
// replaced it unseen. The added choice has no key, as the worded middle.
func withShownRating(levels []float64, scale evaluator.Scale, typed, mine *models.ReviewRating) []float64 {
	shown := mine
	if typed != nil {
		shown = typed
	}
	if len(levels) == 0 || shown == nil || shown.Score == nil {
		return levels
	}
	v := *shown.Score
	if v < scale.Lo || v > scale.Hi {
		return levels // on another scale: shown as not counted, never offered
	}
	i, found := slices.BinarySearch(levels, v)
	if found {
		return levels
	}
	return slices.Insert(slices.Clone(levels), i, v)
}

// reviewForm builds the rating form of one sample and criterion, on the
// criterion's human scale (the rubric's range, whatever scale the run's
// method judged on).
func (h *Handlers) reviewForm(c echo.Context, ds models.Dataset, run models.Run, ci int, scale evaluator.Scale, rowID int64, back string, mine *models.ReviewRating) web.ReviewForm {
	crit := run.RubricSnapshot.Criteria[ci]
	name, _, need := h.reviewer(c)
	f := web.ReviewForm{Action: "/datasets/" + strconv.FormatInt(ds.ID, 10) + "/review", Back: back, RunID: run.ID, RowID: rowID,
		Criterion: crit.Name, Lo: scale.Lo, Hi: scale.Hi, Levels: reviewLevels(scale, crit.Levels.Middle), Reviewer: name,
		NeedName: need, Local: principalOf(c.Request().Context()).Kind == LocalUser, Mine: mine,
		Description: strings.TrimSpace(crit.Description)}
	// "Rating as" names an account by its display name, as the pages'
	// header does; its reviews are still keyed and stored by account.
	f.Reviewer = reviewerShown(c, name)
	// A refused review of this sample and criterion comes back as typed.
	if t, ok := c.Get(reviewTypedKey).(*reviewTyped); ok && t.review.RowID == rowID && t.review.Criterion == crit.Name && t.review.RunID != nil && *t.review.RunID == run.ID {
		f.Typed, f.Problem = &t.review, t.problem
	}
	f.Levels = withShownRating(f.Levels, scale, f.Typed, mine)
	// The levels the rubric words, at the ends and the middle of the scale
	// people rate on (the rubric's, as the prompt words them on the judge's).
	for _, a := range []web.ReviewAnchor{{At: scale.Lo, Text: crit.Levels.Low}, {At: (scale.Lo + scale.Hi) / 2, Text: crit.Levels.Middle},
		{At: scale.Hi, Text: crit.Levels.High}} {
		if a.Text = strings.TrimSpace(a.Text); a.Text != "" {
			f.Anchors = append(f.Anchors, a)
		}
	}
	return f
}

// humanScaleOf is the scale reviewers rate criterion ci of the run on
// (models.RunHumanScale); refused is the reason in words when the run
// cannot say it (an old LLM-Eval run without its rubric version).
func (h *Handlers) humanScaleOf(ctx context.Context, run models.Run, ci int) (scale evaluator.Scale, refused string, err error) {
	scale, err = h.DB.RunHumanScale(ctx, run, ci)
	if models.ErrorCode(err) == models.EInvalid {
		return scale, models.ErrorMessage(err), nil
	}
	return scale, "", err
}

// humanScalesOf is humanScaleOf for every criterion of the run, reading
// the run's rubric version at most once (models.RunHumanScales).
func (h *Handlers) humanScalesOf(ctx context.Context, run models.Run) (scales []evaluator.Scale, refused []string, err error) {
	scales, errs, err := h.DB.RunHumanScales(ctx, run)
	if err != nil {
		return nil, nil, err
	}
	refused = make([]string, len(errs))
	for i, e := range errs {
		if e != nil {
			refused[i] = models.ErrorMessage(e)
		}
	}
	return scales, refused, nil
}

// sampleReviews are the reviews of a criterion of a dataset by sample: the
// current ones on the criterion's human scale, and the reviewers' current
// ratings given on another scale, which count nowhere (shown so the
// reviewer can rate again).
type sampleReviews struct {
	current  map[int64][]models.ReviewRating
	offScale map[int64][]models.ReviewRating
	// withdrawn are the current reviews that withdrew their reviewer's
	// earlier rating of the sample (no rating, after one on the scale).
	withdrawn map[int64][]models.ReviewRating
}

// keptRating is the rating a review saved without one keeps (the form's
// and the API's rule): the reviewer's (who, a models.ReviewerKeyOf)
// current rating of the sample on the scale, nil when they have none (never
// rated it, withdrew it, or rated on another scale). It reads the reviews
// of that sample only, where it read every review of the criterion
// (TestRatinglessReviewReadsItsSample).
func (h *Handlers) keptRating(ctx context.Context, ds models.Dataset, criterion string, scale evaluator.Scale, rowID int64, who string) (*float64, error) {
	mine, err := h.currentReview(ctx, ds, criterion, scale, rowID, who)
	if err != nil || mine == nil {
		return nil, err
	}
	return mine.Score, nil
}

// currentReview is the reviewer who's latest review of the sample on the
// criterion's scale (the one the form is filled in with); nil for none.
func (h *Handlers) currentReview(ctx context.Context, ds models.Dataset, criterion string, scale evaluator.Scale, rowID int64, who string) (*models.ReviewRating, error) {
	rs, err := h.DB.ListRowsCriteriaReviews(ctx, ds.WorkspaceID, ds.ID, []string{criterion}, []int64{rowID})
	if err != nil {
		return nil, err
	}
	return mineOf(splitReviews(rs[criterion], scale).current[rowID], who), nil
}

// changedSinceSeen says, in words, how the reviewer's review of a sample
// changed since their form was shown (another tab or window saved one),
// when the form names the review it was filled in with (its "seen"
// field: 0 for none) and that is no longer the reviewer's latest; "" when
// nothing changed, the form names none (an older page, a script), or what
// it sends is the latest review again (a form sent twice). Saving over it
// silently put back the rating the stale page showed.
func changedSinceSeen(params url.Values, cur *models.ReviewRating, sent models.ReviewRating) (string, error) {
	vals, ok := params["seen"]
	if !ok {
		return "", nil
	}
	raw := strings.TrimSpace(vals[0])
	seen, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || seen < 0 {
		return "", models.Errorf(models.EInvalid, "the form's field \"seen\" (%s) is not a review id: open the sample again and save from its form", web.Quoted(raw))
	}
	var curID int64
	if cur != nil {
		curID = cur.ID
	}
	if seen == curID || (cur != nil && sameReview(*cur, sent)) {
		return "", nil
	}
	now := "you have no rating of it now"
	switch {
	case cur != nil && cur.Score != nil:
		now = "your rating of it is now " + web.Minus(reviewNumber(*cur.Score))
	case cur != nil:
		now = "you withdrew your rating of it"
	}
	when := ""
	if cur != nil {
		when = " (at " + cur.CreatedAt.UTC().Format("15:04:05 UTC") + ")"
	}
	return "Your review of this sample was saved from another tab or window after this page was opened" + when + ": " + now +
		". Save again to replace that review with this page's, or leave the sample as it is.", nil
}

// sameReview says whether a review sends again what the stored one holds:
// its rating, agreement, reason, comment and tags.
func sameReview(a, b models.ReviewRating) bool {
	sameScore := (a.Score == nil) == (b.Score == nil) && (a.Score == nil || *a.Score == *b.Score)
	sameAgree := (a.Agree == nil) == (b.Agree == nil) && (a.Agree == nil || *a.Agree == *b.Agree)
	return sameScore && sameAgree && a.Reason == b.Reason && a.Comment == b.Comment && slices.Equal(a.Tags, b.Tags)
}

// reviewNumber writes a rating as the review pages do.
func reviewNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// splitReviews sorts a criterion's reviews (all of them, or all of some
// samples, oldest first) by sample, on the scale and off it.
func splitReviews(all []models.ReviewRating, scale evaluator.Scale) sampleReviews {
	out := sampleReviews{current: map[int64][]models.ReviewRating{}, offScale: map[int64][]models.ReviewRating{},
		withdrawn: map[int64][]models.ReviewRating{}}
	on := models.OnScale(all, scale)
	for _, r := range models.CurrentReviews(on) {
		out.current[r.RowID] = append(out.current[r.RowID], r)
	}
	out.withdrawn = withdrawnRatings(on, out.current)
	if len(on) == len(all) {
		return out
	}
	var off []models.ReviewRating
	for _, r := range all {
		if r.Lo != scale.Lo || r.Hi != scale.Hi {
			off = append(off, r)
		}
	}
	for _, r := range models.CurrentReviews(off) {
		if r.Score != nil {
			out.offScale[r.RowID] = append(out.offScale[r.RowID], r)
		}
	}
	return out
}

// withdrawnRatings picks, from the current reviews by sample, those that
// withdrew a rating: a review without one whose reviewer rated the sample
// before (on, every review on the scale, tells). A comment left without
// ever rating withdrew nothing.
func withdrawnRatings(on []models.ReviewRating, current map[int64][]models.ReviewRating) map[int64][]models.ReviewRating {
	type key struct {
		row      int64
		reviewer string
	}
	rated := map[key]bool{}
	for _, r := range on {
		if r.Score != nil {
			rated[key{r.RowID, r.ReviewerKey()}] = true
		}
	}
	out := map[int64][]models.ReviewRating{}
	for row, rs := range current {
		for _, r := range rs {
			if r.Score == nil && rated[key{row, r.ReviewerKey()}] {
				out[row] = append(out[row], r)
			}
		}
	}
	return out
}

// humanReader is who reads why a human rating is missing: a member of the
// run's workspace, on the dashboard, or someone outside it (a share link's
// page, a downloaded report), who cannot recompute the report and must be
// told who can.
type humanReader int

const (
	readerMember humanReader = iota
	readerOutside
)

// humanMissingReason says why a sample has no human rating in a run's
// report, whose human ratings come from src: the imported ratings of the
// criterion could not be put on the browser ratings' scale, so no sample
// has a combined rating (apart, the report's decision, apartOf; nil when
// they could), the dataset has none for it
// (or the rubric names no column), nobody has rated it in the browser yet,
// its browser rating was withdrawn (withdrawn, withdrawnRatings; when is
// the withdrawal's time), or its browser rating came after the report's
// ratings were read, which recomputing the report mends: who can do that
// is said to a reader outside the workspace. It names no reviewer: a
// share link shows it too.
//
// A sample whose browser ratings were all given on another scale than the
// one the report reads (offScale, splitReviews; scale, the criterion's
// human scale) was rated, but none of its ratings counts: it says so, and
// what mends it (rating again on the scale), rather than "not rated yet".
//
// A criterion whose human scale the run cannot say (scaleUnknown: an old
// LLM-Eval run that records neither the rubric's scale nor its rubric
// version, models.RunHumanScale) counts no browser rating at all, rated or
// not: it says so and what mends it (browserScaleUnknownReason), where it
// used to say "not rated yet in the browser" of a sample rated many times.
func humanMissingReason(crit evaluator.Criterion, src models.RunHumanSource, apart *models.ImportedOnScale, reviews, withdrawn, offScale []models.ReviewRating, scale evaluator.Scale, scaleUnknown bool, reader humanReader) string {
	if src.Source == models.HumansBoth && apart != nil {
		return importedApartReason(*apart, reader)
	}
	dataset := "no human rating in the dataset for this sample"
	if crit.HumanColumn == "" && len(crit.AnnotatorColumns) == 0 {
		dataset = "the rubric names no human-rating column for this criterion"
	}
	browser := "not rated yet in the browser"
	if len(withdrawn) > 0 {
		last := withdrawn[0].CreatedAt
		for _, r := range withdrawn[1:] {
			if r.CreatedAt.After(last) {
				last = r.CreatedAt
			}
		}
		when := ""
		if !last.IsZero() {
			when = " on " + last.UTC().Format("2006-01-02 15:04 UTC")
		}
		browser = "its browser rating was withdrawn" + when
		if len(withdrawn) > 1 {
			browser = "its browser ratings were withdrawn"
			if when != "" {
				browser += " (the last" + when + ")"
			}
		}
	}
	if len(withdrawn) == 0 && len(offScale) > 0 {
		browser = browserOffScaleReason(offScale, scale, reader)
	}
	if scaleUnknown {
		browser = browserScaleUnknownReason(crit, reader)
	}
	counted, excluded := 0, 0
	for _, r := range reviews {
		if r.Score == nil {
			continue
		}
		if r.Excluded {
			excluded++
		} else {
			counted++
		}
	}
	if counted == 0 && excluded > 0 && !scaleUnknown {
		// Marked by raterMarks: an owner excluded these reviewers'
		// ratings, which no report reads (models.SetRatingsExcluded).
		browser = "rated in the browser only by people whose ratings an owner excluded"
	}
	for _, r := range reviews {
		if r.Score != nil && !r.Excluded && r.ID > src.UptoRatingID {
			browser = "rated in the browser after the report read its ratings: recompute the report to use it"
			if reader == readerOutside {
				// Recomputing takes an editor's role (routes.go); the
				// reader of a share link or a file has none.
				browser = "rated in the browser after the report read its ratings: an editor of the run's workspace can recompute the report to use it"
			}
		}
	}
	switch src.Source {
	case models.HumansBrowser:
		return browser
	case models.HumansBoth:
		return dataset + ", and " + browser
	}
	return dataset
}

// browserOffScaleReason says why a sample rated in the browser only on
// another scale (off, the reviewers' current ratings off the scale) than
// the criterion's human scale has no browser rating in the report: a
// rating on another scale is not one on this scale (models.OnScale), so
// none counts until someone rates it on the scale. Which scale each was
// given on is said; who rated, not (a share link shows it too).
func browserOffScaleReason(off []models.ReviewRating, scale evaluator.Scale, reader humanReader) string {
	var given []string
	for _, r := range off {
		g := scaleEnd(r.Lo) + " to " + scaleEnd(r.Hi)
		if !slices.Contains(given, g) {
			given = append(given, g)
		}
	}
	on := scaleEnd(scale.Lo) + " to " + scaleEnd(scale.Hi)
	mend := "rate it again on " + on
	if reader == readerOutside {
		mend = "someone of the run's workspace can rate it again on " + on
	}
	what := "its browser rating was given on " + strings.Join(given, " and ") + ", not on the rubric's " + on + " that the report reads, so it does not count"
	if len(off) > 1 {
		what = "its browser ratings were all given on " + strings.Join(given, " and ") + ", not on the rubric's " + on + " that the report reads, so none counts"
	}
	return what + ": " + mend
}

// browserScaleUnknownReason says why no sample has a browser rating of
// criterion crit in a run that cannot say the scale people rate it on: an
// LLM-Eval run stored before runs kept the rubric's scale beside the
// method's own (crit.Lo to crit.Hi) and without its rubric version
// (models.RunHumanScale). A browser rating is given on a scale, and which
// scale would be this run's rubric's cannot be told, so the report counts
// none for the criterion, whoever rated. Launching the run again records
// the rubric's scale, and the ratings given on it then count.
func browserScaleUnknownReason(crit evaluator.Criterion, reader humanReader) string {
	mend := "launch the LLM-Eval run again to use them"
	if reader == readerOutside {
		mend = "someone of the run's workspace can launch the LLM-Eval run again to use them"
	}
	return "no browser rating of " + crit.Name + " counts in this run, rated or not: it is an LLM-Eval run that scored on its own " +
		scaleEnd(crit.Lo) + " to " + scaleEnd(crit.Hi) + " scale and does not record the rubric's scale (it was launched before runs kept it), " +
		"so which scale the ratings should be on cannot be told: " + mend
}

// importedApartReason says why no sample has a combined human rating of a
// criterion whose imported ratings could not be put on the browser
// ratings' scale (models.ImportedOnScale.Apart), in the words of the
// report's note, and what mends it: choosing one source alone, which
// takes an editor of the run's workspace (said to a reader outside it).
func importedApartReason(m models.ImportedOnScale, reader humanReader) string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	mend := "recompute the report with the imported column or the browser ratings alone"
	if reader == readerOutside {
		mend = "an editor of the run's workspace can recompute the report with the imported column or the browser ratings alone"
	}
	return fmt.Sprintf("the imported ratings (all %s) lie outside the rubric's %s to %s, the browser ratings' scale, and one value cannot be put on it, "+
		"so no sample's imported and browser ratings were averaged: %s", num(m.Span.Lo), num(m.Scale.Lo), num(m.Scale.Hi), mend)
}

// apartOf is, for a run whose report averages the imported column with
// the browser ratings, the criteria (by name) whose imported ratings the
// report could not put on the browser ratings' scale
// (report.HumanUse.Apart), read from the run's summary: every sample's
// combined rating of those is missing. Nil under another source, and
// while a large run's figures are being prepared (the reasons are then
// the general ones).
func (h *Handlers) apartOf(ctx context.Context, run models.Run, src models.RunHumanSource) (map[string]*models.ImportedOnScale, error) {
	if src.Source != models.HumansBoth {
		return nil, nil
	}
	rep, err := h.runSummary(ctx, run.ID, report.Options{})
	if preparingOf(err) != nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]*models.ImportedOnScale{}
	for i := range rep.Humans.Apart {
		out[rep.Humans.Apart[i].Criterion] = &rep.Humans.Apart[i]
	}
	return out, nil
}

// sayWhyHumansMissing gives each criterion of a sample page without a
// human rating its reason, in the sample page's words
// (humanMissingReason), for a page without the review panel (a share
// link's). It reads the reviews only when a rating is missing; the
// reasons name no reviewer and quote no comment.
func (h *Handlers) sayWhyHumansMissing(ctx context.Context, run models.Run, rowID int64, page *web.RunSampleView) error {
	var missing []roundKey
	for ci := range run.RubricSnapshot.Criteria {
		if ci >= len(page.Criteria) || page.Criteria[ci].HumanPending {
			continue
		}
		if hu := page.Criteria[ci].Human; hu == nil || math.IsNaN(*hu) {
			missing = append(missing, roundKey{rowID, ci})
		}
	}
	why, err := h.humanWhy(ctx, run, readerOutside, missing)
	if err != nil {
		return err
	}
	for _, k := range missing {
		page.Criteria[k.ci].HumanMissing = why[k]
	}
	return nil
}

// humanReasons says why samples of a run have no human rating in its
// report (humanMissingReason), to one reader: what it needs of the run
// (where its human ratings come from, each criterion's human scale) is
// read once, the reviews of the samples asked about at each why.
type humanReasons struct {
	db       *models.DB
	run      models.Run
	src      models.RunHumanSource
	scales   []evaluator.Scale
	refusals []string
	reader   humanReader
	// apart are the criteria whose combined ratings are all missing
	// (apartOf).
	apart map[string]*models.ImportedOnScale
	// marks say whose ratings an owner excluded.
	marks raterMarks
}

// humanWhy says, for reader, why each of missing (the run's samples and
// criteria without a human rating) has none; nil when missing is empty,
// with nothing read.
func (h *Handlers) humanWhy(ctx context.Context, run models.Run, reader humanReader, missing []roundKey) (map[roundKey]string, error) {
	if len(missing) == 0 {
		return nil, nil
	}
	hr, err := h.humanReasonsOf(ctx, run, reader)
	if err != nil {
		return nil, err
	}
	return hr.why(ctx, missing)
}

// humanReasonsOf reads what saying why a run's human ratings are missing
// needs, for reader.
func (h *Handlers) humanReasonsOf(ctx context.Context, run models.Run, reader humanReader) (*humanReasons, error) {
	src, err := h.DB.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	scales, refusals, err := h.humanScalesOf(ctx, run)
	if err != nil {
		return nil, err
	}
	apart, err := h.apartOf(ctx, run, src)
	if err != nil {
		return nil, err
	}
	marks, err := h.raterMarksOf(ctx, run.WorkspaceID)
	if err != nil {
		return nil, err
	}
	return &humanReasons{db: h.DB, run: run, src: src, scales: scales, refusals: refusals, reader: reader, apart: apart, marks: marks}, nil
}

// why says why each sample and criterion (its index in the run's rubric)
// of missing has no human rating, reading the reviews of those samples
// only, in one query. A criterion whose human scale is refused (refusals)
// counts no review, as the report counts none.
func (hr *humanReasons) why(ctx context.Context, missing []roundKey) (map[roundKey]string, error) {
	crits := hr.run.RubricSnapshot.Criteria
	var names []string
	var rows []int64
	seenCrit, seenRow := map[int]bool{}, map[int64]bool{}
	for _, k := range missing {
		if k.ci >= len(crits) {
			continue
		}
		if !seenCrit[k.ci] && hr.refusals[k.ci] == "" {
			seenCrit[k.ci] = true
			names = append(names, crits[k.ci].Name)
		}
		if !seenRow[k.row] {
			seenRow[k.row] = true
			rows = append(rows, k.row)
		}
	}
	// Whole reviews (the time of a withdrawal, the names of who rated off
	// the scale), of these samples only.
	byName, err := hr.db.ListRowsCriteriaReviews(ctx, hr.run.WorkspaceID, hr.run.DatasetID, names, rows)
	if err != nil {
		return nil, err
	}
	for _, rs := range byName {
		hr.marks.mark(rs)
	}
	split := map[int]sampleReviews{}
	out := make(map[roundKey]string, len(missing))
	for _, k := range missing {
		if k.ci >= len(crits) {
			continue
		}
		crit := crits[k.ci]
		var current, withdrawn, offScale []models.ReviewRating
		var scale evaluator.Scale
		if hr.refusals[k.ci] == "" {
			r, ok := split[k.ci]
			if !ok {
				r = splitReviews(byName[crit.Name], hr.scales[k.ci])
				split[k.ci] = r
			}
			current, withdrawn, offScale, scale = r.current[k.row], r.withdrawn[k.row], r.offScale[k.row], hr.scales[k.ci]
		}
		out[k] = humanMissingReason(crit, hr.src, hr.apart[crit.Name], current, withdrawn, offScale, scale, hr.refusals[k.ci] != "", hr.reader)
	}
	return out, nil
}

// mineOf picks the reviewer's own review from a sample's reviews; who is
// the reviewer's key (reviewerKey), "" when not known.
func mineOf(reviews []models.ReviewRating, who string) *models.ReviewRating {
	for i := range reviews {
		if who != "" && reviews[i].ReviewerKey() == who {
			r := reviews[i]
			return &r
		}
	}
	return nil
}

// datasetRuns lists the dataset's runs with judged samples, newest first.
func (h *Handlers) datasetRuns(ctx context.Context, ds models.Dataset) ([]models.Run, error) {
	runs, _, err := h.judgedRuns(ctx, ds, models.RunFilter{}, 0)
	return runs, err
}

// judgedRuns lists the dataset's runs with judged samples and a criterion
// to review that f also keeps, newest first, limit of them (0: every one);
// more says that f keeps older ones beyond the limit. A run without a
// criterion (its rubric held none) is skipped, and the next one read.
func (h *Handlers) judgedRuns(ctx context.Context, ds models.Dataset, f models.RunFilter, limit int) (out []models.Run, more bool, err error) {
	f.ProjectID, f.DatasetID, f.Judged = ds.ProjectID, ds.ID, true
	take := 0
	if limit > 0 {
		take = limit + 1 // one more says whether there are more
	}
	for offset := 0; ; {
		runs, err := h.DB.ListRunsPage(ctx, ds.WorkspaceID, f, offset, take)
		if err != nil {
			return nil, false, err
		}
		for _, r := range runs {
			if len(r.RubricSnapshot.Criteria) > 0 {
				out = append(out, r)
			}
		}
		if limit > 0 && len(out) > limit {
			return out[:limit], true, nil
		}
		if take == 0 || len(runs) < take {
			return out, false, nil
		}
		offset += len(runs)
	}
}

// queueRunChoice is how many of the dataset's newest judged runs the
// queue's run choice lists (with the run shown, when older): enough for
// the runs a team compares at a time, and a list a person can scan. It
// listed every judged run of the dataset, read on every view, which grew
// with the runs (hundreds on a dataset judged again and again); the page
// links to the whole list (?runs=all).
const queueRunChoice = 20

// queueRuns is the review queue's run choice, newest first (the newest
// queueRunChoice judged runs, or every one with all), the run it shows by
// default (defaultQueueRun over every judged run) and the run asked for
// (asked, 0: none) when it is a judged run of the dataset (named). A
// default or asked run older than the listed ones is added at the end, so
// the choice always holds the run shown. more says runs were left out.
func (h *Handlers) queueRuns(ctx context.Context, ds models.Dataset, all bool, asked int64) (runs []models.Run, def, named models.Run, more bool, err error) {
	limit := queueRunChoice
	if all {
		limit = 0
	}
	if runs, more, err = h.judgedRuns(ctx, ds, models.RunFilter{}, limit); err != nil || len(runs) == 0 {
		return runs, def, named, more, err
	}
	def = defaultQueueRun(runs)
	if more && !def.Completed() {
		// The newest completed run may be older than those listed.
		for _, st := range []string{models.RunSucceeded, models.RunFinishedWithGaps} {
			older, _, err := h.judgedRuns(ctx, ds, models.RunFilter{Status: st}, 1)
			if err != nil {
				return nil, def, named, more, err
			}
			if len(older) > 0 && (!def.Completed() || older[0].ID > def.ID) {
				def = older[0]
			}
		}
		if def.Completed() {
			runs = appendRun(runs, def)
		}
	}
	if asked <= 0 {
		return runs, def, named, more, nil
	}
	if i := slices.IndexFunc(runs, func(r models.Run) bool { return r.ID == asked }); i >= 0 {
		return runs, def, runs[i], more, nil
	}
	if more {
		found, _, err := h.judgedRuns(ctx, ds, models.RunFilter{ID: asked}, 1)
		if err != nil {
			return nil, def, named, more, err
		}
		if len(found) > 0 {
			named, runs = found[0], appendRun(runs, found[0])
		}
	}
	return runs, def, named, more, nil
}

// appendRun is runs with r at the end, unless it holds r already.
func appendRun(runs []models.Run, r models.Run) []models.Run {
	if slices.ContainsFunc(runs, func(x models.Run) bool { return x.ID == r.ID }) {
		return runs
	}
	return append(runs, r)
}

// defaultQueueRun is the run a queue opened without one follows: the
// newest run that went through all its calls. The newest run of all was
// taken before, and a run still running, paused or stopped part-way
// ordered the queue by the few samples it had judged: a reviewer opening
// the dataset's queue while a colleague's run went on saw its order (and
// the sample at each place) change under them, and rated through a run
// that would never finish. Without such a run, the newest. runs is
// newest first (datasetRuns).
func defaultQueueRun(runs []models.Run) models.Run {
	for _, r := range runs {
		if r.Completed() {
			return r
		}
	}
	return runs[0]
}

// showReviewQueue is a dataset's review queue for one criterion, ordered
// through one run's judge scores: one sample at a time, blind by default.
func (h *Handlers) showReviewQueue(c echo.Context) error {
	return h.reviewQueue(c, false)
}

// queueRunGone says why the run a queue's address names (?run=) is not
// one of the dataset's judged runs, when it is gone: in the trash (who may
// restore it, and where), or not a run of the workspace at all, another
// workspace's included, with FindRun's "does not exist" and nothing more.
// The queue followed the default run instead, silently, so a reviewer
// rated through a run they had not chosen. For a live run of the
// workspace that is not listed (another dataset's, or one that has judged
// none of its samples yet) it returns that run and no error: the queue
// shows the default run and says why (queueRunNote).
func (h *Handlers) queueRunGone(ctx context.Context, wsID, runID int64) (models.Run, error) {
	live, err := h.DB.FindRun(ctx, wsID, runID)
	if models.ErrorCode(err) != models.ENotFound {
		return live, err
	}
	trashed, terr := h.DB.FindTrashedRun(ctx, wsID, runID)
	switch models.ErrorCode(terr) {
	case "":
		return models.Run{}, models.Errorf(models.ENotFound, "run %d (%s) is in the trash, so its review queue cannot open: an editor or owner of this workspace can restore it from the Trash page, or open the queue of another run",
			trashed.ID, web.Quoted(trashed.Name))
	case models.ENotFound:
		return models.Run{}, err
	}
	return models.Run{}, terr
}

// queueRunNote says, on the queue's page, why it shows run shown and not
// the run its address asked for: asked is the run found (queueRunGone),
// or the zero Run when ?run= is not a run number at all (raw). It returns
// the sentence and, for another dataset's run, the address of that run's
// queue. Both were silent before: the default run opened as if asked for.
func (h *Handlers) queueRunNote(ctx context.Context, ds models.Dataset, raw string, asked, shown models.Run) (string, string, error) {
	showing := fmt.Sprintf("showing run %d (%s) instead.", shown.ID, web.Quoted(shown.Name))
	switch {
	case asked.ID == 0:
		return fmt.Sprintf("run %s is not a run number; %s Choose a run below.", web.Quoted(raw), showing), "", nil
	case asked.DatasetID != ds.ID:
		other, err := h.DB.FindDataset(ctx, ds.WorkspaceID, asked.DatasetID)
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("run %d (%s) judges the dataset %s, not this one, so its queue is that dataset's; %s", asked.ID, web.Quoted(asked.Name), web.Quoted(other.Name), showing),
			(queueQuery{RunID: asked.ID, Order: orderDisagreement, Seed: defaultQueueSeed, Blind: true}).url(other.ID, -1), nil
	case len(asked.RubricSnapshot.Criteria) == 0:
		return fmt.Sprintf("run %d (%s) has no criterion to review (its rubric holds none); %s", asked.ID, web.Quoted(asked.Name), showing), "", nil
	}
	if asked.Finished() {
		return fmt.Sprintf("run %d (%s, %s) judged no sample of this dataset, so it has no queue; %s", asked.ID, web.Quoted(asked.Name), asked.Status, showing), "", nil
	}
	return fmt.Sprintf("run %d (%s, %s) has not judged any sample yet, so it has no queue: it opens here once its first judge scores are in; %s", asked.ID, web.Quoted(asked.Name), asked.Status, showing), "", nil
}

// reviewQueue is showReviewQueue; with full, the queue is read from the
// run's full report even when the run's stored results would do (tests
// compare the two).
func (h *Handlers) reviewQueue(c echo.Context, full bool) error {
	ctx := c.Request().Context()
	ds, err := h.datasetOfParam(c)
	if err != nil {
		return err
	}
	q := parseQueueQuery(c)
	v := web.ReviewQueueView{Page: page(c, "Review "+ds.Name), Dataset: ds, Order: q.Order, Seed: q.Seed, Blind: q.Blind, CanRate: canRate(c),
		ProjectCrumb: h.projectCrumb(ctx, ds.WorkspaceID, ds.ProjectID)}
	v.AllRuns = c.QueryParam("runs") == "all"
	runs, run, asked, more, err := h.queueRuns(ctx, ds, v.AllRuns, q.RunID)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return render(c, http.StatusOK, web.ReviewQueuePage(v))
	}
	named := asked.ID != 0
	if named {
		run = asked
	}
	for _, r := range runs {
		o := web.ReviewRunOption{ID: r.ID, Name: r.Name, Simulated: r.Simulated}
		if !r.Completed() {
			o.Status = r.Status
		}
		v.Runs = append(v.Runs, o)
	}
	if raw := c.QueryParam("run"); raw != "" && !named {
		var asked models.Run
		if q.RunID > 0 {
			if asked, err = h.queueRunGone(ctx, ds.WorkspaceID, q.RunID); err != nil {
				return err
			}
		}
		if v.RunNote, v.RunNoteURL, err = h.queueRunNote(ctx, ds, raw, asked, run); err != nil {
			return err
		}
	}
	q.RunID = run.ID
	if more {
		// The choice lists the newest runs: a link lists them all.
		v.RunsURL = (queueQuery{RunID: run.ID, Criterion: q.Criterion, Order: q.Order, Seed: q.Seed, Blind: q.Blind}).url(ds.ID, -1) + "&runs=all"
	}
	if q.Criterion < 0 || q.Criterion >= len(run.RubricSnapshot.Criteria) {
		q.Criterion = 0
	}
	for _, cr := range run.RubricSnapshot.Criteria {
		v.Criteria = append(v.Criteria, cr.Name)
	}
	v.Run, v.Criterion = run, q.Criterion
	crit := run.RubricSnapshot.Criteria[q.Criterion]
	// The run's human scales, and of its reviews only the samples this
	// reviewer rates now on the criterion's scale (their own ratings, by
	// key): the queue read every review of the run's dataset before, on
	// every page view, to count one reviewer's. The run's report reads the
	// reviews it needs itself, through rr (none under the imported
	// ratings).
	rr := h.newRunReviews()
	scales, refused, err := h.DB.RunHumanScales(ctx, run)
	if err != nil {
		return err
	}
	if e := refused[q.Criterion]; e != nil {
		v.Refused = models.ErrorMessage(e)
		return render(c, http.StatusOK, web.ReviewQueuePage(v))
	}
	scale := scales[q.Criterion]
	v.Lo, v.Hi = scale.Lo, scale.Hi
	me := h.reviewerKey(c)
	var who *models.ReviewerRatings // whose ratings the queue marks: nobody's yet
	if name, userID, need := h.reviewer(c); !need {
		who = &models.ReviewerRatings{WorkspaceID: ds.WorkspaceID, DatasetID: ds.ID, Criterion: crit.Name, Reviewer: name, UserID: userID, Lo: scale.Lo, Hi: scale.Hi}
	}
	qi, err := h.queueIndexOf(ctx, run, q.Criterion, q.Order, q.Seed, full, rr, who)
	if p := preparingOf(err); p != nil {
		// A large run that just finished: its results are stored in the
		// background, and the queue is ordered from them once they are.
		v.Preparing = preparingView(p)
		return render(c, http.StatusOK, web.ReviewQueuePage(v))
	}
	if err != nil {
		return err
	}
	v.OrderNote, v.RatedByMe, v.Total = qi.note, qi.ratedByMe, qi.total
	if v.Total > 0 {
		// The team's progress: the samples anyone rated (whose ratings
		// count), counted in SQL up to models.TeamRatedBound. Ratings are
		// of the dataset's samples, which every run of it judges, so the
		// count is over them (ds.RowCount), in the stored and the full
		// path alike.
		if v.TeamRated, err = h.DB.TeamRatedSamples(ctx, ds.WorkspaceID, ds.ID, crit.Name, scale.Lo, scale.Hi, models.TeamRatedBound); err != nil {
			return err
		}
		v.TeamRatedCapped, v.Samples = v.TeamRated >= models.TeamRatedBound, ds.RowCount
	}
	if v.Total == 0 {
		return render(c, http.StatusOK, web.ReviewQueuePage(v))
	}
	linked := q.Index // the place the link said, -1 when none
	vrun := run
	if qi.asOf != nil {
		vrun = *qi.asOf // the run as the figures ordered read it
	}
	version := queueVersion(vrun, q.Order, qi.total)
	if err := placeBySample(ctx, &q, qi, &v); err != nil {
		return err
	}
	if v.Moved == nil && q.Version != "" && q.Version != version && (q.Sample > 0 || q.After > 0 || q.Before > 0) {
		// The sample the link named kept its place (or left the queue),
		// but the queue around it changed: its count, or the samples
		// before and after it.
		v.Moved = &web.QueueMoved{Changed: true, Total: versionTotal(q.Version)}
	}
	if q.Index < 0 {
		q.Index = qi.firstUnrated
	}
	if q.Index >= v.Total {
		q.Index = v.Total - 1
	}
	v.Index = q.Index
	s, err := qi.at(ctx, q.Index)
	if err != nil {
		return err
	}
	if v.Moved != nil {
		v.Moved.Linked = linked
		if qi.firstUnrated != q.Index && qi.ratedByMe < v.Total {
			v.Moved.FirstUnrated = qi.firstUnrated
			v.Moved.FirstUnratedURL = (queueQuery{RunID: q.RunID, Criterion: q.Criterion, Order: q.Order, Seed: q.Seed, Blind: q.Blind, Version: version}).url(ds.ID, -1)
		}
	}
	// Every link from this place names the sample shown, so it leads
	// where it meant even when the order changes before it is followed.
	here := queueQuery{RunID: q.RunID, Criterion: q.Criterion, Order: q.Order, Seed: q.Seed, Blind: q.Blind, Version: version}
	if q.Index > 0 {
		prev := here
		prev.Before = s.RowID
		v.PrevURL = prev.url(ds.ID, q.Index-1)
	}
	if q.Index+1 < v.Total {
		next := here
		next.After = s.RowID
		v.NextURL = next.url(ds.ID, q.Index+1)
	}
	here.Sample = s.RowID
	seeing := here
	seeing.Blind = !q.Blind
	v.SeeingURL = seeing.url(ds.ID, q.Index)
	v.OrderURLs = map[string]string{}
	for _, o := range []string{orderDisagreement, orderUncertain, orderRandom} {
		oq := queueQuery{RunID: q.RunID, Criterion: q.Criterion, Order: o, Seed: q.Seed, Blind: q.Blind}
		v.OrderURLs[o] = oq.url(ds.ID, -1)
	}
	// The shown sample's reviews whole (pre holds their ratings only): the
	// form's own review, the others', why a rating is missing.
	shown, err := h.DB.ListRowsCriteriaReviews(ctx, ds.WorkspaceID, ds.ID, []string{crit.Name}, []int64{s.RowID})
	if err != nil {
		return err
	}
	marks, err := h.raterMarksOf(ctx, ds.WorkspaceID)
	if err != nil {
		return err
	}
	marks.mark(shown[crit.Name])
	byRow := splitReviews(shown[crit.Name], scale)
	reviews := byRow.current
	mine := mineOf(reviews[s.RowID], me)
	sv := web.ReviewSample{RowID: s.RowID, ExternalID: s.ExternalID, Fields: s.Fields, Final: s.Final, Human: s.Human,
		Rated: mine != nil && mine.Score != nil, SampleURL: "/runs/" + strconv.FormatInt(run.ID, 10) + "/samples/" + strconv.FormatInt(s.RowID, 10)}
	sv.Hidden = q.Blind && v.CanRate && !sv.Rated
	if m := mineOf(byRow.offScale[s.RowID], me); m != nil {
		// Only the reviewer's own: blind mode hides the others' ratings.
		sv.OffScale = []models.ReviewRating{*m}
	}
	if sv.Human == nil || math.IsNaN(*sv.Human) {
		src, err := h.DB.FindRunHumanSource(ctx, run.ID)
		if err != nil {
			return err
		}
		apart, err := h.apartOf(ctx, run, src)
		if err != nil {
			return err
		}
		sv.HumanMissing = humanMissingReason(crit, src, apart[crit.Name], reviews[s.RowID], byRow.withdrawn[s.RowID], byRow.offScale[s.RowID], scale, false, readerMember)
	}
	if !sv.Hidden {
		scores, err := h.DB.ListRowScores(ctx, run.ID, s.RowID)
		if err != nil {
			return err
		}
		failed := 0 // missing round scores whose judge call failed
		for _, sc := range scores {
			if sc.CriterionIndex != q.Criterion {
				continue
			}
			// The batch it was judged in, linked as the sample page links it.
			b, err := h.DB.FindBatch(ctx, run.ID, sc.BatchID)
			if err != nil {
				return err
			}
			r := web.ReviewRound{Round: sc.Round + 1, Score: sc.Score, Analysis: sc.Analysis, BatchIndex: b.BatchIndex, BatchSize: len(b.RowIDs),
				BatchURL: "/runs/" + strconv.FormatInt(run.ID, 10) + "/batches/" + strconv.FormatInt(b.ID, 10)}
			if sc.Score == nil {
				// Why, in the sample page's words (unreadableReason).
				r.Missing = cmp.Or(unreadableReason(b, sc.Label, false), "not readable")
				if b.Error != "" {
					failed++
				}
			}
			sv.Rounds = append(sv.Rounds, r)
		}
		sv.FinalMissing = finalMissing(sv.Final, len(sv.Rounds), failed)
		for _, r := range reviews[s.RowID] {
			if r.ReviewerKey() != me {
				sv.Others = append(sv.Others, r)
			}
		}
		// Which of the ratings shown the human rating beside them counts.
		if sv.Counting, err = h.reviewCounting(ctx, run); err != nil {
			return err
		}
		sv.Counting = withStillCounted(sv.Counting, models.OnScale(shown[crit.Name], scale))
		sv.RatedBy = reviews[s.RowID]
	}
	v.Sample = &sv
	if v.CanRate {
		f := h.reviewForm(c, ds, run, q.Criterion, scale, s.RowID, here.url(ds.ID, q.Index), mine)
		f.RatingOnly = sv.Hidden
		f.AboutScore = !sv.Hidden && (!writesAnalysis(run) || !slices.ContainsFunc(sv.Rounds, func(r web.ReviewRound) bool { return r.Analysis != "" }))
		v.Form = &f
	}
	return render(c, http.StatusOK, web.ReviewQueuePage(v))
}

// queueVersion names the state of a run's queue in an order, whose
// total samples it holds, as "TOTAL-HASH": the run, how far it was judged
// and, for the order by disagreement, its report's choice of human
// ratings (Run.HumansVersion: a recompute). The random order and the
// order by spread do not follow the human ratings, so a recompute does
// not change their version. Cheap: nothing is read for it.
func queueVersion(run models.Run, order string, total int) string {
	humans := 0
	if order == orderDisagreement {
		humans = run.HumansVersion
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%d|%d|%d|%d|%d|%d", run.ID, run.BatchesDone, run.BatchesFailed, run.MissingScores, humans, total))
	return strconv.Itoa(total) + "-" + hex.EncodeToString(sum[:5])
}

// versionTotal is the count of samples a queue version says its queue
// held; -1 when it does not say.
func versionTotal(version string) int {
	t, _, ok := strings.Cut(version, "-")
	n, err := strconv.Atoi(t)
	if !ok || err != nil || n < 0 {
		return -1
	}
	return n
}

// placeBySample sets the place q asks for from the sample it names
// (q.Sample, or the one before or after it: queueQuery), at the sample's
// place in the queue as ordered now. When that is not the place the link
// said (q.Index), the order changed since the link was made: v.Moved says
// so. A sample the queue does not hold leaves the place to the index.
func placeBySample(ctx context.Context, q *queueQuery, qi queueIndex, v *web.ReviewQueueView) error {
	anchor, step := q.Sample, 0
	switch {
	case q.Sample > 0:
	case q.After > 0:
		anchor, step = q.After, 1
	case q.Before > 0:
		anchor, step = q.Before, -1
	default:
		return nil
	}
	k, found, err := qi.placeOf(ctx, anchor)
	if err != nil || !found {
		return err
	}
	at := min(max(k+step, 0), v.Total-1)
	if q.Index >= 0 && at != q.Index {
		v.Moved = &web.QueueMoved{Step: step, AnchorPlace: k}
	}
	q.Index = at
	return nil
}

// reviewCounting is which browser ratings the run's report counts (its
// human source), for the pages that list a sample's reviews beside it.
func (h *Handlers) reviewCounting(ctx context.Context, run models.Run) (*web.ReviewCounting, error) {
	src, err := h.DB.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	return &web.ReviewCounting{Imported: src.Source == models.HumansImported, UptoRatingID: src.UptoRatingID,
		RunURL: "/runs/" + strconv.FormatInt(run.ID, 10)}, nil
}

// withStillCounted is rc for one criterion's reviews of a sample, or of
// many (on: their submissions on the criterion's scale; the run page's
// box passes each reviewer's current review now and as of the cut-off),
// with the withdrawals the
// report does not know of yet: a reviewer's latest review withdrew their
// rating after the last recompute, which read an earlier rating of theirs.
func withStillCounted(rc *web.ReviewCounting, on []models.ReviewRating) *web.ReviewCounting {
	if rc == nil || rc.Imported {
		return rc
	}
	// Each reviewer's on each sample: on may hold many samples' reviews
	// (the run page's count); keyed by the reviewer alone, one withdrawal
	// per reviewer was counted at most.
	type key struct {
		row int64
		who string
	}
	latest, read := map[key]models.ReviewRating{}, map[key]models.ReviewRating{}
	for _, r := range on {
		k := key{r.RowID, r.ReviewerKey()}
		if l, ok := latest[k]; !ok || r.ID > l.ID {
			latest[k] = r
		}
		if b, ok := read[k]; r.ID <= rc.UptoRatingID && (!ok || r.ID > b.ID) {
			read[k] = r
		}
	}
	out := *rc
	out.StillCounted = map[int64]bool{}
	for k, l := range latest {
		if b, ok := read[k]; ok && b.Score != nil && l.Score == nil && l.ID > rc.UptoRatingID && !l.Excluded {
			out.StillCounted[l.ID] = true
		}
	}
	return &out
}

// writesAnalysis reports whether the run's judge writes an analysis of
// each sample. G-Eval's judge fills in a score form and writes none: the
// line stored beside its scores ("Probability-weighted score from
// logprobs.") is the product's note on how the score was read, so a
// reviewer is asked about the judge's score, not about an analysis.
func writesAnalysis(run models.Run) bool {
	return run.Method != string(evaluator.MethodGEval)
}

// finalMissing says in a few words why a final score is missing: no
// round judged yet, every missing round's call failed, or the judge's
// answers could not be read. "" when there is a score.
func finalMissing(final *float64, rounds, failed int) string {
	switch {
	case final != nil:
		return ""
	case rounds == 0:
		return "not judged yet"
	case failed == rounds:
		return "the judge call failed"
	}
	return "the judge's answer could not be read"
}

// reviewRefused is the page of a review's save refused for its sender's
// membership (err; why, its message): for the role (require's
// errRoleTooWeak: a reviewer whose role an owner lowered while they typed),
// or because they are no longer a member of the workspace (errLeftWorkspace:
// an owner removed them while they typed). Either way they lost what they
// typed with the form. It keeps the form's fields, escaped, says why
// nothing was saved and what to do (ask an owner for the reviewer role, or
// to be invited again), and links back to the page rated on while it is
// still theirs to open. false for any other refusal or route.
func reviewRefused(c echo.Context, err error, why string) (web.ReviewRefusedView, bool) {
	left := errors.Is(err, errLeftWorkspace)
	if c.Request().Method != http.MethodPost || c.Path() != "/datasets/:id/review" || !(left || errors.Is(err, errRoleTooWeak)) {
		return web.ReviewRefusedView{}, false
	}
	p := principalOf(c.Request().Context())
	v := web.ReviewRefusedView{
		Page: errorPage(c, http.StatusForbidden),
		Why:  why,
		Todo: "Nothing of this review was saved: rating samples takes the reviewer, editor or owner role, and your role in this workspace is now " + string(p.Role) +
			". Ask an owner of the workspace to give you the reviewer role, then rate the sample again; what you typed is below, to copy.",
		Score: c.FormValue("score"), Agree: c.FormValue("agree"), Reason: c.FormValue("reason"), Comment: c.FormValue("comment"), Tags: c.FormValue("tags"),
	}
	if left {
		// why (leftWorkspaceText) says which workspace and that nothing
		// was saved. The page rated on is that workspace's: no link back
		// to it, which would open nothing until they are invited again.
		v.Todo = "Ask an owner of workspace " + web.Quoted(p.Left) + " to invite you again, then rate the sample again; what you typed is below, to copy."
		return v, true
	}
	if back := safeNext(c.FormValue("back")); strings.HasPrefix(back, "/datasets/") || strings.HasPrefix(back, "/runs/") {
		v.Back = back
	}
	return v, true
}

// saveReview stores one review from the queue or a sample page, then
// sends the reviewer back where they were (POST-redirect-GET).
func (h *Handlers) saveReview(c echo.Context) error {
	ctx := c.Request().Context()
	ds, err := h.datasetOfParam(c)
	if err != nil {
		return err
	}
	// The run is a number the sample's page put in the form: anything else
	// was read as run 0 ("run 0 does not exist"), naming neither the field
	// nor what to do.
	runID, err := reviewFormID(c, "run", "run")
	if err != nil {
		return err
	}
	// So is the sample (its row): anything else was read as row 0.
	rowID, err := reviewFormID(c, "row", "sample")
	if err != nil {
		return err
	}
	run, err := h.DB.FindRun(ctx, ds.WorkspaceID, runID)
	if err != nil {
		return err
	}
	if run.DatasetID != ds.ID {
		return models.Errorf(models.EInvalid, "run %d did not judge this dataset", run.ID)
	}
	ci := -1
	for i, cr := range run.RubricSnapshot.Criteria {
		if cr.Name == c.FormValue("criterion") {
			ci = i
		}
	}
	if ci < 0 {
		return models.Errorf(models.EInvalid, "the run's rubric has no criterion %s", web.Quoted(c.FormValue("criterion")))
	}
	crit := run.RubricSnapshot.Criteria[ci]
	back := safeNext(c.FormValue("back"))
	if !strings.HasPrefix(back, "/datasets/") && !strings.HasPrefix(back, "/runs/") {
		back = "/datasets/" + strconv.FormatInt(ds.ID, 10) + "/review"
	}
	// Reviewers rate on the rubric's scale, never on the scale the run's
	// method asked the judge to use (LLM-Eval's 0 to 5).
	scale, refused, err := h.humanScaleOf(ctx, run, ci)
	if err != nil {
		return err
	}
	if refused != "" {
		setFlash(c, "error", refused+".")
		return c.Redirect(http.StatusSeeOther, back)
	}
	name, userID, _ := h.reviewer(c)
	shownAs := name // whose review the form was filled in with
	if principalOf(ctx).Kind == LocalUser {
		if typed := strings.TrimSpace(c.FormValue("reviewer")); typed != "" {
			name = typed
			setCookie(c, &http.Cookie{Name: reviewerCookie, Value: url.QueryEscape(typed), Path: "/", HttpOnly: true,
				SameSite: http.SameSiteLaxMode, MaxAge: reviewerCookieAge})
		}
	}
	r := models.ReviewRating{WorkspaceID: ds.WorkspaceID, DatasetID: ds.ID, RowID: rowID, Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: name,
		UserID: userID, RunID: &run.ID, Lo: scale.Lo, Hi: scale.Hi, Reason: c.FormValue("reason"), Comment: c.FormValue("comment"),
		Tags: models.ParseReviewTags(c.FormValue("tags"))}
	switch c.FormValue("agree") {
	case "agree":
		t := true
		r.Agree = &t
	case "disagree":
		f := false
		r.Agree = &f
	}
	withdraw := c.FormValue("clear_rating") != ""
	if s := strings.TrimSpace(c.FormValue("score")); s != "" && !withdraw {
		// Read as every other decimal a person types in a form: "2,5"
		// is 2.5 (typedDecimal).
		v, problem := typedDecimal(s, strconv.FormatFloat(scale.Lo+0.5, 'f', -1, 64))
		if problem != "" {
			return h.reviewRefused(c, ds, back, r, fmt.Sprintf("The rating %s %s; it must be a number from %g to %g.", web.Quoted(s), problem, scale.Lo, scale.Hi))
		}
		r.Score = &v
	}
	if withdraw && strings.TrimSpace(r.Comment) == "" && len(r.Tags) == 0 && c.FormValue("agree") == "" {
		// As the API asks (clear_rating): the withdrawal is kept with the
		// other reviews, and says why.
		return h.reviewRefused(c, ds, back, r, "Withdrawing your rating: say why in the comment.")
	}
	cur, err := h.currentReview(ctx, ds, crit.Name, scale, rowID, models.ReviewerKeyOf(name, userID))
	if err != nil {
		return err
	}
	if r.Score == nil && !withdraw && cur != nil {
		// A review without a rating (an emptied number field: a comment
		// added later) keeps the reviewer's current rating of the sample,
		// as the API does; "withdraw my rating" is the way to drop it.
		r.Score = cur.Score
	}
	// The same reviewer in two tabs: a form shown before the other tab
	// saved does not overwrite that review unseen.
	params, err := c.FormParams()
	if err != nil {
		return models.Errorf(models.EInvalid, "the form could not be read: %v", err)
	}
	if name != shownAs {
		// A name typed anew (local mode): another reviewer's review,
		// which the form was not filled in with.
		params.Del("seen")
	}
	if problem, err := changedSinceSeen(params, cur, r); err != nil {
		return err
	} else if problem != "" {
		return h.reviewRefused(c, ds, back, r, problem)
	}
	if _, err := h.DB.AddReviewRating(ctx, r); err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			return h.reviewRefused(c, ds, back, r, flashProblem(err))
		}
		return err
	}
	return redirect(c, back, "Review of "+crit.Name+" saved as "+reviewerShown(c, name)+".")
}

// reviewTypedKey keeps, in a request's context, a review the form sent
// and the server refused (reviewRefused), for the form to show again.
const reviewTypedKey = "review-typed"

// reviewTyped is a refused review as typed, and why it was refused.
type reviewTyped struct {
	review  models.ReviewRating
	problem string
}

// reviewRefused answers a review the server refused (a tag too long, a
// reason without agreeing or disagreeing, a rating off the scale) with
// the page the form was sent from, its form holding what the reviewer
// typed (rating, agreement, reason, comment, tags) and the problem beside
// it, with 422. Redirecting with a message lost all of it, a long comment
// included. A form sent from anywhere else gets the message and a
// redirect, as before.
func (h *Handlers) reviewRefused(c echo.Context, ds models.Dataset, back string, typed models.ReviewRating, problem string) error {
	u, err := url.Parse(back)
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	var show func(echo.Context) error
	var names, values []string
	switch {
	case err != nil:
	case len(parts) == 3 && parts[0] == "datasets" && parts[2] == "review" && parts[1] == strconv.FormatInt(ds.ID, 10):
		names, values, show = []string{"id"}, parts[1:2], h.showReviewQueue
	case len(parts) == 4 && parts[0] == "runs" && parts[2] == "samples":
		names, values, show = []string{"id", "rowID"}, []string{parts[1], parts[3]}, h.showRunSample
	}
	if show == nil {
		setFlash(c, "error", problem)
		return c.Redirect(http.StatusSeeOther, back)
	}
	// The page's own request: its address and query (the context keeps
	// the query it read first, so it is reset), as the same principal.
	req := c.Request().Clone(c.Request().Context())
	req.Method, req.URL.Path, req.URL.RawQuery = http.MethodGet, u.Path, u.RawQuery
	route := c.Path()
	kept := map[string]any{}
	for _, k := range []string{secureKey, forwardedByUntrustedKey} {
		if v := c.Get(k); v != nil {
			kept[k] = v
		}
	}
	c.Reset(req, c.Response().Writer)
	c.SetPath(route)
	for k, v := range kept {
		c.Set(k, v)
	}
	c.SetParamNames(names...)
	c.SetParamValues(values...)
	c.Set(reviewTypedKey, &reviewTyped{review: typed, problem: problem})
	c.Set(renderStatusKey, http.StatusUnprocessableEntity)
	return show(c)
}

// reviewerShown is how the review pages name the reviewer keyed name: a
// signed-in account by its display name, as the pages' header does, with
// its email beside it, as the review lists and the export name it (its
// email only when it has no name), so the reviewer recognises themself
// in each: "Ann Lee (ann@example.org)".
func reviewerShown(c echo.Context, name string) string {
	p := principalOf(c.Request().Context())
	if p.Kind != Account && p.Kind != Token {
		return name
	}
	return web.ReviewerText(models.ReviewRating{Reviewer: name, ReviewerName: displayNameBeside(p.User.Name, name)})
}

// displayNameBeside is an account's display name to show beside its email,
// "" when it has none or it is the email itself.
func displayNameBeside(display, email string) string {
	if n := strings.TrimSpace(display); n != email {
		return n
	}
	return ""
}

// flashProblem is a refusal of the models as the browser's messages read:
// a sentence ("The rating must be a number from 1 to 5."), where the API
// keeps the message as it is.
func flashProblem(err error) string {
	return upperFirst(models.ErrorMessage(err)) + "."
}

// sampleReviewPanel is the review part of a run's sample page: per
// criterion, the reviewer's form and everyone's current reviews. The
// sample page shows the judge, so it is not blind: the queue is. page is
// the rest of the sample page (runSampleView), whose rounds say whether
// the judge wrote an analysis to agree with; a criterion of it without a
// human rating gets the reason, as the queue words it.
func (h *Handlers) sampleReviewPanel(c echo.Context, run models.Run, rowID int64, page *web.RunSampleView) (*web.SampleReviewView, error) {
	ctx := c.Request().Context()
	ds, err := h.DB.FindDataset(ctx, h.workspaceID(c), run.DatasetID)
	if err != nil {
		return nil, err
	}
	me := h.reviewerKey(c)
	v := &web.SampleReviewView{CanRate: canRate(c)}
	back := "/runs/" + strconv.FormatInt(run.ID, 10) + "/samples/" + strconv.FormatInt(rowID, 10)
	scales, refusals, err := h.humanScalesOf(ctx, run)
	if err != nil {
		return nil, err
	}
	var names []string
	for ci, crit := range run.RubricSnapshot.Criteria {
		if refusals[ci] == "" {
			names = append(names, crit.Name)
		}
	}
	// Every criterion's reviews of this sample in one query.
	byName, err := h.DB.ListRowsCriteriaReviews(ctx, ds.WorkspaceID, ds.ID, names, []int64{rowID})
	if err != nil {
		return nil, err
	}
	marks, err := h.raterMarksOf(ctx, ds.WorkspaceID)
	if err != nil {
		return nil, err
	}
	for _, rs := range byName {
		marks.mark(rs)
	}
	// A missing human rating says why, in the queue's words
	// (humanMissingReason); the run's human source is read only then.
	var src *models.RunHumanSource
	var apart map[string]*models.ImportedOnScale
	sayWhyMissing := func(ci int, crit evaluator.Criterion, reviews, withdrawn, offScale []models.ReviewRating, scale evaluator.Scale, scaleUnknown bool) error {
		if ci >= len(page.Criteria) || page.Criteria[ci].HumanPending {
			return nil
		}
		if hu := page.Criteria[ci].Human; hu != nil && !math.IsNaN(*hu) {
			return nil
		}
		if src == nil {
			s, err := h.DB.FindRunHumanSource(ctx, run.ID)
			if err != nil {
				return err
			}
			src = &s
			if apart, err = h.apartOf(ctx, run, s); err != nil {
				return err
			}
		}
		page.Criteria[ci].HumanMissing = humanMissingReason(crit, *src, apart[crit.Name], reviews, withdrawn, offScale, scale, scaleUnknown, readerMember)
		return nil
	}
	var counting *web.ReviewCounting // read once, for the first criterion with reviews
	for ci, crit := range run.RubricSnapshot.Criteria {
		sc := web.SampleReviewCriterion{Name: crit.Name,
			QueueURL: (queueQuery{RunID: run.ID, Criterion: ci, Order: orderDisagreement, Seed: defaultQueueSeed, Blind: true}).url(ds.ID, -1)}
		if refusals[ci] != "" {
			sc.Refused = refusals[ci]
			v.Criteria = append(v.Criteria, sc)
			if err := sayWhyMissing(ci, crit, nil, nil, nil, evaluator.Scale{}, true); err != nil {
				return nil, err
			}
			continue
		}
		reviews := splitReviews(byName[crit.Name], scales[ci])
		sc.Reviews, sc.OffScale = reviews.current[rowID], reviews.offScale[rowID]
		if len(sc.Reviews) > 0 {
			if counting == nil {
				if counting, err = h.reviewCounting(ctx, run); err != nil {
					return nil, err
				}
			}
			sc.Counting = withStillCounted(counting, models.OnScale(byName[crit.Name], scales[ci]))
		}
		if err := sayWhyMissing(ci, crit, sc.Reviews, reviews.withdrawn[rowID], reviews.offScale[rowID], scales[ci], false); err != nil {
			return nil, err
		}
		if v.CanRate {
			f := h.reviewForm(c, ds, run, ci, scales[ci], rowID, back, mineOf(reviews.current[rowID], me))
			// As the queue asks: about the score when no round shows an
			// analysis ("The judge wrote no analysis of this sample").
			f.AboutScore = ci >= len(page.Criteria) || !writesAnalysis(run) ||
				!slices.ContainsFunc(page.Criteria[ci].Rounds, func(r web.RunSampleRound) bool { return r.Analysis != "" })
			sc.Form = &f
		}
		v.Criteria = append(v.Criteria, sc)
	}
	return v, nil
}

// humanSourceView says which human ratings the run's report used and how
// many browser ratings it does not use yet, with the recompute form, from
// the run's browser reviews as the request read them.
func humanSourceView(run models.Run, rep *report.Report, reviews *report.BrowserReviews, canRecompute bool) web.HumanSourceView {
	if rep == nil || reviews == nil {
		return web.HumanSourceView{RunID: run.ID, CanRecompute: canRecompute}
	}
	v := humanSourceHead(run, rep, canRecompute)
	scales, byName := reviews.Scales, reviews.ByName
	for ci, crit := range run.RubricSnapshot.Criteria {
		if ci >= len(scales) || scales[ci] == nil {
			continue // the report reads none of them (report.chosenReviews)
		}
		// Only a reviewer's latest review of a sample on the criterion's
		// human scale counts, and only with a rating: the report reads
		// nothing else of them.
		on := models.OnScale(byName[crit.Name], *scales[ci])
		for _, r := range models.CurrentReviews(on) {
			if r.Score == nil {
				continue
			}
			v.BrowserRatings++
			if rep.Humans.Source == models.HumansImported || r.ID > rep.Humans.UptoRatingID {
				v.NotUsed++
			}
		}
		// A rating withdrawn since the last recompute is still in the
		// report (it read the rating), as the sample page says of it
		// (withStillCounted): the count of what a recompute changes
		// names it too, where it stayed as it was.
		if rep.Humans.Source != models.HumansImported {
			v.Withdrawn += len(withStillCounted(&web.ReviewCounting{UptoRatingID: rep.Humans.UptoRatingID}, on).StillCounted)
		}
	}
	return v
}

// humanSourceHead is the run page's human-source box without its counts.
func humanSourceHead(run models.Run, rep *report.Report, canRecompute bool) web.HumanSourceView {
	v := web.HumanSourceView{RunID: run.ID, CanRecompute: canRecompute}
	v.Used = rep.Humans.Text()
	v.Source = string(rep.Humans.Source)
	for ci, crit := range run.RubricSnapshot.Criteria {
		v.Queues = append(v.Queues, web.ReviewQueueLink{Criterion: crit.Name,
			URL: (queueQuery{RunID: run.ID, Criterion: ci, Order: orderDisagreement, Seed: defaultQueueSeed, Blind: true}).url(run.DatasetID, -1)})
	}
	return v
}

// countedHumanSourceView is humanSourceView with its counts made in SQL
// (models.CountCurrentRatings: the same current reviews, now and as of the
// report's cut-off, without the excluded accounts'), for a finished run's
// page, which then reads no review into memory unless it builds its
// report (ratings48).
func (h *Handlers) countedHumanSourceView(ctx context.Context, run models.Run, rep *report.Report, canRecompute bool) (web.HumanSourceView, error) {
	if rep == nil {
		return web.HumanSourceView{RunID: run.ID, CanRecompute: canRecompute}, nil
	}
	v := humanSourceHead(run, rep, canRecompute)
	scales, refused, err := h.DB.RunHumanScales(ctx, run)
	if err != nil {
		return v, err
	}
	excluded, err := h.DB.ExcludedRaters(ctx, run.WorkspaceID)
	if err != nil {
		return v, err
	}
	on := map[string]evaluator.Scale{}
	for ci, crit := range run.RubricSnapshot.Criteria {
		if refused[ci] == nil {
			on[crit.Name] = scales[ci] // the report reads none of the others (report.chosenReviews)
		}
	}
	imported := rep.Humans.Source == models.HumansImported
	upto := rep.Humans.UptoRatingID
	if imported {
		upto = 0 // every rating is one the report does not use
	}
	c, err := h.DB.CountCurrentRatings(ctx, run.WorkspaceID, run.DatasetID, on, upto, excluded)
	if err != nil {
		return v, err
	}
	v.BrowserRatings, v.NotUsed = c.Rated, c.SinceCutOff
	if !imported {
		v.Withdrawn = c.Withdrawn
	}
	return v, nil
}

// recomputeHumans makes the run's report use the chosen human ratings, as
// stored now, and shows it again.
func (h *Handlers) recomputeHumans(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	src, err := models.ParseHumanSource(c.FormValue("source"))
	if err != nil {
		return err
	}
	by := principalOf(ctx).ActorLabel()
	if _, err := h.DB.SetRunHumanSource(ctx, run.WorkspaceID, run.ID, src, by); err != nil {
		return err
	}
	h.forgetReports(run.ID)
	h.audit(c, "report-humans-chosen", "run "+strconv.FormatInt(run.ID, 10), string(src))
	return redirect(c, "/runs/"+strconv.FormatInt(run.ID, 10), "The report now uses the "+src.Label()+" as of "+time.Now().UTC().Format("15:04:05 UTC")+".")
}

// forgetReports drops a run's cached reports (its human ratings changed).
func (h *Handlers) forgetReports(runID int64) {
	h.live.forget(runID)
	rc := h.reports
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	kept := rc.order[:0]
	for _, k := range rc.order {
		if k.runID == runID {
			delete(rc.items, k)
			continue
		}
		kept = append(kept, k)
	}
	rc.order = kept
	// The comparisons with other runs used its ratings too.
	for k := range rc.pairs {
		if k.a == runID || k.b == runID {
			delete(rc.pairs, k)
		}
	}
	for k := range rc.criterionPairs {
		if k.a == runID || k.b == runID {
			delete(rc.criterionPairs, k)
		}
	}
	for k := range rc.matched {
		if k.a == runID || k.b == runID {
			delete(rc.matched, k)
		}
	}
	for k := range rc.heldOut {
		if k.a == runID || k.b == runID {
			delete(rc.heldOut, k)
		}
	}
}

// reviewerNamesColumn heads the dataset export's column of who rated each
// sample, by display name and email (exportDatasetCSV).
const reviewerNamesColumn = "browser reviewers"

// datasetExportChunk is how many rows a dataset export reads at a time
// (a variable for the tests).
var datasetExportChunk = 1000

// exportDatasetCSV writes the dataset as CSV, one row per sample: its
// columns as imported, each imported annotator's rating and one column per
// browser reviewer and criterion ("<column>@browser:<reviewer>", their
// current rating on the criterion's rubric scale: exportedReviews; a
// reviewer by identity, models.BrowserAnnotatorKeys).
// Imported again with those columns as ratings, the reviewers are
// annotators of the criterion's human column (the human ceiling finds them
// by that name).
func (h *Handlers) exportDatasetCSV(c echo.Context) error {
	ctx := c.Request().Context()
	ds, err := h.datasetOfParam(c)
	if err != nil {
		return err
	}
	excel, err := excelVariant(c)
	if err != nil {
		return err
	}
	// The rows are streamed a chunk at a time (memory does not grow with
	// the dataset: the whole of it was read first, 1.2 GB of RSS and 7.5 s
	// before the first byte at 1,000,000 rows); the annotators' keys come
	// from the dataset's summary of its ratings.
	rs, err := h.DB.DatasetRatingStats(ctx, ds)
	if err != nil {
		return err
	}
	reviews, err := h.exportedReviews(ctx, ds)
	if err != nil {
		return err
	}
	type cell struct {
		row int64
		key string
	}
	inColumns := map[string]bool{}
	for _, col := range ds.Columns {
		inColumns[col] = true
	}
	annotatorKeys := map[string]bool{}
	for _, k := range rs.Keys() {
		if !inColumns[k] {
			annotatorKeys[k] = true
		}
	}
	// One column per reviewer by identity, under a name no column of the
	// dataset has (models.BrowserAnnotatorKeys): an account and a typed
	// name that read alike, or a reviewer and an imported annotator's
	// column of the same name, are never written into one column.
	taken := append(slices.Clone(ds.Columns), slices.Collect(maps.Keys(annotatorKeys))...)
	byBase := map[string][]models.ReviewRating{}
	for _, r := range reviews {
		byBase[r.HumanKey()] = append(byBase[r.HumanKey()], r)
	}
	browser := map[cell]models.ReviewRating{}
	browserKeys := map[string]bool{}
	for base, rs := range byBase {
		_, keyOf := models.BrowserAnnotatorKeys(base, rs, taken)
		for _, r := range rs {
			k := cell{r.RowID, keyOf[r.ReviewerKey()]}
			browser[k] = r
			browserKeys[k.key] = true
		}
	}
	sorted := func(m map[string]bool) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	extra, reviewCols := sorted(annotatorKeys), sorted(browserKeys)
	// The rating columns name an account by its email, which keys it and
	// stays as it was when the file is imported again; the pages name it by
	// its display name beside the email. When an account has one, a last
	// column says, per sample, who rated it by name and email.
	namesCol := ""
	if slices.ContainsFunc(reviews, func(r models.ReviewRating) bool { return r.ReviewerName != "" }) {
		namesCol = reviewerNamesColumn
		for slices.Contains(taken, namesCol) || browserKeys[namesCol] {
			namesCol += " (names)"
		}
	}
	resp := c.Response()
	// With ?excel=1 the same file for Excel on Windows (excelCSV, as the
	// run's export): non-Latin text read as the system's code page
	// otherwise. With ?excel=semicolon the file for Excel where decimals
	// are written with a comma (semicolonExcelCSV, as the run's export):
	// that Excel opened the comma-separated file as one column.
	name := "dataset-" + strconv.FormatInt(ds.ID, 10) + "-with-reviews.csv"
	switch excel {
	case "1":
		name = strings.TrimSuffix(name, ".csv") + ".excel.csv"
	case "semicolon":
		name = strings.TrimSuffix(name, ".csv") + ".excel-semicolon.csv"
	}
	resp.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	resp.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	resp.WriteHeader(http.StatusOK)
	stream := func(out io.Writer) error {
		w := csv.NewWriter(out)
		// Every cell comes from an upload or from what a reviewer typed, and the
		// file is made to be opened in a spreadsheet: a cell such as
		// =HYPERLINK(...) or -2+3 would run there as a formula. Each goes through
		// the run export's report.SafeCell, which makes it text with a leading
		// quote; a rating column's number (-2, 3.5, " 4" padded with blanks,
		// "2,5" from a file with decimal commas) is written as a number with a
		// decimal point (exportedRatingCell), as the run export writes
		// ratings, so the file imports again.
		header := append(append(append([]string{}, ds.Columns...), extra...), reviewCols...)
		if namesCol != "" {
			header = append(header, namesCol)
		}
		for i := range header {
			header[i] = report.SafeCell(header[i])
		}
		if err := w.Write(header); err != nil {
			return err
		}
		num := func(v *float64) string {
			if v == nil || math.IsNaN(*v) {
				return ""
			}
			return report.RatingCell(strconv.FormatFloat(*v, 'g', -1, 64))
		}
		rated := map[string]bool{}
		for _, col := range ds.RatingColumns {
			rated[col] = true
		}
		rec := make([]string, 0, len(header))
		err := h.DB.EachDatasetRowChunk(ctx, ds.ID, datasetExportChunk, "", func(rows []models.DatasetRow) error {
			for _, r := range rows {
				rec = rec[:0]
				for _, col := range ds.Columns {
					if rated[col] {
						rec = append(rec, exportedRatingCell(r.Data[col]))
					} else {
						rec = append(rec, report.SafeCell(r.Data[col]))
					}
				}
				for _, k := range extra {
					rec = append(rec, num(r.Ratings[k]))
				}
				var who []string
				for _, k := range reviewCols {
					var v *float64
					if rv, ok := browser[cell{r.ID, k}]; ok {
						v = rv.Score
						if t := web.ReviewerText(rv); !slices.Contains(who, t) {
							who = append(who, t)
						}
					}
					rec = append(rec, num(v))
				}
				if namesCol != "" {
					rec = append(rec, report.SafeCell(strings.Join(who, "; ")))
				}
				if err := w.Write(rec); err != nil {
					return err
				}
			}
			w.Flush()
			return w.Error()
		})
		if err != nil {
			return err
		}
		w.Flush()
		return w.Error()
	}
	switch excel {
	case "1":
		return stream(&excelCSV{w: resp})
	case "semicolon":
		return semicolonExcelCSV(resp, stream)
	}
	return stream(resp)
}

// exportedRatingCell writes a cell of one of the dataset's rating columns
// as the import read it. A number written with a decimal comma ("2,5", from
// a semicolon-separated file, which the import read as 2.5; a file of
// commas refuses it) gets a decimal point, as every other number of the
// export: written as uploaded, the comma-separated file held "2,5", which a
// spreadsheet reads as text and the product's own import refuses. The
// ?excel=semicolon variant writes it back with a comma (semicolonExcelCSV).
// The number's digits are kept ("2,50" is 2.50). Any other cell is written
// as report.RatingCell writes it: a number as uploaded but for padding,
// text ("N/A") as uploaded, defused.
func exportedRatingCell(cell string) string {
	if d, ok := dataimport.DecimalCommaNumber(cell); ok {
		return report.RatingCell(d)
	}
	return report.RatingCell(cell)
}

// exportedReviews are the browser ratings a dataset export writes: per
// criterion, each reviewer's current review of a sample among those given
// on the criterion's rubric scale, when it has a rating, as a report reads
// them (models.OnScale, then CurrentReviews). A rating given on another
// scale (an LLM-Eval queue's 0 to 5 before reviews were asked for on the
// rubric's scale, or an older rubric version's range) is left out rather
// than written under the column's scale, a withdrawn rating is not
// written, nor are the ratings of people an owner excluded; the API's
// review list keeps every review with its scale, marked.
//
// The criterion's scale is the one the review queue asks for through the
// dataset's newest run of the criterion that can tell it
// (models.RunHumanScale). With no such run left (all deleted), it is the
// scale of the criterion's newest review, the last one reviewers were
// asked for.
func (h *Handlers) exportedReviews(ctx context.Context, ds models.Dataset) ([]models.ReviewRating, error) {
	all, err := h.DB.ListDatasetReviews(ctx, ds.WorkspaceID, ds.ID)
	if err != nil {
		return nil, err
	}
	// The ratings of people an owner excluded are not written, as no
	// report reads them (models.SetRatingsExcluded).
	excluded, err := h.DB.ExcludedRaters(ctx, ds.WorkspaceID)
	if err != nil {
		return nil, err
	}
	all, _ = models.WithoutExcluded(all, excluded)
	byCriterion := map[string][]models.ReviewRating{}
	var names []string
	for _, r := range all {
		if byCriterion[r.Criterion] == nil {
			names = append(names, r.Criterion)
		}
		byCriterion[r.Criterion] = append(byCriterion[r.Criterion], r)
	}
	if len(names) == 0 {
		return nil, nil
	}
	runs, err := h.datasetRuns(ctx, ds) // newest first
	if err != nil {
		return nil, err
	}
	scales := map[string]evaluator.Scale{}
	for _, run := range runs {
		var runScales []evaluator.Scale
		var refusals []string
		for ci, crit := range run.RubricSnapshot.Criteria {
			if _, ok := scales[crit.Name]; ok || byCriterion[crit.Name] == nil {
				continue
			}
			if runScales == nil {
				if runScales, refusals, err = h.humanScalesOf(ctx, run); err != nil {
					return nil, err
				}
			}
			if refusals[ci] == "" {
				scales[crit.Name] = runScales[ci]
			}
		}
	}
	var out []models.ReviewRating
	for _, name := range names {
		rs := byCriterion[name]
		scale, ok := scales[name]
		if !ok {
			newest := rs[len(rs)-1] // oldest first
			scale = evaluator.Scale{Lo: newest.Lo, Hi: newest.Hi}
		}
		for _, r := range models.CurrentReviews(models.OnScale(rs, scale)) {
			if r.Score != nil {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// datasetOfParam is the dataset named by the route's :id, in the caller's
// workspace (not found for any other).
func (h *Handlers) datasetOfParam(c echo.Context) (models.Dataset, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.Dataset{}, err
	}
	return h.DB.FindDataset(c.Request().Context(), h.workspaceID(c), id)
}

// reviewFormID reads the id a sample's page put in the review form's
// field: a positive number, else an error naming the field (noun as the
// page calls it), its value and what to do.
func reviewFormID(c echo.Context, field, noun string) (int64, error) {
	text := strings.TrimSpace(c.FormValue(field))
	id, err := strconv.ParseInt(text, 10, 64)
	switch {
	case text == "":
		return 0, models.Errorf(models.EInvalid, "the review names no %s (field %s): open the sample from its run's page and review it there; nothing was saved", noun, field)
	case err != nil || id <= 0:
		return 0, models.Errorf(models.EInvalid, "%s %s is not a %s number: open the sample from its run's page and review it there; nothing was saved", noun, web.Quoted(text), noun)
	}
	return id, nil
}
