package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// partialRun stores a one-round run on d whose first eight samples were
// judged in one call, answered except for the score of sample unreadable
// (nil: the answer could not be read), and whose last four samples are in
// a second call: failed (no answer) when failed is set, still pending
// otherwise, the run then running.
func (env *testEnv) partialRun(d ratedData, name string, unreadable int, failed bool) models.Run {
	env.t.Helper()
	t := env.t
	ctx := context.Background()
	s := evaluator.DefaultSettings()
	s.Rounds = 1
	run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name, Method: models.MethodBatchEval,
		Settings: s, Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
			Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
	must(t, env.db.CreateRun(ctx, &run, nil))
	bs, err := env.db.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{d.rowIDs[:8], d.rowIDs[8:12]})
	must(t, err)
	save := func(b models.RunBatch, ids []int64, skip int) {
		b.Status = models.BatchDone
		var scores []models.RunScore
		for i, id := range ids {
			var v *float64
			if i != skip {
				x := d.human[i]
				v = &x
			}
			scores = append(scores, models.RunScore{RunID: run.ID, BatchID: b.ID, Round: 0, RowID: id, Label: i + 1, Score: v})
		}
		must(t, env.db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: scores}))
	}
	save(bs[0], d.rowIDs[:8], unreadable)
	if failed {
		save(bs[1], d.rowIDs[8:12], -1)
		env.failBatch(bs[1], "network", "judge: could not reach the endpoint")
		must(t, env.db.FinishRun(ctx, run.ID, models.RunSucceeded, ""))
	} else {
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ? WHERE id = ?`, models.RunRunning, run.ID).Error)
	}
	run, err = env.db.GetRun(ctx, run.ID)
	must(t, err)
	return run
}

// TestCompareCountsEachRunsMissingScores: the compare page said nothing of
// either run's missing scores, so a reader comparing two runs could not see
// that one run's correlation rests on fewer samples. Each run's card now
// says how many of its samples have no final score (and, for a run still
// going, how many of them are not judged yet) and why its round scores are
// missing, in its run page's own words.
func TestCompareCountsEachRunsMissingScores(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Twelve rated", 12)
		// A ended: sample 1's answer unreadable, the last four's call
		// failed. B is going: sample 2's answer unreadable, the last four
		// not judged yet.
		a := env.partialRun(d, "Ended with failures", 0, true)
		b := env.partialRun(d, "Still going", 1, false)
		body := html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String())
		space := regexp.MustCompile(`\s+`)
		text := func(block string) string {
			block = regexp.MustCompile(`<a [^>]*>|</a>`).ReplaceAllString(block, "") // links inside a sentence
			return strings.TrimSpace(space.ReplaceAllString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(block, " "), " "))
		}
		tests := []struct {
			side string
			run  models.Run
			want []string
		}{
			{"a", a, []string{"Missing scores:", "5 of its 12 samples have no final score, so its figures leave them out.",
				"1 of 8 answered", "could not be read from the judge's answers", "4 round scores got no answer: the judge call failed (its run page says why)."}},
			{"b", b, []string{"Missing scores:", "5 of its 12 samples have no final score, so its figures leave them out (4 of them not judged yet: the run is running).",
				"1 of 8 answered", "could not be read from the judge's answers"}},
		}
		for _, tc := range tests {
			got := text(testidBlock(body, "compare-missing-"+tc.side))
			if got == "" {
				t.Errorf("run %s's card says nothing of its missing scores", strings.ToUpper(tc.side))
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("run %s's missing scores %q lack %q", strings.ToUpper(tc.side), got, w)
				}
			}
			// The same sentences as its run page's criterion card.
			page := html.UnescapeString(env.get(fmt.Sprintf("/runs/%d", tc.run.ID)).Body.String())
			rate := text(testidBlock(page, "unreadable-rate"))
			sentence := regexp.MustCompile(`\d+ of \d+ answered [^.]*could not be read from the judge's answers\.`).FindString(got)
			if sentence == "" || !strings.Contains(rate, sentence) {
				t.Errorf("run %s: the compare page says %q, its run page %q", strings.ToUpper(tc.side), got, rate)
			}
			if tc.side == "a" && !strings.Contains(rate, "4 round scores got no answer: the judge call failed") {
				t.Errorf("run A's page: %q", rate)
			}
			if tc.side == "b" && strings.Contains(got, "got no answer") {
				t.Errorf("run B's samples not judged yet are counted as calls that failed: %q", got)
			}
		}

		// The API's comparison and the shared comparison say the same:
		// the API had no missing counts at all, the shared page no run
		// cards.
		var api struct {
			MissingA *struct {
				Samples    int    `json:"samples"`
				NoFinal    int    `json:"no_final_score"`
				Pending    int    `json:"not_judged_yet"`
				Unreadable int    `json:"unreadable"`
				NoAnswer   int    `json:"no_answer"`
				Text       string `json:"text"`
			} `json:"a_missing"`
			MissingB *struct {
				Samples    int    `json:"samples"`
				NoFinal    int    `json:"no_final_score"`
				Pending    int    `json:"not_judged_yet"`
				Unreadable int    `json:"unreadable"`
				NoAnswer   int    `json:"no_answer"`
				Text       string `json:"text"`
			} `json:"b_missing"`
		}
		rec := env.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d", a.ID, b.ID))
		must(t, json.Unmarshal(rec.Body.Bytes(), &api))
		if api.MissingA == nil || api.MissingB == nil {
			t.Fatalf("the API's comparison has no missing counts: %s", rec.Body.String())
		}
		if m := *api.MissingA; m.Samples != 12 || m.NoFinal != 5 || m.Pending != 0 || m.Unreadable != 1 || m.NoAnswer != 4 {
			t.Errorf("API a_missing = %+v, want 12 samples, 5 without a final score, none pending, 1 unreadable, 4 without an answer", m)
		}
		if m := *api.MissingB; m.Samples != 12 || m.NoFinal != 5 || m.Pending != 4 || m.Unreadable != 1 || m.NoAnswer != 0 {
			t.Errorf("API b_missing = %+v, want 12 samples, 5 without a final score, 4 of them pending, 1 unreadable, none without an answer", m)
		}
		link := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {fmt.Sprint(a.ID)}, "other_run_id": {fmt.Sprint(b.ID)}, "expires": {"7d"}})
		shared := html.UnescapeString(env.get(link).Body.String())
		for _, tc := range tests {
			pageText := text(testidBlock(body, "compare-missing-"+tc.side))
			apiText := api.MissingA.Text
			if tc.side == "b" {
				apiText = api.MissingB.Text
			}
			if apiText != pageText {
				t.Errorf("run %s: the API says %q, the compare page %q", strings.ToUpper(tc.side), apiText, pageText)
			}
			got := text(testidBlock(shared, "compare-missing-"+tc.side))
			for _, w := range tc.want {
				// A share link's reader has no run page to be sent to.
				w = strings.Replace(w, " (its run page says why).", ".", 1)
				if !strings.Contains(got, w) {
					t.Errorf("shared comparison, run %s's card %q lacks %q", strings.ToUpper(tc.side), got, w)
				}
			}
			for _, id := range []string{"compare-cost-", "human-agreement-"} {
				if sh, pg := text(testidBlock(shared, id+tc.side)), text(testidBlock(body, id+tc.side)); sh == "" || sh != pg {
					t.Errorf("shared comparison, run %s's %s: %q, compare page %q", strings.ToUpper(tc.side), id, sh, pg)
				}
			}
		}
		if strings.Contains(shared, fmt.Sprintf(`href="/runs/%d"`, a.ID)) {
			t.Errorf("the shared comparison links the workspace's run page")
		}

		// Every score there: "none".
		full := env.storedRun(d, "Every score", d.human, nil)
		body = html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d", full.ID, a.ID)).Body.String())
		if got := text(testidBlock(body, "compare-missing-a")); !strings.Contains(got, "Missing scores: none: each of its 12 samples has a final score.") {
			t.Errorf("a run with every score: %q", got)
		}
	})
}

