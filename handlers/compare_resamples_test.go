package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
)

// TestCompareSaysHowManyResamplesTheIntervalIsFrom: when some of the
// paired bootstrap's resamples are left out (a rank coefficient undefined
// on a draw holding one human rating only), the compare page and the API
// say how many the interval is from, the count an independent
// recomputation (heldOutIntervalOracle, the compare page's seed) gives;
// when none is left out they say nothing. Two "judges" of FED's first
// dialogues: the Likeable and Understanding ratings (shifted onto 1 to 3)
// judging the Overall rating.
func TestCompareSaysHowManyResamplesTheIntervalIsFrom(t *testing.T) {
	fed := readFED(t, 30)
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, n := range []int{5, 30} {
			var a, b, h []float64
			for _, r := range fed[:n] {
				a, b, h = append(a, r.Scores["Likeable"]+1), append(b, r.Scores["Understanding"]+1), append(h, r.Scores["Overall"])
			}
			d := env.ratedDatasetOf(fmt.Sprintf("FED %d", n), h)
			runA := env.storedRounds(d, "Likeable", [][]float64{a})
			runB := env.storedRounds(d, "Understanding", [][]float64{b})
			page := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=0", runA.ID, runB.ID)).Body.String()
			rec := env.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=0", runA.ID, runB.ID))
			if rec.Code != http.StatusOK {
				t.Fatalf("n %d: %d %.300s", n, rec.Code, rec.Body)
			}
			var api struct {
				Agreement struct {
					Differences []struct {
						Method        string `json:"method"`
						Resamples     *int   `json:"resamples"`
						ResamplesUsed *int   `json:"resamples_used"`
						ResamplesNote string `json:"resamples_note"`
					} `json:"differences"`
				} `json:"agreement"`
			}
			must(t, json.Unmarshal(rec.Body.Bytes(), &api))
			leftOut := 0
			for _, ad := range api.Agreement.Differences {
				_, _, used := heldOutIntervalOracle(ad.Method, a, b, h, 1000, 20240102)
				row := regexp.MustCompile(`(?s)data-testid="agreement-` + ad.Method + `".*?</tr>`).FindString(page)
				if row == "" {
					t.Fatalf("n %d: the page has no %s row", n, ad.Method)
				}
				note := regexp.MustCompile(`data-testid="resamples-used">([^<]*)<`).FindStringSubmatch(row)
				if ad.Method == "pearson" || used == 1000 {
					if note != nil || ad.Resamples != nil || ad.ResamplesUsed != nil || ad.ResamplesNote != "" {
						t.Errorf("n %d, %s: none left out, but the page says %q and the API %v of %v %q", n, ad.Method, note, ad.ResamplesUsed, ad.Resamples, ad.ResamplesNote)
					}
					continue
				}
				leftOut++
				want := fmt.Sprintf("from %d of 1000 resamples", used)
				if note == nil || note[1] != want {
					t.Errorf("n %d, %s: the page says %q, want %q", n, ad.Method, note, want)
				}
				if ad.Resamples == nil || *ad.Resamples != 1000 || ad.ResamplesUsed == nil || *ad.ResamplesUsed != used || ad.ResamplesNote != want {
					t.Errorf("n %d, %s: the API says %v of %v (%q), want %d of 1000", n, ad.Method, ad.ResamplesUsed, ad.Resamples, ad.ResamplesNote, used)
				}
			}
			if n == 5 && leftOut != 2 {
				t.Errorf("n 5: %d coefficients with resamples left out, want Spearman's and Kendall's", leftOut)
			}
		}
	})
}
