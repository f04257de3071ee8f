package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAPISimulatedCostPerSampleIsZero: the experiment and compare pages
// show a run of the simulated judge as costing $0 per sample, and the run
// itself answers cost_usd 0, but the API answered its cost_per_sample_usd
// null, which the document reads as "the price is unknown". It is 0 now,
// in GET /api/v1/experiments/{id} and in both costs of /api/v1/compare.
func TestAPISimulatedCostPerSampleIsZero(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		launch := map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID,
			"settings": map[string]any{"rounds": 1, "batch_size": 10}}
		e := decode[struct {
			ID int64 `json:"id"`
		}](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/experiments", env.project.ID), tok, launch), http.StatusCreated)
		var got struct {
			Runs []struct {
				Run  APIRun           `json:"run"`
				Cost *json.RawMessage `json:"cost_per_sample_usd"`
			} `json:"runs"`
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			got.Runs = nil
			rec := a.get(fmt.Sprintf("/api/v1/experiments/%d", e.ID), tok)
			if rec.Code == http.StatusOK {
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				done := len(got.Runs) > 0
				for _, r := range got.Runs {
					done = done && r.Run.Finished
				}
				if done {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the experiment's runs did not finish: %d %.300s", rec.Code, rec.Body)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, r := range got.Runs {
			if !r.Run.Simulated {
				t.Fatalf("run %q is not the simulated judge's", r.Run.Name)
			}
			if r.Cost == nil || string(*r.Cost) != "0" {
				t.Errorf("experiment row %q: cost_per_sample_usd %s, want 0 (the page shows $0 (simulated))", r.Run.Name, rawCostText(r.Cost))
			}
		}
		session := env.sessionCookie(editor)
		if page := env.getAs(fmt.Sprintf("/experiments/%d", e.ID), session).Body.String(); strings.Count(page, "$0 (simulated)") < len(got.Runs) {
			t.Errorf("the experiment page does not show $0 (simulated) for each of its %d runs", len(got.Runs))
		}

		launchRun := func() APIRun {
			r := decode[APIRun](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), tok, launch), http.StatusCreated)
			return a.pollRun(r.ID, tok, time.Minute)
		}
		runA, runB := launchRun(), launchRun()
		rec := a.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d", runA.ID, runB.ID), tok)
		var cmp struct {
			A struct {
				Text string           `json:"cost_text"`
				Cost *json.RawMessage `json:"cost_per_sample_usd"`
			} `json:"a_cost"`
			B struct {
				Text string           `json:"cost_text"`
				Cost *json.RawMessage `json:"cost_per_sample_usd"`
			} `json:"b_cost"`
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("compare = %d %s", rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &cmp); err != nil {
			t.Fatal(err)
		}
		for side, c := range map[string]*json.RawMessage{"a_cost": cmp.A.Cost, "b_cost": cmp.B.Cost} {
			if c == nil || string(*c) != "0" {
				t.Errorf("compare %s.cost_per_sample_usd %s, want 0 (cost_text %q)", side, rawCostText(c), cmp.A.Text)
			}
		}
	})
}

func rawCostText(c *json.RawMessage) string {
	if c == nil {
		return "null"
	}
	return string(*c)
}
