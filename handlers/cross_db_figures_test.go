package handlers

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/report"
)

// TestSameFiguresOnSQLiteAndPostgreSQL: the same experiment (the demo's
// BatchEval and G-Eval runs, seeded, on the simulated judge) gives the same
// bytes on every database: each run's JSON report and CSV, its results
// section, its API results, shared and downloaded reports (figures,
// samples and analyses) and command-line table, and the figures of the experiment page and of the comparison of
// the two runs (paired bootstrap and permutation tests included). The
// tests of a single database cannot see a figure that depends on the
// order rows come back in, which differs between SQLite and PostgreSQL.
// It compares only when both databases ran (make test sets
// TEST_DATABASE_URL).
func TestSameFiguresOnSQLiteAndPostgreSQL(t *testing.T) {
	var mu sync.Mutex
	got := map[string]map[string]string{} // database -> what -> bytes
	ids := regexp.MustCompile(`/(runs|experiments)/\d+|[?&](a|b)=\d+|run \d+|data-run="\d+"`)
	numbers := regexp.MustCompile(`[−+-]?\d+\.\d+|±\d+\.\d+`)
	expiry := regexp.MustCompile(`(data-testid="share-expiry">)[^<]*`)
	eachDB(t, func(t *testing.T, env *testEnv) {
		x := env.demoExperiment()
		out := map[string]string{}
		for _, r := range []struct {
			name string
			id   int64
		}{{"batcheval", x.batchEval.ID}, {"geval", x.gEval.ID}} {
			rep, _ := splitExport(t, env.get(fmt.Sprintf("/runs/%d/export.json", r.id)).Body.Bytes())
			out[r.name+" report"] = string(rep)
			out[r.name+" csv"] = env.get(fmt.Sprintf("/runs/%d/export.csv", r.id)).Body.String()
			out[r.name+" results"] = ids.ReplaceAllString(resultsSection(t, env.get(fmt.Sprintf("/runs/%d", r.id)).Body.String(), r.id), "ID")
			// The API's results, the shared and downloaded reports and the
			// command line's table.
			api, _ := splitExport(t, env.get(fmt.Sprintf("/api/v1/runs/%d/results", r.id)).Body.Bytes())
			out[r.name+" API results"] = string(api)
			link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(r.id)}, "expires": {"7d"}})
			// The link's expiry is said to the minute, from the moment each
			// database's link was made: the two may fall either side of a
			// minute, so it is not a figure compared here.
			shared := expiry.ReplaceAllString(reportBody(t, env.get(link).Body.String()), "${1}EXPIRY")
			out[r.name+" shared report"] = ids.ReplaceAllString(shared, "ID")
			out[r.name+" downloaded report"] = ids.ReplaceAllString(reportBody(t, env.get(fmt.Sprintf("/runs/%d/report.html", r.id)).Body.String()), "ID")
			built, err := report.Build(env.localCtx(), env.db, env.ws.ID, r.id)
			must(t, err)
			out[r.name+" command line"] = built.CorrelationTable()
		}
		// The background figures (paired tests) come a moment later.
		figures := func(path, pending string) string {
			deadline := time.Now().Add(60 * time.Second)
			for {
				body := env.get(path).Body.String()
				if !strings.Contains(body, pending) || time.Now().After(deadline) {
					return strings.Join(numbers.FindAllString(ids.ReplaceAllString(body, "ID"), -1), " ")
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		out["compare"] = figures(fmt.Sprintf("/compare?a=%d&b=%d", x.batchEval.ID, x.gEval.ID), `data-testid="agreement-pending"`)
		out["experiment"] = figures(fmt.Sprintf("/experiments/%d", x.exp.ID), `data-testid="tests-pending"`)
		if !strings.Contains(out["batcheval results"], "Pearson r") || len(out["compare"]) < 20 {
			t.Fatalf("too little to compare: results %.200s, compare figures %q", out["batcheval results"], out["compare"])
		}
		mu.Lock()
		got[t.Name()] = out
		mu.Unlock()
	})
	if len(got) < 2 {
		t.Skip("one database only: nothing to compare across databases")
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	a, b := got[names[0]], got[names[1]]
	for what, x := range a {
		if y := b[what]; x != y {
			t.Errorf("%s differs between %s and %s:\n%s", what, names[0], names[1], firstDifference(x, y))
		}
	}
}
