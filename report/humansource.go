package report

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// ScaleNotes say, per criterion where it applies, how the imported
	// ratings were put on the browser ratings' scale before the two were
	// averaged, or why they were not (models.ImportedOnScale).
	ScaleNotes []string
	// Apart are the decisions (models.ImportedOnScale) of the criteria
	// whose imported ratings could not be put on the browser ratings'
	// scale: their combined human rating is missing for every sample,
	// which a page says where it says why a sample's rating is missing.
	Apart []models.ImportedOnScale
	// Criteria are, by the run's criterion index, the browser ratings the
	// report read on each criterion: what BrowserRatings sums, and which
	// ratings they are. Nil under the imported source.
	Criteria []CriterionHumans
	// ExcludedRatings counts the ratings the report would have read but
	// left out because an owner excluded their reviewers
	// (models.SetRatingsExcluded), and ExcludedPeople those reviewers.
	ExcludedRatings, ExcludedPeople int
}

// CriterionHumans are the browser ratings a report read on one criterion.
type CriterionHumans struct {
	// Ratings counts the browser reviewers' current ratings with a score.
	Ratings int
	// Key hashes those ratings (each one's id, row, score, scale and
	// reviewer): two reports of one dataset with the same key read the
	// same ratings. "" when there are none.
	Key string
}

