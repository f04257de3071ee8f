package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestReviewQueueCountsRecomputed: a run of the simulated judge on the
// first 20 FED dialogues (Coherent and Overall on 1 to 3), rated in the
// browser with a history: Ann rates four samples (one twice), rates a
// fifth and withdraws it, rates a sixth on another scale and one sample
// of Overall; Bob rates two; Cid only comments. Recomputed from that
// history by the rules the pages state (a reviewer's latest review of a
// sample on the criterion's scale counts when it holds a rating):
//
//   - the queue's "you rated N of 20" for Ann, in each order;
//   - the place it opens at: every earlier place holds a sample Ann rated,
//     that one a sample she did not;
//   - the run page's "N browser ratings are not in it yet", before the
//     recompute with them (every current rating), after it (none), and
//     after one more.
func TestReviewQueueCountsRecomputed(t *testing.T) {
	const n = 20
	fed := readFED(t, n)
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, n)
		for i, r := range fed {
			coherent, overall := r.Scores["Coherent"], r.Scores["Overall"]
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "context": r.Context},
				Ratings: map[string]*float64{"Coherent": &coherent, "Overall": &overall}}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED 20", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: []string{"Coherent", "Overall"}}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		must(t, err)
		d := env.demo()
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 2, 10
		crits := []evaluator.Criterion{
			{Name: "Coherent", Description: "Is the dialogue coherent?", Lo: 1, Hi: 3, HumanColumn: "Coherent"},
			{Name: "Overall", Description: "Overall quality.", Lo: 1, Hi: 3, HumanColumn: "Overall"},
		}
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "FED reviews",
			Method: models.MethodBatchEval, Settings: s, RubricSnapshot: evaluator.Rubric{Task: "Rate the dialogues.", Criteria: crits},
			JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
		must(t, env.runner.Launch(ctx, &run))
		run = env.waitRun(run.ID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", run.Status, run.Error)
		}

		type review struct {
			who    string
			row    int
			crit   int
			score  float64 // 0: none (a comment, or a withdrawal)
			lo, hi float64
		}
		history := []review{
			{"Ann", 0, 0, 2, 1, 3}, {"Ann", 1, 0, 1, 1, 3}, {"Bob", 0, 0, 3, 1, 3}, {"Ann", 1, 0, 3, 1, 3},
			{"Ann", 2, 0, 2, 1, 3}, {"Ann", 3, 0, 3, 1, 3}, {"Ann", 2, 0, 0, 1, 3}, {"Ann", 4, 0, 4, 0, 5},
			{"Ann", 5, 0, 1, 1, 3}, {"Bob", 6, 0, 2, 1, 3}, {"Ann", 7, 1, 2, 1, 3}, {"Cid", 8, 0, 0, 1, 3},
		}
		add := func(r review) {
			t.Helper()
			rr := models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: ds.ID, RowID: stored[r.row].ID, Criterion: crits[r.crit].Name,
				HumanColumn: crits[r.crit].HumanColumn, Reviewer: r.who, RunID: &run.ID, Lo: r.lo, Hi: r.hi, Comment: "seen"}
			if r.score != 0 {
				v := r.score
				rr.Score = &v
			}
			_, err := env.db.AddReviewRating(ctx, rr)
			must(t, err)
		}
		for _, r := range history {
			add(r)
		}
		// current: the latest review of each (reviewer, row, criterion) on 1 to 3.
		current := func() map[[3]string]review {
			out := map[[3]string]review{}
			for _, r := range history {
				if r.lo == 1 && r.hi == 3 {
					out[[3]string{r.who, strconv.Itoa(r.row), strconv.Itoa(r.crit)}] = r
				}
			}
			return out
		}
		annRated := map[string]bool{}
		ratings := 0
		for k, r := range current() {
			if r.score == 0 {
				continue
			}
			ratings++
			if k[0] == "Ann" && r.crit == 0 {
				annRated[fed[r.row].ID] = true
			}
		}
		if len(annRated) != 4 || ratings != 7 {
			t.Fatalf("the history gives Ann %d rated samples and %d ratings in all, want 4 and 7", len(annRated), ratings)
		}

		ann := &http.Cookie{Name: reviewerCookie, Value: "Ann"}
		queue := fmt.Sprintf("/datasets/%d/review", ds.ID)
		shownID := regexp.MustCompile(`<h2>Sample ([^ <]+) <a`)
		for _, order := range []string{"disagreement", "uncertain", "random"} {
			q := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {"0"}, "order": {order}, "seed": {"1"}}
			body := env.send(http.MethodGet, queue+"?"+q.Encode(), nil, "", ann).Body.String()
			if want := fmt.Sprintf(`data-testid="review-rated">%d<`, len(annRated)); !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(body) {
				t.Errorf("%s queue: Ann's count is not %d:\n%s", order, len(annRated), pageText(body))
			}
			pos := regexp.MustCompile(`data-testid="review-position">(\d+)<`).FindStringSubmatch(body)
			id := shownID.FindStringSubmatch(body)
			if pos == nil || id == nil {
				t.Fatalf("%s queue: no place or sample shown", order)
			}
			opened, _ := strconv.Atoi(pos[1])
			if annRated[id[1]] {
				t.Errorf("%s queue opens at place %d, sample %s, which Ann rated", order, opened, id[1])
			}
			for i := 0; i < opened-1; i++ {
				q.Set("i", strconv.Itoa(i))
				m := shownID.FindStringSubmatch(env.send(http.MethodGet, queue+"?"+q.Encode(), nil, "", ann).Body.String())
				if m == nil || !annRated[m[1]] {
					t.Errorf("%s queue: place %d (%v) comes before the first unrated one, yet Ann did not rate it", order, i+1, m)
				}
			}
		}

		pending := func() int {
			t.Helper()
			body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
			m := regexp.MustCompile(`data-testid="human-source-pending">(\d+) browser ratings? (?:is|are) not in it yet`).FindStringSubmatch(body)
			if m == nil {
				return 0
			}
			k, _ := strconv.Atoi(m[1])
			return k
		}
		if got := pending(); got != ratings {
			t.Errorf("before the recompute the run page says %d browser ratings are not in the report, recomputed %d", got, ratings)
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		if got := pending(); got != 0 {
			t.Errorf("after the recompute the run page says %d browser ratings are not in the report, want 0", got)
		}
		more := review{"Bob", 9, 1, 1, 1, 3}
		history = append(history, more)
		add(more)
		if got := pending(); got != 1 {
			t.Errorf("after one more rating the run page says %d are not in the report, want 1", got)
		}
	})
}