// TestCompareSimulatedCostSaidOnce: the cost line of a simulated run on the
// compare page read "cost $0 (simulated judge) · $0 (simulated judge) per
// sample", and "tokens paid" though nothing was paid; it now says its cost
// once, and that no token was paid for.
func TestCompareSimulatedCostSaidOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Twelve rated", 12)
		a := env.storedRun(d, "Simulated A", d.human, nil)
		b := env.storedRun(d, "Simulated B", noisy(d.human, 0.5, 1), nil)
		body := html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String())
		for _, side := range []string{"a", "b"} {
			got := strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(testidBlock(body, "compare-cost-"+side), " ")), " ")
			if n := strings.Count(got, "simulated judge"); n != 1 {
				t.Errorf("run %s's cost %q names the simulated judge %d times, want once", strings.ToUpper(side), got, n)
			}
			if strings.Contains(got, "tokens paid") || strings.Contains(got, "per sample") {
				t.Errorf("run %s's cost %q speaks of tokens paid or a cost per sample of a simulated judge", strings.ToUpper(side), got)
			}
			if !strings.Contains(got, "cost $0 (simulated judge)") || !strings.Contains(got, "none paid") {
				t.Errorf("run %s's cost %q, want its $0 said once and no token paid", strings.ToUpper(side), got)
			}
		}
	})
}

// TestCompareRowsSayWhichScoresArePending: on the compare page, a run
// still going gave each of its samples without a score the same reason,
// "not judged yet, or no round gave a readable score", where its run
// page's table says which; each row now says "not judged yet" of a pending
// call and the unreadable reason of an answered one.
func TestCompareRowsSayWhichScoresArePending(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Twelve rated", 12)
		a := env.storedRun(d, "Every score", d.human, nil)
		// Sample 2's answer unreadable; samples 9 to 12 not judged yet.
		b := env.partialRun(d, "Still going", 1, false)
		body := env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String()
		for _, tc := range []struct {
			why  string
			want int
		}{
			{tableFinalMissing(b, 0), 4},
			{tableFinalMissing(b, 1), 1},
			{tableFinalMissing(b, -1), 0},
		} {
			cell := `title="` + html.EscapeString(tc.why) + `" data-testid="b-missing-short">`
			if got := strings.Count(body, cell); got != tc.want {
				t.Errorf("%d of run B's missing scores say %q, want %d", got, tc.why, tc.want)
			}
		}
	})
}
