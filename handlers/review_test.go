package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestQueueOrder: disagreement and spread put the largest first and the
// samples they cannot place last, in dataset order; the random order is a
// permutation fixed by its seed.
func TestQueueOrder(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	samples := []models.SampleOutcome{
		{AbsDiff: f(0.5), Rounds: []*float64{f(1), f(1)}},
		{AbsDiff: nil, Rounds: []*float64{f(1), f(3)}},
		{AbsDiff: f(2), Rounds: []*float64{f(2), nil}},
		{AbsDiff: f(0.5), Rounds: []*float64{f(1), f(2)}},
	}
	for _, tc := range []struct {
		order string
		want  []int
	}{
		{orderDisagreement, []int{2, 0, 3, 1}},
		{orderUncertain, []int{1, 3, 0, 2}},
	} {
		if got := queueOrder(samples, tc.order, 1); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: order %v, want %v", tc.order, got, tc.want)
		}
	}
	many := make([]models.SampleOutcome, 30)
	a, b, c := queueOrder(many, orderRandom, 7), queueOrder(many, orderRandom, 7), queueOrder(many, orderRandom, 8)
	if !reflect.DeepEqual(a, b) || reflect.DeepEqual(a, c) {
		t.Errorf("random order: same seed %v / %v should match, another seed %v should differ", a, b, c)
	}
	seen := map[int]bool{}
	for _, i := range a {
		seen[i] = true
	}
	if len(seen) != len(many) {
		t.Errorf("random order %v is not a permutation", a)
	}
}

