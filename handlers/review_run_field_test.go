package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewRunThatIsNotANumber: a review posted with a run that is not a
// number was read as run 0 and answered "run 0 does not exist" (404),
// naming neither the field nor what to do. It is refused with 422, the
// field's value quoted (escaped on the page) and what to do, and nothing
// is saved; the same form with the run's number is saved.
func TestReviewRunThatIsNotANumber(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("reviewed", 4)
		run := env.storedRun(d, "judged run", []float64{1, 2, 3, 4}, nil)
		path := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		count := func() int64 {
			var n int64
			must(t, env.db.Gorm.Model(&models.ReviewRating{}).Where("dataset_id = ?", d.ds.ID).Count(&n).Error)
			return n
		}
		for _, tc := range []struct {
			run  string
			want []string
		}{
			{"abc", []string{"run “abc” is not a run number", "open the sample from its run&#39;s page", "nothing was saved"}},
			{"-3", []string{"run “-3” is not a run number"}},
			{"<b>7</b>", []string{"run “&lt;b&gt;7&lt;/b&gt;” is not a run number"}},
			{"", []string{"the review names no run (field run)", "open the sample from its run&#39;s page"}},
		} {
			form := url.Values{"run": {tc.run}, "criterion": {"Quality"}, "row": {strconv.FormatInt(d.rowIDs[0], 10)}, "score": {"3"}, "reviewer": {"Ann"}}
			rec := env.postForm(path, form)
			body := rec.Body.String()
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("run %q: %d, want 422: %.300s", tc.run, rec.Code, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("run %q: the answer does not say %q: %.1500s", tc.run, w, body)
				}
			}
			if strings.Contains(body, "<b>7</b>") || strings.Contains(body, "run 0") {
				t.Errorf("run %q: the answer shows the value unescaped or as run 0", tc.run)
			}
			if n := count(); n != 0 {
				t.Fatalf("run %q: %d reviews saved, want none", tc.run, n)
			}
		}
		form := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {"Quality"}, "row": {strconv.FormatInt(d.rowIDs[0], 10)}, "score": {"3"}, "reviewer": {"Ann"}}
		if rec := env.postForm(path, form); rec.Code != http.StatusSeeOther {
			t.Fatalf("the same review with run %d: %d: %.300s", run.ID, rec.Code, rec.Body)
		}
		if n := count(); n != 1 {
			t.Errorf("%d reviews saved with the run's number, want 1", n)
		}
	})
}

// TestReviewRowThatIsNotANumber: a review posted with a row that is not a
// number was read as row 0. It is refused with 422 naming the field's
// value and what to do, and nothing is saved.
func TestReviewRowThatIsNotANumber(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("reviewed", 4)
		run := env.storedRun(d, "judged run", []float64{1, 2, 3, 4}, nil)
		path := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		for _, tc := range []struct {
			row  string
			want string
		}{
			{"abc", "sample “abc” is not a sample number"},
			{"0", "sample “0” is not a sample number"},
			{"<i>2</i>", "sample “&lt;i&gt;2&lt;/i&gt;” is not a sample number"},
			{"", "the review names no sample (field row)"},
		} {
			form := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {"Quality"}, "row": {tc.row}, "score": {"3"}, "reviewer": {"Ann"}}
			rec := env.postForm(path, form)
			body := rec.Body.String()
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) || !strings.Contains(body, "nothing was saved") {
				t.Errorf("row %q: %d, want 422 saying %q and that nothing was saved: %.1500s", tc.row, rec.Code, tc.want, body)
			}
			var n int64
			must(t, env.db.Gorm.Model(&models.ReviewRating{}).Where("dataset_id = ?", d.ds.ID).Count(&n).Error)
			if n != 0 {
				t.Fatalf("row %q: %d reviews saved, want none", tc.row, n)
			}
		}
	})
}