// Text says in words which human ratings were used.
func (u HumanUse) Text() string {
	src := u.Source
	if src == "" {
		src = models.HumansImported
	}
	s := src.Label()
	if src != models.HumansImported {
		if u.BrowserRatings == 1 {
			s += " (1 browser rating"
		} else {
			s += fmt.Sprintf(" (%d browser ratings", u.BrowserRatings)
		}
		if u.AsOf != nil {
			s += " made up to " + u.AsOf.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		s += ")"
		if u.ExcludedRatings > 0 {
			s += fmt.Sprintf(", leaving out %s by %s whose ratings an owner excluded", plural(u.ExcludedRatings, "rating", "ratings"), plural(u.ExcludedPeople, "person", "people"))
		}
	}
	if len(u.ScaleNotes) > 0 {
		s += ". " + strings.Join(u.ScaleNotes, " ")
	}
	return s
}

// SameHumans reports whether two reports measured agreement against the
// same human ratings, so that their correlations can be set against each
// other: both read the imported column (a noisy copy carries its parent's
// ratings; "both" with no browser rating is the imported column as it
// is), or both read browser ratings of the same dataset chosen up to the
// same rating. A report recomputed with browser ratings beside one that
// was not measures its judge against other targets: the difference of
// their correlations is then partly the ratings', not the judges'.
func SameHumans(a, b *Report) bool {
	if a == nil || b == nil {
		return true
	}
	ua, ub := a.Humans.effective(), b.Humans.effective()
	if ua != ub {
		return false
	}
	if ua == models.HumansImported {
		return true
	}
	return a.Run.DatasetID == b.Run.DatasetID && a.Humans.UptoRatingID == b.Humans.UptoRatingID &&
		a.Humans.BrowserRatings == b.Humans.BrowserRatings
}

// criterionSource is the source whose ratings the report read on its
// criterion i, with those browser ratings: the imported column under the
// imported source, and under imported and browser ratings on a criterion
// without a browser rating; "" under browser ratings on a criterion
// without one, and on a criterion without any human rating.
func (r *Report) criterionSource(i int) (models.HumanSource, CriterionHumans) {
	if i < 0 || i >= len(r.Criteria) || !r.Criteria[i].HasHuman {
		return "", CriterionHumans{}
	}
	u := r.Humans
	if u.Source == "" || u.Source == models.HumansImported {
		return models.HumansImported, CriterionHumans{}
	}
	var c CriterionHumans
	if i < len(u.Criteria) {
		c = u.Criteria[i]
	}
	switch {
	case c.Ratings > 0:
		return u.Source, c
	case u.Source == models.HumansBoth:
		return models.HumansImported, c
	}
	return "", c
}

// CriterionReadsImported reports whether the report read the imported
// column as it is on its criterion i: under the imported source, and
// under imported and browser ratings on a criterion without a browser
// rating.
func (r *Report) CriterionReadsImported(i int) bool {
	src, _ := r.criterionSource(i)
	return src == models.HumansImported
}

// CriterionHasHumans reports whether the report read any human rating on
// its criterion i.
func (r *Report) CriterionHasHumans(i int) bool {
	src, _ := r.criterionSource(i)
	return src != ""
}

// SameCriterionHumans reports whether report a's criterion ia and report
// b's criterion ib were measured against the same human ratings: both
// read the same imported column (a noisy copy carries its parent's
// ratings), or both read the same browser ratings of the same dataset
// under the same source (and column, beside imported ones). Two reports
// without any rating on the criteria are alike too. SameHumans decides
// it for a whole report, from its source and newest rating: two reports
// that read the same ratings on one criterion may differ on another.
func SameCriterionHumans(a *Report, ia int, b *Report, ib int) bool {
	if a == nil || b == nil {
		return true
	}
	sa, ca := a.criterionSource(ia)
	sb, cb := b.criterionSource(ib)
	if sa != sb {
		return false
	}
	switch sa {
	case "":
		return true
	case models.HumansBrowser:
		return a.Run.DatasetID == b.Run.DatasetID && ca.Key == cb.Key
	}
	if a.Criteria[ia].Criterion.HumanColumn != b.Criteria[ib].Criterion.HumanColumn {
		return false
	}
	return sa == models.HumansImported || (a.Run.DatasetID == b.Run.DatasetID && ca.Key == cb.Key)
}

// CriterionShort names, in a few words, the human ratings the report read
// on its criterion i, as Short does for the whole report: "the imported
// column", the source with the count of browser ratings on that
// criterion, or "no human ratings".
func (r *Report) CriterionShort(i int) string {
	src, c := r.criterionSource(i)
	switch src {
	case "":
		return "no human ratings"
	case models.HumansImported:
		return "the " + src.Label()
	}
	return fmt.Sprintf("the %s (%s)", src.Label(), ratingsCount(c.Ratings))
}

// ratingsCount is "1 browser rating", "6 browser ratings".
func ratingsCount(n int) string {
	if n == 1 {
		return "1 browser rating"
	}
	return fmt.Sprintf("%d browser ratings", n)
}

// Short names the human ratings the report read, in a few words: "the
// imported column", or the source with its count of browser ratings.
func (u HumanUse) Short() string {
	src := u.effective()
	if src == models.HumansImported {
		return "the " + src.Label()
	}
	return fmt.Sprintf("the %s (%d browser ratings)", src.Label(), u.BrowserRatings)
}

// effective is the source whose ratings the report really read: the
// imported column when none was chosen, and when imported and browser
// ratings were chosen but there was no browser rating to add.
func (u HumanUse) effective() models.HumanSource {
	if u.Source == "" || u.Source == models.HumansImported || (u.Source == models.HumansBoth && u.BrowserRatings == 0) {
		return models.HumansImported
	}
	return u.Source
}

// noteScale keeps the note of how a criterion's imported ratings were put
// on the browser ratings' scale, when there is one.
func (u *HumanUse) noteScale(m models.ImportedOnScale) {
	if n := m.Note(); n != "" {
		u.ScaleNotes = append(u.ScaleNotes, n)
	}
	if m.Apart {
		u.Apart = append(u.Apart, m)
	}
}

// HumanSourceText says which human ratings the report used.
func (p Provenance) HumanSourceText() string { return p.HumanUse.Text() }

// chosenReviews reads the run's choice of human ratings: what a report
// states it used, and per criterion the browser ratings it may read (nil
// under the imported source, and before any browser rating was made).
func chosenReviews(ctx context.Context, db *models.DB, wsID int64, run models.Run, pre *BrowserReviews) (HumanUse, [][]models.ReviewRating, error) {
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return HumanUse{}, nil, err
	}
	return reviewsOfChoice(ctx, db, wsID, run, choice, pre)
}

