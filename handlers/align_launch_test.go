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

	"github.com/batcheval/batcheval/models"
)

// TestLargeHeldOutPartPreparedInTheBackground: accepting a draft whose
// held-out part is larger than heldOutInlineSamples answers at once; the
// copy and the launch go on in the background, the alignment's page says
// the held-out runs are being prepared and reloads itself (no launch
// button meanwhile, and a launch again is refused rather than run twice),
// and the copy is the one the request makes for a small part: the same
// samples, order, texts, ratings and note. A launch that fails says why on
// the page, keeps no dataset, and offers to launch again, which then
// launches them.
func TestLargeHeldOutPartPreparedInTheBackground(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		src := alignDemoRun(t, env, "browser")
		copyOf := func(a models.Alignment) ([]models.DatasetRow, []string) {
			t.Helper()
			ds, err := env.db.FindDataset(ctx, env.ws.ID, *a.HeldOutDatasetID)
			mustB(t, err)
			rows, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
			mustB(t, err)
			return rows, ds.ImportNotes
		}
		inline := alignAccepted(t, env, src, 11)
		want, wantNotes := copyOf(inline)

		env.h.heldOutInline = 0
		rc := env.h.reports
		start := func() models.Alignment {
			t.Helper()
			rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {"11"}, "held_out_percent": {"50"}})
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("start: %d %.400s", rec.Code, rec.Body.String())
			}
			id, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
			a, err := env.db.FindAlignment(ctx, env.ws.ID, id)
			mustB(t, err)
			return a
		}
		page := func(a models.Alignment) string {
			t.Helper()
			rec := env.get(fmt.Sprintf("/alignments/%d", a.ID))
			if rec.Code != http.StatusOK {
				t.Fatalf("alignment page: %d", rec.Code)
			}
			return rec.Body.String()
		}
		const button = `action="/alignments/`

		// The background slots held: the launch waits for one.
		for range cap(rc.slots) {
			rc.slots <- struct{}{}
		}
		datasets := env.countDatasets()
		a := start()
		rec := env.postForm(fmt.Sprintf("/alignments/%d/accept", a.ID), draftFormValues(a.Draft, "New high."))
		if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "are being prepared") {
			t.Fatalf("accept: %d, flash %q", rec.Code, flashOf(rec))
		}
		body := page(a)
		if !strings.Contains(body, "Preparing the held-out runs") || !strings.Contains(body, `http-equiv="refresh"`) {
			t.Errorf("the page does not say the held-out runs are being prepared, or does not reload:\n%.3000s", body[strings.Index(body, `data-testid="before-after"`):])
		}
		if strings.Contains(body, button+strconv.FormatInt(a.ID, 10)+`/heldout"`) {
			t.Errorf("the page offers to launch the held-out runs while they are being prepared")
		}
		rec = env.postForm(fmt.Sprintf("/alignments/%d/heldout", a.ID), url.Values{})
		if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "are being prepared") {
			t.Errorf("launch again while preparing: %d, flash %q", rec.Code, flashOf(rec))
		}
		for range cap(rc.slots) {
			<-rc.slots
		}
		rc.settling.Wait()
		a, err := env.db.FindAlignment(ctx, env.ws.ID, a.ID)
		mustB(t, err)
		if a.BeforeRunID == nil || a.AfterRunID == nil || a.HeldOutDatasetID == nil {
			t.Fatalf("no held-out runs after the background launch: %+v", a)
		}
		if n := env.countDatasets(); n != datasets+1 {
			t.Errorf("%d datasets made by the accept and the refused launch, want 1", n-datasets)
		}
		got, gotNotes := copyOf(a)
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("background copy of %d samples, the request's of %d", len(got), len(want))
		}
		for k := range want {
			x, y := want[k], got[k]
			if x.Position != y.Position || x.ExternalID != y.ExternalID || !maps.Equal(x.Data, y.Data) || !maps.EqualFunc(x.Ratings, y.Ratings, exactRating) {
				t.Errorf("sample %d: %+v in the request's copy, %+v in the background's", k, x, y)
			}
		}
		if fmt.Sprint(gotNotes) != fmt.Sprint(wantNotes) {
			t.Errorf("notes %q, the request's %q", gotNotes, wantNotes)
		}
		if body := page(a); strings.Contains(body, "Preparing the held-out runs") || !strings.Contains(body, fmt.Sprintf("/runs/%d", *a.AfterRunID)) {
			t.Errorf("the page still says preparing, or does not link the after run %d", *a.AfterRunID)
		}
		for _, id := range []int64{*a.BeforeRunID, *a.AfterRunID} {
			env.waitRun(id, 60*time.Second)
		}

		// A launch that fails: the workspace's limit of runs at once.
		env.db.MaxActiveRunsPerWorkspace = 1
		failed := start()
		datasets = env.countDatasets()
		if rec := env.postForm(fmt.Sprintf("/alignments/%d/accept", failed.ID), draftFormValues(failed.Draft, "New high.")); rec.Code != http.StatusSeeOther {
			t.Fatalf("accept: %d", rec.Code)
		}
		rc.settling.Wait()
		body = page(failed)
		if !strings.Contains(body, "The held-out runs could not be prepared") || !strings.Contains(body, "BATCHEVAL_MAX_RUNS_PER_WORKSPACE") ||
			!strings.Contains(body, button+strconv.FormatInt(failed.ID, 10)+`/heldout"`) || strings.Contains(body, `http-equiv="refresh"`) {
			t.Errorf("the page does not say why the held-out runs were not launched, or offers no launch:\n%.3000s", body[strings.Index(body, `data-testid="before-after"`):])
		}
		if n := env.countDatasets(); n != datasets {
			t.Errorf("a failed launch kept %d datasets", n-datasets)
		}
		env.db.MaxActiveRunsPerWorkspace = 0
		if rec := env.postForm(fmt.Sprintf("/alignments/%d/heldout", failed.ID), url.Values{}); rec.Code != http.StatusSeeOther {
			t.Fatalf("launch again: %d", rec.Code)
		}
		rc.settling.Wait()
		failed, err = env.db.FindAlignment(ctx, env.ws.ID, failed.ID)
		mustB(t, err)
		if failed.BeforeRunID == nil || failed.AfterRunID == nil {
			t.Fatalf("launch again made no runs: %+v", failed)
		}
		if body := page(failed); strings.Contains(body, "could not be prepared") {
			t.Errorf("the page still says the launch failed once launched")
		}
		for _, id := range []int64{*failed.BeforeRunID, *failed.AfterRunID} {
			env.waitRun(id, 60*time.Second)
		}
	})
}

