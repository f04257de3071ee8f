package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// receiver is a webhook endpoint that records what it is sent and answers
// with the statuses it is given, in turn (200 once they run out).
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []WebhookMessage
	hold     chan struct{} // when set, requests wait for it to close
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	rc := &receiver{statuses: statuses}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc.hold != nil {
			<-rc.hold
		}
		body, _ := io.ReadAll(r.Body)
		var m WebhookMessage
		if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &m) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.got = append(rc.got, m)
		status := http.StatusOK
		if len(rc.statuses) > 0 {
			status, rc.statuses = rc.statuses[0], rc.statuses[1:]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// waitJobDone waits until the run's job has returned (the run-end hook
// runs as the job returns, after the run is stored as finished).
func (env *testEnv) waitJobDone(run models.Run) {
	env.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		switch env.job(*run.JobID).State {
		case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
			return
		}
		if time.Now().After(deadline) {
			env.t.Fatalf("job of run %d still %s", run.ID, env.job(*run.JobID).State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (rc *receiver) messages() []WebhookMessage {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]WebhookMessage(nil), rc.got...)
}

// TestWebhookOnRunEnd: a finished or failed run is announced once to the
// workspace's webhook with its outcome and the run's address, retried
// after a server error, and not at all for an event the owner turned off.
func TestWebhookOnRunEnd(t *testing.T) {
	tests := []struct {
		name       string
		fail       bool     // the judge refuses the key: the run fails
		onFinished bool     // webhook settings
		onFailed   bool     //
		statuses   []int    // the receiver's answers in turn
		wantPosts  int      // requests the receiver sees
		wantEvent  string   // "" when nothing is delivered
		wantText   []string // in the message's text
		wantStatus string   // last delivery recorded (its start)
		attempts   int      // WebhookConfig.Attempts; 0 for the default
	}{
		{name: "finished, retried after 503", onFinished: true, onFailed: true, statuses: []int{503}, wantPosts: 2,
			wantEvent: EventRunFinished, wantText: []string{"finished.", "Pearson", "<https://eval.example.test/runs/", "|Open the run>"}, wantStatus: "200 OK"},
		{name: "failed", fail: true, onFinished: false, onFailed: true, wantPosts: 1,
			wantEvent: EventRunFailed, wantText: []string{"failed:", "401"}, wantStatus: "200 OK"},
		{name: "failed, but only finished runs are wanted", fail: true, onFinished: true, onFailed: false, wantPosts: 0},
		{name: "server errors until the last attempt", onFinished: true, statuses: []int{503, 502}, attempts: 2, wantPosts: 2,
			wantEvent: EventRunFinished, wantStatus: "502 Bad Gateway (run ", wantText: []string{"finished."}},
		{name: "client error is not retried", onFinished: true, onFailed: true, statuses: []int{404}, wantPosts: 1,
			wantEvent: EventRunFinished, wantStatus: "404 Not Found"},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				rc := newReceiver(t, tc.statuses...)
				if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL + "/hook",
					BaseURL: "https://eval.example.test", OnFinished: tc.onFinished, OnFailed: tc.onFailed}); err != nil {
					t.Fatal(err)
				}
				fj := newFakeJudge(t, simjudge.Options{Seed: 3}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					if tc.fail {
						writeAPIError(w, http.StatusUnauthorized, nil, "bad key")
						return true
					}
					return false
				})
				r := env.startRunner(Config{Webhooks: WebhookConfig{AllowLoopback: true, Backoff: 5 * time.Millisecond, Timeout: 5 * time.Second, Attempts: tc.attempts}})
				// Stop it with the case: the next case's run must go to the
				// next case's runner.
				t.Cleanup(func() {
					sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = r.Stop(sctx)
				})
				run := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
				run = env.waitFinished(run.ID, 60*time.Second)
				if (run.Status == models.RunFailed) != tc.fail {
					t.Fatalf("run ended %s (%s)", run.Status, run.Error)
				}
				env.waitJobDone(run)
				r.WaitNotifications()
				got := rc.messages()
				if len(got) != tc.wantPosts {
					t.Fatalf("receiver got %d posts, want %d: %+v", len(got), tc.wantPosts, got)
				}
				wh, err := env.db.FindWebhook(ctx, env.ws.ID)
				if err != nil {
					t.Fatal(err)
				}
				if tc.wantPosts == 0 {
					if wh.LastSentAt != nil {
						t.Errorf("a delivery was recorded: %+v", wh)
					}
					return
				}
				m := got[len(got)-1]
				if m.Event != tc.wantEvent || m.Run.ID != run.ID || m.Run.Status != run.Status || m.Run.URL != "https://eval.example.test/runs/"+strconv.FormatInt(run.ID, 10) {
					t.Errorf("message: %+v", m)
				}
				for _, w := range tc.wantText {
					if !strings.Contains(m.Text, w) {
						t.Errorf("text %q lacks %q", m.Text, w)
					}
				}
				if !tc.fail {
					if len(m.Run.Criteria) != 1 || m.Run.Criteria[0].Pearson == nil {
						t.Errorf("criteria: %+v", m.Run.Criteria)
					} else if w := "Pearson r = " + strings.Replace(stats.CoefDecimal(*m.Run.Criteria[0].Pearson, 2), "-", "\u2212", 1); !strings.Contains(m.Text, w) {
						// The text's reading names the message's own
						// figure, rounded as the pages round it.
						t.Errorf("text %q lacks %q (pearson %v)", m.Text, w, *m.Run.Criteria[0].Pearson)
					}
					for _, w := range pageReadings(t, env, run) {
						if !strings.Contains(m.Text, w) {
							t.Errorf("text %q lacks the run page's %q", m.Text, w)
						}
					}
				}
				if !strings.HasPrefix(wh.LastStatus, tc.wantStatus) || wh.LastSentAt == nil {
					t.Errorf("recorded delivery %q at %v, want %q", wh.LastStatus, wh.LastSentAt, tc.wantStatus)
				}
				// A delivery that finally failed says so, and about which run.
				if tc.attempts > 0 && !strings.Contains(wh.LastStatus, fmt.Sprintf("run %d; gave up after %d attempts", run.ID, tc.attempts)) {
					t.Errorf("recorded delivery %q does not say it gave up on run %d after %d attempts", wh.LastStatus, run.ID, tc.attempts)
				}
			})
		}
	})
}

