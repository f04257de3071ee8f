package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// reasoningFake is an OpenAI reasoning model (o1, o3, o4-mini, gpt-5)
// behind one endpoint's wording (simjudge.ReasoningModel around the
// simulated judge), counting the chat calls it gets and keeping their
// bodies.
type reasoningFake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
}

func newReasoningFake(t *testing.T, opts simjudge.Reasoning) *reasoningFake {
	t.Helper()
	f := &reasoningFake{}
	inner := simjudge.ReasoningModel(simjudge.NewHandler(simjudge.Options{Noise: -1}), opts)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			raw, _ := io.ReadAll(r.Body)
			var body map[string]json.RawMessage
			_ = json.Unmarshal(raw, &body)
			f.mu.Lock()
			f.bodies = append(f.bodies, body)
			f.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *reasoningFake) calls() []map[string]json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), f.bodies...)
}

func (f *reasoningFake) judge(env *testEnv, name string, change func(*models.Judge)) models.Judge {
	env.t.Helper()
	j := models.Judge{WorkspaceID: env.ws.ID, Name: name, BaseURL: f.srv.URL + "/v1", Model: "o4-mini", TimeoutSeconds: 5,
		Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
	if change != nil {
		change(&j)
	}
	if err := env.db.SaveJudge(context.Background(), &j); err != nil {
		env.t.Fatal(err)
	}
	return j
}

// TestReasoningJudgeRunBeforeItsSettings: a run on a reasoning model whose
// judge still sends its temperature (as every judge did) stops at its first
// refusal, and its error names the endpoint's refusal and what to do on
// the judge's page. It had said only to check the model name and "that
// the model supports the parameters sent (logprobs, seed, response_format,
// n)".
func TestReasoningJudgeRunBeforeItsSettings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		f := newReasoningFake(t, simjudge.Reasoning{})
		form := env.demo().launchForm("5", "10")
		form.Set("judge", fmt.Sprint(f.judge(env, "o4-mini", nil).ID))
		run := env.waitRun(env.launch(form), 60*time.Second)
		if run.Status != models.RunFailed {
			t.Fatalf("run %s, want failed: %s", run.Status, run.Error)
		}
		// BatchEval sets no token limit by default: the temperature is
		// what is refused first.
		for _, want := range []string{"HTTP 400", "Unsupported value: 'temperature'", "press Test connection on the judge's page", "launch with temperature 1 and top p 1"} {
			if !strings.Contains(run.Error, want) {
				t.Errorf("the run's error lacks %q: %s", want, run.Error)
			}
		}
		// Refused calls are not billed, and the run stops at the first
		// refusal: only the calls already on their way (the judge's 2 at
		// once) are sent, not one per batch.
		n := len(f.calls())
		t.Logf("%d of %d batches' calls sent", n, run.BatchesTotal)
		if n < 1 || n >= run.BatchesTotal {
			t.Errorf("%d calls refused of %d batches: the run went on after its first refusal", n, run.BatchesTotal)
		}
	})
}

// TestJudgeTestConnectionFindsReasoningSettings: Test connection on a
// reasoning model reads the endpoint's refusals (OpenAI's, Azure's and
// OpenRouter's wording; a temperature refused at any value or only at
// another than the default), asks again as the model takes it, and saves
// the judge's token limit name and default-only sampling: one test of at
// most three calls, after which every call of the judge is sent that way
// (a second test makes one call). It used to fail with "the endpoint
// rejected the request (HTTP 400)", nothing saved, and every run failed
// the same way.
func TestJudgeTestConnectionFindsReasoningSettings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, wording := range []simjudge.Wording{simjudge.WordingOpenAI, simjudge.WordingAzure, simjudge.WordingOpenRouter} {
			for _, noTemperature := range []bool{false, true} {
				name := fmt.Sprintf("%s, temperature refused at any value %v", wording, noTemperature)
				f := newReasoningFake(t, simjudge.Reasoning{Wording: wording, NoTemperature: noTemperature})
				j := f.judge(env, name, nil)
				test := func() string {
					req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
					req.Header.Set("X-Requested-With", "fetch")
					rec := httptest.NewRecorder()
					env.e.ServeHTTP(rec, req)
					return rec.Body.String()
				}
				body := test()
				if !strings.Contains(body, "flash ok") {
					t.Fatalf("%s: the test failed: %s", name, body)
				}
				for _, want := range []string{"refuses max_tokens", "refuses any temperature or top p but the default",
					"Saved on the judge: “Token limit sent as” is now max_completion_tokens", "runs launch with temperature 1 and top p 1"} {
					if !strings.Contains(body, templ.EscapeString(want)) {
						t.Errorf("%s: the result lacks %q: %s", name, want, body)
					}
				}
				if n := len(f.calls()); n != 3 {
					t.Errorf("%s: %d calls, want 3 (refused for max_tokens, for the temperature, answered)", name, n)
				}
				got, err := env.db.FindJudge(context.Background(), env.ws.ID, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.SendsTokenLimitAs() != judge.TokenLimitMaxCompletionTokens || !got.DefaultSamplingOnly || got.LastTestFailed() {
					t.Errorf("%s: stored token limit %q, default sampling only %v, last test failed %v", name, got.TokenLimit, got.DefaultSamplingOnly, got.LastTestFailed())
				}
				if !got.UpdatedAt.After(j.UpdatedAt) {
					t.Errorf("%s: a change of settings that left the revision alone", name)
				}
				// Decided once per judge: the next test is sent right.
				if body := test(); !strings.Contains(body, "flash ok") || strings.Contains(body, "judge-adapted") {
					t.Errorf("%s: second test: %s", name, body)
				}
				if n := len(f.calls()); n != 4 {
					t.Errorf("%s: the second test made %d calls, want 1", name, n-3)
				}
			}
		}
		// The button without scripts: the flash says it too.
		f := newReasoningFake(t, simjudge.Reasoning{})
		j := f.judge(env, "no script", nil)
		page := env.followFlash(env.postForm(fmt.Sprintf("/judges/%d/test", j.ID), nil))
		if !strings.Contains(page, "flash ok") || !strings.Contains(page, templ.EscapeString("Saved on the judge: “Token limit sent as” is now max_completion_tokens")) {
			t.Errorf("the flash lacks what was saved: %s", page)
		}
	})
}

