package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
)

// withStoredRubric gives a synthesized run (synthRunOn, launched without
// one) a stored rubric of its criteria, as version 1, so that an alignment
// can start from it; it returns the run as read again.
func withStoredRubric(t *testing.T, env *testEnv, run models.Run) models.Run {
	t.Helper()
	ctx := context.Background()
	r := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: fmt.Sprintf("synth %d", run.ID), Task: run.RubricSnapshot.Task,
		Fields: run.RubricSnapshot.Fields, Criteria: run.RubricSnapshot.Criteria}
	if err := env.db.SaveRubric(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if err := env.db.Gorm.Exec("UPDATE runs SET rubric_id = ?, rubric_version = 1, simulated = ? WHERE id = ?", r.ID, true, run.ID).Error; err != nil {
		t.Fatal(err)
	}
	return rereadRun(t, env, run)
}

// samePlan says how two plans of one split differ in what the start
// shows and stores: the parts, the draft's disagreements (ids, text and
// scores), and each check's verdict, with the count it names when it
// refuses; "" when they do not.
func samePlan(got, want alignmentPlan) string {
	switch {
	case !slices.Equal(got.calibration, want.calibration) || !slices.Equal(got.heldOut, want.heldOut):
		return fmt.Sprintf("the split differs: %d calibration and %d held out, want %d and %d", len(got.calibration), len(got.heldOut), len(want.calibration), len(want.heldOut))
	case !reflect.DeepEqual(got.worst, want.worst):
		return fmt.Sprintf("the disagreements differ: %s, want %s", casesText(got.worst), casesText(want.worst))
	case (got.rated < align.MinHeldOut) != (want.rated < align.MinHeldOut) || (want.rated < align.MinHeldOut && got.rated != want.rated):
		return fmt.Sprintf("%d rated samples, want %d", got.rated, want.rated)
	case (got.heldRated < align.MinHeldOut) != (want.heldRated < align.MinHeldOut) || (want.heldRated < align.MinHeldOut && got.heldRated != want.heldRated):
		return fmt.Sprintf("%d rated held-out samples, want %d", got.heldRated, want.heldRated)
	case (got.items == 0) != (want.items == 0):
		return fmt.Sprintf("%d calibration samples to draft from, want %d", got.items, want.items)
	}
	return ""
}