// TestReviewQueueSaysWhenItsRunIsGone: the review queue opened with a run
// that is in the trash, or that is not a run of the workspace (another
// workspace's, or none at all), silently followed the dataset's default
// run. It now says so, with 404: a trashed run by name, that it is in the
// trash and who can restore it from where; a run the workspace cannot see
// with the very message of a run that does not exist, never its name. A
// run of the dataset still opens its queue.
func TestReviewQueueSaysWhenItsRunIsGone(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("queued", 4)
		binned := env.storedRun(d, "binned run", []float64{1, 2, 3, 4}, nil)
		kept := env.storedRun(d, "kept run", []float64{4, 3, 2, 1}, nil)
		elsewhere := env.storedRun(d, "secret run of B", []float64{1, 1, 1, 1}, nil)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		outsider := env.createUser(env.ws.ID, "outsider@b.test", models.RoleOwner)
		wsB, err := env.db.CreateWorkspace(ctx, "B", outsider.ID)
		if err != nil {
			t.Fatal(err)
		}
		must(t, env.db.Gorm.Exec(`UPDATE runs SET workspace_id = ? WHERE id = ?`, wsB.ID, elsewhere.ID).Error)
		if _, _, err := env.db.Trash(ctx, env.ws.ID, models.KindRun, binned.ID, models.Actor{UserID: &owner.ID, Label: owner.Name}); err != nil {
			t.Fatal(err)
		}
		const missing = int64(987654)
		queue := fmt.Sprintf("/datasets/%d/review?blind=off&run=", d.ds.ID)
		for _, tc := range []struct {
			name   string
			run    int64
			status int
			want   []string
			never  []string
		}{
			{"trashed", binned.ID, http.StatusNotFound,
				[]string{fmt.Sprintf("run %d (“binned run”) is in the trash", binned.ID), "an editor or owner of this workspace can restore it from the Trash page"}, nil},
			{"another workspace's", elsewhere.ID, http.StatusNotFound,
				[]string{fmt.Sprintf("run %d does not exist (or is not in this workspace)", elsewhere.ID)}, []string{"secret run of B", "in the trash"}},
			{"none at all", missing, http.StatusNotFound,
				[]string{fmt.Sprintf("run %d does not exist (or is not in this workspace)", missing)}, nil},
			{"the dataset's", kept.ID, http.StatusOK,
				[]string{"kept run"}, []string{"does not exist", "in the trash"}},
		} {
			for _, who := range []models.User{owner, viewer} {
				rec := env.getAs(queue+strconv.FormatInt(tc.run, 10), env.sessionCookie(who))
				body := rec.Body.String()
				if rec.Code != tc.status {
					t.Errorf("%s run, as %s: %d, want %d", tc.name, who.Email, rec.Code, tc.status)
				}
				for _, w := range tc.want {
					if !strings.Contains(body, w) {
						t.Errorf("%s run, as %s: the page does not say %q: %.1500s", tc.name, who.Email, w, body)
					}
				}
				for _, w := range tc.never {
					if strings.Contains(body, w) {
						t.Errorf("%s run, as %s: the page says %q", tc.name, who.Email, w)
					}
				}
			}
		}
	})
}

