package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// A run whose every judge call failed (QA: a judge answering 400) shows
// one statement of what happened and what to do — check the judge with
// Test connection, then resume or launch again — instead of empty
// results (a histogram of "0 samples in 10 bins", a scatter of "0
// points", "Entropy — bits", tables of "undefined", rounds of dashes, and
// answer-format advice though nothing was answered). Its progress says
// how many calls were tried and that they failed, not "2 / 10 (20%)"; the
// runs list says "no scores", not "r = undefined".
func TestFailedRunWithoutScoresSaysWhatToDo(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run, j := env.runOnFakeJudge("Rejecting judge", refusingJudge(http.StatusBadRequest, "this model does not take these parameters"), env.demo().launchForm("5", "15"))
		id := run.ID
		if run.Status != models.RunFailed || run.BatchesFailed == 0 || run.BatchesDone != run.BatchesFailed {
			t.Fatalf("run %s with %d of %d batches done, %d failed: want a failed run whose every tried batch failed",
				run.Status, run.BatchesDone, run.BatchesTotal, run.BatchesFailed)
		}
		body := env.get(fmt.Sprintf("/runs/%d", id)).Body.String()
		failed := "all failed"
		if run.BatchesFailed == 2 {
			failed = "both failed"
		}
		tried := fmt.Sprintf("%d of %d batches tried, %s", run.BatchesDone, run.BatchesTotal, failed)
		for _, want := range []string{
			`data-testid="no-scores"`,
			"every call this run sent failed (" + tried + ")",
			fmt.Sprintf(`href="/judges/%d" data-testid="no-scores-judge"`, j.ID),
			"Test connection",
			fmt.Sprintf(`href="/projects/%d/runs/new" data-testid="no-scores-launch"`, env.project.ID),
			`data-testid="progress-tried">` + tried + "<",
			"<title>0% done</title>",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("run page lacks %q", want)
			}
		}
		for _, not := range []string{`data-testid="results"`, "0 samples in 10 bins", "0 points", "Entropy", ">undefined<",
			"strays from the requested answer format", `data-field="percent"`} {
			if strings.Contains(body, not) {
				t.Errorf("run page shows %q for a run without a score", not)
			}
		}
		runs := env.get("/runs").Body.String()
		row := regexp.MustCompile(fmt.Sprintf(`(?s)href="/runs/%d".*?data-testid="run-agreement">([^<]*)<`, id)).FindStringSubmatch(runs)
		if row == nil || row[1] != "no scores" {
			t.Errorf("runs list agreement %q, want %q", row, "no scores")
		}
	})
}

// Where one criterion's calls all failed and another's were answered,
// only the answered criterion gets the advice on the answers' format.
func TestFormatAdviceOnlyWhereTheJudgeAnswered(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		id := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(id, 60*time.Second)
		bs, err := env.db.ListBatches(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.CriterionIndex == 0 {
				env.failBatch(b, "network", "judge: could not reach the endpoint")
			}
		}
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ? WHERE id = ?`, models.RunFinishedWithGaps, id).Error)
		run, err := env.db.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d", id), nil).WithContext(env.localCtx())
		c := env.e.NewContext(req, httptest.NewRecorder())
		noAnswer, _, err := env.h.runFailures(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		v := web.RunView{Run: run, NoAnswer: noAnswer}
		if err := env.h.runResults(c, run, &v, true); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := web.RunPage(v).Render(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		cards := regexp.MustCompile(`(?s)data-testid="criterion-card".*?data-testid="unreadable-rate">(.*?)</p>`).FindAllStringSubmatch(buf.String(), -1)
		if len(cards) < 2 {
			t.Fatalf("%d criterion cards, want at least 2", len(cards))
		}
		if strings.Contains(cards[0][1], "answer format") {
			t.Errorf("criterion without an answer gets format advice: %s", cards[0][1])
		}
		if !strings.Contains(cards[1][1], "answer format") {
			t.Errorf("answered criterion lacks the format advice: %s", cards[1][1])
		}
	})
}