// TestWebhookNeverHoldsTheRun: a receiver that does not answer does not
// keep the run from finishing; the delivery gives up after its timeout.
func TestWebhookNeverHoldsTheRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rc := newReceiver(t)
		rc.hold = make(chan struct{})
		t.Cleanup(func() { close(rc.hold) })
		if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL, OnFinished: true, OnFailed: true}); err != nil {
			t.Fatal(err)
		}
		fj := newFakeJudge(t, simjudge.Options{Seed: 3}, nil)
		r := env.startRunner(Config{Webhooks: WebhookConfig{AllowLoopback: true, Timeout: 200 * time.Millisecond, Attempts: 2, Backoff: 10 * time.Millisecond}})
		run := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
		if run = env.waitFinished(run.ID, 60*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run %s", run.Status)
		}
		// A second run on the same runner still starts and finishes while
		// the first delivery hangs.
		run2 := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
		if run2 = env.waitFinished(run2.ID, 60*time.Second); run2.Status != models.RunSucceeded {
			t.Fatalf("second run %s", run2.Status)
		}
		env.waitJobDone(run)
		env.waitJobDone(run2)
		done := make(chan struct{})
		go func() { r.WaitNotifications(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("deliveries did not give up after their timeout")
		}
		wh, err := env.db.FindWebhook(ctx, env.ws.ID)
		if err != nil || !strings.Contains(wh.LastStatus, "timed out") {
			t.Errorf("recorded %q, %v; want a timeout", wh.LastStatus, err)
		}
	})
}