// casesText names disagreements by row, sample id and scores.
func casesText(items []align.Item) string {
	var parts []string
	for _, it := range items {
		parts = append(parts, fmt.Sprintf("row %d (%s, %d fields) judge %g human %g", it.RowID, it.SampleID, len(it.Fields), it.Judge, it.Human))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// TestAlignmentStartReadsOnlyWhatItNeeds: starting an alignment read every
// stored result of the run's criterion in the request to draw the split
// (0.67 s served at 100,000 samples). From a finished run's stored results
// it now reads the samples' ids (the results' primary key), the rated
// samples down the order by human rating until the held-out part has
// enough of them, and the largest disagreements down the order by
// difference. For each criterion, seed and share:
//
//   - the plan (held-out and calibration ids, the draft's disagreements
//     with their text, each check's verdict) is the one every stored score
//     gives and the one the full report gives;
//   - the alignment the start stores has that split and draft, and its page
//     is byte for byte the page of an alignment made from the old plan;
//   - every stored result below the smallest difference the draft shows is
//     given a judge score 50 points from its human rating, its stored
//     difference and ranks left alone: the old start (every score) drafts
//     from those, the new one must not change.
func TestAlignmentStartReadsOnlyWhatItNeeds(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 150
		ctx := env.localCtx()
		_, _, run := reviewedSynthRun(t, env, n)
		run = withStoredRubric(t, env, run)
		sum, err := env.h.storedResults(ctx, run, nil)
		if err != nil || sum == nil {
			t.Fatalf("no stored results (%v): the test would compare the old path with itself", err)
		}
		for ci := range run.RubricSnapshot.Criteria {
			if !storedAlignable(sum, ci) {
				t.Fatalf("criterion %d is not read from its stored order by difference", ci)
			}
			for _, split := range []struct {
				seed  int64
				share float64
			}{{1, 0.1}, {3, 0.2}, {7, 0.5}, {99, 0.9}} {
				name := fmt.Sprintf("criterion %d, seed %d, share %v", ci, split.seed, split.share)
				plan, err := env.h.planAlignment(ctx, run, ci, split.seed, split.share, false)
				if err != nil {
					t.Fatal(err)
				}
				old, err := env.h.planFromScores(ctx, run, ci, split.seed, split.share, false, env.h.newRunReviews())
				if err != nil {
					t.Fatal(err)
				}
				full, err := env.h.planFromScores(ctx, run, ci, split.seed, split.share, true, env.h.newRunReviews())
				if err != nil {
					t.Fatal(err)
				}
				if d := samePlan(plan, old); d != "" {
					t.Fatalf("%s: against every stored score: %s", name, d)
				}
				if d := samePlan(plan, full); d != "" {
					t.Fatalf("%s: against the full report: %s", name, d)
				}
				if len(plan.worst) != align.DraftCases || plan.worst[0].SampleID == "" || len(plan.worst[0].Fields) == 0 {
					t.Fatalf("%s: %d disagreements %+v, want %d with their ids and text", name, len(plan.worst), plan.worst, align.DraftCases)
				}

				// The start as served stores that split and draft; its page
				// is the old plan's alignment's.
				rec := env.postForm(fmt.Sprintf("/runs/%d/align", run.ID), url.Values{"criterion": {fmt.Sprint(ci)}, "seed": {fmt.Sprint(split.seed)},
					"held_out_percent": {fmt.Sprint(split.share * 100)}})
				var id int64
				if _, err := fmt.Sscanf(rec.Header().Get("Location"), "/alignments/%d", &id); rec.Code != http.StatusSeeOther || err != nil {
					t.Fatalf("%s: start: %d %q %.500s", name, rec.Code, rec.Header().Get("Location"), rec.Body)
				}
				stored, err := env.db.FindAlignment(ctx, env.ws.ID, id)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(stored.HeldOutRowIDs, old.heldOut) || !slices.Equal(stored.CalibrationRowIDs, old.calibration) {
					t.Fatalf("%s: the stored split is not the old start's", name)
				}
				if want := align.TemplateDraft(run.RubricSnapshot.Criteria[ci], old.worst); !reflect.DeepEqual(stored.Draft, want) {
					t.Fatalf("%s: draft %+v, the old start's %+v", name, stored.Draft, want)
				}
				before := stored
				before.CalibrationRowIDs, before.HeldOutRowIDs = old.calibration, old.heldOut
				before.Draft = align.TemplateDraft(run.RubricSnapshot.Criteria[ci], old.worst)
				_, pageOld := renderAlignment(t, env, before, run, true)
				_, pageNew := renderAlignmentQuery(t, env, stored, run, "")
				if pageNew != pageOld {
					t.Fatalf("%s: the page differs from the old start's:\n%s", name, firstDifference(pageOld, pageNew))
				}
			}

			// Scores the draft does not show become the largest
			// disagreements, without moving any stored difference or rank.
			plan, err := env.h.planAlignment(ctx, run, ci, 5, 0.3, false)
			if err != nil {
				t.Fatal(err)
			}
			var shown []int64
			for _, w := range plan.worst {
				shown = append(shown, w.RowID)
			}
			var smallest float64
			if err := env.db.Gorm.Raw("SELECT MIN(abs_diff) FROM run_sample_results WHERE run_id = ? AND criterion_index = ? AND row_id IN ?",
				run.ID, ci, shown).Scan(&smallest).Error; err != nil {
				t.Fatal(err)
			}
			type finalOf struct {
				RowID int64
				Final *float64
			}
			var finals []finalOf
			if err := env.db.Gorm.Raw("SELECT row_id, final FROM run_sample_results WHERE run_id = ? AND criterion_index = ?", run.ID, ci).Scan(&finals).Error; err != nil {
				t.Fatal(err)
			}
			res := env.db.Gorm.Exec("UPDATE run_sample_results SET final = human + 50 WHERE run_id = ? AND criterion_index = ? AND abs_diff < ?", run.ID, ci, smallest)
			if res.Error != nil || res.RowsAffected == 0 {
				t.Fatalf("criterion %d: no stored result below the difference %v (%v)", ci, smallest, res.Error)
			}
			everyScore, err := env.h.planFromScores(ctx, run, ci, 5, 0.3, false, env.h.newRunReviews())
			if err != nil {
				t.Fatal(err)
			}
			if samePlan(everyScore, plan) == "" {
				t.Fatalf("criterion %d: reading every score still gives the same draft: the change below would prove nothing", ci)
			}
			again, err := env.h.planAlignment(ctx, run, ci, 5, 0.3, false)
			if err != nil {
				t.Fatal(err)
			}
			if d := samePlan(again, plan); d != "" {
				t.Errorf("criterion %d: the start changed with scores it does not need (it read every score): %s", ci, d)
			}
			for _, f := range finals {
				if err := env.db.Gorm.Exec("UPDATE run_sample_results SET final = ? WHERE run_id = ? AND criterion_index = ? AND row_id = ?", f.Final, run.ID, ci, f.RowID).Error; err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// TestAlignmentStartCountsFewRatedSamples: a run with few rated samples is
// refused with the counts reading every score gives, now that the start
// counts rated samples down the order by human rating and stops once the
// held-out part has enough: 30 of 150 samples rated, so a fifth held out
// has fewer than align.MinHeldOut of them (the message names how many),
// the run has fewer than align.MinHeldOut rated samples once only 7 are,
// and half held out is enough; the same with sample ids that are not
// consecutive (read one by one rather than made from their two ends).
func TestAlignmentStartCountsFewRatedSamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 150
		ctx := env.localCtx()
		for _, tc := range []struct {
			rated, percent int
			want           func(old alignmentPlan) string // "" for a start that succeeds
			// gapped moves the ids of the second half of the dataset's
			// rows up by 1,000: the samples' ids are not one run of
			// consecutive integers, and are read one by one.
			gapped bool
		}{
			{30, 20, func(old alignmentPlan) string {
				return fmt.Sprintf("The held-out part would have %d samples with a human rating; at least %d are needed", old.heldRated, align.MinHeldOut)
			}, false},
			{7, 50, func(old alignmentPlan) string {
				return fmt.Sprintf("This run has %d samples with a human rating on Coherence; the held-out part alone needs at least %d", old.rated, align.MinHeldOut)
			}, false},
			{30, 50, func(alignmentPlan) string { return "" }, false},
			{30, 50, func(alignmentPlan) string { return "" }, true},
			{30, 20, func(old alignmentPlan) string {
				return fmt.Sprintf("The held-out part would have %d samples with a human rating; at least %d are needed", old.heldRated, align.MinHeldOut)
			}, true},
		} {
			ds, ids := synthDataset(t, env.db, env.project, n)
			if tc.gapped {
				if err := env.db.Gorm.Exec("UPDATE dataset_rows SET id = id + 1000 WHERE dataset_id = ? AND position >= ?", ds.ID, n/2).Error; err != nil {
					t.Fatal(err)
				}
				for i := n / 2; i < n; i++ {
					ids[i] += 1000
				}
			}
			if err := env.db.Gorm.Exec("UPDATE dataset_rows SET ratings = '{}' WHERE dataset_id = ? AND position >= ?", ds.ID, tc.rated).Error; err != nil {
				t.Fatal(err)
			}
			run, err := env.db.FindRun(context.Background(), env.ws.ID, synthRunOn(t, env.db, env.project, ds, ids, 0))
			if err != nil {
				t.Fatal(err)
			}
			run = withStoredRubric(t, env, run)
			if sum, err := env.h.storedResults(ctx, run, nil); err != nil || sum == nil || !storedAlignable(sum, 0) {
				t.Fatalf("%d rated: the stored path would not be taken (%v)", tc.rated, err)
			}
			share := float64(tc.percent) / 100
			plan, err := env.h.planAlignment(ctx, run, 0, 1, share, false)
			if err != nil {
				t.Fatal(err)
			}
			old, err := env.h.planFromScores(ctx, run, 0, 1, share, false, env.h.newRunReviews())
			if err != nil {
				t.Fatal(err)
			}
			if old.rated != tc.rated {
				t.Fatalf("%d rated: every score counts %d", tc.rated, old.rated)
			}
			if d := samePlan(plan, old); d != "" {
				t.Fatalf("%d rated, %d%% held out: %s", tc.rated, tc.percent, d)
			}
			rec := env.postForm(fmt.Sprintf("/runs/%d/align", run.ID), url.Values{"criterion": {"0"}, "seed": {"1"}, "held_out_percent": {fmt.Sprint(tc.percent)}})
			want := tc.want(old)
			switch {
			case want == "" && rec.Code != http.StatusSeeOther:
				t.Errorf("%d rated, %d%% held out: %d, want the alignment started: %.500s", tc.rated, tc.percent, rec.Code, rec.Body)
			case want != "" && (rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), want)):
				t.Errorf("%d rated, %d%% held out: %d, want 422 saying %q", tc.rated, tc.percent, rec.Code, want)
			}
		}
	})
}
