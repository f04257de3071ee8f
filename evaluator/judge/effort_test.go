package judge

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
)

// TestParseReasoningEffort: the three values OpenAI and OpenRouter take, in
// any case and with spaces around; blank is none; anything else is refused
// naming the three and that blank sends none.
func TestParseReasoningEffort(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    ReasoningEffort
		wantErr bool
	}{
		{"", ReasoningEffortUnset, false},
		{"  ", ReasoningEffortUnset, false},
		{"low", ReasoningEffortLow, false},
		{" Medium ", ReasoningEffortMedium, false},
		{"HIGH", ReasoningEffortHigh, false},
		{"minimal", "", true},
		{"max", "", true},
		{"<b>high</b>", "", true},
	} {
		got, err := ParseReasoningEffort(tc.in)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "low, medium and high") || !strings.Contains(err.Error(), "blank") {
				t.Errorf("%q: %v, want a refusal naming low, medium and high and blank", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := New(Config{BaseURL: "https://api.openai.com/v1", Model: "o3", ReasoningEffort: "extreme"}); err == nil || !strings.Contains(err.Error(), "reasoning effort") {
		t.Errorf("New with an unknown effort: %v, want the effort refused", err)
	}
}

// TestReasoningEffortSent: a judge's reasoning effort reaches a reasoning
// model as reasoning_effort and the model answers; a judge without one
// sends none. A model that refuses it (o1-mini refused it at any value, in
// each endpoint's wording) is refused once, read as
// UnsupportedReasoningEffort, and the error names the setting to clear
// where it is set: the judge's page, or the command line's flag.
func TestReasoningEffortSent(t *testing.T) {
	req := Request{Messages: evaluator.ScoreCheckMessages(), MaxTokens: 30}
	base := Config{Model: "o4-mini", TokenLimit: TokenLimitMaxCompletionTokens, DefaultSamplingOnly: true, MaxAttempts: 3, MinBackoff: 1, MaxBackoff: 1}
	for _, effort := range append([]ReasoningEffort{ReasoningEffortUnset}, ReasoningEfforts...) {
		ep := newReasoningEndpoint(t, simjudge.Reasoning{})
		cfg := base
		cfg.BaseURL, cfg.ReasoningEffort = ep.srv.URL+"/v1", effort
		resp, err := mustNew(t, cfg).Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("effort %q: %v", effort, err)
		}
		if _, ok := evaluator.ReadScoreCheck(resp.Text()); !ok {
			t.Errorf("effort %q: no score in %q", effort, resp.Text())
		}
		v, sent := ep.calls()[0]["reasoning_effort"]
		switch {
		case effort == ReasoningEffortUnset && sent:
			t.Errorf("no effort set, but reasoning_effort %s sent", v)
		case effort != ReasoningEffortUnset && string(v) != `"`+string(effort)+`"`:
			t.Errorf("effort %q: reasoning_effort sent %s", effort, v)
		}
	}

	for _, wording := range []simjudge.Wording{simjudge.WordingOpenAI, simjudge.WordingAzure, simjudge.WordingOpenRouter} {
		for _, tc := range []struct {
			at        SettingsPlace
			want, not string
		}{
			{SettingsOnJudgePage, `clear "Reasoning effort" on the judge's page`, "--reasoning-effort"},
			{SettingsAsFlags, "run again without --reasoning-effort", "judge's page"},
			{SettingsKeptByRun, "start a new run instead, `batcheval run` without --reasoning-effort", "judge's page"},
		} {
			ep := newReasoningEndpoint(t, simjudge.Reasoning{Wording: wording, NoReasoningEffort: true})
			cfg := base
			cfg.BaseURL, cfg.ReasoningEffort, cfg.SettingsAt = ep.srv.URL+"/v1", ReasoningEffortHigh, tc.at
			_, err := mustNew(t, cfg).Complete(context.Background(), req)
			je := judgeError(t, err)
			if je.Kind != KindBadRequest || je.Unsupported != UnsupportedReasoningEffort || je.Attempts != 1 {
				t.Errorf("%s: kind %s, unsupported %q, %d attempts; want bad_request, reasoning_effort, 1: %v", wording, je.Kind, je.Unsupported, je.Attempts, err)
			}
			if !strings.Contains(je.Hint, tc.want) || strings.Contains(je.Hint, tc.not) || !strings.Contains(je.Hint, "reasoning_effort high") || !strings.HasSuffix(je.InRun(), je.Hint) {
				t.Errorf("%s: hint %q, want %q and not %q, at the end of %q", wording, je.Hint, tc.want, tc.not, je.InRun())
			}
		}
	}
}

// TestRefusalHintsNameTheCommandLineFlags: the command line has no judge
// page and no Test connection button; a refusal of max_tokens or of the
// temperature there names the flag that answers it. The judge page's
// wording is kept for the server.
func TestRefusalHintsNameTheCommandLineFlags(t *testing.T) {
	req := Request{Messages: evaluator.ScoreCheckMessages(), Temperature: 0.2, TopP: 0.9, MaxTokens: 30}
	for _, tc := range []struct {
		name        string
		limit       TokenLimit
		at          SettingsPlace
		want, wantN string // wantN must not be in the hint
	}{
		{"max_tokens, page", "", SettingsOnJudgePage, "press Test connection", "--token-limit"},
		{"max_tokens, flags", "", SettingsAsFlags, "--token-limit max_completion_tokens", "Test connection"},
		{"temperature, page", TokenLimitMaxCompletionTokens, SettingsOnJudgePage, "press Test connection", "--default-sampling-only"},
		{"temperature, flags", TokenLimitMaxCompletionTokens, SettingsAsFlags, "--default-sampling-only", "Test connection"},
		// `batcheval resume`: the run keeps its settings; neither the
		// judge's page nor "run again" (read as resume again) fits.
		{"max_tokens, resumed run", "", SettingsKeptByRun, "start a new run instead, `batcheval run` with --token-limit max_completion_tokens", "Test connection"},
		{"temperature, resumed run", TokenLimitMaxCompletionTokens, SettingsKeptByRun, "resuming it again fails the same way", "Test connection"},
	} {
		ep := newReasoningEndpoint(t, simjudge.Reasoning{})
		c := mustNew(t, Config{BaseURL: ep.srv.URL + "/v1", Model: "o4-mini", TokenLimit: tc.limit, SettingsAt: tc.at, MaxAttempts: 1})
		_, err := c.Complete(context.Background(), req)
		je := judgeError(t, err)
		if !strings.Contains(je.Hint, tc.want) || strings.Contains(je.Hint, tc.wantN) {
			t.Errorf("%s: hint %q, want %q and not %q", tc.name, je.Hint, tc.want, tc.wantN)
		}
	}
}
