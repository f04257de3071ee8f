package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// The document's stream is text the test reads as events (readEvents).
func init() { openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.FileBodyDecoder) }

// sseEvent is one server-sent event: its name and data line.
type sseEvent struct{ name, data string }

// readEvents reads server-sent events until the stream ends.
func readEvents(t *testing.T, body string) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

// TestAPIRunProgressStream: a script follows a run's progress on one
// connection with its token (the browser's stream refused tokens, so
// scripts polled): events carry the API's run as GET answers it, batches
// done never go back, and the stream ends with the finished run; a paused
// run's stream ends at once saying so; a token revoked while a run goes on
// ends its stream with an unauthorized error.
func TestAPIRunProgressStream(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		a := newAPIClient(t, env)
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		_, tok := env.apiToken(env.ws.ID, viewer.ID)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, edTok := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		launch := func(judgeID int64, rounds int) int64 {
			t.Helper()
			return decode[APIRun](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), edTok, map[string]any{
				"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": judgeID, "settings": map[string]any{"rounds": rounds, "batch_size": 10}}),
				http.StatusCreated).ID
		}

		id := launch(d.judge.ID, 2)
		rec := a.get(fmt.Sprintf("/api/v1/runs/%d/events", id), tok)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" {
			t.Fatalf("stream = %d %s %.300s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		events := readEvents(t, rec.Body.String())
		if len(events) == 0 {
			t.Fatalf("no events: %q", rec.Body)
		}
		done := -1
		var last APIRun
		for _, ev := range events {
			if ev.name != "run" {
				t.Fatalf("event %q, want run: %s", ev.name, ev.data)
			}
			var r APIRun
			if err := json.Unmarshal([]byte(ev.data), &r); err != nil || r.ID != id {
				t.Fatalf("event data is not run %d: %v %s", id, err, ev.data)
			}
			var doc any
			_ = json.Unmarshal([]byte(ev.data), &doc)
			if err := a.doc.Components.Schemas["Run"].Value.VisitJSON(doc); err != nil {
				t.Errorf("event data does not match the document's Run: %v", err)
			}
			if r.BatchesDone < done {
				t.Errorf("batches done went back from %d to %d", done, r.BatchesDone)
			}
			done, last = r.BatchesDone, r
		}
		got := decode[APIRun](t, a.get(fmt.Sprintf("/api/v1/runs/%d", id), tok), http.StatusOK)
		if !last.Finished || last.Status != got.Status || last.BatchesDone != got.BatchesDone || last.Calls != got.Calls {
			t.Errorf("last event: %s %d batches %d calls, want the finished run %s %d %d", last.Status, last.BatchesDone, last.Calls,
				got.Status, got.BatchesDone, got.Calls)
		}

		// A judge holding every call: the run stays running.
		inner := simjudge.NewHandler(simjudge.Options{Seed: 3})
		var calls atomic.Int32
		release := make(chan struct{})
		judgeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat/completions" {
				calls.Add(1)
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			inner.ServeHTTP(w, r)
		}))
		defer judgeSrv.Close()
		defer close(release)
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "held", BaseURL: judgeSrv.URL + "/v1", Model: "m", TimeoutSeconds: 60,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		if err := env.db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		held := launch(j.ID, 1)
		waitFor(t, 30*time.Second, "the run calling its judge", func() bool { return calls.Load() > 0 })

		// Paused: the stream says so and ends.
		if _, err := env.runner.Pause(ctx, env.ws.ID, held); err != nil {
			t.Fatal(err)
		}
		events = readEvents(t, a.get(fmt.Sprintf("/api/v1/runs/%d/events", held), tok).Body.String())
		var paused APIRun
		if len(events) != 1 || json.Unmarshal([]byte(events[0].data), &paused) != nil || paused.Status != models.RunPaused {
			t.Errorf("a paused run's stream = %+v, want one event with the paused run", events)
		}
		if _, err := env.runner.Continue(ctx, env.ws.ID, held, models.Requeue{}); err != nil {
			t.Fatal(err)
		}

		// Revoked while streaming: the stream ends saying why.
		own, ownTok := env.apiToken(env.ws.ID, viewer.ID)
		srv := httptest.NewServer(env.e)
		defer srv.Close()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/runs/%d/events", srv.URL, held), nil)
		req.Header.Set("Authorization", "Bearer "+ownTok)
		client := &http.Client{Timeout: 20 * time.Second}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		if line, err := br.ReadString('\n'); err != nil || line != "event: run\n" {
			t.Fatalf("first line %q %v", line, err)
		}
		if _, err := env.db.RevokeAPIToken(ctx, env.ws.ID, viewer.ID, own.ID); err != nil {
			t.Fatal(err)
		}
		var rest strings.Builder
		for {
			line, err := br.ReadString('\n')
			rest.WriteString(line)
			if err != nil {
				break
			}
		}
		ended := readEvents(t, rest.String())
		if len(ended) == 0 || ended[len(ended)-1].name != "ended" || !strings.Contains(ended[len(ended)-1].data, `"code":"unauthorized"`) {
			t.Errorf("stream after the token was revoked: %q, want it to end with an unauthorized error", rest.String())
		}
		if _, err := env.runner.Cancel(ctx, env.ws.ID, held); err != nil {
			t.Fatal(err)
		}
	})
}