// TestWebhookEgress: the addresses a webhook may reach, and no redirect
// followed.
func TestWebhookEgress(t *testing.T) {
	tests := []struct {
		addr      string
		cfg       WebhookConfig
		wantAllow bool
	}{
		{"93.184.216.34:443", WebhookConfig{}, true},
		{"[2606:2800:220:1::248]:443", WebhookConfig{}, true},
		{"169.254.169.254:80", WebhookConfig{AllowLoopback: true, AllowPrivate: true}, false},
		{"[fe80::1]:80", WebhookConfig{AllowLoopback: true, AllowPrivate: true}, false},
		{"[fd00:ec2::254]:80", WebhookConfig{AllowLoopback: true, AllowPrivate: true}, false},
		{"100.100.100.200:80", WebhookConfig{AllowLoopback: true, AllowPrivate: true}, false},
		{"0.0.0.0:80", WebhookConfig{AllowLoopback: true, AllowPrivate: true}, false},
		{"127.0.0.1:8080", WebhookConfig{}, false},
		{"127.0.0.1:8080", WebhookConfig{AllowLoopback: true}, true},
		{"[::1]:8080", WebhookConfig{}, false},
		{"[::ffff:127.0.0.1]:8080", WebhookConfig{}, false},
		{"10.1.2.3:443", WebhookConfig{}, false},
		{"192.168.1.5:443", WebhookConfig{AllowLoopback: true}, false},
		{"100.64.0.1:443", WebhookConfig{}, false},
		{"10.1.2.3:443", WebhookConfig{AllowPrivate: true}, true},
	}
	for _, tc := range tests {
		err := checkEgress(tc.cfg, tc.addr)
		if (err == nil) != tc.wantAllow {
			t.Errorf("%s with %+v: got %v, want allowed %v", tc.addr, tc.cfg, err, tc.wantAllow)
		}
	}

	// A redirect to an internal address is not followed.
	target := newReceiver(t)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.srv.URL, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	cfg := WebhookConfig{AllowLoopback: true, Timeout: time.Second, Attempts: 2, Backoff: time.Millisecond}
	out := deliverWith(context.Background(), cfg, redirector.URL, WebhookMessage{Text: "x"})
	if !strings.Contains(out, "redirects are not followed") || len(target.messages()) != 0 {
		t.Errorf("redirect: outcome %q, target got %d", out, len(target.messages()))
	}
	// Loopback refused unless allowed; the refusal is not retried.
	out = deliverWith(context.Background(), WebhookConfig{Timeout: time.Second, Attempts: 3, Backoff: time.Hour}, target.srv.URL, WebhookMessage{Text: "x"})
	if !strings.Contains(out, "refused") || len(target.messages()) != 0 {
		t.Errorf("loopback: outcome %q, target got %d", out, len(target.messages()))
	}
}

// TestWebhookQueuedWithTheFinish: a run's end and its webhook delivery are
// stored in one transaction, so a crash right after the run is stored as
// finished cannot lose the message: the delivery is a job in the database
// the moment the end is (it used to be a goroutine started afterwards,
// gone with the process). A failing receiver is tried again, by another
// process after a crash, with the same message id.
func TestWebhookQueuedWithTheFinish(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rc := newReceiver(t, http.StatusServiceUnavailable)
		if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL + "/hook", OnFinished: true}); err != nil {
			t.Fatal(err)
		}
		fj := newFakeJudge(t, simjudge.Options{Seed: 3}, nil)
		cfg := Config{Webhooks: WebhookConfig{AllowLoopback: true, Timeout: 5 * time.Second, Attempts: 4, Backoff: 2 * time.Second}}
		queued := make(chan []*rivertype.JobRow, 1)
		a := env.startRunner(cfg, func(r *Runner) {
			// Right after the end is committed: where a crash used to lose
			// the message.
			r.onFinished = func(runID int64) {
				res, err := env.jobs.river.JobList(ctx, river.NewJobListParams().Kinds(WebhookArgs{}.Kind()))
				if err != nil {
					t.Errorf("list jobs: %v", err)
				}
				var jobs []*rivertype.JobRow
				if res != nil {
					jobs = res.Jobs
				}
				queued <- jobs
			}
		})
		run := env.launch(a, env.newRun(fj.URL(), 1, 2, 10))
		var jobs []*rivertype.JobRow
		select {
		case jobs = <-queued:
		case <-time.After(60 * time.Second):
			t.Fatal("the run did not finish")
		}
		if len(jobs) != 1 {
			t.Fatalf("%d webhook deliveries queued when the run's end was stored, want 1", len(jobs))
		}
		var args WebhookArgs
		if err := json.Unmarshal(jobs[0].EncodedArgs, &args); err != nil || args.RunID != run.ID || args.Status != models.RunSucceeded {
			t.Fatalf("queued delivery %s (%v), want run %d succeeded", jobs[0].EncodedArgs, err, run.ID)
		}
		// The first attempt fails (503); the process dies before the next.
		// (River keeps a retry due within seconds "available", not
		// "retryable", with its time set.)
		deadline := time.Now().Add(20 * time.Second)
		for j := env.job(jobs[0].ID); len(j.Errors) == 0 || j.State == rivertype.JobStateRunning; j = env.job(jobs[0].ID) {
			if time.Now().After(deadline) {
				t.Fatalf("delivery is %s with %d errors, want its failed attempt stored", j.State, len(j.Errors))
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := a.Kill(ctx); err != nil {
			t.Fatal(err)
		}
		if wh, err := env.db.FindWebhook(ctx, env.ws.ID); err != nil || !strings.Contains(wh.LastStatus, "503") || !strings.Contains(wh.LastStatus, "attempt 1 of 4, tried again at") {
			t.Errorf("after the failed attempt the settings show %q (%v); want the 503 and that it is tried again", wh.LastStatus, err)
		}
		b := env.startRunner(cfg)
		b.WaitNotifications()
		got := rc.messages()
		if len(got) != 2 {
			t.Fatalf("receiver got %d posts, want 2 (the 503, then the retry): %+v", len(got), got)
		}
		if got[0].ID == "" || got[0].ID != got[1].ID || got[0].Attempt != 1 || got[1].Attempt != 2 || got[1].Run.ID != run.ID {
			t.Errorf("posts %q attempt %d and %q attempt %d about run %d; want one id, attempts 1 and 2, run %d",
				got[0].ID, got[0].Attempt, got[1].ID, got[1].Attempt, got[1].Run.ID, run.ID)
		}
		if wh, err := env.db.FindWebhook(ctx, env.ws.ID); err != nil || wh.LastStatus != "200 OK" {
			t.Errorf("last delivery %q (%v), want 200 OK", wh.LastStatus, err)
		}
	})
}

