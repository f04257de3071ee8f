package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestJudgeFormReasoningEffort: the judge form and the API save a judge's
// reasoning effort (blank: none), show it back selected, and refuse an
// unknown word beside its field, naming the field and the three values,
// with the typed word escaped and nothing saved.
func TestJudgeFormReasoningEffort(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		form := judgeFormValues("o3 judge", "https://api.openai.com/v1", "", "1.25")
		form.Set("token_limit", "max_completion_tokens")
		form.Set("default_sampling_only", "1")
		form.Set("reasoning_effort", "High")
		if rec := env.postForm("/judges", form); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST /judges = %d: %s", rec.Code, rec.Body)
		}
		j, ok := env.judgeNamed("o3 judge")
		if !ok || j.ReasoningEffort != "high" {
			t.Fatalf("stored %v: %q, want high", ok, j.ReasoningEffort)
		}
		page := env.get(fmt.Sprintf("/judges/%d/edit", j.ID)).Body.String()
		if !strings.Contains(page, `<option value="high" selected>`) || strings.Contains(page, `<option value="" selected>`) {
			t.Errorf("the edit page does not show high selected")
		}

		for _, tc := range []struct {
			typed, want string
		}{
			{"minimal", `&#34;minimal&#34;`},
			{`<b>x</b>`, `&#34;&lt;b&gt;x&lt;/b&gt;&#34;`},
		} {
			form.Set("reasoning_effort", tc.typed)
			rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), form)
			body := rec.Body.String()
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, `id="judge-reasoning-effort-error"`) ||
				!strings.Contains(body, "reasoning effort") || !strings.Contains(body, "low, medium and high") || !strings.Contains(body, tc.want) {
				t.Errorf("%q: %d, want 422 naming the field, the values and the word escaped: %s", tc.typed, rec.Code, body)
			}
			if strings.Contains(body, "<b>x</b>") {
				t.Errorf("%q: shown unescaped", tc.typed)
			}
			if kept, _ := env.judgeNamed("o3 judge"); kept.ReasoningEffort != "high" {
				t.Errorf("%q: refused, yet %q saved", tc.typed, kept.ReasoningEffort)
			}
		}
		// Cleared: none sent, "Not sent" selected.
		form.Set("reasoning_effort", "")
		if rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("clear = %d: %s", rec.Code, rec.Body)
		}
		if j, _ = env.judgeNamed("o3 judge"); j.ReasoningEffort != "" {
			t.Errorf("cleared, but stored %q", j.ReasoningEffort)
		}
		if page := env.get(fmt.Sprintf("/judges/%d/edit", j.ID)).Body.String(); !strings.Contains(page, `<option value="" selected>`) {
			t.Errorf("cleared: the edit page does not select Not sent")
		}

		// The API: GET gives it, PUT takes it, absent keeps it, a bad word
		// is refused naming the field.
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "effort-owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		body := map[string]any{"name": "api o4", "base_url": "https://api.openai.com/v1", "model": "o4-mini", "reasoning_effort": "low"}
		created := decode[APIJudge](t, a.json(http.MethodPost, "/api/v1/judges", tok, body), http.StatusCreated)
		if created.ReasoningEffort != "low" {
			t.Errorf("POST: reasoning_effort %q, want low", created.ReasoningEffort)
		}
		delete(body, "reasoning_effort")
		body["model"] = "o3"
		kept := decode[APIJudge](t, a.json(http.MethodPut, fmt.Sprintf("/api/v1/judges/%d", created.ID), tok, body), http.StatusOK)
		if kept.ReasoningEffort != "low" {
			t.Errorf("PUT without the key: %q, want low kept", kept.ReasoningEffort)
		}
		body["reasoning_effort"] = "extreme"
		a.invalidRequests = true // the document's enum refuses it too
		rec := a.json(http.MethodPut, fmt.Sprintf("/api/v1/judges/%d", created.ID), tok, body)
		if rec.Code != http.StatusBadRequest && rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "reasoning effort") {
			t.Errorf("PUT extreme: %d %s", rec.Code, rec.Body)
		}
		a.invalidRequests = false
		plain := decode[APIJudge](t, a.json(http.MethodGet, fmt.Sprintf("/api/v1/judges/%d", j.ID), tok, nil), http.StatusOK)
		if plain.ReasoningEffort != "" {
			t.Errorf("GET a judge without one: %q", plain.ReasoningEffort)
		}
	})
}

