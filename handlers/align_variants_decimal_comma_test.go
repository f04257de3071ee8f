package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
)

// decimalInput matches a form's text input asking for a decimal keyboard:
// a number input sends "" for "0,5" in the browser, so the server never
// sees the comma.
func decimalInput(name string) *regexp.Regexp {
	return regexp.MustCompile(`<input type="text" inputmode="decimal" id="` + name + `" name="` + name + `"`)
}

// TestAlignFormsReadDecimalComma (forms47): the alignment page's held-out
// share and the draft's example scores refused "55,5" and "1,5" while the
// launch, judge and rubric forms read a decimal comma. They are now read
// with the same reader (typedDecimal); text that is no number is refused
// naming the field and what to write, and nothing is stored.
func TestAlignFormsReadDecimalComma(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		src := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		if src.Status != models.RunSucceeded {
			t.Fatalf("source run %s (%s)", src.Status, src.Error)
		}
		base := fmt.Sprintf("/runs/%d/align", src.ID)
		if page := env.get(base).Body.String(); !decimalInput("held_out_percent").MatchString(page) {
			t.Error("the held-out share is not a text input with a decimal keyboard")
		}
		for _, tc := range []struct {
			share, want string
		}{
			{"many", `Held-out share: “many” is not a number (write decimals with a dot or a comma, e.g. 33.5 or 33,5, and no thousands separators); use a percentage from 10 to 90.`},
			{"55,5,1", `Held-out share: “55,5,1” is not a number`},
			{"95,5", `Held-out share: 95.5 is out of range; use a percentage from 10 to 90.`},
			{"<b>50</b>", `Held-out share: “<b>50</b>” is not a number`},
		} {
			rec := env.postForm(base, url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {tc.share}})
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), templ.EscapeString(tc.want)) {
				t.Errorf("share %q = %d, want 422 saying %q", tc.share, rec.Code, tc.want)
			}
			if strings.Contains(rec.Body.String(), "<b>50</b>") {
				t.Error("the typed markup is shown unescaped")
			}
			if !strings.Contains(rec.Body.String(), `value="`+templ.EscapeString(tc.share)+`"`) {
				t.Errorf("share %q is not shown again as typed", tc.share)
			}
		}
		if as, _ := env.db.ListRubricAlignments(ctx, env.ws.ID, d.rubric.ID); len(as) != 0 {
			t.Fatalf("refused forms stored %d alignments", len(as))
		}

		rec := env.postForm(base, url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {" 55,5 "}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("share 55,5 = %d, want 303: %.800s", rec.Code, rec.Body.String())
		}
		aID, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
		a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
		if err != nil {
			t.Fatal(err)
		}
		all := append(append([]int64{}, a.CalibrationRowIDs...), a.HeldOutRowIDs...)
		wantCal, wantHeld := align.Split(all, 3, 0.555)
		if fmt.Sprint(wantCal) != fmt.Sprint(a.CalibrationRowIDs) || fmt.Sprint(wantHeld) != fmt.Sprint(a.HeldOutRowIDs) {
			t.Errorf("stored split %d/%d is not the seeded split at 55.5%% (%d/%d)", len(a.CalibrationRowIDs), len(a.HeldOutRowIDs), len(wantCal), len(wantHeld))
		}
		if len(a.Draft.Examples) == 0 {
			t.Fatal("the draft has no example to edit")
		}

		// The draft's first example score, edited with a decimal comma.
		crit := src.RubricSnapshot.Criteria[0]
		score := a.Draft.Examples[0].Score + 0.5
		if score > crit.Hi {
			score -= 1
		}
		comma := strings.Replace(strconv.FormatFloat(score, 'f', -1, 64), ".", ",", 1)
		aPath := fmt.Sprintf("/alignments/%d", a.ID)
		for _, tc := range []struct {
			score, want string
		}{
			{"lots", `example 1: score “lots” is not a number (write decimals with a dot or a comma, e.g. 2.5 or 2,5, and no thousands separators)`},
			{"1,000", `example 1: score “1,000” could be 1000 with a thousands separator or 1.000 with a decimal comma: write 1000 or 1.000`},
		} {
			f := draftFormValues(a.Draft, "New high.")
			f["example_score"][0] = tc.score
			rec := env.postForm(aPath+"/accept", f)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), templ.EscapeString(tc.want)) {
				t.Errorf("example score %q = %d, want 422 saying %q", tc.score, rec.Code, tc.want)
			}
		}
		if got, _ := env.db.FindAlignment(ctx, env.ws.ID, a.ID); got.Status != models.AlignmentDrafted {
			t.Fatalf("a refused draft left the alignment %s", got.Status)
		}
		f := draftFormValues(a.Draft, "New high.")
		f["example_score"][0] = comma
		if rec := env.postForm(aPath+"/accept", f); rec.Code != http.StatusSeeOther {
			t.Fatalf("example score %q = %d, want 303: %.800s", comma, rec.Code, rec.Body.String())
		}
		a, err = env.db.FindAlignment(ctx, env.ws.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Draft.Examples[0].Score != score {
			t.Errorf("accepted example score %g, want %g (typed %q)", a.Draft.Examples[0].Score, score, comma)
		}
		// The held-out runs it launched finish before the database goes.
		for _, id := range []*int64{a.BeforeRunID, a.AfterRunID} {
			if id != nil {
				env.waitRun(*id, 60*time.Second)
			}
		}
	})
}