// BrowserReviews are the browser reviews of a run's criteria as one
// request read them (ReadBrowserReviews, ReadChosenReviews): on each
// criterion whose human scale the run can say, each reviewer's current
// review of each sample on that scale as of the run's human-source
// cut-off (what a report reads), and for ReadBrowserReviews their current
// one now too, never the reviews these replaced. A request that reads
// them once and passes them along (Options.Reviews) keys the stored
// summary, builds it and counts the ratings a report does not use yet from
// one query, where each of these read the reviews again.
type BrowserReviews struct {
	runID int64
	// upto is the run's human-source cut-off when the reviews were read:
	// the current reviews as of it are among them, so a report whose
	// choice has this cut-off can read its reviews from these.
	upto int64
	// Scales[i] is criterion i's human scale (models.RunHumanScales);
	// nil where Refused[i] says why the run cannot tell it.
	Scales  []*evaluator.Scale
	Refused []error
	// ByName are the reviews by criterion name, oldest first, with their
	// ratings' fields only (models.ListCurrentRatings): a page showing
	// reviews reads those of its samples whole. The reviews of people
	// whose ratings an owner excluded are not among them: they are in
	// Excluded, by criterion name, for a report to say what it left out.
	ByName   map[string][]models.ReviewRating
	Excluded map[string][]models.ReviewRating

	// keys are the usedRatingsKey computed from these reviews, by the
	// choice they were computed under: a request keys the stored summary
	// (LoadSummary) and checks its stored samples (StoredSamplesCurrent)
	// with the same reviews, and hashing them was a sixth of a review
	// queue's view at 100,000 samples (BENCHMARKS.md, reviews47).
	mu   sync.Mutex
	keys map[usedKeyOf]string

	// base is the ratings' state (ratingsState.text) read just before the
	// reviews: a key computed from these reviews is proved by it
	// (provenRatingsKey) when the state has not moved since.
	base string
	// version is the run's humans_version read just before base: the key
	// is stored with its proof only while it has not moved (every
	// exclusion and readmission of a rater moves it).
	version int
	// later, until the reviews are read (Load), is where to read them
	// from: ChosenReviewsOnDemand reads none until a report needs them.
	loadMu sync.Mutex
	later  *laterRead
}

// laterRead is what BrowserReviews.Load reads the reviews of.
type laterRead struct {
	db  *models.DB
	run models.Run
}

// usedKeyOf names the choice a usedRatingsKey was computed under.
type usedKeyOf struct {
	source models.HumanSource
	upto   int64
}

// ReadBrowserReviews reads the browser reviews of the run's criteria that
// a report of the run and its page use, in one query, with the run's
// human scales and human-source cut-off: each reviewer's current review
// of each sample on the criterion's scale now, and as of the cut-off
// (models.ListCurrentRatingsNowAndAt), whatever the run's human source.
// The page counts the ratings the report does not use yet (given or
// withdrawn since the cut-off) from the first and the report reads the
// second; the reviews they replaced are not read.
func ReadBrowserReviews(ctx context.Context, db *models.DB, run models.Run) (*BrowserReviews, error) {
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	return readCurrentReviews(ctx, db, run, choice.UptoRatingID, true)
}

// ReadChosenReviews is ReadBrowserReviews for a request that needs the
// reviews only as the run's reports read them: each reviewer's current
// review as of the cut-off alone, and nil, with no review read, when the
// run's human ratings are the imported ones or no browser rating was made
// before they were chosen (a report then reads none; one whose choice
// changes meanwhile reads its own).
func ReadChosenReviews(ctx context.Context, db *models.DB, run models.Run) (*BrowserReviews, error) {
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	if choice.Source == models.HumansImported || choice.Source == "" || choice.UptoRatingID == 0 {
		return nil, nil
	}
	return readCurrentReviews(ctx, db, run, choice.UptoRatingID, false)
}

