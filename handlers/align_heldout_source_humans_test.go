package handlers

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// heldOutReviewer is the name the browser reviewer types: it must not
// reach the held-out copy, its page or the alignment's page.
const heldOutReviewer = "Ann Q. Reviewer"

// alignDemoRun is a finished run of the demo whose first criterion's
// browser ratings (by two reviewers, on every sample but the first two:
// their mean is not the imported column) are chosen for its report under
// source (none chosen for "imported"); alignAccepted then aligns it.
func alignDemoRun(t *testing.T, env *testEnv, source string) models.Run {
	t.Helper()
	ctx := context.Background()
	d := env.demo()
	src := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
	if src.Status != models.RunSucceeded {
		t.Fatalf("source run %s (%s)", src.Status, src.Error)
	}
	crit := src.RubricSnapshot.Criteria[0]
	rows, err := env.db.ListDatasetRows(ctx, src.DatasetID, 0, 0)
	mustB(t, err)
	for k, r := range rows {
		if k < 2 {
			continue // no browser rating: none under "browser"
		}
		for i, who := range []string{heldOutReviewer, "Bo"} {
			if i == 1 && k%2 == 1 {
				continue
			}
			v := crit.Lo + float64((k*(2+i))%3)
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: src.DatasetID, RowID: r.ID, Criterion: crit.Name,
				HumanColumn: crit.HumanColumn, Reviewer: who, RunID: &src.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &v})
			mustB(t, err)
		}
	}
	if source != "imported" {
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", src.ID), url.Values{"source": {source}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("choose %s: %d", source, rec.Code)
		}
	}
	return env.waitRun(src.ID, 60*time.Second)
}

// alignAccepted starts an alignment of src's first criterion with seed,
// accepts its draft and waits for the held-out runs.
func alignAccepted(t *testing.T, env *testEnv, src models.Run, seed int64) models.Alignment {
	t.Helper()
	ctx := context.Background()
	rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {strconv.FormatInt(seed, 10)}, "held_out_percent": {"50"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("start: %d %.400s", rec.Code, rec.Body.String())
	}
	aID, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
	a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
	mustB(t, err)
	if rec := env.postForm(fmt.Sprintf("/alignments/%d/accept", aID), draftFormValues(a.Draft, "New high.")); rec.Code != http.StatusSeeOther {
		t.Fatalf("accept: %d %.400s", rec.Code, rec.Body.String())
	}
	a, err = env.db.FindAlignment(ctx, env.ws.ID, aID)
	mustB(t, err)
	if a.BeforeRunID == nil || a.AfterRunID == nil || a.HeldOutDatasetID == nil {
		t.Fatalf("accepted alignment without its held-out runs: %+v", a)
	}
	for _, id := range []int64{*a.BeforeRunID, *a.AfterRunID} {
		if r := env.waitRun(id, 60*time.Second); r.Status != models.RunSucceeded {
			t.Fatalf("held-out run %d: %s (%s)", id, r.Status, r.Error)
		}
	}
	return a
}

