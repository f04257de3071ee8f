package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestSameInputsGiveIdenticalExportsAndPages launches the same dataset,
// rubric, method, settings and seed twice against the simulated judge
// (deterministic given the seed) and checks that the JSON exports' report
// parts, the CSV exports and the run pages' results sections are the same
// bytes. Only what differs by nature is set aside: the JSON envelope (run
// ids, names, times) and, on the pages, the run id inside links.
func TestSameInputsGiveIdenticalExportsAndPages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		// Every method, G-Eval included: its probability-weighted score is
		// summed in a fixed order, so the same answers give the same bits.
		// G-Eval also without log-probabilities (its sampled fallback) and
		// LLM-Eval also on its 0 to 100 scale.
		for _, tc := range []struct {
			name, method string
			extra        url.Values
			want         string // in the JSON report: the variant ran
		}{
			{models.MethodBatchEval, models.MethodBatchEval, nil, `"method": "batcheval"`},
			{models.MethodGEval, models.MethodGEval, nil, `"samples": 0`},
			{"geval sampled", models.MethodGEval, url.Values{"use_logprobs": {"0"}, "samples": {"5"}}, `"logprobs": 0`},
			{models.MethodLLMEval, models.MethodLLMEval, nil, `"llmeval_scale": "0-5"`},
			{"llmeval 0-100", models.MethodLLMEval, url.Values{"llmeval_scale": {"0-100"}}, `"llmeval_scale": "0-100"`},
			{models.MethodCloserLook, models.MethodCloserLook, nil, `"method": "closerlook"`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				form := d.launchForm("2", "10")
				form.Set("method", tc.method)
				for k, v := range tc.extra {
					form[k] = v
				}
				form.Set("seed", "11")
				// The answer cache off (the box shown, left unticked): both
				// runs must ask the judge, or the second would replay the
				// first's answers and prove nothing about determinism.
				form.Set("reuse_answers_shown", "1")
				var ids [2]int64
				for i := range ids {
					ids[i] = env.launch(form)
				}
				for _, id := range ids {
					if run := env.waitRun(id, 90*time.Second); run.Status != models.RunSucceeded {
						t.Fatalf("run %d %s: %s", id, run.Status, run.Error)
					}
				}

				var reports, envelopes, results [2][]byte
				var csvs, pages, shared, standalone, cli [2]string
				for i, id := range ids {
					rec := env.get(fmt.Sprintf("/runs/%d/export.json", id))
					if rec.Code != http.StatusOK {
						t.Fatalf("export.json: %d", rec.Code)
					}
					reports[i], envelopes[i] = splitExport(t, rec.Body.Bytes())
					results[i], _ = splitExport(t, env.get(fmt.Sprintf("/api/v1/runs/%d/results", id)).Body.Bytes())
					csvs[i] = env.get(fmt.Sprintf("/runs/%d/export.csv", id)).Body.String()
					pages[i] = resultsSection(t, env.get(fmt.Sprintf("/runs/%d", id)).Body.String(), id)
					link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(id)}, "expires": {"7d"}})
					shared[i] = reportBody(t, env.get(link).Body.String())
					standalone[i] = reportBody(t, env.get(fmt.Sprintf("/runs/%d/report.html", id)).Body.String())
					rep, err := report.Build(env.localCtx(), env.db, env.ws.ID, id)
					must(t, err)
					cli[i] = rep.CorrelationTable()
				}
				// The API's results, the shared and downloaded reports (their
				// figures, samples and analyses) and the command line's table
				// are the same bytes too, and the API's are the export's.
				for _, f := range []struct {
					what string
					a, b string
				}{{"the API's results", string(results[0]), string(results[1])}, {"the API's results and the export", string(results[0]), string(reports[0])},
					{"shared reports", shared[0], shared[1]}, {"downloaded reports", standalone[0], standalone[1]}, {"command line tables", cli[0], cli[1]}} {
					if f.a != f.b {
						t.Errorf("%s differ:\n%s", f.what, firstDifference(f.a, f.b))
					}
				}
				if !strings.Contains(standalone[0], `data-testid="interval"`) || !strings.Contains(shared[0], `data-testid="coef"`) || !strings.Contains(cli[0], "pearson") {
					t.Errorf("too little to compare: shared %.200q, downloaded %.200q, command line %.200q", shared[0], standalone[0], cli[0])
				}
				if bytes.Equal(envelopes[0], envelopes[1]) {
					t.Errorf("the envelopes are equal: they should name two different runs")
				}
				if !bytes.Equal(reports[0], reports[1]) {
					t.Errorf("JSON reports differ:\n%s", firstDifference(string(reports[0]), string(reports[1])))
				}
				if csvs[0] != csvs[1] {
					t.Errorf("CSV exports differ:\n%s", firstDifference(csvs[0], csvs[1]))
				}
				if pages[0] != pages[1] {
					t.Errorf("results sections differ:\n%s", firstDifference(pages[0], pages[1]))
				}
				// The comparison must cover real figures and the provenance.
				for _, w := range []string{`"coef": 0.`, `"prompt_template_version"`, `"seed": 11`, tc.want} {
					if !strings.Contains(string(reports[0]), w) {
						t.Errorf("JSON report lacks %s", w)
					}
				}
				for _, w := range []string{"Pearson r", `data-testid="provenance"`, "BatchEval " + report.ProductVersion(), `data-testid="provenance-seed">11<`} {
					if !strings.Contains(pages[0], w) {
						t.Errorf("results section lacks %q", w)
					}
				}
			})
		}
	})
}

// splitExport returns the exact bytes of the export's report and envelope
// values, as written (json.RawMessage keeps them untouched).
func splitExport(t *testing.T, b []byte) (rep, envelope []byte) {
	t.Helper()
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil {
		t.Fatalf("export does not parse: %v", err)
	}
	if len(parts["report"]) == 0 || len(parts["envelope"]) == 0 {
		t.Fatalf("export lacks report or envelope: %s", b)
	}
	return parts["report"], parts["envelope"]
}

// resultsSection cuts a run page down to its results, from the results
// heading to the end of the provenance card, with the run's own id in
// links replaced by a placeholder.
func resultsSection(t *testing.T, page string, runID int64) string {
	t.Helper()
	start := strings.Index(page, `data-testid="results"`)
	prov := strings.Index(page, `data-testid="provenance"`)
	if start < 0 || prov < 0 {
		t.Fatalf("run page has no results section or provenance")
	}
	end := prov + strings.Index(page[prov:], "</section>")
	own := regexp.MustCompile(fmt.Sprintf(`/runs/%d\b`, runID))
	return own.ReplaceAllString(page[start:end], "/runs/RUN")
}

// reportBody cuts a shared or downloaded run report down to what its
// run's data decide: from the first criterion card to the end of the
// page's main part (figures, samples, provenance and, downloaded, every
// analysis), with run ids in links and the share link's token replaced by
// placeholders.
func reportBody(t *testing.T, page string) string {
	t.Helper()
	start := strings.Index(page, `data-testid="criterion-card"`)
	end := strings.LastIndex(page, "</main>")
	if start < 0 || end < start {
		t.Fatalf("report has no criterion card: %.300s", page)
	}
	body := regexp.MustCompile(`/runs/\d+\b`).ReplaceAllString(page[start:end], "/runs/RUN")
	return regexp.MustCompile(`/s/[^/"?#]+`).ReplaceAllString(body, "/s/SHARE")
}

// firstDifference shows where two texts part.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n  %q\nvs\n  %q", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
}
