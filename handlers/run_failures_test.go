package handlers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// failBatch turns a stored batch into one whose call failed with the given
// judge error kind, as the runner leaves it: no answer, every score
// missing, and the run's counters moved to match.
func (env *testEnv) failBatch(b models.RunBatch, kind, msg string) {
	env.t.Helper()
	t := env.t
	must(t, env.db.Gorm.Exec(`UPDATE run_batches SET status = ?, error = ?, error_kind = ?, response = '' WHERE id = ?`, models.BatchFailed, msg, kind, b.ID).Error)
	res := env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE batch_id = ? AND score IS NOT NULL`, b.ID)
	must(t, res.Error)
	must(t, env.db.Gorm.Exec(`UPDATE runs SET batches_failed = batches_failed + 1, missing_scores = missing_scores + ? WHERE id = ?`, res.RowsAffected, b.RunID).Error)
}

// TestDeadJudgeRunPage: a run whose calls got no answer names the causes
// on its page, links the failed calls, and counts "no answer" apart from
// "unreadable answer", without saying the answers "could not be read"
// when the judge never answered.
func TestDeadJudgeRunPage(t *testing.T) {
	const refused = "judge: could not reach the endpoint: check the base URL and that the server is running. Details: dial tcp 127.0.0.1:9: connect: connection refused; gave up after 3 attempts"
	const timedOut = "judge: the endpoint did not answer within 30s: raise the timeout or check the server is not overloaded"
	tests := []struct {
		name string
		// fail gives the kind each batch fails with ("" keeps it answered);
		// unreadable blanks one score of the first answered batch.
		fail       func(i int) string
		unreadable bool
		// noScores: the report (file and share link) shows one statement
		// instead of results, as the page does
		// (TestFailedRunWithoutScoresReportsSayWhatHappened).
		noScores bool
		status   string
		want     []string
		wantNot  []string
	}{
		{
			name:     "every call refused",
			fail:     func(int) string { return "network" },
			status:   models.RunFailed,
			noScores: true,
			// Without a single score the results are one statement of what
			// happened and what to do (TestFailedRunWithoutScoresSaysWhatToDo).
			want:    []string{`data-testid="failures"`, "could not connect to the judge (connection refused", "connection refused", `href="/runs/%d/batches?cause=network&amp;status=failed"`, `data-testid="failed-calls-link"`, `data-testid="no-scores"`, "every call this run sent failed"},
			wantNot: []string{"could not be read from the judge", "Unreadable</a></th>", "Unreadable ▲</a></th>", "samples with unreadable scores"},
		},
		{
			name: "some refused, one timed out, one answer unreadable",
			fail: func(i int) string {
				switch i {
				case 0:
					return "network"
				case 1:
					return "timeout"
				}
				return ""
			},
			unreadable: true,
			status:     models.RunFinishedWithGaps,
			want:       []string{"the judge did not answer in time (timeout)", "could not connect to the judge", "1 of ", "answered round score", "could not be read from the judge", "got no answer: the judge call failed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				runID := env.launch(env.demo().launchForm("1", "10"))
				env.waitRun(runID, 30*time.Second)
				bs, err := env.db.ListBatches(ctx, runID)
				if err != nil || len(bs) < 3 {
					t.Fatalf("batches: %v (%d), want at least 3", err, len(bs))
				}
				noAnswer, byKind := 0, map[string]int{}
				unreadableDone := false
				for i, b := range bs {
					kind := tt.fail(i)
					if kind == "" {
						if tt.unreadable && !unreadableDone {
							must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE id = (SELECT MIN(id) FROM run_scores WHERE batch_id = ?)`, b.ID).Error)
							must(t, env.db.Gorm.Exec(`UPDATE runs SET missing_scores = missing_scores + 1 WHERE id = ?`, runID).Error)
							unreadableDone = true
						}
						continue
					}
					msg := refused
					if kind == "timeout" {
						msg = timedOut
					}
					env.failBatch(b, kind, msg)
					noAnswer += len(b.RowIDs)
					byKind[kind]++
				}
				must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, error = ? WHERE id = ?`, tt.status, "every batch of round 1 failed (see the batches for its errors)", runID).Error)

				runPath := fmt.Sprintf("/runs/%d", runID)
				body := env.get(runPath).Body.String()
				for _, w := range tt.want {
					if strings.Contains(w, "%d") {
						w = fmt.Sprintf(w, runID)
					}
					if !strings.Contains(body, w) {
						t.Errorf("run page lacks %q", w)
					}
				}
				for _, w := range tt.wantNot {
					if strings.Contains(body, w) {
						t.Errorf("run page says %q, though the judge never answered", w)
					}
				}
				if got := fieldValue(body, "no-answer"); got != fmt.Sprint(noAnswer) {
					t.Errorf("no answer shows %q, want %d", got, noAnswer)
				}
				wantUnreadable := "0"
				if tt.unreadable {
					wantUnreadable = "1"
				}
				if got := fieldValue(body, "unreadable"); got != wantUnreadable {
					t.Errorf("unreadable answers shows %q, want %s", got, wantUnreadable)
				}

				// The report (standalone file and share link alike) counts
				// no answer apart from unreadable answers.
				rep := env.get(runPath + "/report.html").Body.String()
				if tt.noScores {
					if !strings.Contains(rep, `data-testid="no-scores"`) || strings.Contains(rep, `data-testid="report-unreadable"`) {
						t.Errorf("report of a run without a score does not say so in one statement")
					}
				} else {
					// One paragraph per criterion; together they count every
					// score without an answer.
					sum := 0
					for _, m := range metricTexts(rep, "report-no-answer") {
						var n int
						if _, err := fmt.Sscanf(m, "No answer: %d of ", &n); err != nil {
							t.Errorf("report's no answer reads %q", m)
						}
						sum += n
					}
					if sum != noAnswer {
						t.Errorf("report's no answer paragraphs count %d scores, want %d", sum, noAnswer)
					}
					unr := metricText(rep, "report-unreadable")
					if tt.unreadable {
						if !strings.HasPrefix(unr, "Unreadable scores: 1 of ") {
							t.Errorf("report's unreadable answers read %q, want 1 unreadable", unr)
						}
					} else if strings.Contains(unr, "could not be read") || !strings.HasPrefix(unr, "Unreadable scores: ") {
						t.Errorf("report's unreadable answers read %q, though the judge never answered", unr)
					}
				}

				// The failed calls, all and by cause, without script.
				lists := []struct {
					query string
					want  int
				}{
					{"?status=failed", 0},
					{"?status=failed&cause=network", byKind["network"]},
					{"?status=failed&cause=timeout", byKind["timeout"]},
					{"", len(bs)},
				}
				lists[0].want = byKind["network"] + byKind["timeout"]
				for _, l := range lists {
					rec := env.get(runPath + "/batches" + l.query)
					if rec.Code != 200 {
						t.Fatalf("batches%s: status %d", l.query, rec.Code)
					}
					page := rec.Body.String()
					if got := strings.Count(page, `data-testid="batch-row"`); got != l.want {
						t.Errorf("batches%s lists %d calls, want %d", l.query, got, l.want)
					}
					if strings.Contains(l.query, "cause=network") && l.want > 0 && !strings.Contains(page, "connection refused") {
						t.Errorf("batches%s does not show the error", l.query)
					}
				}
			})
		})
	}
}

var tagRe = regexp.MustCompile(`<[^>]*>`)

// metricTexts are the texts, tags removed, of the paragraphs marked
// data-testid=id, in page order.
func metricTexts(body, id string) []string {
	var out []string
	mark := `data-testid="` + id + `"`
	for {
		i := strings.Index(body, mark)
		if i < 0 {
			return out
		}
		body = body[i:]
		body = body[strings.Index(body, ">")+1:]
		p := body
		if j := strings.Index(p, "</p>"); j >= 0 {
			p = p[:j]
		}
		out = append(out, strings.Join(strings.Fields(tagRe.ReplaceAllString(p, "")), " "))
	}
}

// metricText is the first of metricTexts ("" when there is none).
func metricText(body, id string) string {
	if ts := metricTexts(body, id); len(ts) > 0 {
		return ts[0]
	}
	return ""
}

var fieldRe = regexp.MustCompile(`data-testid="([a-z-]+)">([^<]*)<`)

// fieldValue is the text of the first element marked data-testid=id.
func fieldValue(body, id string) string {
	for _, m := range fieldRe.FindAllStringSubmatch(body, -1) {
		if m[1] == id {
			return m[2]
		}
	}
	return ""
}
