package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestFailedCallsAreNotUnreadableAnswers: a BatchEval run whose judge
// leaves one sample out of every answer (5 unreadable round scores) and
// refuses one batch of round 2 (10 round scores with no answer). The run
// page said "5 of 50 answered round scores (10%) could not be read" and
// "10 round scores got no answer", but the JSON export (and the API) said
// unreadable 15 and unreadable_rate 0.25, the CSV counted the refused
// batch's rounds among its "unreadable rounds", and the experiment page
// counted the refused batch twice among the failures (1 failed batch + 15
// unreadable scores = 16). Every surface now counts 5 unreadable answers
// and 10 scores with no answer.
func TestFailedCallsAreNotUnreadableAnswers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		if len(rows) != 30 {
			t.Fatalf("the demo has %d rows, this test wants 30", len(rows))
		}
		// The first row's fields as the prompt shows them: the batch of
		// round 2 that holds it is refused.
		var marker string
		for _, f := range rows[0].Sample(d.dataset.Fields).Fields {
			if len(f.Value) > len(marker) {
				marker = f.Value
			}
		}
		label := regexp.MustCompile(`(?m)^Sample(\d+):`)
		judge := func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Messages []struct{ Role, Content string } `json:"messages"`
				Seed     int64                            `json:"seed"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			prompt := req.Messages[1].Content
			if req.Seed == 2 && strings.Contains(prompt, marker) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"error":{"message":"this batch is refused","type":"invalid_request_error"}}`)
				return
			}
			// Every label but Sample1, in the answer and in its repair.
			var s []string
			for k := 2; k <= len(label.FindAllString(prompt, -1)); k++ {
				s = append(s, fmt.Sprintf("Sample%d:%d", k, 1+k%3))
			}
			text := "Analysis: fine.\nFloat Scores: [" + strings.Join(s, ", ") + "]"
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, text)
		}
		form := d.launchForm("2", "10")
		form.Del("criteria")
		form.Add("criteria", "0")
		form.Set("reuse_answers_shown", "1")
		run, _ := env.runOnFakeJudge("Half-refusing judge", judge, form)
		if run.BatchesFailed != 1 || run.MissingScores != 15 {
			t.Fatalf("run %s with %d failed batches and %d missing scores, want 1 and 15 (%s)", run.Status, run.BatchesFailed, run.MissingScores, run.Error)
		}

		page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if !strings.Contains(page, "5 of 50 answered round scores (10%) could not be read") || !strings.Contains(page, "10 round scores got no answer") {
			t.Fatalf("the run page does not count 5 unreadable of 50 answered and 10 without answer")
		}

		for _, path := range []string{fmt.Sprintf("/runs/%d/export.json", run.ID), fmt.Sprintf("/api/v1/runs/%d/results", run.ID)} {
			var exp struct {
				Report struct {
					Criteria []struct {
						Scored         int      `json:"scored"`
						Unreadable     int      `json:"unreadable"`
						NoAnswer       *int     `json:"no_answer"`
						UnreadableRate *float64 `json:"unreadable_rate"`
					} `json:"criteria"`
				} `json:"report"`
			}
			must(t, json.Unmarshal(env.get(path).Body.Bytes(), &exp))
			c := exp.Report.Criteria[0]
			if c.Scored != 45 || c.Unreadable != 5 || c.NoAnswer == nil || *c.NoAnswer != 10 || c.UnreadableRate == nil || *c.UnreadableRate != 0.1 {
				show := func(v any) string {
					b, _ := json.Marshal(v)
					return string(b)
				}
				t.Errorf("%s: scored %d, unreadable %d, no_answer %s, unreadable_rate %s; want 45, 5, 10 and 0.1", path, c.Scored, c.Unreadable, show(c.NoAnswer), show(c.UnreadableRate))
			}
		}

		recs, err := csv.NewReader(strings.NewReader(env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String())).ReadAll()
		must(t, err)
		col := -1
		for i, h := range recs[0] {
			if strings.HasSuffix(h, " unreadable rounds") {
				col = i
			}
		}
		if col < 0 {
			t.Fatalf("no unreadable rounds column in %q", recs[0])
		}
		sum := 0
		for _, r := range recs[1:] {
			n, err := strconv.Atoi(r[col])
			must(t, err)
			sum += n
		}
		if sum != 5 {
			t.Errorf("the CSV's unreadable rounds add up to %d, want 5", sum)
		}

		exp := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, Name: "Failures"}
		must(t, env.db.CreateExperiment(ctx, &exp))
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("experiment_id", exp.ID).Error)
		body := env.get(fmt.Sprintf("/experiments/%d", exp.ID)).Body.String()
		if !strings.Contains(body, "1 failed batches + 5 unreadable scores") {
			m := regexp.MustCompile(`\d+ failed batches \+ \d+ unreadable scores`).FindString(body)
			t.Errorf("the experiment page's failures say %q, want 1 failed batches + 5 unreadable scores", m)
		}
	})
}
