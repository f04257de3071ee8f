package runner

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestJudgeKeyGoesOnlyToTheJudgesEndpoint: a run calls the address it
// started with, but took the judge's key as it is now. So once an owner
// moved a judge to another endpoint and gave it that endpoint's key, a run
// still on the old address (resumed, continued or taken over) sent the
// new key to the old endpoint, which the owner had left. Found by trying
// the product: an editor's Resume handed the new provider's key to the
// old one. The key now goes only to the endpoint the judge has.
func TestJudgeKeyGoesOnlyToTheJudgesEndpoint(t *testing.T) {
	t.Parallel()
	const key = "sk-for-the-new-endpoint"
	// seen records the Authorization headers a fake endpoint received.
	type seen struct {
		mu    sync.Mutex
		auths []string
	}
	recorder := func(s *seen) fault {
		return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.auths = append(s.auths, r.Header.Get("Authorization"))
			return false // the simulated judge answers
		}
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		var atOld, atNew seen
		oldJudge := newFakeJudge(t, simjudge.Options{Seed: 3}, recorder(&atOld))
		newJudge := newFakeJudge(t, simjudge.Options{Seed: 3}, recorder(&atNew))
		// The judge as it is now: the new endpoint with its key.
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "moved", BaseURL: newJudge.URL(), Model: "fake-judge",
			APIKey: key, MaxConcurrency: 4}
		if err := env.db.SaveJudge(context.Background(), &j); err != nil {
			t.Fatal(err)
		}
		r := env.startRunner(Config{})

		// A run on the judge's own endpoint sends its key (the control).
		onNew := env.newRun(newJudge.URL(), 1, 2, 30)
		onNew.JudgeID = &j.ID
		wantSucceeded(t, env.waitFinished(env.launch(r, onNew).ID, 30*time.Second))
		atNew.mu.Lock()
		if len(atNew.auths) == 0 || atNew.auths[0] != "Bearer "+key {
			t.Errorf("the judge's own endpoint got Authorization %q, want the judge's key", atNew.auths)
		}
		atNew.mu.Unlock()

		// A run that started on the judge's old address keeps calling it,
		// but without the key meant for the new endpoint.
		onOld := env.newRun(oldJudge.URL(), 1, 2, 30)
		onOld.JudgeID = &j.ID
		env.waitFinished(env.launch(r, onOld).ID, 30*time.Second)
		atOld.mu.Lock()
		defer atOld.mu.Unlock()
		if len(atOld.auths) == 0 {
			t.Fatal("the run on the old address sent it nothing")
		}
		for _, a := range atOld.auths {
			if a != "" {
				t.Fatalf("the judge's old endpoint got Authorization %q: the key of the judge's new endpoint went to the old one", a)
			}
		}
	})
}

// TestSameEndpoint: what counts as the same judge endpoint.
func TestSameEndpoint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		want bool
	}{
		{"https://api.openai.com/v1", "https://api.openai.com/v1", true},
		{"https://api.openai.com/v1", "https://API.openai.com:443/openai/v1?api-version=1", true},
		{"http://localhost:11434/v1", "http://localhost:80/v1", false},
		{"http://example.com/v1", "http://example.com:80/v2", true},
		{"https://api.openai.com/v1", "http://api.openai.com/v1", false},
		{"https://api.openai.com/v1", "https://openrouter.ai/api/v1", false},
		{"https://a.example/v1", "https://a.example:8443/v1", false},
		{"", "https://a.example/v1", false},
		{"not a url", "not a url", false},
	}
	for _, c := range cases {
		if got := sameEndpoint(c.a, c.b); got != c.want {
			t.Errorf("sameEndpoint(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