// ChosenReviewsOnDemand is ReadChosenReviews without the read: the
// reviews a report of the run reads, read the first time a report needs
// them (Load), which one whose stored results are proved current
// (provenRatingsKey) never does. nil under the imported ratings, as
// ReadChosenReviews. Its Scales, Refused, ByName and Excluded are empty
// until Load.
func ChosenReviewsOnDemand(ctx context.Context, db *models.DB, run models.Run) (*BrowserReviews, error) {
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	if choice.Source == models.HumansImported || choice.Source == "" || choice.UptoRatingID == 0 {
		return nil, nil
	}
	return &BrowserReviews{runID: run.ID, upto: choice.UptoRatingID, later: &laterRead{db: db, run: run}}, nil
}

// Load reads the reviews of a BrowserReviews made by
// ChosenReviewsOnDemand, if not read yet; nothing for the others.
func (pre *BrowserReviews) Load(ctx context.Context) error {
	if pre == nil {
		return nil
	}
	pre.loadMu.Lock()
	defer pre.loadMu.Unlock()
	if pre.later == nil {
		return nil
	}
	read, err := readCurrentReviews(ctx, pre.later.db, pre.later.run, pre.upto, false)
	if err != nil {
		return err
	}
	pre.Scales, pre.Refused, pre.ByName, pre.Excluded, pre.base, pre.version = read.Scales, read.Refused, read.ByName, read.Excluded, read.base, read.version
	pre.later = nil
	return nil
}