func exactRating(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func ratingText(v *float64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// TestHeldOutRunsReadTheSourceRunsHumans: the held-out runs of an
// alignment are measured against the human ratings the source run's report
// read and the draft was made from. Reviewers rated the demo's samples in
// the browser and the source run's report reads those ratings (browser
// alone, or with the imported column, averaged); the held-out copy of the
// dataset carried only the imported column, so the held-out runs, and the
// alignment's before/after figures, were measured against other ratings
// than the draft's (the repro of last session: every browser rating at the
// bottom of the scale, the held-out runs read 3, 3, 1.33...). Now the
// copy's column holds the source run's rating of each held-out sample
// (none where it read none), its annotators are not copied, it says where
// its ratings come from without naming a reviewer, and both held-out runs
// and the page's figures read them. A run that reads the imported column
// gets the copy it got before: the source's rows as they are, no note.
func TestHeldOutRunsReadTheSourceRunsHumans(t *testing.T) {
	for _, source := range []string{"browser", "both", "imported"} {
		t.Run(source, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				src := alignDemoRun(t, env, source)
				a := alignAccepted(t, env, src, 3)
				crit := src.RubricSnapshot.Criteria[0]

				// The source run's human rating of each sample, as its
				// report used it (and the alignment's draft read it).
				srcRep, err := report.Build(ctx, env.db, env.ws.ID, src.ID)
				mustB(t, err)
				srcHuman := map[string]*float64{}
				for _, s := range srcRep.Criteria[0].Samples {
					srcHuman[s.ExternalID] = s.Human
				}
				srcRows, err := env.db.FindDatasetRows(ctx, src.DatasetID, a.HeldOutRowIDs)
				mustB(t, err)
				imported := map[string]models.DatasetRow{}
				differ := 0
				for _, r := range srcRows {
					imported[r.ExternalID] = r
					if !exactRating(r.Ratings[crit.HumanColumn], srcHuman[r.ExternalID]) {
						differ++
					}
				}
				if (differ > 0) != (source != "imported") {
					t.Fatalf("%d held-out samples where the source run's rating is not the imported column's, under %s", differ, source)
				}

				held, err := env.db.FindDataset(ctx, env.ws.ID, *a.HeldOutDatasetID)
				mustB(t, err)
				heldRows, err := env.db.ListDatasetRows(ctx, held.ID, 0, 0)
				mustB(t, err)
				if len(heldRows) != len(a.HeldOutRowIDs) {
					t.Fatalf("held-out copy has %d rows, want %d", len(heldRows), len(a.HeldOutRowIDs))
				}
				for _, r := range heldRows {
					want := imported[r.ExternalID]
					if source == "imported" {
						if !maps.Equal(r.Data, want.Data) || !maps.EqualFunc(r.Ratings, want.Ratings, exactRating) {
							t.Errorf("sample %s: the copy of a run reading the imported column changed: %v %v, want %v %v", r.ExternalID, r.Data, r.Ratings, want.Data, want.Ratings)
						}
						continue
					}
					h := srcHuman[r.ExternalID]
					if got := r.Ratings[crit.HumanColumn]; !exactRating(got, h) {
						t.Errorf("sample %s: the copy's %s is %s, the source run read %s", r.ExternalID, crit.HumanColumn, ratingText(got), ratingText(h))
					}
					if text := r.Data[crit.HumanColumn]; (h == nil && text != "") || (h != nil && text != strconv.FormatFloat(*h, 'g', -1, 64)) {
						t.Errorf("sample %s: the copy's %s column reads %q, its rating %s", r.ExternalID, crit.HumanColumn, text, ratingText(h))
					}
					for k := range r.Ratings {
						if strings.HasPrefix(k, crit.HumanColumn+"@") {
							t.Errorf("sample %s: the copy carries annotator %q", r.ExternalID, k)
						}
					}
				}
				if source == "imported" {
					if len(held.ImportNotes) != 0 {
						t.Errorf("a copy of the imported column carries notes: %q", held.ImportNotes)
					}
				} else if len(held.ImportNotes) != 1 || !strings.Contains(held.ImportNotes[0], fmt.Sprintf("run %d's", src.ID)) ||
					!strings.Contains(held.ImportNotes[0], "browser ratings") || strings.Contains(held.ImportNotes[0], heldOutReviewer) {
					t.Errorf("the copy's notes do not say the ratings are run %d's browser ratings without naming the reviewer: %q", src.ID, held.ImportNotes)
				}

				// Both held-out runs read those ratings, and the page's
				// figures are measured against them.
				var bs, as, hs []*float64
				reps := [2]*report.Report{}
				for i, id := range []int64{*a.BeforeRunID, *a.AfterRunID} {
					reps[i], err = report.Build(ctx, env.db, env.ws.ID, id)
					mustB(t, err)
					for _, s := range reps[i].Criteria[0].Samples {
						if want := srcHuman[s.ExternalID]; !exactRating(s.Human, want) {
							t.Errorf("held-out run %d, sample %s: human %s, the source run read %s", id, s.ExternalID, ratingText(s.Human), ratingText(want))
						}
					}
				}
				for i, s := range reps[0].Criteria[0].Samples {
					bs, as, hs = append(bs, s.Final), append(as, reps[1].Criteria[0].Samples[i].Final), append(hs, srcHuman[s.ExternalID])
				}
				want := align.Compare(stats.MethodPearson, bs, as, hs, uint64(a.Seed))
				page := env.get(fmt.Sprintf("/alignments/%d", a.ID)).Body.String()
				if missing := bodyLacks(page, `data-testid="comparison"`, "<td>"+web.CoefText(want.B, 3)+"</td>",
					`<td data-testid="difference">`+web.AlignDiffText(want.Diff)+`</td>`, web.AlignIntervalText(want.CILow, want.CIHigh)); len(missing) > 0 {
					t.Errorf("the comparison is not measured against the source run's ratings (Pearson before %.3f): lacks %q", want.B, missing)
				}
				for _, note := range []string{`data-testid="humans-note"`, `data-testid="before-humans-note"`, `data-testid="source-humans-note"`} {
					if strings.Contains(page, note) {
						t.Errorf("the page says the ratings differ (%s), yet every run reads the source run's", note)
					}
				}
				if got := strings.Contains(page, `data-testid="held-out-humans"`); got != (source != "imported") {
					t.Errorf("the page says where the held-out ratings come from: %v, want %v", got, source != "imported")
				}
				dsPage := env.get(fmt.Sprintf("/datasets/%d", held.ID)).Body.String()
				for _, p := range []string{page, dsPage} {
					if strings.Contains(p, heldOutReviewer) {
						t.Error("a page of the held-out part names the browser reviewer")
					}
				}
				if got := strings.Contains(dsPage, "Notes on this copy"); got != (source != "imported") {
					t.Errorf("the copy's page shows its notes: %v, want %v", got, source != "imported")
				}
			})
		})
	}
}

