package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/web"
)

// TestLaunchWarnsWhenACallOutgrowsTheContextWindow: a judge with a known
// context window gets the longest call of the run measured at launch, and
// a warning that names what to change when it does not fit (before, a
// run on a small local model failed every call, or was judged on prompts
// the server had cut without a word).
func TestLaunchWarnsWhenACallOutgrowsTheContextWindow(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		judgeWith := func(name, window string) int64 {
			f := judgeFormValues(name, "http://127.0.0.1:9/v1", "", "")
			f.Set("context_tokens", window)
			if rec := env.postForm("/judges", f); rec.Code != http.StatusSeeOther {
				t.Fatalf("save judge %s: status %d: %s", name, rec.Code, rec.Body.String())
			}
			j, ok := env.judgeNamed(name)
			if !ok {
				t.Fatalf("judge %s not saved", name)
			}
			return j.ID
		}
		estimate := func(judgeID int64, method, batch string) string {
			f := d.launchForm("2", batch)
			f.Set("method", method)
			f.Set("judge", strconv.FormatInt(judgeID, 10))
			f.Set("project_id", strconv.FormatInt(env.project.ID, 10))
			rec := env.postForm("/runs/estimate", f)
			if rec.Code != http.StatusOK {
				t.Fatalf("estimate: status %d", rec.Code)
			}
			return rec.Body.String()
		}
		longestRe := regexp.MustCompile(`data-testid="estimate-longest">~([0-9,]+)<`)
		longest := func(body string) int {
			m := longestRe.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no longest call in the estimate:\n%s", body)
			}
			n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			return n
		}

		// No window known: nothing measured, nothing said.
		unknown := judgeWith("No window", "")
		if body := estimate(unknown, "batcheval", "10"); strings.Contains(body, "estimate-longest") || strings.Contains(body, "estimate-too-long") {
			t.Errorf("a judge without a context window got a fit check:\n%s", body)
		}

		wide := judgeWith("Wide", "1000000")
		body := estimate(wide, "batcheval", "10")
		need := longest(body)
		if strings.Contains(body, "estimate-too-long") {
			t.Errorf("a call of %d tokens warned against a window of 1,000,000", need)
		}
		if one := longest(estimate(wide, "batcheval", "1")); one >= need {
			t.Errorf("the longest call of a batch of 1 (%d tokens) is not shorter than a batch of 10's (%d)", one, need)
		}

		exact := judgeWith("Exact", strconv.Itoa(need))
		if body := estimate(exact, "batcheval", "10"); strings.Contains(body, "estimate-too-long") {
			t.Errorf("a call of exactly the window (%d tokens) warned", need)
		}

		tight := judgeWith("Tight", strconv.Itoa(need-1))
		body = estimate(tight, "batcheval", "10")
		m := regexp.MustCompile(`Lower the batch size to (\d+) or less`).FindStringSubmatch(body)
		if !strings.Contains(body, "estimate-too-long") || m == nil {
			t.Fatalf("a call one token over the window: no warning naming a batch size:\n%s", body)
		}
		if !strings.Contains(body, fmt.Sprintf("window of %s", web.Count(need-1))) {
			t.Errorf("the warning does not name the window of %d tokens:\n%s", need-1, body)
		}
		fits, _ := strconv.Atoi(m[1])
		if fits < 1 || fits >= 10 {
			t.Fatalf("suggested batch size %d, want 1 to 9", fits)
		}
		if body := estimate(tight, "batcheval", m[1]); strings.Contains(body, "estimate-too-long") {
			t.Errorf("the suggested batch size %d still does not fit:\n%s", fits, body)
		}

		// A one-sample method has no batch to shrink.
		tiny := judgeWith("Tiny", "20")
		body = estimate(tiny, "llmeval", "10")
		if !strings.Contains(body, "estimate-too-long") || !strings.Contains(body, "Shorten the dataset") || strings.Contains(body, "batch size") {
			t.Errorf("LLM-Eval against a 20-token window: want the advice to shorten the texts:\n%s", body)
		}

		// The API reads and writes the window; a bad one is refused by name.
		rec := env.get(fmt.Sprintf("/api/v1/judges/%d", tight))
		var got struct {
			ContextTokens *int `json:"context_tokens"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.ContextTokens == nil || *got.ContextTokens != need-1 {
			t.Errorf("API judge: context_tokens %v (%v), want %d; body %s", got.ContextTokens, err, need-1, rec.Body.String())
		}
		bad := judgeFormValues("Bad window", "http://127.0.0.1:9/v1", "", "")
		bad.Set("context_tokens", "8k")
		rec = env.postForm("/judges", bad)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "context window") {
			t.Errorf("a context window of 8k: status %d, want 422 naming the field", rec.Code)
		}
	})
}
