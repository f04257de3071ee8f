package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPISimulatedJudgeRefusesWhatItDoesNotTake: a PUT to the simulated
// judge saved its max_concurrency and silently dropped every other setting
// it was sent, answering 200 as if a new name, model, temperature, price
// or key had been saved. A setting sent with another value than the
// judge's is now refused with 422 naming it, and nothing is saved; the
// judge's answer sent back as is, or with only max_concurrency changed,
// still saves.
func TestAPISimulatedJudgeRefusesWhatItDoesNotTake(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		sim, err := env.db.EnsureSimulatedJudge(ctx, env.ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/api/v1/judges/%d", sim.ID)
		read := func() map[string]any { return decode[map[string]any](t, a.get(path, tok), http.StatusOK) }
		with := func(changes map[string]any) map[string]any {
			b := read()
			for k, v := range changes {
				b[k] = v
			}
			return b
		}
		for _, tc := range []struct {
			name    string
			changes map[string]any
			says    []string
		}{
			{"a new name", map[string]any{"name": "My judge"}, []string{`so "name" cannot be changed`, "send it as GET " + path + " answers"}},
			{"a model and a temperature", map[string]any{"model": "gpt-4o", "temperature": 0.7},
				[]string{`so "model" and "temperature" cannot be changed`, "send them as"}},
			{"a key", map[string]any{"api_key": "sk-not-used"}, []string{`"api_key" cannot be changed`}},
			{"a base URL", map[string]any{"base_url": "https://api.openai.com/v1"}, []string{`"base_url" cannot be changed`}},
			{"prices", map[string]any{"price_input_per_mtok": 2.5, "price_output_per_mtok": 10},
				[]string{`"price_input_per_mtok" and "price_output_per_mtok" cannot be changed`}},
			{"a context window", map[string]any{"context_tokens": 8192}, []string{`"context_tokens" cannot be changed`}},
			{"the token limit's name", map[string]any{"token_limit": "max_completion_tokens"}, []string{`"token_limit" cannot be changed`}},
			// With a change it takes: nothing is saved, that one neither.
			{"a timeout beside a concurrency", map[string]any{"timeout_seconds": 99, "max_concurrency": 7}, []string{`so "timeout_seconds" cannot be changed`}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := a.json(http.MethodPut, path, tok, with(tc.changes))
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("PUT with %s = %d %s, want 422", tc.name, rec.Code, rec.Body)
				}
				msg := apiMessage(t, rec.Body.Bytes())
				for _, s := range append(tc.says, "nothing was saved", "takes only max_concurrency") {
					if !strings.Contains(msg, s) {
						t.Errorf("PUT with %s said %q, want it to say %s", tc.name, msg, s)
					}
				}
			})
		}
		after, err := env.db.FindJudge(ctx, env.ws.ID, sim.ID)
		if err != nil {
			t.Fatal(err)
		}
		if after.Revision() != sim.Revision() || after.MaxConcurrency != sim.MaxConcurrency || after.Name != sim.Name || after.APIKey != "" {
			t.Errorf("a refused PUT changed the simulated judge: %+v, was %+v", after, sim)
		}
		// What it takes still saves: the answer as read, prices and window
		// null (unknown) as sent by a client that writes every key, and a
		// new concurrency.
		if rec := a.json(http.MethodPut, path, tok, read()); rec.Code != http.StatusOK {
			t.Errorf("the simulated judge's answer sent back as is = %d %s", rec.Code, rec.Body)
		}
		put := decode[APIJudge](t, a.json(http.MethodPut, path, tok, with(map[string]any{"max_concurrency": 3, "context_tokens": nil})), http.StatusOK)
		if !put.Simulated || put.MaxConcurrency != 3 || put.Name != sim.Name || put.Model != sim.Model {
			t.Errorf("the simulated judge after a PUT of max_concurrency 3: %+v", put)
		}
	})
}
