package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestLaunchHedgeSlowCallsSetting: the launch form shows "Re-send slow
// judge calls" ticked, saying each re-send is a paid call and how to
// avoid it; a run re-sends slow calls unless the box, shown, came back
// unticked (a post without it, a script, keeps the default, on) or the API
// said false (absent: on; validated against the OpenAPI document both
// ways); the run's settings then say so on its page and in the API, and a
// run without it states nothing new.
func TestLaunchHedgeSlowCallsSetting(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		body := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String()
		i := strings.Index(body, `data-testid="hedge-slow-calls"`)
		if i < 0 {
			t.Fatal("the launch form has no re-send slow calls box")
		}
		if input := body[strings.LastIndex(body[:i], "<input"):i]; !strings.Contains(input, "checked") || !strings.Contains(input, `name="hedge_slow_calls"`) {
			t.Errorf("the re-send box is %q, want a ticked hedge_slow_calls box", input)
		}
		if !strings.Contains(body, `name="hedge_slow_calls_shown"`) {
			t.Error("the launch form does not post that it showed the re-send box: unticking it would not turn re-sends off")
		}
		if !strings.Contains(body, "Each re-send is a paid call") {
			t.Error("the launch form does not say a re-send is a paid call")
		}
		for _, tc := range []struct {
			name string
			set  map[string]string
			want bool
		}{
			{"box ticked", map[string]string{"hedge_slow_calls_shown": "1", "hedge_slow_calls": "on"}, true},
			{"box shown and left unticked", map[string]string{"hedge_slow_calls_shown": "1"}, false},
			{"no box (a script): the default", nil, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				form := d.launchForm("1", "10")
				for k, v := range tc.set {
					form.Set(k, v)
				}
				id := env.launch(form)
				run, err := env.db.GetRun(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if run.Settings.HedgeSlowCalls != tc.want {
					t.Errorf("HedgeSlowCalls = %v, want %v", run.Settings.HedgeSlowCalls, tc.want)
				}
				env.waitRun(id, 30*time.Second)
				page := env.get(fmt.Sprintf("/runs/%d", id)).Body.String()
				if got := strings.Contains(page, "hedge_slow_calls=true"); got != tc.want {
					t.Errorf("the run page states hedge_slow_calls=true: %v, want %v", got, tc.want)
				}
				if strings.Contains(page, "hedge_slow_calls=false") {
					t.Error("the run page states hedge_slow_calls=false for a run without it")
				}
				api := env.get(fmt.Sprintf("/api/v1/runs/%d", id)).Body.String()
				if got := strings.Contains(api, `"hedge_slow_calls":true`); got != tc.want {
					t.Errorf("the API states hedge_slow_calls true: %v, want %v", got, tc.want)
				}
				if !tc.want && strings.Contains(api, "hedge_slow_calls") {
					t.Error("the API states hedge_slow_calls for a run without it")
				}
			})
		}

		// The API's launch: absent is the default (on), false turns it off.
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@hedge.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		for _, tc := range []struct {
			name  string
			hedge any // nil: absent
			want  bool
		}{
			{"absent", nil, true},
			{"true", true, true},
			{"false", false, false},
		} {
			settings := map[string]any{"rounds": 1, "batch_size": 10}
			if tc.hedge != nil {
				settings["hedge_slow_calls"] = tc.hedge
			}
			rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), tok, map[string]any{
				"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "name": "hedge via the API, " + tc.name,
				"settings": settings,
			})
			launched := decode[APIRun](t, rec, http.StatusCreated)
			if launched.Settings.HedgeSlowCalls != tc.want {
				t.Errorf("API launch with hedge_slow_calls %s: settings %+v, want hedge %v", tc.name, launched.Settings, tc.want)
			}
			run, err := env.db.GetRun(context.Background(), launched.ID)
			if err != nil || run.Settings.HedgeSlowCalls != tc.want {
				t.Errorf("API launch with hedge_slow_calls %s: the run stored HedgeSlowCalls = %v (%v), want %v", tc.name, run.Settings.HedgeSlowCalls, err, tc.want)
			}
			a.pollRun(launched.ID, tok, 60*time.Second)
		}
	})
}