// TestLaunchRefusesSamplingForReasoningJudge: a judge that takes only the
// default temperature and top_p is sent neither, so a run whose settings
// say otherwise is refused at launch, before any call, naming the field
// and the value to set; left as the form shows them, they are 1 and the
// run is answered, every call with max_completion_tokens and no sampling
// parameter. G-Eval's log-probability path falls back to sampling on such
// a judge (one refused call) and finishes too.
func TestLaunchRefusesSamplingForReasoningJudge(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		f := newReasoningFake(t, simjudge.Reasoning{})
		j := f.judge(env, "gpt-5-mini", func(j *models.Judge) {
			j.TokenLimit, j.DefaultSamplingOnly = string(judge.TokenLimitMaxCompletionTokens), true
		})
		d := env.demo()
		refused := []struct {
			name, field, value, want string
		}{
			{"temperature", "temperature", "0.5", "Temperature: 0.5 cannot be used: judge gpt-5-mini takes only the default"},
			{"top_p", "top_p", "0.8", "top_p: 0.8 cannot be used"},
		}
		for _, tc := range refused {
			form := d.launchForm("1", "10")
			form.Set("judge", fmt.Sprint(j.ID))
			form.Del("temperature")
			form.Del("top_p")
			form.Set(tc.field, tc.value)
			rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), form)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("%s: launch = %d, want 422", tc.name, rec.Code)
			}
			body := rec.Body.String()
			if !strings.Contains(body, templ.EscapeString(tc.want)) || !strings.Contains(body, "set it to 1") {
				t.Errorf("%s: the form lacks %q: %s", tc.name, tc.want, body)
			}
		}
		runs, err := env.db.ListRuns(context.Background(), env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 0 || len(f.calls()) != 0 {
			t.Fatalf("refused launches made %d runs and %d calls", len(runs), len(f.calls()))
		}

		// Left as the form shows them: 1 and 1.
		form := d.launchForm("1", "10")
		form.Set("judge", fmt.Sprint(j.ID))
		form.Del("temperature")
		form.Del("top_p")
		run := env.waitRun(env.launch(form), 60*time.Second)
		if run.Status != models.RunSucceeded || run.Settings.Temperature != 1 || run.Settings.TopP != 1 {
			t.Fatalf("run %s (temperature %g, top_p %g): %s", run.Status, run.Settings.Temperature, run.Settings.TopP, run.Error)
		}
		if !run.JudgeSnapshot.DefaultSamplingOnly || run.JudgeSnapshot.SendsTokenLimitAs() != judge.TokenLimitMaxCompletionTokens {
			t.Errorf("the run recorded %+v", run.JudgeSnapshot)
		}
		for i, body := range f.calls() {
			_, mct := body["max_completion_tokens"]
			_, mt := body["max_tokens"]
			_, temp := body["temperature"]
			_, topP := body["top_p"]
			if mt || temp || topP || (run.Settings.MaxTokens > 0 && !mct) {
				t.Errorf("call %d sent max_tokens %v, temperature %v, top_p %v, max_completion_tokens %v", i+1, mt, temp, topP, mct)
			}
		}

		// G-Eval, log-probabilities asked for as by default.
		before := len(f.calls())
		gform := d.launchForm("1", "10")
		gform.Set("judge", fmt.Sprint(j.ID))
		gform.Del("temperature")
		gform.Del("top_p")
		gform.Set("method", "geval")
		gform.Set("samples", "3")
		grun := env.waitRun(env.launch(gform), 60*time.Second)
		if grun.Status != models.RunSucceeded {
			t.Fatalf("G-Eval run %s: %s", grun.Status, grun.Error)
		}
		refusedLogprobs := 0
		for _, body := range f.calls()[before:] {
			if string(body["logprobs"]) == "true" {
				refusedLogprobs++
			}
		}
		if refusedLogprobs != 1 {
			t.Errorf("G-Eval sent %d calls with logprobs, want 1 (refused once, then sampling)", refusedLogprobs)
		}
	})
}