// TestHeldOutHumansAreReproducible: two alignments of one run with one
// seed make the same held-out copy, sample for sample and rating for
// rating, with the same note, when the source reads browser ratings.
func TestHeldOutHumansAreReproducible(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		src := alignDemoRun(t, env, "browser")
		var copies [2][]models.DatasetRow
		var notes [2][]string
		for i := range copies {
			a := alignAccepted(t, env, src, 11)
			ds, err := env.db.FindDataset(ctx, env.ws.ID, *a.HeldOutDatasetID)
			mustB(t, err)
			copies[i], err = env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
			mustB(t, err)
			notes[i] = ds.ImportNotes
		}
		if len(copies[0]) == 0 || len(copies[0]) != len(copies[1]) {
			t.Fatalf("copies of %d and %d samples", len(copies[0]), len(copies[1]))
		}
		for k := range copies[0] {
			x, y := copies[0][k], copies[1][k]
			if x.Position != y.Position || x.ExternalID != y.ExternalID || !maps.Equal(x.Data, y.Data) || !maps.EqualFunc(x.Ratings, y.Ratings, exactRating) {
				t.Errorf("sample %d: %+v, then %+v", k, x, y)
			}
		}
		if fmt.Sprint(notes[0]) != fmt.Sprint(notes[1]) || len(notes[0]) != 1 {
			t.Errorf("notes %q, then %q", notes[0], notes[1])
		}
	})
}

// TestSourceHumansNote: the alignment's page says when the source run's
// human ratings were chosen again after its draft was made, and which the
// held-out samples carry: those chosen before (launched before the new
// choice) or after it (launched after).
func TestSourceHumansNote(t *testing.T) {
	drafted := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	run := models.Run{ID: 4}
	a := models.Alignment{CreatedAt: drafted}
	at := func(m int) *time.Time { x := drafted.Add(time.Duration(m) * time.Minute); return &x }
	for _, tc := range []struct {
		name     string
		chosen   time.Time
		heldMade *time.Time
		want     string // "" when there is no note
	}{
		{"never chosen", time.Time{}, at(5), ""},
		{"chosen before the draft", *at(-5), at(5), ""},
		{"chosen after the draft, not launched", *at(2), nil, "chosen again on its page (the browser ratings, on 2026-01-02 10:02:00 UTC) after this alignment's draft was made (on 2026-01-02 10:00:00 UTC)"},
		{"chosen after the draft, launched after", *at(2), at(5), "launched after that (on 2026-01-02 10:05:00 UTC): their held-out samples carry the ratings run 4 reads now, not those the draft was made from"},
		{"chosen after the launch", *at(9), at(5), "launched before that (on 2026-01-02 10:05:00 UTC): their held-out samples carry the ratings run 4 read then, those the draft was made from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sourceHumansNote(run, a, models.RunHumanSource{Source: models.HumansBrowser, AsOf: tc.chosen}, tc.heldMade)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("note %q, want one saying %q", got, tc.want)
			}
		})
	}
}
