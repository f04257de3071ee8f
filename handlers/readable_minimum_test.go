package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// readableOf is how many of a sample's 4 sampled ratings the test's judge
// writes readably, by the sample's place i in the dataset: one (fewer than
// half: too few), two (exactly half: enough), none (unreadable, as
// before), all four.
func readableOf(i int) int { return []int{1, 2, 0, 4}[i%4] }

// ratingOf is the k-th readable rating the test's judge gives sample i
// whose human rating is h: h itself, then h+1 (within 1 to 5), in turn.
func ratingOf(h float64, k int) float64 { return math.Min(5, h+float64(k%2)) }

// readableEndpoint is a CloserLook judge that answers each request for n
// ratings of "sample i" with readableOf(i) readable ratings (ratingOf) and
// the rest unreadable.
func readableEndpoint(t *testing.T, human []float64) string {
	var mu sync.Mutex
	sample := regexp.MustCompile(`sample (\d+)`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
			N        int                        `json:"n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m := sample.FindStringSubmatch(req.Messages[len(req.Messages)-1].Content)
		if m == nil {
			http.Error(w, "no sample in the request", http.StatusBadRequest)
			return
		}
		i, _ := strconv.Atoi(m[1])
		mu.Lock()
		defer mu.Unlock()
		var choices []map[string]any
		for k := range max(1, req.N) {
			text := "I would rather not say."
			if k < readableOf(i) {
				text = fmt.Sprintf("Analysis: it reads well enough.\nRating: %g", ratingOf(human[i], k))
			}
			choices = append(choices, map[string]any{"index": k, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "rater", "choices": choices,
			"usage": map[string]int{"prompt_tokens": 50, "completion_tokens": 10 * len(choices), "total_tokens": 50 + 10*len(choices)}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestFewestReadableAnswersForAScore: a CloserLook run whose judge writes
// most of a sample's sampled ratings unreadably scored that sample from the
// one rating it could read, counted neither as unreadable nor as short. A
// new run stores a fewest readable answers for a score (a half of the n
// asked for by default): below it the score is missing, with its reason,
// counted apart from the unreadable scores on the run page, the sample
// page, the JSON and CSV exports, the share link's page and the HTML
// reports; the correlations are over the rest. A run stored without the
// setting (as every run before it) keeps scoring from any one readable
// rating, with the figures it had.
func TestFewestReadableAnswersForAScore(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const n = 40
		d := env.ratedDataset("Partly readable", n)
		judge := models.Judge{WorkspaceID: env.ws.ID, Name: "Rater", BaseURL: readableEndpoint(t, d.human), Model: "rater", MaxConcurrency: 4, TimeoutSeconds: 10}
		must(t, env.db.SaveJudge(ctx, &judge))
		newRun := func(name string) models.Run {
			s := evaluator.DefaultSettings()
			s.NoCache = true
			ms := evaluator.DefaultMethodSettings()
			ms.Samples = 4
			return models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, JudgeID: &judge.ID, JudgeSnapshot: judge.Snapshot(),
				Name: name, Method: models.MethodCloserLook, Settings: s, MethodSettings: ms,
				RubricSnapshot: evaluator.Rubric{Task: "Rate the text.", Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
		}
		// A new run, launched as the launch form launches it.
		fresh := newRun("new")
		must(t, env.runner.Launch(ctx, &fresh))
		// A run as stored before the setting existed: prepared, then
		// stored without it.
		old := newRun("old")
		must(t, env.runner.PrepareRun(&old))
		old.MethodSettings.MinReadableShare = nil
		must(t, env.db.CreateRun(ctx, &old, env.runner.Enqueue))
		fresh, old = env.waitRun(fresh.ID, 90*time.Second), env.waitRun(old.ID, 90*time.Second)
		for _, r := range []models.Run{fresh, old} {
			if r.Status != models.RunFinishedWithGaps {
				t.Fatalf("run %s: %s (%s)", r.Name, r.Status, r.Error)
			}
		}
		if p := fresh.MethodSettings.MinReadableShare; p == nil || *p != 0.5 {
			t.Fatalf("the new run stored the fewest readable answers %v, want a half", p)
		}
		// The status's reason names every cause of the missing scores.
		if want := "20 of 40 scores are missing (failed calls, unreadable answers or too few readable answers)"; fresh.Error != want {
			t.Errorf("the new run's reason %q, want %q", fresh.Error, want)
		}
		if want := "10 of 40 scores are missing (failed calls or unreadable answers)"; old.Error != want {
			t.Errorf("the old run's reason %q, want %q", old.Error, want)
		}
		if old.MethodSettings.MinReadableShare != nil {
			t.Fatalf("the old run has a fewest readable answers stored: %v", *old.MethodSettings.MinReadableShare)
		}
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: fresh.ID})
		must(t, err)
		link := "/s/" + token

		for _, tc := range []struct {
			run  models.Run
			need int // readable ratings a score needs
			// settings is what the run page's settings say of it ("":
			// nothing, as before the setting).
			settings string
		}{
			{fresh, 2, "a score needs a half of the 4 answers readable (at least 2)"},
			{old, 1, ""},
		} {
			t.Run(tc.run.Name, func(t *testing.T) {
				// Recomputed here from what the judge wrote.
				var finals, xs, ys []float64
				var scored, unreadable, tooFew, unreadableAnswers int
				finals = make([]float64, n)
				for i := range n {
					k := readableOf(i)
					unreadableAnswers += 4 - k
					finals[i] = math.NaN()
					switch {
					case k == 0:
						unreadable++
					case k < tc.need:
						tooFew++
					default:
						sum := 0.0
						for j := range k {
							sum += ratingOf(d.human[i], j)
						}
						finals[i] = sum / float64(k)
						scored++
						xs, ys = append(xs, finals[i]), append(ys, d.human[i])
					}
				}
				page := fmt.Sprintf("/runs/%d", tc.run.ID)
				var ex struct {
					Report struct {
						Criteria []struct {
							Scored         int  `json:"scored"`
							Unreadable     int  `json:"unreadable"`
							NoAnswer       int  `json:"no_answer"`
							TooFewReadable *int `json:"too_few_readable"`
							Pearson        struct {
								Coef    float64 `json:"coef"`
								N       int     `json:"n"`
								Missing int     `json:"missing"`
							} `json:"pearson"`
						} `json:"criteria"`
						Provenance struct {
							MethodSettings map[string]any `json:"method_settings"`
						} `json:"provenance"`
					} `json:"report"`
				}
				rec := env.get(page + "/export.json")
				if rec.Code != http.StatusOK {
					t.Fatalf("export: %d", rec.Code)
				}
				must(t, json.Unmarshal(rec.Body.Bytes(), &ex))
				c := ex.Report.Criteria[0]
				if c.Scored != scored || c.Unreadable != unreadable || c.NoAnswer != 0 {
					t.Errorf("export: scored %d, unreadable %d, no answer %d; recomputed %d, %d, 0", c.Scored, c.Unreadable, c.NoAnswer, scored, unreadable)
				}
				switch {
				case tc.run.ID == fresh.ID && (c.TooFewReadable == nil || *c.TooFewReadable != tooFew):
					t.Errorf("export: too few readable %s, recomputed %d", intOrNull(c.TooFewReadable), tooFew)
				case tc.run.ID == old.ID && c.TooFewReadable != nil:
					t.Errorf("export of the old run counts too few readable (%d): it has no minimum", *c.TooFewReadable)
				}
				if want := textbookPearson(xs, ys); math.Abs(c.Pearson.Coef-want) > 1e-12 || c.Pearson.N != scored || c.Pearson.Missing != n-scored {
					t.Errorf("export: Pearson %v over %d (missing %d), recomputed %v over %d (missing %d)", c.Pearson.Coef, c.Pearson.N, c.Pearson.Missing, want, scored, n-scored)
				}
				if got, ok := ex.Report.Provenance.MethodSettings["min_readable_share"]; tc.run.ID == fresh.ID && got != 0.5 || tc.run.ID == old.ID && got != nil {
					t.Errorf("export's min_readable_share %v (present %v)", got, ok)
				}

				// The CSV: each sample's final score, its unreadable
				// count and (new run) its too-few count.
				rec = env.get(page + "/export.csv")
				lines, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
				must(t, err)
				head := lines[0]
				col := func(name string) int { return slices.Index(head, name) }
				tooFewCol := col("Quality too few readable")
				if (tooFewCol >= 0) != (tc.run.ID == fresh.ID) {
					t.Errorf("CSV header %q: a too-few column %v, want it only on the new run", head, tooFewCol >= 0)
				}
				for i, line := range lines[1:] {
					wantFinal := ""
					if !math.IsNaN(finals[i]) {
						wantFinal = strconv.FormatFloat(finals[i], 'g', -1, 64)
					}
					got := line[col("Quality final")]
					if g, err := strconv.ParseFloat(got, 64); (wantFinal == "") != (got == "") || (err == nil && math.Abs(g-finals[i]) > 1e-9) {
						t.Errorf("CSV %s final %q, recomputed %q", line[0], got, wantFinal)
					}
					k := readableOf(i)
					wantUnreadable := map[bool]string{true: "1", false: "0"}[k == 0]
					if got := line[col("Quality unreadable rounds")]; got != wantUnreadable {
						t.Errorf("CSV %s unreadable %q, want %s", line[0], got, wantUnreadable)
					}
					if tooFewCol >= 0 {
						want := map[bool]string{true: "1", false: "0"}[k > 0 && k < tc.need]
						if got := line[tooFewCol]; got != want {
							t.Errorf("CSV %s too few readable %q, want %s", line[0], got, want)
						}
					}
				}

				// The run page: its settings, and the counts apart.
				body := env.get(page).Body.String()
				switch {
				case tc.settings != "" && !strings.Contains(body, tc.settings):
					t.Errorf("the run page's settings do not say %q", tc.settings)
				case tc.settings == "" && strings.Contains(body, "answers readable (at least"):
					t.Errorf("the old run's settings state a fewest readable answers it never had")
				}
				tooFewLine := fmt.Sprintf("%d of %d answered scores (%s) are left missing: some of their sampled answers could be read, but fewer than this run&#39;s fewest readable answers for a score", tooFew, n, pct(tooFew, n))
				unreadableLine := fmt.Sprintf("%d of %d answered scores (%s) could not be read", unreadable, n, pct(unreadable, n))
				pages := []string{page, page + "/report.html"}
				if tc.run.ID == fresh.ID {
					pages = append(pages, link, link+"/report.html")
				}
				// The sampled answers' sentence counts every answer
				// sampled, those of the missing scores' samples included
				// (4 of each of the n samples), and says so.
				answersLine := fmt.Sprintf("Of the %d answers sampled for this criterion, those of its missing scores included, %d (%s) could not be read", 4*n, unreadableAnswers, pct(unreadableAnswers, 4*n))
				for _, p := range pages {
					body := env.get(p).Body.String()
					if !strings.Contains(body, answersLine) {
						t.Errorf("%s does not say %q", p, answersLine)
					}
					if !strings.Contains(body, unreadableLine) {
						t.Errorf("%s does not say %q", p, unreadableLine)
					}
					if has := strings.Contains(body, tooFewLine); has != (tooFew > 0) {
						t.Errorf("%s says %q: %v, want %v", p, tooFewLine, has, tooFew > 0)
					}
				}

				// The samples table of every report, the HTML reports'
				// included, says what a missing score may mean: too few
				// readable answers among it. The HTML reports give each
				// missing score that reason (the samples table's,
				// tableFinalMissing) in their table and in the sample's
				// section.
				cause := "too few of them could be read (fewer than the run&#39;s fewest readable answers for a score)"
				reason := html.EscapeString(tableFinalMissing(tc.run, -1))
				for _, p := range pages {
					body := env.get(p).Body.String()
					if has := strings.Contains(body, cause); has != (tc.need == 2) {
						t.Errorf("%s: a missing score's reason names too few readable answers: %v, want %v", p, has, tc.need == 2)
					}
					if !strings.HasSuffix(p, "report.html") {
						continue
					}
					short := `title="` + reason + `" data-testid="final-missing-short">no score`
					if got := strings.Count(body, short); got != n-scored {
						t.Errorf("%s: %d missing scores in the samples table with their reason %q, want %d", p, got, reason, n-scored)
					}
					section := `data-testid="final-missing">(judge: ` + reason + `)`
					if got := strings.Count(body, section); got != n-scored {
						t.Errorf("%s: %d samples' sections give a missing score its reason, want %d", p, got, n-scored)
					}
				}

				// The sample page of a sample with one readable rating of
				// four: missing for that reason (new run), or scored from
				// it (old run).
				sp := env.get(fmt.Sprintf("%s/samples/%d", page, d.rowIDs[0])).Body.String()
				why := "too few readable answers: only 1 of the 4 answers asked for could be read, fewer than the 2 this run asks for"
				if has := strings.Contains(sp, why); has != (tc.need == 2) {
					t.Errorf("sample page of s000 says %q: %v, want %v", why, has, tc.need == 2)
				}
				if tc.run.ID == fresh.ID {
					spl := env.get(fmt.Sprintf("%s/samples/%d", link, d.rowIDs[0])).Body.String()
					if !strings.Contains(spl, why) {
						t.Errorf("the shared sample page of s000 does not say %q", why)
					}
				}
			})
		}

		// The experiment page counts each run's too-few scores apart
		// from its unreadable ones in its failures (10 and 10 of the new
		// run's 40; the old run's 10 are all unreadable), the total the
		// same.
		exp := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Readable"}
		must(t, env.db.CreateExperiment(ctx, &exp))
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id IN ?", []int64{fresh.ID, old.ID}).Update("experiment_id", exp.ID).Error)
		body := env.get(fmt.Sprintf("/experiments/%d", exp.ID)).Body.String()
		for _, w := range []string{`title="0 failed batches + 10 unreadable scores + 10 with too few readable answers" data-testid="failures">20<`, `title="0 failed batches + 10 unreadable scores" data-testid="failures">10<`} {
			if !strings.Contains(body, w) {
				t.Errorf("the experiment page's failures do not say %q (they say %q)", w, regexp.MustCompile(`\d+ failed batches[^"]*`).FindAllString(body, -1))
			}
		}

		// The launch form offers the setting, a half chosen, and names
		// it when its value is not a share.
		form := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String()
		if !regexp.MustCompile(`<option value="0.5" selected>a half of them \(default\)</option>`).MatchString(form) {
			t.Errorf("the launch form does not offer a half as the default fewest readable answers")
		}
		bad := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), url.Values{"method": {"closerlook"}, "dataset": {strconv.FormatInt(d.ds.ID, 10)},
			"judge": {strconv.FormatInt(judge.ID, 10)}, "min_readable_share": {"lots"}})
		if !strings.Contains(bad.Body.String(), "Fewest readable answers for a score: “lots” is not a share") {
			t.Errorf("a launch with min_readable_share=lots is not refused by name: %d %.300s", bad.Code, bad.Body.String())
		}
	})
}

// pct is a share as the run page prints it (runPercent's whole percent
// above 1%).
func pct(k, n int) string { return strconv.Itoa(int(math.Round(100*float64(k)/float64(n)))) + "%" }

func intOrNull(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}