// TestJudgeFormReasoningSettings: the judge form and the API save the
// token limit name and the default-only sampling box, show them back, and
// refuse a name that is not one of the two beside its field, saving
// nothing.
func TestJudgeFormReasoningSettings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		form := judgeFormValues("gpt-5 judge", "https://api.openai.com/v1", "", "1.25")
		form.Set("token_limit", "max_completion_tokens")
		form.Set("default_sampling_only", "1")
		if rec := env.postForm("/judges", form); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST /judges = %d: %s", rec.Code, rec.Body)
		}
		j, ok := env.judgeNamed("gpt-5 judge")
		if !ok || j.SendsTokenLimitAs() != judge.TokenLimitMaxCompletionTokens || !j.DefaultSamplingOnly {
			t.Fatalf("stored %v: %q, %v", ok, j.TokenLimit, j.DefaultSamplingOnly)
		}
		page := env.get(fmt.Sprintf("/judges/%d/edit", j.ID)).Body.String()
		for _, want := range []string{`<option value="max_completion_tokens" selected>`, `name="default_sampling_only" value="1" checked`} {
			if !strings.Contains(page, want) {
				t.Errorf("the edit page lacks %s", want)
			}
		}
		// Unticked and back to max_tokens.
		form.Set("token_limit", "max_tokens")
		form.Del("default_sampling_only")
		if rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST edit = %d: %s", rec.Code, rec.Body)
		}
		if j, _ = env.judgeNamed("gpt-5 judge"); j.SendsTokenLimitAs() != judge.TokenLimitMaxTokens || j.DefaultSamplingOnly {
			t.Errorf("after the edit: %q, %v", j.TokenLimit, j.DefaultSamplingOnly)
		}
		form.Set("token_limit", "max_output_tokens")
		rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), form)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `id="judge-token-limit-error"`) ||
			!strings.Contains(rec.Body.String(), "max_completion_tokens") {
			t.Errorf("an unknown name: %d, %s", rec.Code, rec.Body)
		}
		// The API: what GET gives, PUT takes.
		got := env.get(fmt.Sprintf("/api/v1/judges/%d", j.ID))
		var api map[string]any
		if err := json.Unmarshal(got.Body.Bytes(), &api); err != nil || api["token_limit"] != "max_tokens" || api["default_sampling_only"] != false {
			t.Errorf("GET judge: %v %s", err, got.Body)
		}
	})
}

// TestJudgeTestConnectionAuditsSavedSettings: the settings Test connection
// finds and saves on a judge are a change of the judge, written with its
// audit entry in one transaction (they were saved with no entry). When the
// log refuses the entry, nothing is saved and the result says so; once it
// works, the next test saves them with one entry naming what was saved.
func TestJudgeTestConnectionAuditsSavedSettings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		f := newReasoningFake(t, simjudge.Reasoning{Wording: simjudge.WordingOpenAI})
		j := f.judge(env, "reasoning", nil)
		test := func() string {
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
			req.Header.Set("X-Requested-With", "fetch")
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec.Body.String()
		}
		stored := func() models.Judge {
			got, err := env.db.FindJudge(context.Background(), env.ws.ID, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		allow := refuseAudit(t, env.db)
		body := test()
		if !strings.Contains(body, templ.EscapeString("the judge's settings could not be saved")) {
			t.Errorf("log refused: the result does not say the settings were not saved: %s", body)
		}
		if got := stored(); got.SendsTokenLimitAs() != judge.TokenLimitMaxTokens {
			t.Errorf("log refused: the token limit was saved anyway (%q)", got.TokenLimit)
		}
		allow()
		before := countAudit(t, env.db, env.ws.ID, models.AuditJudgeUpdated)
		if body := test(); !strings.Contains(body, templ.EscapeString("Saved on the judge")) {
			t.Fatalf("log working: %s", body)
		}
		if got := stored(); got.SendsTokenLimitAs() != judge.TokenLimitMaxCompletionTokens {
			t.Errorf("log working: token limit %q", got.TokenLimit)
		}
		if n := countAudit(t, env.db, env.ws.ID, models.AuditJudgeUpdated) - before; n != 1 {
			t.Fatalf("%d entries for the saved settings, want 1", n)
		}
		var e models.AuditEvent
		if err := env.db.Gorm.Where("workspace_id = ? AND action = ?", env.ws.ID, models.AuditJudgeUpdated).Order("id DESC").First(&e).Error; err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(e.Detail, "token limit sent as max_completion_tokens") || !strings.Contains(e.Target, "reasoning") {
			t.Errorf("entry: target %q, detail %q", e.Target, e.Detail)
		}
	})
}