// TestJudgesListShowsRequestSettings: the judges list and the judge's page
// say how each judge's requests differ from the usual one (the token limit
// name with its reasoning room, default-only sampling, the reasoning
// effort), and "as usual" for a judge without any; the judge's name beside
// them stays escaped. Before, neither page said any of it outside the
// form's inputs.
func TestJudgesListShowsRequestSettings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		f := newReasoningFake(t, simjudge.Reasoning{})
		reasoning := f.judge(env, `<i>gpt-5</i>`, func(j *models.Judge) {
			j.TokenLimit, j.DefaultSamplingOnly, j.ReasoningEffort = string(judge.TokenLimitMaxCompletionTokens), true, "medium"
		})
		plain := f.judge(env, "plain", nil)
		list := env.get("/judges").Body.String()
		want := "token limit sent as max_completion_tokens (+25,000 for reasoning); only the default temperature and top p; reasoning effort medium"
		rows := strings.Split(list, `data-testid="judge"`)
		var reasoningRow, plainRow string
		for _, r := range rows {
			switch {
			case strings.Contains(r, templ.EscapeString(reasoning.Name)):
				reasoningRow = r
			case strings.Contains(r, ">plain"):
				plainRow = r
			}
		}
		if !strings.Contains(reasoningRow, templ.EscapeString(want)) {
			t.Errorf("the reasoning judge's row lacks %q: %s", want, reasoningRow)
		}
		if strings.Contains(list, "<i>gpt-5</i>") {
			t.Error("the judge's name is shown unescaped")
		}
		if !strings.Contains(plainRow, "as usual") || strings.Contains(plainRow, "reasoning effort") {
			t.Errorf("the plain judge's row: %s", plainRow)
		}
		page := env.get(fmt.Sprintf("/judges/%d/edit", reasoning.ID)).Body.String()
		if !strings.Contains(page, templ.EscapeString("Requests are sent with:")) || !strings.Contains(page, templ.EscapeString(want)) {
			t.Errorf("the judge's page lacks its request settings")
		}
		if page := env.get(fmt.Sprintf("/judges/%d/edit", plain.ID)).Body.String(); !strings.Contains(page, "the usual settings") {
			t.Errorf("the plain judge's page lacks the usual settings")
		}
	})
}

// TestReasoningEffortReachesTheModel: Test connection and a run send a
// judge's reasoning effort as reasoning_effort to the reasoning fake (a
// judge without one sends none); an endpoint that refuses it makes Test
// connection, and a run, say to clear "Reasoning effort" on the judge's
// page, and Test connection does not change the setting itself.
func TestReasoningEffortReachesTheModel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		settings := func(effort string) func(*models.Judge) {
			return func(j *models.Judge) {
				j.TokenLimit, j.DefaultSamplingOnly, j.ReasoningEffort = string(judge.TokenLimitMaxCompletionTokens), true, effort
			}
		}
		test := func(j models.Judge) string {
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
			req.Header.Set("X-Requested-With", "fetch")
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec.Body.String()
		}
		for _, effort := range []string{"", "low", "high"} {
			f := newReasoningFake(t, simjudge.Reasoning{})
			j := f.judge(env, "effort "+effort, settings(effort))
			if body := test(j); !strings.Contains(body, "flash ok") {
				t.Fatalf("effort %q: the test failed: %s", effort, body)
			}
			calls := f.calls()
			v, sent := calls[len(calls)-1]["reasoning_effort"]
			if (effort == "" && sent) || (effort != "" && string(v) != `"`+effort+`"`) {
				t.Errorf("effort %q: the test sent reasoning_effort %s (sent %v)", effort, v, sent)
			}
		}

		// Refused by the endpoint.
		f := newReasoningFake(t, simjudge.Reasoning{NoReasoningEffort: true, Wording: simjudge.WordingOpenRouter})
		j := f.judge(env, "o1-mini", settings("high"))
		body := test(j)
		for _, want := range []string{"reasoning_effort", `refuses reasoning_effort high: clear "Reasoning effort" on the judge's page`} {
			if !strings.Contains(body, templ.EscapeString(want)) {
				t.Errorf("the refused test lacks %q: %s", want, body)
			}
		}
		if got, _ := env.db.FindJudge(context.Background(), env.ws.ID, j.ID); got.ReasoningEffort != "high" || !got.LastTestFailed() {
			t.Errorf("after the refused test: effort %q, failed %v", got.ReasoningEffort, got.LastTestFailed())
		}

		// A run: every call sends it; refused, the run's error says what to clear.
		d := env.demo()
		ok := newReasoningFake(t, simjudge.Reasoning{})
		okJudge := ok.judge(env, "o4-mini low", settings("low"))
		for _, tc := range []struct {
			judge  models.Judge
			fake   *reasoningFake
			status string
		}{
			{okJudge, ok, models.RunSucceeded},
			{j, f, models.RunFailed},
		} {
			form := d.launchForm("1", "10")
			form.Set("judge", fmt.Sprint(tc.judge.ID))
			form.Del("temperature")
			form.Del("top_p")
			before := len(tc.fake.calls())
			run := env.waitRun(env.launch(form), 60*time.Second)
			if run.Status != tc.status {
				t.Fatalf("%s: run %s, want %s: %s", tc.judge.Name, run.Status, tc.status, run.Error)
			}
			if run.JudgeSnapshot.ReasoningEffort != tc.judge.ReasoningEffort {
				t.Errorf("%s: the run recorded effort %q", tc.judge.Name, run.JudgeSnapshot.ReasoningEffort)
			}
			for i, b := range tc.fake.calls()[before:] {
				if string(b["reasoning_effort"]) != `"`+tc.judge.ReasoningEffort+`"` {
					t.Errorf("%s: call %d sent reasoning_effort %s", tc.judge.Name, i+1, b["reasoning_effort"])
				}
			}
			if tc.status == models.RunFailed && !strings.Contains(run.Error, `clear "Reasoning effort" on the judge's page`) {
				t.Errorf("the refused run's error does not say what to clear: %s", run.Error)
			}
		}
	})
}
