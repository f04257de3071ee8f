package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestCompareFollowsAnswersStoredAfterCancel: a cancelled run's calls that
// were already out are answered after its end, and their scores are
// stored on it (its batches done grow, its finished_at does not change).
// A comparison with that run read while those calls were out was cached
// under the runs' ends only, so the compare page and GET /api/v1/compare
// kept the old figures (the agreement between the runs over the samples
// scored then, its n) until the server restarted, while the run's own
// page and exports showed the new ones. The comparison must follow the
// scores as stored: after the held answers arrive it reads as a process
// that never saw the earlier state does.
func TestCompareFollowsAnswersStoredAfterCancel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		if !a.Completed() {
			t.Fatalf("run A %s", a.Status)
		}

		// A judge that answers its first two calls and holds the others
		// until released: the run is cancelled with two calls out.
		const free = 2
		inner := simjudge.NewHandler(simjudge.Options{Seed: 3})
		var entered atomic.Int32
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat/completions" && entered.Add(1) > free {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			inner.ServeHTTP(w, r)
		}))
		released := false
		defer func() {
			if !released {
				close(release)
			}
		}()
		t.Cleanup(srv.Close)
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "held", BaseURL: srv.URL + "/v1", Model: "m", TimeoutSeconds: 30,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		if err := env.db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		form := d.launchForm("1", "10")
		form.Set("judge", strconv.FormatInt(j.ID, 10))
		bID := env.launch(form)
		waitFor(t, 30*time.Second, "two answers stored and two calls held", func() bool {
			b, err := env.db.GetRun(ctx, bID)
			return err == nil && b.BatchesDone == free && entered.Load() == free+2
		})
		if rec := env.postForm("/runs/"+strconv.FormatInt(bID, 10)+"/cancel", nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("cancel: %d %s", rec.Code, rec.Body.String())
		}

		compare := func(e http.Handler, criterion int) string {
			t.Helper()
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=%d", a.ID, bID, criterion), nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("compare criterion %d: %d %.300s", criterion, rec.Code, rec.Body.String())
			}
			var v struct {
				Pearson   json.RawMessage `json:"pearson"`
				Spearman  json.RawMessage `json:"spearman"`
				Reading   string          `json:"reading"`
				Agreement json.RawMessage `json:"agreement"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("pearson %s spearman %s reading %q agreement %s", v.Pearson, v.Spearman, v.Reading, v.Agreement)
		}
		criteria := len(d.rubric.Criteria)
		before := make([]string, criteria)
		for k := range criteria {
			before[k] = compare(env.e, k) // read while the two calls are out
		}

		close(release)
		released = true
		waitFor(t, 30*time.Second, "the held answers stored on the cancelled run", func() bool {
			b, err := env.db.GetRun(ctx, bID)
			return err == nil && b.BatchesDone == free+2
		})
		b, err := env.db.GetRun(ctx, bID)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != models.RunCancelled {
			t.Fatalf("run B %s, want cancelled", b.Status)
		}

		// A process that never saw the earlier state.
		_, fresh := newTestHandlers(t, env.db, env.runner, env.ws, env.sim.URL)
		changed := false
		for k := range criteria {
			want := compare(fresh, k)
			if got := compare(env.e, k); got != want {
				t.Errorf("criterion %d: the comparison read after the late answers is\n  %s\nwant what a fresh process reads\n  %s", k, got, want)
			}
			changed = changed || want != before[k]
		}
		if !changed {
			t.Fatalf("the late answers changed no comparison: the test shows nothing")
		}
	})
}

// waitFor polls cond until it holds, failing the test after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