// readCurrentReviews reads only the reviews a report whose choice has the
// cut-off upto uses: on each criterion, each reviewer's current review of
// each sample on the criterion's human scale as of upto
// (models.ListCurrentRatings, picked in SQL), never the ratings they
// replaced or withdrew nor those on another scale; with now, their
// current review now as well (models.ListCurrentRatingsNowAndAt), for a
// page that says what the report does not use yet. ByName and Excluded
// hold those alone.
func readCurrentReviews(ctx context.Context, db *models.DB, run models.Run, upto int64, now bool) (*BrowserReviews, error) {
	// The run's humans_version first, then the state (its scales and
	// excluded raters are the read's): a key computed from what is read
	// after them is proved by the state, and stored only while the
	// version has not moved (provenRatingsKey).
	version, _, err := db.RunHumansVersion(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	st, err := readRatingsState(ctx, db, run, upto)
	if err != nil {
		return nil, err
	}
	all, refused, excluded := st.scales, st.refused, st.excluded
	pre := &BrowserReviews{runID: run.ID, upto: upto, Scales: make([]*evaluator.Scale, len(all)), Refused: refused,
		ByName: map[string][]models.ReviewRating{}, Excluded: map[string][]models.ReviewRating{}, base: st.text, version: version}
	scales := map[string]evaluator.Scale{}
	for i, crit := range run.RubricSnapshot.Criteria {
		if refused[i] != nil {
			continue
		}
		pre.Scales[i] = &all[i]
		scales[crit.Name] = all[i]
	}
	// Every criterion's current reviews in one query.
	var byName map[string][]models.ReviewRating
	if now {
		byName, err = db.ListCurrentRatingsNowAndAt(ctx, run.WorkspaceID, run.DatasetID, scales, upto)
	} else {
		byName, err = db.ListCurrentRatings(ctx, run.WorkspaceID, run.DatasetID, scales, upto)
	}
	if err != nil {
		return nil, err
	}
	// Ratings of people an owner excluded count nowhere: a reviewer's
	// current review is theirs alone, so leaving them out after picking
	// it is leaving them out before.
	for name, rs := range byName {
		kept, _ := models.WithoutExcluded(rs, excluded)
		pre.ByName[name] = kept
		for _, r := range rs {
			if r.UserID != nil && excluded[*r.UserID] {
				pre.Excluded[name] = append(pre.Excluded[name], r)
			}
		}
	}
	return pre, nil
}

// serves tells whether pre holds every review a report of run reads under
// a choice with the cut-off upto: read for that cut-off, as pre holds the
// current reviews as of its own cut-off only (as of an earlier one, a
// reviewer's current review may be one pre does not hold).
func (pre *BrowserReviews) serves(run models.Run, upto int64) bool {
	return pre != nil && pre.runID == run.ID && upto == pre.upto
}

// reviewsOfChoice is chosenReviews for a choice already read: from pre
// when it serves (BrowserReviews.serves), otherwise read here.
func reviewsOfChoice(ctx context.Context, db *models.DB, wsID int64, run models.Run, choice models.RunHumanSource, pre *BrowserReviews) (HumanUse, [][]models.ReviewRating, error) {
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
	if !pre.serves(run, choice.UptoRatingID) {
		var err error
		if pre, err = readCurrentReviews(ctx, db, run, choice.UptoRatingID, false); err != nil {
			return use, nil, err
		}
	} else if err := pre.Load(ctx); err != nil {
		return use, nil, err
	}
	use.Criteria = make([]CriterionHumans, len(run.RubricSnapshot.Criteria))
	excludedPeople := map[string]bool{}
	for i, crit := range run.RubricSnapshot.Criteria {
		if pre.Scales[i] == nil {
			continue
		}
		// Each reviewer's current review of each sample as of the cut-off,
		// the only ones a report reads (models.MergeHumanRatingsOn): the
		// same whether pre held those alone or their current ones now
		// too (readCurrentReviews).
		reviews[i] = models.CurrentReviews(models.OnScale(upTo(pre.ByName[crit.Name], choice.UptoRatingID), *pre.Scales[i]))
		h := sha256.New()
		for _, r := range reviews[i] {
			if r.Score != nil {
				use.BrowserRatings++
				use.Criteria[i].Ratings++
				who := r.ReviewerKey()
				fmt.Fprintf(h, "%d,%d,%s,%g,%g,%d:%s;", r.ID, r.RowID, strconv.FormatFloat(*r.Score, 'g', -1, 64), r.Lo, r.Hi, len(who), who)
			}
		}
		if use.Criteria[i].Ratings > 0 {
			use.Criteria[i].Key = hex.EncodeToString(h.Sum(nil))
		}
		for _, r := range models.CurrentReviews(models.OnScale(upTo(pre.Excluded[crit.Name], choice.UptoRatingID), *pre.Scales[i])) {
			if r.Score != nil {
				use.ExcludedRatings++
				excludedPeople[r.ReviewerKey()] = true
			}
		}
	}
	use.ExcludedPeople = len(excludedPeople)
	return use, reviews, nil
}

// applyHumanSource reads the run's chosen human ratings into the rows and
// the run's criteria (copies; nothing stored changes), ready for
// ComputeWith, and says what it used.
func applyHumanSource(ctx context.Context, db *models.DB, wsID int64, run models.Run, rows []models.DatasetRow, pre *BrowserReviews) (models.Run, []models.DatasetRow, HumanUse, error) {
	use, reviews, err := chosenReviews(ctx, db, wsID, run, pre)
	if err != nil {
		return run, rows, use, err
	}
	crits := append(run.RubricSnapshot.Criteria[:0:0], run.RubricSnapshot.Criteria...)
	if use.Source == models.HumansImported {
		// The imported ratings as the rows hold them, but for a criterion
		// with annotator columns and no human column: its annotators' mean.
		taken := models.RatingKeysOf(rows) // the rows' own, before any mean is added
		for i, crit := range crits {
			rows, crits[i] = models.WithAnnotatorMeanAmong(rows, crit, taken)
		}
		run.RubricSnapshot.Criteria = crits
		return run, rows, use, nil
	}
	for i, crit := range crits {
		var m models.ImportedOnScale
		rows, crits[i], m = models.MergeHumanRatingsOn(rows, crit, use.Source, reviews[i], nil)
		use.noteScale(m)
	}
	run.RubricSnapshot.Criteria = crits
	return run, rows, use, nil
}

// ratingsKeyVersion names how ratingsKeyOf combines and hashes the
// ratings (imported-on-scale-1: imported ratings outside the browser
// ratings' scale are put on it before averaging, models.MergeHumanRatingsOn,
// so summaries stored before are stale; imported-on-scale-2: the summary
// keeps the criteria whose imported ratings stood apart, HumanUse.Apart,
// which those stored before lack; imported-on-scale-3: a criterion without
// a browser rating reads its imported column as it is, where those stored
// before read the mean of its imported annotators). A proof
// (provenRatingsKey) holds it too, so a key stored under another is not
// served.
const ratingsKeyVersion = "imported-on-scale-3"

// ratingsProofVersion names what a proof hashes (ratingsState,
// ratingsProof): bump it when that changes, and every stored proof is
// computed again.
const ratingsProofVersion = "ratings-proof-1"

// usedRatingsKey hashes the browser ratings a report of the run reads
// under the choice (reviewsOfChoice: each reviewer's current review of
// each sample up to the choice's cut-off and on the criterion's human
// scale, the same whether a request read every review or the report read
// those alone), "" under the imported source. The stored
// summary and per-sample results are keyed by it, so a change in which
// ratings count (a rule such as models.OnScale, a run whose human scale
// can no longer be told) makes them stale: the source and cut-off alone
// do not say which ratings were read. Under browser ratings it is read
// back from the run's stored proof when the proof still holds
// (provenRatingsKey), and computed from the ratings only when it does not.
func usedRatingsKey(ctx context.Context, db *models.DB, run models.Run, choice models.RunHumanSource, pre *BrowserReviews) (string, error) {
	if choice.Source == models.HumansImported || choice.Source == "" || choice.UptoRatingID == 0 {
		// Nothing read: "" under the imported source, the key of no
		// ratings before any was made.
		key, _, err := ratingsKeyOf(ctx, db, run, choice, nil)
		return key, err
	}
	if !pre.serves(run, choice.UptoRatingID) {
		return provenRatingsKey(ctx, db, run, choice, nil)
	}
	pre.mu.Lock()
	defer pre.mu.Unlock()
	k := usedKeyOf{choice.Source, choice.UptoRatingID}
	if key, ok := pre.keys[k]; ok {
		return key, nil
	}
	key, err := provenRatingsKey(ctx, db, run, choice, pre)
	if err != nil {
		return "", err
	}
	if pre.keys == nil {
		pre.keys = map[usedKeyOf]string{}
	}
	pre.keys[k] = key
	return key, nil
}

// RatingsKey is the key of the browser ratings a report of the run reads
// under its human-source choice now (usedRatingsKey): "" under the
// imported ratings, otherwise a hash of every rating read, proved by the
// run's stored ratings proof without reading them while it holds. pre are
// the run's reviews as the request read them (ReadBrowserReviews,
// ChosenReviewsOnDemand, which this loads only when the proof does not
// hold), nil to read them here if needed. Two reports of the run whose
// choices give the same key read the same ratings, under the same names:
// a running run's shared figures are keyed by it (liveratings49), so that
// a view reads no rating while nothing the figures read changed.
func RatingsKey(ctx context.Context, db *models.DB, run models.Run, pre *BrowserReviews) (string, error) {
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return "", err
	}
	return usedRatingsKey(ctx, db, run, choice, pre)
}

