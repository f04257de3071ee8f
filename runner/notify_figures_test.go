package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/internal/shareddata"
	"github.com/batcheval/batcheval/models"
)

// TestWebhookFiguresRecomputed runs BatchEval (two rounds, batches of 10)
// on the first 40 FED dialogues, two criteria, with a judge that leaves
// some scores out of its answers and answers the repair requests without
// any (so they stay unreadable), and Overall's rating left empty on three
// dialogues. The run-end message is checked against figures recomputed
// from the stored round scores and the FED file, sharing no code with the
// product: each criterion's Pearson r of the final scores (the mean of a
// sample's readable rounds) with the humans over the samples having both,
// written in the text to three decimals; the batches done and failed and
// the scores missing, in the fields and in the text's sentence.
func TestWebhookFiguresRecomputed(t *testing.T) {
	path, ok := shareddata.Path("fed-dialog.jsonl")
	if !ok {
		t.Skip("fed-dialog.jsonl is absent; this test needs the shared datasets checkout")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	type fedRow struct {
		ID      string             `json:"id"`
		Context string             `json:"context"`
		Scores  map[string]float64 `json:"scores"`
	}
	var fed []fedRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() && len(fed) < 40 {
		var r fedRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		fed = append(fed, r)
	}
	f.Close()
	crits := []string{"Coherent", "Overall"}
	unrated := map[int]bool{2: true, 19: true, 33: true}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, len(fed))
		for i, r := range fed {
			ratings := map[string]*float64{}
			for _, c := range crits {
				if c == "Overall" && unrated[i] {
					ratings[c] = nil
					continue
				}
				v := r.Scores[c]
				ratings[c] = &v
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "context": r.Context}, Ratings: ratings}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED 40", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: crits}
		if err := env.db.CreateDataset(ctx, &ds, rows); err != nil {
			t.Fatal(err)
		}
		stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		index := map[int64]int{}
		for i, r := range stored {
			index[r.ID] = i
		}
		rc := newReceiver(t)
		if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL + "/hook",
			BaseURL: "https://eval.example.test", OnFinished: true, OnFailed: true}); err != nil {
			t.Fatal(err)
		}
		fj := newFakeJudge(t, simjudge.Options{Seed: 5, MissRate: 0.15}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if c.Repair {
				writeCompletion(w, "I would rather not say.")
				return true
			}
			return false
		})
		r := env.startRunner(Config{Webhooks: WebhookConfig{AllowLoopback: true, Backoff: 5 * time.Millisecond, Timeout: 5 * time.Second}})
		run := env.newRun(fj.URL(), 2, 2, 10)
		run.DatasetID = ds.ID
		var ec []evaluator.Criterion
		for _, c := range crits {
			ec = append(ec, evaluator.Criterion{Name: c, Description: "Is the dialogue " + strings.ToLower(c) + "?", Lo: 1, Hi: 3, HumanColumn: c})
		}
		run.RubricSnapshot = evaluator.Rubric{Task: "Rate the dialogues.", Criteria: ec}
		run = env.launch(r, run)
		run = env.waitFinished(run.ID, 60*time.Second)
		env.waitJobDone(run)
		r.WaitNotifications()
		got := rc.messages()
		if len(got) != 1 {
			t.Fatalf("%d messages, want 1", len(got))
		}
		m := got[0]
		t.Logf("message: %s", m.Text)

		// What the judge gave, as stored.
		sum := make([][]float64, len(crits))
		cnt := make([][]int, len(crits))
		for ci := range crits {
			sum[ci], cnt[ci] = make([]float64, len(fed)), make([]int, len(fed))
		}
		missing := 0
		for _, s := range env.scores(run.ID) {
			if s.Score == nil {
				missing++
				continue
			}
			sum[s.CriterionIndex][index[s.RowID]] += *s.Score
			cnt[s.CriterionIndex][index[s.RowID]]++
		}
		done, failed := 0, 0
		for _, b := range env.batches(run.ID) {
			switch b.Status {
			case models.BatchDone:
				done++
			case models.BatchFailed:
				failed++
			}
		}
		if missing == 0 {
			t.Fatal("the judge left no score unreadable: the test needs some")
		}
		wantStatus := models.RunFinishedWithGaps
		if m.Event != EventRunFinished || m.Run.Status != wantStatus || m.Run.BatchesDone != done || m.Run.BatchesFailed != failed || m.Run.MissingScores != missing {
			t.Errorf("message %s, run %s, %d batches done, %d failed, %d scores missing; recomputed %s, %s, %d, %d, %d",
				m.Event, m.Run.Status, m.Run.BatchesDone, m.Run.BatchesFailed, m.Run.MissingScores, EventRunFinished, wantStatus, done, failed, missing)
		}
		if want := fmt.Sprintf(" %d scores could not be read.", missing); !strings.Contains(m.Text, want) {
			t.Errorf("text %q lacks %q", m.Text, want)
		}
		if len(m.Run.Criteria) != len(crits) {
			t.Fatalf("%d criteria in the message, want %d", len(m.Run.Criteria), len(crits))
		}
		for ci, name := range crits {
			var xs, ys []float64
			for i, r := range fed {
				if cnt[ci][i] == 0 || (name == "Overall" && unrated[i]) {
					continue
				}
				xs, ys = append(xs, sum[ci][i]/float64(cnt[ci][i])), append(ys, r.Scores[name])
			}
			n := float64(len(xs))
			var mx, my float64
			for i := range xs {
				mx, my = mx+xs[i], my+ys[i]
			}
			mx, my = mx/n, my/n
			var sxy, sxx, syy float64
			for i := range xs {
				sxy += (xs[i] - mx) * (ys[i] - my)
				sxx += (xs[i] - mx) * (xs[i] - mx)
				syy += (ys[i] - my) * (ys[i] - my)
			}
			want := sxy / math.Sqrt(sxx*syy)
			c := m.Run.Criteria[ci]
			if c.Name != name || c.Pearson == nil || math.Abs(*c.Pearson-want) > 1e-12 {
				t.Errorf("criterion %d: %s, Pearson %v; recomputed %s, %v", ci, c.Name, c.Pearson, name, want)
			}
			// The text reads it in the run page's sentence, which names
			// it to two decimals, rounded half away from zero, with the
			// page's minus sign and no negative zero.
			text := strconv.FormatFloat(math.Round(want*100)/100, 'f', 2, 64)
			if text == "-0.00" {
				text = "0.00"
			}
			if wt := fmt.Sprintf("(Pearson r = %s)", strings.Replace(text, "-", "−", 1)); !strings.Contains(m.Text, " "+name+": ") || !strings.Contains(m.Text, wt) {
				t.Errorf("text %q lacks %s: ...%s (r = %v)", m.Text, name, wt, want)
			}
		}
		// And it is the run page's reading, word for word: the stored
		// summary's, which the page shows.
		for _, w := range pageReadings(t, env, run) {
			if !strings.Contains(m.Text, w) {
				t.Errorf("text %q lacks the run page's %q", m.Text, w)
			}
		}
	})
}
