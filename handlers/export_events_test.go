package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestJSONExportListsRunEvents: the run's JSON export said nothing of its
// events (a worker lost its lease, another took the run over, a call's
// answer counted after the run ended), which the run page's Run history card,
// the API's run, share links and the HTML report show, so a reader of the
// file could not tell why the run's figures grew after it ended. The
// export's envelope now lists them, oldest first, with the fields the
// API's run gives (at, kind, worker, message), outside the report part,
// which two runs of the same inputs give byte for byte; a run without
// events exports an empty list.
func TestJSONExportListsRunEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.ratedDataset("Events", 3)
		run := env.storedRun(d, "Late", d.human, nil)
		quiet := env.storedRun(d, "Quiet", d.human, nil)

		// A viewer downloads from the run page; the owner reads the API.
		viewer := env.createUser(env.ws.ID, "vi@a.test", models.RoleViewer)
		session := env.sessionCookie(viewer)
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		page := func(path string) *httptest.ResponseRecorder { return env.send(http.MethodGet, path, nil, "", session) }
		type event struct {
			At      time.Time `json:"at"`
			Kind    string    `json:"kind"`
			Worker  string    `json:"worker"`
			Message string    `json:"message"`
		}
		exported := func(get func(string) *httptest.ResponseRecorder, path string) []event {
			t.Helper()
			rec := get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
			}
			var doc struct {
				Envelope struct {
					Events *[]event `json:"events"`
				} `json:"envelope"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			if doc.Envelope.Events == nil {
				t.Fatalf("GET %s: the envelope has no events list: %.400s", path, rec.Body)
			}
			return *doc.Envelope.Events
		}
		viaAPI := func(path string) *httptest.ResponseRecorder { return api.get(path, token) }
		before := exported(page, fmt.Sprintf("/runs/%d/export.json", run.ID))
		if len(before) != 0 {
			t.Fatalf("a run without events exports %+v", before)
		}

		// A worker lost the run and another took it over; then a call the
		// first had sent came back after the run had finished, and was
		// counted (the runner's own path for it).
		takenAt := time.Date(2026, 3, 4, 10, 0, 11, 0, time.UTC)
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: run.ID, At: takenAt, Kind: models.RunEventTakenOver, Worker: "other-host-1-77-def/1",
			Message: "Worker other-host-1-77-def took the run over at 2026-03-04 10:00:11 UTC from worker build-host-7-4242-abc."}))
		batches, err := env.db.RoundBatches(ctx, run.ID, 0, 0)
		must(t, err)
		late := models.UnitSpend{Calls: 1, PromptTokens: 120, CompletionTokens: 8, Paid: []models.PaidCall{{ID: "late-call-1", PromptTokens: 120, CompletionTokens: 8}}}
		must(t, env.db.AddUnitSpend(models.WithLeaseOwner(ctx, "build-host-7-4242-abc/3"), run.ID, batches[0].ID, late))

		var fromAPI struct {
			Events []event `json:"events"`
		}
		rec := viaAPI(fmt.Sprintf("/api/v1/runs/%d", run.ID))
		must(t, json.Unmarshal(rec.Body.Bytes(), &fromAPI))
		kinds := func(evs []event) []string {
			var out []string
			for _, ev := range evs {
				out = append(out, ev.Kind)
			}
			return out
		}
		if got := kinds(fromAPI.Events); !slices.Equal(got, []string{models.RunEventTakenOver, models.RunEventLateCount}) {
			t.Fatalf("fixture: the API lists %v, want taken_over then late_count", got)
		}

		for _, tc := range []struct {
			name, path string
			get        func(string) *httptest.ResponseRecorder
		}{
			{"the run page's download", fmt.Sprintf("/runs/%d/export.json", run.ID), page},
			{"the API's download", fmt.Sprintf("/api/v1/runs/%d/export.json", run.ID), viaAPI},
			{"the API's results", fmt.Sprintf("/api/v1/runs/%d/results", run.ID), viaAPI},
		} {
			t.Run(tc.name, func(t *testing.T) {
				events := exported(tc.get, tc.path)
				if len(events) != len(fromAPI.Events) {
					t.Fatalf("%d events exported, want the API's %d: %+v", len(events), len(fromAPI.Events), events)
				}
				for i, want := range fromAPI.Events {
					if got := events[i]; !got.At.Equal(want.At) || got.Kind != want.Kind || got.Worker != want.Worker || got.Message != want.Message {
						t.Errorf("event %d exported as %+v, want the API's %+v", i+1, got, want)
					}
				}
				if events[0].Kind != models.RunEventTakenOver || !events[0].At.Equal(takenAt) || events[0].Worker != "other-host-1-77-def/1" {
					t.Errorf("first event %+v, want the takeover at %s by other-host-1-77-def/1", events[0], takenAt)
				}
				if ev := events[1]; ev.Kind != models.RunEventLateCount || ev.Worker != "build-host-7-4242-abc/3" || !strings.Contains(ev.Message, "120 prompt") {
					t.Errorf("second event %+v, want the late count of worker build-host-7-4242-abc/3 with its 120 prompt tokens", ev)
				}
			})
		}

		if events := exported(viaAPI, fmt.Sprintf("/api/v1/runs/%d/export.json", quiet.ID)); len(events) != 0 {
			t.Errorf("another run of the workspace exports events %+v", events)
		}
	})
}

// TestExportCountsLateCallsAfterItWasRead: a call sent before a run ended
// that came back after it adds its calls, tokens and cost to the finished
// run, and its late_count event says reports downloaded before then do not
// include it. But a JSON export downloaded after it still stated the old
// calls and tokens when the run's report had been read before (the
// server's cache of finished runs' reports kept the run as it was then);
// the API's run stated the new ones. The export now states what the
// API's run does.
func TestExportCountsLateCallsAfterItWasRead(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.ratedDataset("Late spend", 3)
		run := env.storedRun(d, "Late", d.human, nil)
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		session := env.sessionCookie(owner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		type counts struct {
			Calls            int `json:"calls"`
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
		exported := func(rec *httptest.ResponseRecorder) counts {
			t.Helper()
			if rec.Code != http.StatusOK {
				t.Fatalf("export: %d %.300s", rec.Code, rec.Body)
			}
			var doc struct {
				Report struct {
					Run counts `json:"run"`
				} `json:"report"`
			}
			must(t, json.Unmarshal(rec.Body.Bytes(), &doc))
			return doc.Report.Run
		}
		page := func() counts {
			return exported(env.send(http.MethodGet, fmt.Sprintf("/runs/%d/export.json", run.ID), nil, "", session))
		}
		results := func() counts { return exported(api.get(fmt.Sprintf("/api/v1/runs/%d/results", run.ID), token)) }
		if got := page(); got != (counts{}) {
			t.Fatalf("before the late call: %+v, want no calls", got)
		}
		results()

		batches, err := env.db.RoundBatches(ctx, run.ID, 0, 0)
		must(t, err)
		late := models.UnitSpend{Calls: 1, PromptTokens: 120, CompletionTokens: 8, Paid: []models.PaidCall{{ID: "late-call-1", PromptTokens: 120, CompletionTokens: 8}}}
		must(t, env.db.AddUnitSpend(models.WithLeaseOwner(ctx, "build-host-7-4242-abc/3"), run.ID, batches[0].ID, late))

		var fromAPI counts
		must(t, json.Unmarshal(api.get(fmt.Sprintf("/api/v1/runs/%d", run.ID), token).Body.Bytes(), &fromAPI))
		want := counts{Calls: 1, PromptTokens: 120, CompletionTokens: 8}
		if fromAPI != want {
			t.Fatalf("fixture: the API's run states %+v, want %+v", fromAPI, want)
		}
		if got := page(); got != want {
			t.Errorf("the run page's export after the late call: %+v, want %+v as the API's run", got, want)
		}
		if got := results(); got != want {
			t.Errorf("the API's results after the late call: %+v, want %+v as the API's run", got, want)
		}
	})
}

// TestLateCountCostAgreesWithTheCounters: a late count's cost reads as the
// run's counters read it, on the run page (Run history beside the Cost
// counter), in the API's run and in the JSON export: "$0 (simulated
// judge)" for the built-in simulated judge (regression: "$0.000000", or
// "cost unknown" when its calls came without a price), "unknown" for a
// judge without prices, and a priced judge's amount written as every page
// writes money (regression: six decimals, "$0.001360").
func TestLateCountCostAgreesWithTheCounters(t *testing.T) {
	in, out := 1.0, 2.0
	judges := []struct {
		name   string
		change func(*models.Run)
		cost   string // the late count's cost, as the run's Cost counter says it
	}{
		{"simulated judge", nil, "$0 (simulated judge)"},
		{"judge without prices", func(r *models.Run) { r.Simulated = false }, "cost unknown (the judge has no price)"},
		{"priced judge", func(r *models.Run) {
			r.Simulated = false
			r.JudgeSnapshot = models.JudgeSnapshot{Name: "priced", Model: "m", PriceInputPerMTok: &in, PriceOutputPerMTok: &out}
		}, "$0.00136"},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.ratedDataset("Late cost", 3)
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		session := env.sessionCookie(owner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		for _, j := range judges {
			t.Run(j.name, func(t *testing.T) {
				run := env.storedRun(d, j.name, d.human, j.change)
				batches, err := env.db.RoundBatches(ctx, run.ID, 0, 0)
				must(t, err)
				// A call out when the run ended: 1200 prompt and 80
				// completion tokens, $0.00136 at $1 and $2 per million.
				late := models.SpendOf([]models.PaidCall{{ID: "late-" + j.name, PromptTokens: 1200, CompletionTokens: 80, Cost: run.JudgeSnapshot.Cost(1200, 80)}})
				must(t, env.db.AddUnitSpend(models.WithLeaseOwner(ctx, "host-1-2-abc/1"), run.ID, batches[0].ID, late))
				words := "1 call, 1200 prompt and 80 completion tokens, " + j.cost + "."

				rec := env.send(http.MethodGet, fmt.Sprintf("/runs/%d", run.ID), nil, "", session)
				if rec.Code != http.StatusOK {
					t.Fatalf("run page: %d", rec.Code)
				}
				if body := rec.Body.String(); !strings.Contains(body, words) || strings.Contains(body, "0.001360") || strings.Contains(body, "$0.000000") {
					t.Errorf("the run page's Run history does not say %q (or writes a six-decimal amount)", words)
				}
				if j.change != nil && strings.Contains(j.name, "priced") && !strings.Contains(rec.Body.String(), ">"+j.cost+"<") {
					t.Errorf("the run page's Cost counter does not read %q as the event does", j.cost)
				}
				var fromAPI struct {
					Events []struct {
						Kind, Message string
					} `json:"events"`
				}
				must(t, json.Unmarshal(api.get(fmt.Sprintf("/api/v1/runs/%d", run.ID), token).Body.Bytes(), &fromAPI))
				if len(fromAPI.Events) != 1 || !strings.Contains(fromAPI.Events[0].Message, words) {
					t.Errorf("the API's events %+v, want one late count saying %q", fromAPI.Events, words)
				}
				var doc struct {
					Envelope struct {
						Events []struct{ Message string } `json:"events"`
					} `json:"envelope"`
				}
				must(t, json.Unmarshal(api.get(fmt.Sprintf("/api/v1/runs/%d/export.json", run.ID), token).Body.Bytes(), &doc))
				if len(doc.Envelope.Events) != 1 || !strings.Contains(doc.Envelope.Events[0].Message, words) {
					t.Errorf("the JSON export's events %+v, want one late count saying %q", doc.Envelope.Events, words)
				}
			})
		}
	})
}