// provenRatingsKey is usedRatingsKey under browser ratings chosen up to a
// rating (choice.UptoRatingID > 0). The key hashes every current rating of
// the run's criteria up to the cut-off, which at 100,000 samples was half
// of a review queue's view to read and hash (BENCHMARKS.md, reviews47), so
// it is stored with a proof of what it was computed from
// (models.RunRatingsProof): the choice, the run's human scales, a tally of
// the reviews of its criteria up to the cut-off (which any review added,
// deleted or losing its account changes: models.RatingsTally), the
// workspace's excluded raters and the names of the accounts the key names
// (their email, display name and its rank). While a view computes the same
// proof, those are as they were and so are the ratings the key hashes: the
// stored key is returned and no rating read. Otherwise the key is computed
// from the ratings (from pre when it serves, which it loads) and stored with
// the proof of the state read before them, unless that state moved while
// they were read (the next view proves it then). A proof may differ while
// the key does not (a review on another scale deleted, another account
// excluded): the key is computed again, equal, and the stored summary
// served; so which changes make a page recompute is decided by the key
// alone, as before.
func provenRatingsKey(ctx context.Context, db *models.DB, run models.Run, choice models.RunHumanSource, pre *BrowserReviews) (string, error) {
	stored, found, err := db.FindRunRatingsProof(ctx, run.ID)
	if err != nil {
		return "", err
	}
	if found {
		st, err := readRatingsState(ctx, db, run, choice.UptoRatingID)
		if err != nil {
			return "", err
		}
		who, err := db.ReviewerIdentities(ctx, run.WorkspaceID, stored.Users())
		if err != nil {
			return "", err
		}
		if ratingsProof(st.text, choice.Source, who) == stored.Proof {
			return stored.RatingsKey, nil
		}
	}
	if pre == nil {
		if pre, err = readCurrentReviews(ctx, db, run, choice.UptoRatingID, false); err != nil {
			return "", err
		}
	} else if err := pre.Load(ctx); err != nil {
		return "", err
	}
	key, reviews, err := ratingsKeyOf(ctx, db, run, choice, pre)
	if err != nil {
		return "", err
	}
	proofPause(ctx, proofStateAfter)
	after, err := readRatingsState(ctx, db, run, choice.UptoRatingID)
	if err != nil {
		return "", err
	}
	if after.text != pre.base {
		return key, nil // the ratings moved while they were read
	}
	var named []models.ReviewRating
	for _, rs := range reviews {
		named = append(named, rs...)
	}
	who := models.ReviewersOf(named)
	ids := make([]int64, len(who))
	for i, r := range who {
		ids[i] = *r.UserID
	}
	// Stored only if no rater was excluded or readmitted (nor the ratings
	// chosen again) since the version was read before the state: the
	// states compared above are equal after an exclusion and a
	// readmission, and one made after that comparison is not seen by it,
	// so a proof of the state as it was would replace the one a later
	// view stored of the state as it is (liveratings49). The version is
	// compared in the statement that stores the proof.
	proofPause(ctx, proofSave)
	_, err = db.SaveRunRatingsProof(ctx, models.RunRatingsProof{RunID: run.ID, DatasetID: run.DatasetID, Proof: ratingsProof(after.text, choice.Source, who),
		UserIDs: models.JoinUserIDs(ids), RatingsKey: key}, pre.version)
	return key, err
}

