package handlers

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// Three rated samples cannot tell a coefficient from chance: the run page,
// the share page and the standalone report said "Very strong disagreement
// (−0.81), likely not different from chance (p = 0.40)", a verdict the
// next words take back. Every page now says the samples are too few to
// tell, with the coefficient and its p, and names no strength band.
func TestTooFewSamplesReadingNamesNoBand(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("three rated", 3)
		if d.human[0] == d.human[1] && d.human[1] == d.human[2] {
			t.Fatalf("constant human ratings %v: no coefficient to read", d.human)
		}
		// Against the ratings, with a little noise: a large negative
		// coefficient that three samples cannot tell from chance.
		finals := []float64{6 - d.human[0], 6 - d.human[1] + 0.7, 6 - d.human[2] - 0.4}
		run := env.storedRun(d, "three", finals, nil)
		share := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		pages := []string{
			fmt.Sprintf("/runs/%d", run.ID),
			share,
			fmt.Sprintf("/runs/%d/report.html", run.ID),
		}
		for _, path := range pages {
			rec := env.get(path)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			body := rec.Body.String()
			if !strings.Contains(body, "Too few samples to tell (3 samples; ") {
				i := strings.Index(body, "agreement (")
				if i < 0 {
					i = strings.Index(body, "disagreement (")
				}
				t.Errorf("%s: no \"too few samples to tell\" reading; found %q", path, body[max(i-20, 0):min(max(i, 0)+120, len(body))])
			}
			for _, band := range []string{"Very strong disagreement", "Strong disagreement", "Moderate disagreement", "Very strong agreement", "Strong agreement"} {
				if strings.Contains(body, band) {
					t.Errorf("%s still names the band %q on three samples", path, band)
				}
			}
		}
	})
}
