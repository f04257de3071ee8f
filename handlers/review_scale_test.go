package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestReviewsUseTheRubricsScale: an LLM-Eval run judges the demo's 1-to-3
// criteria on its own 0 to 5, but its queue, sample page and the API ask
// reviewers for the rubric's 1 to 3, and refuse a 5. A rating stored on
// the 0-to-5 scale before (as the old form asked) counts nowhere: not in
// "you rated", not in a recomputed report, not pre-filled, but shown as not
// counted. An LLM-Eval run stored before it kept the rubric's scale reads
// it from its rubric version, and without one refuses to ask for ratings.
func TestReviewsUseTheRubricsScale(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		llm := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-5"})), 60*time.Second)
		batch := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		if c := llm.RubricSnapshot.Criteria[1]; c.Lo != 0 || c.Hi != 5 {
			t.Fatalf("LLM-Eval judged Coherent on %g to %g, want its 0 to 5", c.Lo, c.Hi)
		}
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		queueOf := func(run models.Run) string {
			return fmt.Sprintf("%s?criterion=1&i=0&order=random&run=%d&seed=1", queue, run.ID)
		}
		ann := &http.Cookie{Name: reviewerCookie, Value: "Ann"}

		// The forms ask for the rubric's 1 to 3.
		samplePage := fmt.Sprintf("/runs/%d/samples/%d", llm.ID, rows[0].ID)
		for _, path := range []string{queueOf(llm), samplePage} {
			body := env.send(http.MethodGet, path, nil, "", ann).Body.String()
			if !strings.Contains(body, "Your rating of Coherent (1 to 3)") || !strings.Contains(body, `name="score" value="3"`) ||
				strings.Contains(body, `name="score" value="5"`) || strings.Contains(body, `name="score" value="0"`) {
				t.Errorf("%s: want a form on 1 to 3, not LLM-Eval's 0 to 5:\n%s", path, body)
			}
		}

		// A 5 is refused; a 2 is stored on 1 to 3.
		form := url.Values{"run": {fmt.Sprint(llm.ID)}, "row": {fmt.Sprint(rows[0].ID)}, "criterion": {"Coherent"}, "back": {queueOf(llm)}}
		env.send(http.MethodPost, queue, with(form, "score", "5"), "", ann)
		if rec := env.send(http.MethodPost, queue, with(form, "score", "2"), "", ann); rec.Code != http.StatusSeeOther {
			t.Fatalf("rating 2: %d", rec.Code)
		}
		all, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.dataset.ID, "Coherent", 0)
		must(t, err)
		if len(all) != 1 || *all[0].Score != 2 || all[0].Lo != 1 || all[0].Hi != 3 {
			t.Fatalf("stored %+v, want one 2 on 1 to 3", all)
		}

		// A rating stored on LLM-Eval's scale by the old form.
		five := 5.0
		_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[1].ID,
			Criterion: "Coherent", HumanColumn: "coherent", Reviewer: "Ann", RunID: &llm.ID, Score: &five, Lo: 0, Hi: 5})
		must(t, err)
		body := env.send(http.MethodGet, queueOf(batch), nil, "", ann).Body.String()
		if !strings.Contains(body, `data-testid="review-rated">1<`) {
			t.Errorf("BatchEval queue: want 1 rated on 1 to 3 (the 0-to-5 rating not counted):\n%s", body)
		}
		body = env.send(http.MethodGet, fmt.Sprintf("/runs/%d/samples/%d", batch.ID, rows[1].ID), nil, "", ann).Body.String()
		if !strings.Contains(body, `data-testid="review-off-scale"`) || strings.Contains(body, `data-testid="review-rating">5<`) {
			t.Errorf("sample page: want the 0-to-5 rating shown as not counted, not as a review:\n%s", body)
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", batch.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		rep, err := report.Build(ctx, env.db, env.ws.ID, batch.ID)
		must(t, err)
		if rep.Humans.BrowserRatings != 1 {
			t.Errorf("report read %d browser ratings, want 1 (the one on 1 to 3)", rep.Humans.BrowserRatings)
		}
		for _, s := range rep.Criteria[1].Samples {
			switch {
			case s.RowID == rows[0].ID && (s.Human == nil || *s.Human != 2):
				t.Errorf("sample %d: human %v, want Ann's 2", s.RowID, s.Human)
			case s.RowID == rows[1].ID && s.Human != nil:
				t.Errorf("sample %d: human %v, want none (the 5 was given on 0 to 5)", s.RowID, *s.Human)
			}
		}

		// An LLM-Eval run stored before the rubric's scale was kept: its
		// rubric version says it; without one, the queue refuses.
		old := llm.RubricSnapshot
		for i := range old.Criteria {
			old.Criteria[i].RubricScale = nil
		}
		b, err := json.Marshal(old)
		must(t, err)
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", llm.ID).Update("rubric_snapshot", string(b)).Error)
		if body := env.send(http.MethodGet, queueOf(llm), nil, "", ann).Body.String(); !strings.Contains(body, "Your rating of Coherent (1 to 3)") {
			t.Errorf("old LLM-Eval run: want the rubric version's 1 to 3:\n%s", body)
		}
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", llm.ID).Update("rubric_version", nil).Error)
		body = env.send(http.MethodGet, queueOf(llm), nil, "", ann).Body.String()
		if !strings.Contains(body, `data-testid="review-refused"`) || strings.Contains(body, `data-testid="review-form"`) {
			t.Errorf("old LLM-Eval run without a rubric version: want a refusal and no form:\n%s", body)
		}
		env.send(http.MethodPost, queue, with(form, "score", "3"), "", ann)
		if all, _ := env.db.ListReviewRatings(ctx, env.ws.ID, d.dataset.ID, "Coherent", 0); len(all) != 2 {
			t.Errorf("a rating through the run that cannot say its scale was stored: %d reviews, want 2", len(all))
		}

		// The API asks for the rubric's scale too. (Launched before the
		// account: with accounts, local mode is over.)
		llm2 := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-100"})), 60*time.Second)
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		api := newAPIClient(t, env)
		path := fmt.Sprintf("/api/v1/datasets/%d/reviews", d.dataset.ID)
		in := map[string]any{"run_id": llm2.ID, "criterion": "Coherent", "row_id": rows[2].ID, "rating": 50}
		if rec := api.json(http.MethodPost, path, tok, in); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("API rating 50 through a 0-100 LLM-Eval run: %d, want 422", rec.Code)
		}
		in["rating"] = 3
		rec := api.json(http.MethodPost, path, tok, in)
		var got APIReview
		if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &got) != nil || got.Lo != 1 || got.Hi != 3 {
			t.Errorf("API rating 3: %d %s, want 201 on 1 to 3", rec.Code, rec.Body)
		}
		// The run's record of the rubric's range is no part of a rubric.
		rub := map[string]any{"name": "r", "task": "t", "criteria": []map[string]any{
			{"name": "Q", "description": "q", "lo": 0, "hi": 5, "rubric_scale": map[string]any{"lo": 1, "hi": 3}}}}
		api.invalidRequests = true // the document refuses the key too
		if rec := api.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), tok, rub); rec.Code != http.StatusBadRequest {
			t.Errorf("a rubric with rubric_scale: %d, want 400: %s", rec.Code, rec.Body)
		}
	})
}