// proofStage names a point of provenRatingsKey's computation of a key
// where a test may pause it (withProofPause), to change the ratings
// there deterministically.
type proofStage int

const (
	// proofStateAfter: the ratings read and hashed, the state not read
	// again yet.
	proofStateAfter proofStage = iota + 1
	// proofSave: the states compared equal, the proof not stored yet.
	proofSave
)

// proofPauseKey is the context key of a test's pause (withProofPause).
type proofPauseKey struct{}

// proofPause calls the pause the context carries at stage, if any.
func proofPause(ctx context.Context, stage proofStage) {
	if f, ok := ctx.Value(proofPauseKey{}).(func(proofStage)); ok {
		f(stage)
	}
}

// ratingsState is what a run's ratings are read with, and what of them a
// proof holds apart from the accounts' names, read in a few small queries.
type ratingsState struct {
	scales   []evaluator.Scale
	refused  []error
	excluded map[int64]bool
	// text holds the run, the cut-off, each criterion's name and human
	// scale (or why there is none), the tally of the criteria's reviews up
	// to the cut-off and the excluded raters.
	text string
}

// readRatingsState reads the run's ratingsState as of the cut-off upto.
func readRatingsState(ctx context.Context, db *models.DB, run models.Run, upto int64) (ratingsState, error) {
	var st ratingsState
	var err error
	if st.scales, st.refused, err = db.RunHumanScales(ctx, run); err != nil {
		return st, err
	}
	if st.excluded, err = db.ExcludedRaters(ctx, run.WorkspaceID); err != nil {
		return st, err
	}
	names := make([]string, len(run.RubricSnapshot.Criteria))
	var b strings.Builder
	fmt.Fprintf(&b, "%s;%s;run %d;dataset %d;upto %d;", ratingsProofVersion, ratingsKeyVersion, run.ID, run.DatasetID, upto)
	for i, crit := range run.RubricSnapshot.Criteria {
		names[i] = crit.Name
		if st.refused[i] != nil {
			fmt.Fprintf(&b, "%d:%s refused %q;", len(crit.Name), crit.Name, st.refused[i].Error())
		} else {
			fmt.Fprintf(&b, "%d:%s %g..%g;", len(crit.Name), crit.Name, st.scales[i].Lo, st.scales[i].Hi)
		}
	}
	tally, err := db.TallyRatings(ctx, run.DatasetID, names, upto)
	if err != nil {
		return st, err
	}
	fmt.Fprintf(&b, "reviews %d,%d,%d,%d,%d;excluded", tally.Reviews, tally.Accounts, tally.IDSum, tally.MaxID, tally.UserSum)
	for _, id := range slices.Sorted(maps.Keys(st.excluded)) {
		fmt.Fprintf(&b, " %d", id)
	}
	st.text = b.String()
	return st, nil
}