// TestReviewInTheBrowser: the queue is blind until the reviewer rated; a
// rating posts and comes back to the same place; a local reviewer's name is
// kept in a cookie, an account rates as itself; viewers read but may not
// rate; the run's report uses the browser ratings only after "recompute".
func TestReviewInTheBrowser(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		place := fmt.Sprintf("%s?criterion=1&i=0&order=disagreement&run=%d&seed=1", queue, run.ID)

		rec := env.get(place)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="review-blind"`) ||
			strings.Contains(body, `data-testid="review-analysis"`) || !strings.Contains(body, `name="reviewer"`) {
			t.Fatalf("blind queue: status %d; want blind notice, no analysis, a name field:\n%s", rec.Code, body)
		}
		rep, err := report.Build(ctx, env.db, env.ws.ID, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		first := rep.Criteria[1].Samples[queueOrder(outcomesOf(rep.Criteria[1].Samples), orderDisagreement, 1)[0]]
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(first.RowID)}, "criterion": {"Coherent"},
			"back": {place}, "reviewer": {"Ann Lee"}, "score": {"3"}, "comment": {"reads well"}, "tags": {"tone, tone, long"}}

		// Refused reviews: nothing stored, back to the same place.
		for _, bad := range []url.Values{
			with(form, "score", "4"),          // off the 1..3 scale
			with(form, "row", fmt.Sprint(0)),  // not a sample of the dataset
			with(form, "reviewer", "  ", "x"), // no name: the cookie is empty too
		} {
			rec := env.postForm(queue, bad)
			if rec.Code == http.StatusSeeOther && rec.Header().Get("Location") != place {
				t.Errorf("refused review went to %q, want back to %q", rec.Header().Get("Location"), place)
			}
		}
		if all, _ := env.db.ListReviewRatings(ctx, env.ws.ID, d.dataset.ID, "Coherent", 0); len(all) != 0 {
			t.Fatalf("refused reviews stored: %+v", all)
		}

		rec = env.postForm(queue, form)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != place {
			t.Fatalf("rating: status %d to %q, want 303 back to %q", rec.Code, rec.Header().Get("Location"), place)
		}
		var nameCookie *http.Cookie
		for _, ck := range rec.Result().Cookies() {
			if ck.Name == reviewerCookie {
				nameCookie = ck
			}
		}
		if nameCookie == nil {
			t.Fatal("the reviewer's name was not kept in a cookie")
		}
		all, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.dataset.ID, "Coherent", 0)
		if err != nil || len(all) != 1 {
			t.Fatalf("stored reviews %+v, %v", all, err)
		}
		if r := all[0]; r.Reviewer != "Ann Lee" || *r.Score != 3 || r.RowID != first.RowID || r.RunID == nil || *r.RunID != run.ID ||
			!reflect.DeepEqual(r.Tags, []string{"tone", "long"}) || r.Comment != "reads well" {
			t.Errorf("stored review %+v", r)
		}

		// Rated: the same place now shows the judge; the name is known.
		rec = env.send(http.MethodGet, place, nil, "", nameCookie)
		body = rec.Body.String()
		if !strings.Contains(body, `data-testid="review-judge"`) || strings.Contains(body, `data-testid="review-blind"`) ||
			!strings.Contains(body, `data-testid="review-rated">1<`) || !strings.Contains(body, `value="Ann Lee"`) {
			t.Errorf("after rating: want the judge shown, 1 rated and the name kept:\n%s", body)
		}
		// A disagreement with a reason, from the sample page's form.
		samplePage := fmt.Sprintf("/runs/%d/samples/%d", run.ID, first.RowID)
		dis := with(form, "back", samplePage)
		dis.Del("reviewer")
		dis.Set("agree", "disagree")
		dis.Set("reason", "ignores the topic change")
		rec = env.send(http.MethodPost, queue, dis, "", nameCookie)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != samplePage {
			t.Fatalf("sample page review: %d to %q", rec.Code, rec.Header().Get("Location"))
		}
		rec = env.get(samplePage)
		if !strings.Contains(rec.Body.String(), "disagrees with the judge") || !strings.Contains(rec.Body.String(), "ignores the topic change") {
			t.Errorf("sample page does not show the disagreement:\n%s", rec.Body.String())
		}

		// Accounts rate as themselves; viewers read only.
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		viewer := env.createUser(env.ws.ID, "vi@a.test", models.RoleViewer)
		rec = env.send(http.MethodPost, queue, with(form, "score", "1"), "", env.sessionCookie(editor))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("editor's rating: %d", rec.Code)
		}
		rec = env.send(http.MethodPost, queue, with(form, "score", "2"), "", env.sessionCookie(viewer))
		if rec.Code != http.StatusForbidden {
			t.Errorf("viewer's rating: %d, want 403", rec.Code)
		}
		rec = env.send(http.MethodGet, place, nil, "", env.sessionCookie(viewer))
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `data-testid="review-form"`) ||
			!strings.Contains(rec.Body.String(), `data-testid="review-judge"`) {
			t.Errorf("viewer's queue: %d; want no form and the judge shown", rec.Code)
		}
		all, _ = env.db.ListReviewRatings(ctx, env.ws.ID, d.dataset.ID, "Coherent", 0)
		cur := models.CurrentReviews(all)
		if len(all) != 3 || len(cur) != 2 || cur[1].Reviewer != "ed@a.test" || cur[1].UserID == nil || *cur[1].UserID != editor.ID {
			t.Errorf("reviews %+v: want Ann's two and the editor's as ed@a.test", cur)
		}

		// The run's report: imported until recomputed, then both. (With
		// accounts, local mode is over: the owner signs in.)
		owner := env.sessionCookie(env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner))
		runPage := fmt.Sprintf("/runs/%d", run.ID)
		body = env.send(http.MethodGet, runPage, nil, "", owner).Body.String()
		if !strings.Contains(body, `data-testid="human-source-used">imported column<`) || !strings.Contains(body, `data-testid="human-source-pending"`) {
			t.Errorf("run page before recompute: want imported and browser reviews pending:\n%s", body)
		}
		rec = env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}, "", env.sessionCookie(viewer))
		if rec.Code != http.StatusForbidden {
			t.Errorf("viewer recompute: %d, want 403", rec.Code)
		}
		rec = env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}, "", owner)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		body = env.send(http.MethodGet, runPage, nil, "", owner).Body.String()
		if !strings.Contains(body, `data-testid="human-source-used">imported column and browser ratings (2 browser ratings`) ||
			strings.Contains(body, `data-testid="human-source-pending"`) || !strings.Contains(body, "Coherent=coherent (annotators coherent@imported, coherent@browser:Ann Lee, coherent@browser:ed)") {
			t.Errorf("run page after recompute: want both, 2 browser ratings, nothing pending, the annotators:\n%s", body)
		}
	})
}

// with returns a copy of the form with key set to the values.
func with(f url.Values, key string, values ...string) url.Values {
	out := url.Values{}
	for k, v := range f {
		out[k] = append([]string(nil), v...)
	}
	out[key] = values
	return out
}

// TestDatasetExportKeepsReviews: the dataset's CSV export carries each
// browser reviewer's ratings as a column of its own; imported again, those
// columns are annotators of the criterion's human column, with the same
// ratings as before.
func TestDatasetExportKeepsReviews(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		crit := d.rubric.Criteria[1] // Coherent, human column "coherent", 1..3
		for i, r := range rows[:4] {
			for _, who := range []string{"Ann", "Bob, Jr."} {
				v := float64(1 + (i+len(who))%3)
				if _, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: r.ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: who, Score: &v, Lo: crit.Lo, Hi: crit.Hi}); err != nil {
					t.Fatal(err)
				}
			}
		}
		rec := env.get(fmt.Sprintf("/datasets/%d/export.csv", d.dataset.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d %s", rec.Code, rec.Body.String())
		}
		exported := rec.Body.String()
		recs, err := csv.NewReader(strings.NewReader(exported)).ReadAll()
		if err != nil || len(recs) != len(rows)+1 {
			t.Fatalf("export: %d records, %v", len(recs), err)
		}
		header := recs[0]
		for _, want := range []string{"coherent@browser:Ann", "coherent@browser:Bob, Jr."} {
			if !slices.Contains(header, want) {
				t.Fatalf("export header %q lacks %q", header, want)
			}
		}

		// Import it again: the id, the texts shown, every rating column rated.
		token := env.uploadToken("with-reviews.csv", exported)
		form := url.Values{"token": {token}, "name": {"Reimported"}, "id_column": {"id"}}
		for i, col := range header {
			switch {
			case col == "context" || col == "response":
				form.Set(fmt.Sprintf("show_%d", i), "1")
			case col == "engaging" || col == "coherent" || strings.Contains(col, "@"):
				form.Set(fmt.Sprintf("rating_%d", i), "1")
			}
		}
		if rec := env.postForm(env.mapPath(), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("import: %d %s", rec.Code, rec.Body.String())
		}
		all, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		var again models.Dataset
		for _, ds := range all {
			if ds.Name == "Reimported" {
				again = ds
			}
		}
		if again.ID == 0 {
			t.Fatal("the re-imported dataset is not listed")
		}
		before, err := env.db.HumanRatings(ctx, env.ws.ID, d.dataset.ID, crit, models.HumansBoth, 0)
		if err != nil {
			t.Fatal(err)
		}
		after, err := env.db.HumanRatings(ctx, env.ws.ID, again.ID, crit, models.HumansImported, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(before) != len(after) {
			t.Fatalf("%d samples before, %d after", len(before), len(after))
		}
		for i := range before {
			b, a := before[i], after[i]
			delete(b.Annotators, "coherent@imported") // the imported column itself, an annotator only under "both"
			if b.ExternalID != a.ExternalID || !reflect.DeepEqual(b.Annotators, a.Annotators) {
				t.Errorf("sample %s: annotators %v before export, %v after import", b.ExternalID, b.Annotators, a.Annotators)
			}
		}
		if len(after[0].Annotators) != 2 {
			t.Errorf("first sample after import: annotators %v, want the two reviewers", after[0].Annotators)
		}
	})
}

// TestDatasetExportDefusesFormulas: the dataset's CSV export writes a text
// cell that a spreadsheet would run as a formula (= + - @, or a leading
// tab or carriage return) with a leading quote, as the run export does;
// ratings that are plain numbers, negative ones included, stay numbers so
// the export imports again.
func TestDatasetExportDefusesFormulas(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cells := []struct {
			name, in, want string
		}{
			{"hyperlink", `=HYPERLINK("http://evil","click")`, `'=HYPERLINK("http://evil","click")`},
			{"plus", "+1+2", "'+1+2"},
			{"minus", "-2+3", "'-2+3"},
			{"at", "@SUM(A1)", "'@SUM(A1)"},
			{"tab", "\tcmd", "'\tcmd"},
			{"carriage return", "\rcmd", "'\rcmd"},
			{"plain", "hello = world", "hello = world"},
		}
		var b strings.Builder
		for i, c := range cells {
			fmt.Fprintf(&b, `{"id": "r%d", "text": %q, "=note": "x", "score": -2}`+"\n", i, c.in)
		}
		token := env.uploadToken("cells.jsonl", b.String())
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Formulas"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Text"}, "rating_3": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		rec = env.get(strings.TrimSuffix(rec.Header().Get("Location"), "/") + "/export.csv")
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d %s", rec.Code, rec.Body)
		}
		recs, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil || len(recs) != len(cells)+1 {
			t.Fatalf("export: %d records, %v:\n%s", len(recs), err, rec.Body)
		}
		if want := []string{"id", "text", "'=note", "score"}; !slices.Equal(recs[0], want) {
			t.Errorf("export header = %q, want %q", recs[0], want)
		}
		for i, c := range cells {
			t.Run(c.name, func(t *testing.T) {
				if got := recs[i+1][1]; got != c.want {
					t.Errorf("exported text = %q, want %q", got, c.want)
				}
				if got := recs[i+1][3]; got != "-2" {
					t.Errorf("exported rating = %q, want -2", got)
				}
			})
		}
	})
}

