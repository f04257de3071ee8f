package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestStatusCardCountsScoresAndAnswers: the status card of a sampling run
// said "Unreadable answers 0" while its results said that 89 of 800
// sampled answers could not be read: the card counted scores, the results
// answers. Each label now says what it counts: the card's unreadable
// scores, its scores with too few readable answers, and (once finished)
// its unreadable sampled answers of all sampled, matching the results'
// sentence; the results' heading counts scores too. The stream carries the
// score counts the card shows.
func TestStatusCardCountsScoresAndAnswers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const n = 40
		d := env.ratedDataset("Sampled card", n)
		judge := models.Judge{WorkspaceID: env.ws.ID, Name: "Rater", BaseURL: readableEndpoint(t, d.human), Model: "rater", MaxConcurrency: 4, TimeoutSeconds: 10}
		must(t, env.db.SaveJudge(ctx, &judge))
		ms := evaluator.DefaultMethodSettings()
		ms.Samples = 4
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, JudgeID: &judge.ID, JudgeSnapshot: judge.Snapshot(),
			Name: "card", Method: models.MethodCloserLook, Settings: evaluator.DefaultSettings(), MethodSettings: ms,
			RubricSnapshot: evaluator.Rubric{Task: "Rate the text.", Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
		must(t, env.runner.Launch(ctx, &run))
		run = env.waitRun(run.ID, 90*time.Second)

		// Recomputed from what the judge wrote: 4 answers a sample, of
		// which readableOf are readable; a half (2) makes a score.
		var unreadableScores, tooFew, answers, unreadableAnswers int
		for i := range n {
			k := readableOf(i)
			answers += 4
			unreadableAnswers += 4 - k
			switch {
			case k == 0:
				unreadableScores++
			case k < 2:
				tooFew++
			}
		}
		if run.MissingScores != unreadableScores+tooFew || run.TooFewScores != tooFew {
			t.Fatalf("run counters: missing %d, too few %d; recomputed %d and %d", run.MissingScores, run.TooFewScores, unreadableScores+tooFew, tooFew)
		}
		body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		text := regexp.MustCompile(`\s+`).ReplaceAllString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(body, " "), " ")
		for _, want := range []string{
			fmt.Sprintf("Unreadable scores %d ", unreadableScores),
			fmt.Sprintf("Scores with too few readable answers %d ", tooFew),
			fmt.Sprintf("Unreadable sampled answers %d of %d ", unreadableAnswers, answers),
			fmt.Sprintf("Unreadable scores: %d of %d answered scores", unreadableScores, n),
			fmt.Sprintf("Of the %d answers sampled for this criterion, those of its missing scores included, %d (%s) could not be read", answers, unreadableAnswers, pct(unreadableAnswers, answers)),
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the run page does not say %q", want)
			}
		}
		if strings.Contains(text, "Unreadable answers") {
			t.Errorf("the run page still labels a count of scores \"Unreadable answers\"")
		}

		// The stream's progress: the same score counts, by name.
		rec := env.get(fmt.Sprintf("/runs/%d/events", run.ID))
		m := regexp.MustCompile(`event: progress\ndata: (.*)\n`).FindStringSubmatch(rec.Body.String())
		if m == nil {
			t.Fatalf("no progress event: %d %.300q", rec.Code, rec.Body.String())
		}
		var p struct {
			Unreadable int `json:"unreadable"`
			TooFew     int `json:"too_few"`
			NoAnswer   int `json:"no_answer"`
		}
		must(t, json.Unmarshal([]byte(m[1]), &p))
		if p.Unreadable != unreadableScores || p.TooFew != tooFew || p.NoAnswer != 0 {
			t.Errorf("progress %+v, want unreadable %d, too few %d, no answer 0", p, unreadableScores, tooFew)
		}
		if rec.Code != http.StatusOK {
			t.Errorf("events: %d", rec.Code)
		}
	})
}