// TestNoiseFormReadsDecimalComma (forms47): the variants page's noise
// rates refused "7,8" (and were number inputs, which send "" for it in
// the browser). They are text inputs read with the other forms' reader;
// the copy is made at the rates typed, and text that is no number is
// refused naming the field, launching nothing.
func TestNoiseFormReadsDecimalComma(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		parent := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		if parent.Status != models.RunSucceeded {
			t.Fatalf("parent run %s (%s)", parent.Status, parent.Error)
		}
		base := fmt.Sprintf("/runs/%d", parent.ID)
		page := env.get(base + "/variants").Body.String()
		for _, name := range []string{"delete_percent", "replace_percent"} {
			if !decimalInput(name).MatchString(page) {
				t.Errorf("the noise form's %s is not a text input with a decimal keyboard", name)
			}
		}
		for _, tc := range []struct {
			del, rep, want string
		}{
			{"some", "5", `Words deleted: “some” is not a number (write decimals with a dot or a comma, e.g. 2.5 or 2,5, and no thousands separators); use a percentage from 0 to 50.`},
			{"5", "1,000", `Words replaced: “1,000” could be 1000 with a thousands separator or 1.000 with a decimal comma: write 1000 or 1.000; use a percentage from 0 to 50.`},
			{"50,5", "5", `Words deleted: 50.5 is out of range; use a percentage from 0 to 50.`},
			{"0,0", "0", "with both at 0%"},
			{"<i>5</i>", "5", `Words deleted: “<i>5</i>” is not a number`},
		} {
			rec := env.postForm(base+"/noise", url.Values{"delete_percent": {tc.del}, "replace_percent": {tc.rep}, "seed": {"3"}})
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), templ.EscapeString(tc.want)) {
				t.Errorf("%q/%q = %d, want 422 saying %q", tc.del, tc.rep, rec.Code, tc.want)
			}
			if strings.Contains(rec.Body.String(), "<i>5</i>") {
				t.Error("the typed markup is shown unescaped")
			}
		}
		if ds, _ := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID); len(ds) != 1 {
			t.Fatalf("refused noise forms left %d datasets, want 1", len(ds))
		}

		rec := env.postForm(base+"/noise", url.Values{"delete_percent": {"7,8"}, "replace_percent": {" 12,7 "}, "seed": {"3"}})
		noisy := env.waitRun(redirectedRun(t, rec), 60*time.Second)
		ds, err := env.db.FindDataset(ctx, env.ws.ID, noisy.DatasetID)
		if err != nil {
			t.Fatal(err)
		}
		// The copy's name gives the rates rounded to whole percents.
		if !strings.Contains(ds.Name, "8% deleted, 13% replaced, seed 3") {
			t.Errorf("noisy copy %q, want it made at 7.8%% deleted and 12.7%% replaced", ds.Name)
		}
	})
}