// TestReviewQueueLabelsTheSimulatedJudge: once the judge shows in the
// review queue, a simulated judge's scores and analyses are labelled as
// such, and so is its run among the queue's choices; a sample-wise method's
// score is no "Round 1". QA: the queue showed the simulated judge's
// analysis as "The judge", with no word that no language model wrote it.
func TestReviewQueueLabelsTheSimulatedJudge(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		batch := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		geval := env.waitRun(env.launch(d.methodForm("geval", nil)), 60*time.Second)
		queue := func(run models.Run) string {
			return env.get(fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=disagreement&run=%d&seed=1&blind=off", d.dataset.ID, run.ID)).Body.String()
		}
		judgeSection := func(body string) string {
			i := strings.Index(body, `data-testid="review-judge"`)
			if i < 0 {
				t.Fatalf("the judge is not shown with blind mode off")
			}
			return body[i:]
		}
		body := queue(batch)
		if j := judgeSection(body); !strings.Contains(j, `data-testid="simulated-badge"`) || !strings.Contains(j, `data-testid="review-simulated"`) {
			t.Errorf("the simulated judge's scores are not labelled as such")
		}
		if !strings.Contains(body, fmt.Sprintf("<option value=\"%d\" selected>run %d · %s (simulated judge)", batch.ID, batch.ID, batch.Name)) {
			t.Errorf("the run choice does not say the run is the simulated judge's")
		}
		if j := judgeSection(body); !strings.Contains(j, "Round 1:") {
			t.Errorf("BatchEval's rounds are not named")
		}
		if j := judgeSection(queue(geval)); strings.Contains(j, "Round 1:") || !strings.Contains(j, "Score: ") {
			t.Errorf("G-Eval's one score is named as a round")
		}
		// A real judge's run carries no such label.
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", batch.ID).Update("simulated", false).Error)
		if j := judgeSection(queue(batch)); strings.Contains(j, `data-testid="simulated-badge"`) || strings.Contains(j, `data-testid="review-simulated"`) {
			t.Errorf("a run of a real judge is labelled simulated")
		}
	})
}