// TestReviewQueueSaysWhyItShowsAnotherRun: the queue opened with ?run=
// naming a live run of the workspace it cannot follow (another dataset's
// run, a run of this dataset still running with nothing judged) or with a
// run that is not a number ("abc") opened the dataset's default run as if
// it had been asked for. It still shows the default run (the page stays
// usable), and says which run was asked for, why it is not shown and which
// one is (escaped), with a link to the other dataset's queue.
func TestReviewQueueSaysWhyItShowsAnotherRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("queued", 4)
		shown := env.storedRun(d, "kept <run>", []float64{4, 3, 2, 1}, nil)
		other := env.ratedDataset("other <data>", 4)
		theirs := env.storedRun(other, "their run", []float64{1, 2, 3, 4}, nil)
		running := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "just started", Method: models.MethodBatchEval,
			Settings: shown.Settings, Simulated: true, RubricSnapshot: shown.RubricSnapshot}
		must(t, env.db.CreateRun(ctx, &running, nil))
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ? WHERE id = ?`, models.RunRunning, running.ID).Error)
		showing := fmt.Sprintf("showing run %d (“kept &lt;run&gt;”) instead.", shown.ID)
		queue := fmt.Sprintf("/datasets/%d/review?run=", d.ds.ID)
		for _, tc := range []struct {
			name string
			run  string
			want []string
		}{
			{"not a number", "abc", []string{"run “abc” is not a run number; " + showing}},
			{"markup", "<b>x</b>", []string{"run “&lt;b&gt;x&lt;/b&gt;” is not a run number; " + showing}},
			{"zero", "0", []string{"run “0” is not a run number; " + showing}},
			{"another dataset's", strconv.FormatInt(theirs.ID, 10), []string{
				fmt.Sprintf("run %d (“their run”) judges the dataset “other &lt;data&gt;”, not this one", theirs.ID), showing,
				fmt.Sprintf(`href="/datasets/%d/review?`, other.ds.ID), fmt.Sprintf("run=%d", theirs.ID)}},
			{"running, nothing judged", strconv.FormatInt(running.ID, 10), []string{
				fmt.Sprintf("run %d (“just started”, running) has not judged any sample yet", running.ID), "it opens here once its first judge scores are in", showing}},
		} {
			rec := env.get(queue + url.QueryEscape(tc.run))
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Errorf("%s: %d, want 200 (the default run's queue): %.500s", tc.name, rec.Code, body)
			}
			note := queueNoteHTML(body, "review-run-note")
			for _, w := range tc.want {
				if !strings.Contains(note, w) {
					t.Errorf("%s: the note does not say %q: %q", tc.name, w, note)
				}
			}
			if !strings.Contains(body, `data-testid="review-position"`) || !strings.Contains(body, fmt.Sprintf(`value="%d" selected`, shown.ID)) {
				t.Errorf("%s: the page does not show the default run's queue: %.2000s", tc.name, body)
			}
			if strings.Contains(body, "<b>x</b>") {
				t.Errorf("%s: the asked run is shown unescaped", tc.name)
			}
		}
		// The run asked for, or none asked: no note.
		for _, path := range []string{queue + strconv.FormatInt(shown.ID, 10), fmt.Sprintf("/datasets/%d/review", d.ds.ID)} {
			if body := env.get(path).Body.String(); strings.Contains(body, "review-run-note") {
				t.Errorf("%s: a note where the queue shows what was asked: %q", path, queueNoteHTML(body, "review-run-note"))
			}
		}
	})
}

// queueNoteHTML is the raw inner HTML of the first element marked
// data-testid=id in body, up to its closing </p>: "" when absent.
func queueNoteHTML(body, id string) string {
	_, after, ok := strings.Cut(body, `data-testid="`+id+`"`)
	if !ok {
		return ""
	}
	_, after, _ = strings.Cut(after, ">")
	text, _, _ := strings.Cut(after, "</p>")
	return text
}

// TestReviewQueueCountsAreGrouped: the queue's counts of a large run were
// written "Sample 1 of 1200 · you rated 0 of 1200"; they take thousands
// separators, as every other count of the pages ("of 1,200").
func TestReviewQueueCountsAreGrouped(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 1200
		d := env.ratedDataset("large", n)
		finals := make([]float64, n)
		for i := range finals {
			finals[i] = float64(1 + i%5)
		}
		run := env.storedRun(d, "large run", finals, nil)
		body := env.get(fmt.Sprintf("/datasets/%d/review?run=%d&i=1099", d.ds.ID, run.ID)).Body.String()
		for _, w := range []string{`Sample <strong data-testid="review-position">1,100</strong> of 1,200`, `you rated <strong data-testid="review-rated">0</strong> of 1,200`} {
			if !strings.Contains(body, w) {
				t.Errorf("the queue does not say %q: %.3000s", w, body)
			}
		}
	})
}