// TestCommentOnlyReviewKeepsTheRating: a review saved in the browser
// without a rating (a wide scale's number field left empty to add a
// comment) keeps the reviewer's rating, as the API does: the sample stays
// rated and the recomputed report reads it. "Withdraw my rating" drops it,
// and asks why.
func TestCommentOnlyReviewKeepsTheRating(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		place := fmt.Sprintf("%s?criterion=1&i=0&order=random&run=%d&seed=1", queue, run.ID)
		ann := &http.Cookie{Name: reviewerCookie, Value: "Ann"}
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(rows[0].ID)}, "criterion": {"Coherent"}, "back": {place}}
		current := func() models.ReviewRating {
			t.Helper()
			all, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.dataset.ID, "Coherent", 0)
			must(t, err)
			cur := models.CurrentReviews(all)
			if len(cur) != 1 {
				t.Fatalf("current reviews %+v, want Ann's", cur)
			}
			return cur[0]
		}
		post := func(f url.Values) {
			t.Helper()
			if rec := env.send(http.MethodPost, queue, f, "", ann); rec.Code != http.StatusSeeOther {
				t.Fatalf("post: %d", rec.Code)
			}
		}
		post(with(form, "score", "3"))
		post(with(form, "comment", "on second reading: fine")) // no score field
		post(with(form, "score", ""))                          // an emptied number field
		if r := current(); r.Score == nil || *r.Score != 3 {
			t.Fatalf("after comments only: current rating %v, want 3 kept", r.Score)
		}
		if body := env.send(http.MethodGet, place, nil, "", ann).Body.String(); !strings.Contains(body, `data-testid="review-rated">1<`) {
			t.Errorf("queue: want the sample still rated:\n%s", body)
		}
		samplePage := fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[0].ID)
		if body := env.send(http.MethodGet, samplePage, nil, "", ann).Body.String(); !strings.Contains(body, `data-testid="review-clear"`) {
			t.Errorf("sample page: want a withdraw control:\n%s", body)
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		rep, err := report.Build(ctx, env.db, env.ws.ID, run.ID)
		must(t, err)
		for _, s := range rep.Criteria[1].Samples {
			if s.RowID == rows[0].ID && (s.Human == nil || *s.Human != 3) {
				t.Errorf("report: human %v, want Ann's 3", s.Human)
			}
		}

		// Withdrawing: refused without a reason, then done (the checked
		// radio's score is sent too and does not win).
		if rec := env.send(http.MethodPost, queue, with(with(form, "score", "3"), "clear_rating", "on"), "", ann); rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("a withdrawal without a reason: %d, want 422 (refused, the queue shown again)", rec.Code)
		}
		if r := current(); r.Score == nil {
			t.Fatalf("a withdrawal without a reason was stored")
		}
		post(with(with(with(form, "score", "3"), "clear_rating", "on"), "comment", "I misread the context"))
		if r := current(); r.Score != nil || r.Comment != "I misread the context" {
			t.Errorf("after withdrawing: %+v, want no rating and the reason", r)
		}
		if body := env.send(http.MethodGet, place, nil, "", ann).Body.String(); !strings.Contains(body, `data-testid="review-rated">0<`) {
			t.Errorf("queue after withdrawing: want 0 rated")
		}
	})
}
