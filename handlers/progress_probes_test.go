package handlers

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestProgressStreamCountsProbes: the run page's progress stream sent
// "probes" as the text the page shows ("4 (48 tokens, $0.0001)"), under
// the name of a count, beside counts sent as numbers ("calls", "retries")
// with their texts apart ("calls_text"). It now sends the count as a number
// ("probes") and the text as "probes_text", which the page's element names
// (data-field). static/app.js puts each key's value into the element of
// that name as it is (textContent): for every element the stream fills,
// the value it sends is what the page shows, so the live page reads as a
// reload does.
func TestProgressStreamCountsProbes(t *testing.T) {
	in, out := 1.0, 2.0
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Probed stream", 3)
		for _, tc := range []struct {
			name                       string
			probes, prompt, completion int
			large                      bool // counts of four digits and more, a share done with a tenth
		}{
			{"probed through an outage", 4, 40, 8, false},
			{"never waited", 0, 0, 0, false},
			{"thousands of batches", 1200, 48000, 9600, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, d.human, func(r *models.Run) {
					r.Simulated, r.Calls, r.PromptTokens, r.CompletionTokens, r.Retries = false, 1, 300, 30, 2
					r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = &in, &out
					r.ProbeCalls, r.ProbePromptTokens, r.ProbeCompletionTokens = tc.probes, tc.prompt, tc.completion
				})
				if tc.large {
					// The page grouped some counts' thousands ("1,500") and
					// not others (batches, retries), and showed the share
					// done whole where the stream sends a tenth: the live
					// page rewrote them as "1500" and "24.7". A paused run,
					// for its batches' line (its stream ends).
					must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Updates(map[string]any{
						"status": models.RunPaused, "finished_at": nil, "batches_done": 1234, "batches_total": 5000,
						"batches_failed": 1500, "cached_calls": 2500, "retries": 12345}).Error)
				}
				rec := env.get(fmt.Sprintf("/runs/%d/events", run.ID))
				m := regexp.MustCompile(`event: progress\ndata: (.*)\n`).FindStringSubmatch(rec.Body.String())
				if rec.Code != http.StatusOK || m == nil {
					t.Fatalf("no progress event: %d %.300q", rec.Code, rec.Body.String())
				}
				var progress map[string]any
				must(t, json.Unmarshal([]byte(m[1]), &progress))
				if n, ok := progress["probes"].(float64); !ok || int(n) != tc.probes {
					t.Errorf("the stream's probes = %#v, want the number %d", progress["probes"], tc.probes)
				}
				if want := runProbesText(run); progress["probes_text"] != want {
					t.Errorf("the stream's probes_text = %#v, want %q", progress["probes_text"], want)
				}

				// What app.js does with the event: each key's value into
				// the element of that name, as it is.
				page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				fields := regexp.MustCompile(`data-field="([a-z_]+)"[^>]*>([^<]*)<`).FindAllStringSubmatch(page, -1)
				filled := map[string]bool{}
				for _, f := range fields {
					v, sent := progress[f[1]]
					if !sent {
						continue
					}
					filled[f[1]] = true
					shown := html.UnescapeString(strings.TrimSpace(f[2]))
					var live string
					switch v := v.(type) {
					case float64:
						live = jsEnglishNumber(v)
					case string:
						live = v
					default:
						t.Errorf("the stream's %s is %#v: the page would show it as JavaScript prints it", f[1], v)
						continue
					}
					if live != shown {
						t.Errorf("the page shows %s as %q; the stream would make it %q", f[1], shown, live)
					}
				}
				if tc.large {
					for _, f := range []string{"batches_done", "batches_total", "percent", "failed", "cached", "retries"} {
						if !filled[f] {
							t.Errorf("the stream fills %v of the page's fields: want %s among them", filled, f)
						}
					}
				}
				if !filled["probes_text"] || !filled["calls_text"] {
					t.Errorf("the stream fills %v of the page's fields: want probes_text and calls_text among them", filled)
				}
			})
		}
	})
}

// jsEnglishNumber writes v as static/app.js writes a number it is sent:
// toLocaleString("en-US", {maximumFractionDigits: 1}), thousands grouped
// with commas and at most one decimal, no trailing zero.
func jsEnglishNumber(v float64) string {
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if neg {
		out = "-" + out
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}