// ratingsProof hashes a ratingsState's text, the source chosen and the
// accounts the key names as read (models.ReviewerIdentities' fields).
func ratingsProof(state string, source models.HumanSource, who []models.ReviewRating) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s;source %s;", state, source)
	for _, r := range who {
		fmt.Fprintf(h, "%d,%d:%s,%d:%s,%d;", *r.UserID, len(r.Reviewer), r.Reviewer, len(r.ReviewerName), r.ReviewerName, r.NameRank)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ratingsKeyOf is usedRatingsKey computed, with the reviews it hashed.
func ratingsKeyOf(ctx context.Context, db *models.DB, run models.Run, choice models.RunHumanSource, pre *BrowserReviews) (string, [][]models.ReviewRating, error) {
	use, reviews, err := reviewsOfChoice(ctx, db, run.WorkspaceID, run, choice, pre)
	if err != nil || use.Source == models.HumansImported {
		return "", nil, err
	}
	h := sha256.New()
	// How the ratings are combined (ratingsKeyVersion).
	fmt.Fprint(h, ratingsKeyVersion+";")
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
			// The name the annotators are keyed by too (an account's
			// display name: models.ReviewRating.AnnotatorName), so that
			// a summary that keyed them by email, or by a name since
			// changed, is not served.
			who, as := r.ReviewerKey(), r.AnnotatorName()
			fmt.Fprintf(h, "%d,%d,%s,%g,%g,%d:%s,%d:%s,%d:%s;", r.ID, r.RowID, score, r.Lo, r.Hi, len(r.Reviewer), r.Reviewer, len(who), who, len(as), as)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), reviews, nil
}

// upTo is the reviews (oldest first) with an id up to upto.
func upTo(rs []models.ReviewRating, upto int64) []models.ReviewRating {
	n := sort.Search(len(rs), func(i int) bool { return rs[i].ID > upto })
	return rs[:n:n]
}

// plural is "1 rating", "12 ratings".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
