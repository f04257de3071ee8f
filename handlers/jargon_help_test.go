package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// These tests hold the plain explanations of the terms QA found a
// non-engineer could not follow, each next to where the term is shown.

// testidBlock is the element marked data-testid=id, from its opening tag
// to the first closing tag of its kind ("" when absent): enough to read a
// help text, which nests no element of its own kind.
func testidBlock(body, id string) string {
	i := strings.Index(body, `data-testid="`+id+`"`)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(body[:i], "<")
	tag, _, _ := strings.Cut(body[start+1:i], " ")
	rest := body[start:]
	if j := strings.Index(rest, "</"+tag+">"); j >= 0 {
		return rest[:j]
	}
	return rest
}

// checkExplained fails for each testid that is missing from body or whose
// element lacks one of the phrases.
func checkExplained(t *testing.T, body string, want map[string][]string) {
	t.Helper()
	for id, phrases := range want {
		block := testidBlock(body, id)
		if block == "" {
			t.Errorf("no element %q on the page", id)
			continue
		}
		for _, p := range phrases {
			if !strings.Contains(block, p) {
				t.Errorf("%s lacks %q: %s", id, p, block)
			}
		}
	}
}

func TestJudgeFormExplainsItsSettings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		sim := env.simulatedJudge()
		want := map[string][]string{
			"temperature-help": {"How freely the judge words its answers", "steadier"},
			"top-p-help":       {"likeliest choices", "0.9 is 90%"},
			"key-env-help":     {"For whoever runs the server", "operator must first allow the name in " + models.KeyVarsSetting},
			"concurrency-help": {"How many calls one run sends to the judge at the same time", "too many requests"},
		}
		for _, path := range []string{"/judges/new?preset=OpenAI", "/judges/new"} {
			t.Run(path, func(t *testing.T) {
				rec := env.get(path)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s = %d", path, rec.Code)
				}
				body := rec.Body.String()
				checkExplained(t, body, want)
				// Each help line is tied to its field for screen readers.
				for _, field := range []string{"judge-temperature", "judge-top-p", "judge-api-key-env", "judge-concurrency"} {
					if !strings.Contains(body, `aria-describedby="`+field+`-help"`) || !strings.Contains(body, `id="`+field+`-help"`) {
						t.Errorf("field %s is not described by its help line", field)
					}
				}
			})
		}
		// The simulated judge shows only the concurrency, still explained.
		body := env.get(fmt.Sprintf("/judges/%d/edit", sim.ID)).Body.String()
		checkExplained(t, body, map[string][]string{"concurrency-help": want["concurrency-help"]})
	})
}

// TestLaunchFormExplainsTemperatureAndTopP: the launch form says what
// temperature and top_p do, in the judge form's words, not only their
// defaults, and ties each line to its field.
func TestLaunchFormExplainsTemperatureAndTopP(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.demo()
		rec := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("launch form: %d", rec.Code)
		}
		body := rec.Body.String()
		checkExplained(t, body, map[string][]string{
			"launch-temperature-help": {"How freely the judge words its answers", "steadier", "default 0.2"},
			"launch-top-p-help":       {"likeliest choices", "0.9 is 90%", "lower is steadier", "Default 0.9"},
		})
		for _, id := range []string{"launch-temperature-help", "launch-top-p-help"} {
			if !strings.Contains(body, `aria-describedby="`+id+`"`) {
				t.Errorf("no field is described by %s", id)
			}
		}
	})
}

// entropyRe is the entropy figure in the format it had before it was
// explained: two decimals, then "bits".
var entropyRe = regexp.MustCompile(`Entropy [0-9]+\.[0-9]{2} bits`)

func TestRunPageExplainsSettingsAndFigures(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		runID := env.launch(d.launchForm("2", "10"))
		if run := env.waitRun(runID, 60*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run status %s (%s)", run.Status, run.Error)
		}
		body := env.get(fmt.Sprintf("/runs/%d", runID)).Body.String()
		if s := testidBlock(body, "settings-summary"); !strings.Contains(s, "top_p 0.9") || !strings.Contains(s, "two-stage prompt") || !strings.Contains(s, "heterogeneous batches") {
			t.Fatalf("settings line changed: %s", s)
		}
		checkExplained(t, body, map[string][]string{
			"settings-help": {
				"What these settings mean",
				"Temperature and top_p", "steadier",
				"Seed", "repeated",
				"Two-stage prompt", "first writes an analysis of every sample",
				"Heterogeneous batches", "mixes samples that scored low with samples that scored high",
			},
			"entropy":            {"how evenly the final scores spread over the scale", "Higher is usually better"},
			"batch-bias-help":    {"depends on which samples shared its batch", "Heterogeneous batches"},
			"decomposition-help": {"lower is better", "squared distance from the human ratings"},
		})
		// The figures keep their format.
		if !entropyRe.MatchString(body) {
			t.Errorf("entropy figure lost its format (Entropy 0.00 bits)")
		}
		if !strings.Contains(body, "Average batch bias ") || !strings.Contains(body, "Error of the mean score ") {
			t.Errorf("batch bias or decomposition figures are gone")
		}
	})
}