// TestHeldOutLaunchFailureSaysOneSentence: when the held-out runs cannot
// be launched for a reason of the server's own (here the jobs' table is
// gone), the accept's message (launched in the request) and the page's
// note (in the background) say so in sentences that end once: the flash
// read "...The details are in the server log.. Launch them again from
// this page."
func TestHeldOutLaunchFailureSaysOneSentence(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inline int
	}{{"in the request", heldOutInlineSamples}, {"in the background", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				src := alignDemoRun(t, env, "imported")
				env.h.heldOutInline = tc.inline
				rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"50"}})
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("start: %d", rec.Code)
				}
				id, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
				a, err := env.db.FindAlignment(ctx, env.ws.ID, id)
				mustB(t, err)
				// The workers stop first: the source run's job was
				// completed in its own transaction, but River's completer
				// still writes it afterwards (within 50 ms, later on a
				// loaded machine); once the table was gone that write
				// failed and was retried for 7 s (1 + 2 + 4) before the
				// test's cleanup could stop the runner. Stop flushes it.
				sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				mustB(t, env.runner.Stop(sctx))
				mustB(t, env.db.Gorm.Exec("DROP TABLE river_job").Error)
				rec = env.postForm(fmt.Sprintf("/alignments/%d/accept", a.ID), draftFormValues(a.Draft, "New high."))
				env.h.reports.settling.Wait()
				said := flashOf(rec)
				if tc.inline == 0 {
					said = env.get(fmt.Sprintf("/alignments/%d", a.ID)).Body.String()
				}
				const want = "Something went wrong on our side. The details are in the server log"
				if !strings.Contains(said, want) {
					t.Fatalf("the failure is not said (%q):\n%.2000s", want, said)
				}
				if strings.Contains(said, "log..") {
					t.Errorf("a sentence ends twice: %.300s", said[strings.Index(said, want):])
				}
			})
		})
	}
}
