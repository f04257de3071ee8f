package handlers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestSampledUnreadableOnEveryReport: the run page of a run that samples
// its judge's answers (CloserLook, G-Eval's sampling) says how many of the
// sampled answers behind the scores could not be read; its share link and
// the downloaded HTML reports (the run's and the link's) said only "0 of
// 12 answered scores (0%) could not be read", for a judge 10% of whose
// answers were unreadable.
func TestSampledUnreadableOnEveryReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Sampled", 12)
		run := env.storedRun(d, "Sampled answers", noisy(d.human, 0.5, 3), func(r *models.Run) { r.Method = models.MethodCloserLook })
		// The stored run's one unit, as CloserLook's: 20 answers asked for
		// each of its 12 samples, 24 unreadable.
		must(t, env.db.Gorm.Exec(`UPDATE run_batches SET details = ? WHERE run_id = ?`,
			`{"method":"closerlook","asked":240,"answered":240,"ratings":[3],"unreadable":24}`, run.ID).Error)
		counts, err := env.db.SampleWiseCountsOf(ctx, run.ID)
		must(t, err)
		if got := counts.Answers[0]; got != (models.SampledAnswers{Answers: 240, Unreadable: 24}) {
			t.Fatalf("the stored unit counts %+v, want 240 answers and 24 unreadable", got)
		}
		// After the unreadable scores sentence, a space apart.
		want := regexp.MustCompile(`answers\.\s+<span data-testid="(report-)?sampled-unreadable">Of the 240 answers sampled for this criterion, those of its missing scores included, 24 \(10%\) could not be read`)
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		must(t, err)
		link := "/s/" + token
		for _, page := range []string{fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/runs/%d/report.html", run.ID), link, link + "/report.html"} {
			rec := env.get(page)
			if rec.Code != 200 {
				t.Errorf("%s: %d", page, rec.Code)
				continue
			}
			if !want.MatchString(rec.Body.String()) {
				t.Errorf("%s does not say %s", page, want)
			}
		}
	})
}

// TestGEvalSourcesOnEveryReport: the run page of a G-Eval run says how its
// scores were estimated (method.md: "report which way was used"), from
// the endpoint's log-probabilities or from sampled answers; its share link
// and the downloaded HTML reports did not say it.
func TestGEvalSourcesOnEveryReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("G-Eval sampled", 12)
		run := env.storedRun(d, "G-Eval", noisy(d.human, 0.5, 4), func(r *models.Run) {
			r.Method = models.MethodGEval
			r.MethodSettings.Samples = 20
		})
		must(t, env.db.Gorm.Exec(`UPDATE run_batches SET details = ? WHERE run_id = ?`,
			`{"method":"geval","source":"samples","probabilities":{"3":1},"used":20,"total":20,"asked":20,"answered":20}`, run.ID).Error)
		want := "Every score (1) was estimated from 20 sampled answers (log-probabilities were not asked for)."
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		must(t, err)
		link := "/s/" + token
		for _, page := range []string{fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/runs/%d/report.html", run.ID), link, link + "/report.html"} {
			rec := env.get(page)
			if rec.Code != 200 {
				t.Errorf("%s: %d", page, rec.Code)
				continue
			}
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("%s does not say %q", page, want)
			}
			if page != fmt.Sprintf("/runs/%d", run.ID) && strings.Contains(rec.Body.String(), "the judge's calls for each sample") {
				t.Errorf("%s points to the judge's calls, which a read-only report does not show", page)
			}
		}
	})
}