// TestSharedReportExplainsDecomposition: the shared and downloaded run
// reports explain the ensemble decomposition as the run page does, with
// the same words.
func TestSharedReportExplainsDecomposition(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("2", "10"))
		if run := env.waitRun(runID, 60*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run status %s (%s)", run.Status, run.Error)
		}
		runPage := env.get(fmt.Sprintf("/runs/%d", runID)).Body.String()
		want := testidBlock(runPage, "decomposition-help")
		if !strings.Contains(want, "squared distance from the human ratings") {
			t.Fatalf("the run page lost its explanation: %q", want)
		}
		rec := env.postForm("/shares", url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runID, 10)}, "expires": {"7d"}})
		body := rec.Body.String()
		i := strings.Index(body, "/s/")
		if rec.Code != http.StatusOK || i < 0 {
			t.Fatalf("share: %d %s", rec.Code, body)
		}
		link := body[i : i+strings.IndexAny(body[i:], "<\" ")]
		for _, path := range []string{link, fmt.Sprintf("/runs/%d/report.html", runID), link + "/report.html"} {
			page := env.getAs(path).Body.String()
			if got := testidBlock(page, "decomposition-help"); got != want {
				t.Errorf("%s explains the decomposition as %q, want the run page's %q", path, got, want)
			}
			if !strings.Contains(page, "Error of the mean score ") {
				t.Errorf("%s lost the decomposition figures", path)
			}
			// The average batch bias and its meaning, as on the run page
			// (the shared reports had the rounds table without them).
			for _, id := range []string{"batch-bias", "batch-bias-help"} {
				if got, w := testidBlock(page, id), testidBlock(runPage, id); got == "" || got != w {
					t.Errorf("%s: %s %q, want the run page's %q", path, id, got, w)
				}
			}
		}
	})
}

func TestExperimentPageExplainsHolm(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 90)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "holm"}
		if err := env.db.CreateExperiment(t.Context(), &e); err != nil {
			t.Fatal(err)
		}
		in := func(r *models.Run) { r.ExperimentID = &e.ID }
		env.storedRun(d, "Sharp", noisy(d.human, 0.3, 1), in)
		env.storedRun(d, "Blunt", noisy(d.human, 1.5, 2), in)
		body := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
		if !strings.Contains(testidBlock(body, "experiment-verdict"), "Holm-adjusted") {
			t.Fatalf("the headline no longer names a Holm-adjusted p: %s", testidBlock(body, "experiment-verdict"))
		}
		checkExplained(t, body, map[string][]string{
			"holm-help": {"Holm-adjusted p", "corrected for comparing several runs at once", "Below 0.05", "real difference"},
		})
	})
}

func TestRubricPageExplainsRubricFiles(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		projectRubrics := fmt.Sprintf(`href="/projects/%d#rubrics"`, env.project.ID)
		pages := []struct {
			name, path string
			want       map[string][]string
		}{
			{"new rubric: import", fmt.Sprintf("/projects/%d/rubrics/new", env.project.ID), map[string][]string{
				"rubric-import-help": {"the format the command-line tool reads", "Export as a rubric file", projectRubrics},
			}},
			{"rubric page: export", fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID), map[string][]string{
				"rubric-export-help": {"in the format the command-line tool reads", "Import a rubric file"},
			}},
		}
		for _, p := range pages {
			t.Run(p.name, func(t *testing.T) {
				rec := env.get(p.path)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s = %d", p.path, rec.Code)
				}
				body := rec.Body.String()
				checkExplained(t, body, p.want)
				// The command is not the explanation.
				if strings.Contains(body, "as `batcheval run --rubric` reads") || strings.Contains(body, "The format `batcheval run --rubric` reads") {
					t.Errorf("page still explains rubric files by the command line's flag")
				}
			})
		}
	})
}

// TestRoundsTableSaysWhatBatchBiasIs: the rounds table's "Batch bias"
// column says in its header what the figure is and which way is better, on
// the run page and in the shared and downloaded reports (the same table).
// Before, the header was the bare term.
func TestRoundsTableSaysWhatBatchBiasIs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("2", "10"))
		if run := env.waitRun(runID, 60*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run status %s (%s)", run.Status, run.Error)
		}
		rec := env.postForm("/shares", url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runID, 10)}, "expires": {"7d"}})
		body := rec.Body.String()
		i := strings.Index(body, "/s/")
		if rec.Code != http.StatusOK || i < 0 {
			t.Fatalf("share: %d %s", rec.Code, body)
		}
		link := body[i : i+strings.IndexAny(body[i:], "<\" ")]
		for _, path := range []string{fmt.Sprintf("/runs/%d", runID), link, fmt.Sprintf("/runs/%d/report.html", runID), link + "/report.html"} {
			head := testidBlock(env.getAs(path).Body.String(), "rounds-bias-head")
			for _, w := range []string{"Batch bias", "how far the round's batches sit from the final scores", "lower is better"} {
				if !strings.Contains(head, w) {
					t.Errorf("%s: the rounds table's batch bias header %q lacks %q", path, head, w)
				}
			}
		}
	})
}