// TestWebhookKeepsNoConnection: a delivery to a plain-HTTP receiver asks
// it to close and keeps no connection open, as the webhook client's
// settings say (one message now and then). The settings were set on
// net/http's transport only, which plain HTTP no longer takes.
func TestWebhookKeepsNoConnection(t *testing.T) {
	var closing, reqs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		if r.Close {
			closing.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := WebhookConfig{AllowLoopback: true, Timeout: time.Second, Attempts: 1, Backoff: time.Millisecond}
	for range 2 {
		deliverWith(context.Background(), cfg, srv.URL, WebhookMessage{Text: "x"})
	}
	if reqs.Load() != 2 || closing.Load() != 2 {
		t.Errorf("%d of %d deliveries asked the receiver to close, want every one", closing.Load(), reqs.Load())
	}
}

// TestWebhookUnderAnotherKeyIsNotSent: a webhook address sealed with a
// secret key this server lacks is not posted anywhere; the settings page's
// last outcome says why, and the test message says the same.
func TestWebhookUnderAnotherKeyIsNotSent(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rc := newReceiver(t)
		sealer := func() *models.Sealer {
			key := make([]byte, models.SecretKeySize)
			for i := range key {
				key[i] = byte(i*7 + len(env.ws.Name))
			}
			s, err := models.NewSealer(key)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		env.db.Secrets = models.NewSecrets(sealer(), "")
		if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL + "/hook", OnFinished: true, OnFailed: true}); err != nil {
			t.Fatal(err)
		}
		other := make([]byte, models.SecretKeySize)
		other[0] = 1
		otherSealer, err := models.NewSealer(other)
		if err != nil {
			t.Fatal(err)
		}
		env.db.Secrets = models.NewSecrets(otherSealer, "")
		t.Cleanup(func() { env.db.Secrets = nil })

		fj := newFakeJudge(t, simjudge.Options{Seed: 3}, nil)
		r := env.startRunner(Config{Webhooks: WebhookConfig{AllowLoopback: true, Backoff: 5 * time.Millisecond, Timeout: 5 * time.Second}})
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = r.Stop(sctx)
		})
		run := env.waitFinished(env.launch(r, env.newRun(fj.URL(), 1, 2, 10)).ID, 60*time.Second)
		env.waitJobDone(run)
		r.WaitNotifications()
		deadline := time.Now().Add(10 * time.Second)
		var wh models.Webhook
		for {
			if wh, err = env.db.FindWebhook(ctx, env.ws.ID); err != nil {
				t.Fatal(err)
			}
			if wh.LastSentAt != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := len(rc.messages()); n != 0 {
			t.Errorf("%d messages posted with an address this server cannot read", n)
		}
		if !strings.HasPrefix(wh.LastStatus, "not sent: the stored webhook address cannot be read") || !strings.Contains(wh.LastStatus, fmt.Sprintf("run %d", run.ID)) {
			t.Errorf("recorded outcome %q", wh.LastStatus)
		}
		status, err := r.SendTestWebhook(ctx, env.ws.ID)
		if err != nil || !strings.HasPrefix(status, "not sent: ") {
			t.Errorf("test message: %q, %v", status, err)
		}
	})
}