// TestPendingBrowserRatingsCount: the run page counts the browser ratings
// a recompute would bring into its report: each reviewer's current rating
// of a sample, not every submission. A rating saved three times is one
// rating, a comment alone is none; the count then agrees with the
// queue's "you rated" and with the report's own "(N browser ratings)".
func TestPendingBrowserRatingsCount(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 2)
		if err != nil || len(rows) < 2 {
			t.Fatalf("rows: %v (%d)", err, len(rows))
		}
		score := func(v float64) *float64 { return &v }
		add := func(row int64, reviewer string, s *float64, comment string) {
			t.Helper()
			if _, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row,
				Criterion: "Coherent", Reviewer: reviewer, Score: s, Lo: 1, Hi: 3, Comment: comment}); err != nil {
				t.Fatal(err)
			}
		}
		pending := func() string {
			t.Helper()
			body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
			i := strings.Index(body, `data-testid="human-source-pending">`)
			if i < 0 {
				return ""
			}
			body = body[i+len(`data-testid="human-source-pending">`):]
			return body[:strings.Index(body, "<")]
		}
		a, b := rows[0].ID, rows[1].ID
		add(a, "Ann", score(2), "")
		add(a, "Ann", score(3), "")
		add(a, "Ann", score(1), "changed my mind")
		add(b, "Ann", nil, "a comment, no rating")
		add(a, "Bob", score(2), "")
		if got, want := pending(), "2 browser ratings are not in it yet."; got != want {
			t.Errorf("before recompute: %q, want %q (Ann's and Bob's current ratings)", got, want)
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		if got := pending(); got != "" {
			t.Errorf("after recompute: %q, want nothing pending", got)
		}
		add(a, "Ann", score(3), "")
		add(b, "Bob", nil, "only a comment")
		if got, want := pending(), "1 browser rating is not in it yet."; got != want {
			t.Errorf("after one more rating: %q, want %q", got, want)
		}
	})
}

// TestReviewQueueNamesTheSimulatedJudgeOnce: the demo's run is called
// "Demo run (simulated judge)"; the queue's run choice said it twice.
func TestReviewQueueNamesTheSimulatedJudgeOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("name", "Demo run (simulated judge)").Error)
		body := env.get(fmt.Sprintf("/datasets/%d/review?run=%d", d.dataset.ID, run.ID)).Body.String()
		want := fmt.Sprintf(`<option value="%d" selected>run %d · Demo run (simulated judge)</option>`, run.ID, run.ID)
		if !strings.Contains(body, want) || strings.Contains(body, "(simulated judge) (simulated judge)") {
			t.Errorf("run choice: want %s, once", want)
		}
	})
}
