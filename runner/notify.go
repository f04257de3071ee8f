package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// WebhookConfig is how run-end webhooks are sent.
type WebhookConfig struct {
	// AllowLoopback lets a webhook reach this machine (a local receiver on
	// a loopback server); AllowPrivate lets it reach private and shared
	// address ranges (a chat server on the office network). Link-local
	// addresses, where cloud metadata services answer, are always refused.
	AllowLoopback, AllowPrivate bool
	// Timeout bounds one delivery attempt (10 s when zero).
	Timeout time.Duration
	// Attempts is how many times a delivery is tried (3 when zero); Backoff
	// is the wait before the second attempt, doubled after (2 s when zero).
	Attempts int
	Backoff  time.Duration
}

func (w WebhookConfig) withDefaults() WebhookConfig {
	if w.Timeout <= 0 {
		// A chat service answers in well under a second; ten covers a slow
		// network without holding a goroutine for long.
		w.Timeout = 10 * time.Second
	}
	if w.Attempts <= 0 {
		// A blip or a restart of the receiver, not an outage.
		w.Attempts = 3
	}
	if w.Backoff <= 0 {
		w.Backoff = 2 * time.Second
	}
	return w
}

// WebhookMessage is what a webhook receives: Slack's incoming webhooks
// read Text; other receivers can read the structured fields.
type WebhookMessage struct {
	Text  string     `json:"text"`
	Event string     `json:"event"` // "run.finished" or "run.failed"
	Run   WebhookRun `json:"run"`
	Test  bool       `json:"test,omitempty"`
}

// WebhookRun is the run a message is about.
type WebhookRun struct {
	ID            int64              `json:"id"`
	Name          string             `json:"name"`
	Status        string             `json:"status"`
	Method        string             `json:"method"`
	Simulated     bool               `json:"simulated"`
	Error         string             `json:"error,omitempty"`
	BatchesDone   int                `json:"batches_done"`
	BatchesFailed int                `json:"batches_failed"`
	MissingScores int                `json:"missing_scores"`
	Criteria      []WebhookCriterion `json:"criteria"`
	// URL is the run's page on the dashboard (sign-in needed), absolute
	// when the webhook names the dashboard's address.
	URL string `json:"url"`
}

// WebhookCriterion is one criterion's agreement with the human ratings;
// Pearson is null when it cannot be computed (no ratings, no scores).
type WebhookCriterion struct {
	Name    string   `json:"name"`
	Pearson *float64 `json:"pearson"`
}

// Run-end events.
const (
	EventRunFinished = "run.finished"
	EventRunFailed   = "run.failed"
)

// notifyRunEnd tells the run's workspace webhook, if any, that the run
// finished or failed. It is called when an execution of the run returns
// and does its work in the background: a slow or broken receiver never
// holds up the run or the worker.
func (r *Runner) notifyRunEnd(runID int64) {
	r.notices.Add(1)
	go func() {
		defer r.notices.Done()
		cfg := r.cfg.Webhooks.withDefaults()
		// Every attempt, every wait between them, and a few seconds for the
		// database reads around them.
		budget := time.Duration(cfg.Attempts)*cfg.Timeout + cfg.Backoff*time.Duration(1<<(cfg.Attempts-1)) + 5*time.Second
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		defer cancel()
		run, err := r.db.GetRun(ctx, runID)
		if err != nil || (run.Status != models.RunSucceeded && run.Status != models.RunFailed) {
			return
		}
		wh, err := r.db.FindWebhook(ctx, run.WorkspaceID)
		if err != nil {
			if models.ErrorCode(err) != models.ENotFound {
				r.log.Warn("webhook: read settings", "run", runID, "judge", judgeName(run.JudgeSnapshot), "err", err)
			}
			return
		}
		if (run.Status == models.RunSucceeded && !wh.OnFinished) || (run.Status == models.RunFailed && !wh.OnFailed) {
			return
		}
		msg := r.runMessage(ctx, run, wh.BaseURL)
		status := r.deliver(ctx, wh.URL, msg)
		if status != "" && status[0] != '2' {
			r.log.Warn("webhook delivery failed", "run", runID, "judge", judgeName(run.JudgeSnapshot), "outcome", status)
		}
		// The outcome is recorded even when the deliveries used the budget up.
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		if err := r.db.RecordWebhookDelivery(rctx, run.WorkspaceID, status); err != nil {
			r.log.Warn("webhook: record delivery", "run", runID, "judge", judgeName(run.JudgeSnapshot), "err", err)
		}
	}()
}

// WaitNotifications waits for the webhook deliveries under way.
func (r *Runner) WaitNotifications() { r.notices.Wait() }

// SendTestWebhook sends a sample message to the workspace's webhook at
// once and returns the outcome ("200 OK", or why it failed).
func (r *Runner) SendTestWebhook(ctx context.Context, wsID int64) (string, error) {
	wh, err := r.db.FindWebhook(ctx, wsID)
	if err != nil {
		return "", err
	}
	msg := WebhookMessage{Event: EventRunFinished, Test: true,
		Run:  WebhookRun{Name: "Test message", Status: models.RunSucceeded, Method: models.MethodBatchEval, URL: wh.BaseURL + "/runs"},
		Text: "BatchEval test message: this webhook will be told when runs of the workspace finish or fail."}
	cfg := r.cfg.Webhooks.withDefaults()
	cfg.Attempts = 1
	status := deliverWith(ctx, cfg, wh.URL, msg)
	if err := r.db.RecordWebhookDelivery(ctx, wsID, status); err != nil {
		return status, err
	}
	return status, nil
}

// runMessage composes the message of a finished or failed run.
func (r *Runner) runMessage(ctx context.Context, run models.Run, baseURL string) WebhookMessage {
	url := baseURL + "/runs/" + strconv.FormatInt(run.ID, 10)
	m := WebhookMessage{Event: EventRunFinished, Run: WebhookRun{ID: run.ID, Name: run.Name, Status: run.Status,
		Method: run.Method, Simulated: run.Simulated, Error: run.Error, BatchesDone: run.BatchesDone,
		BatchesFailed: run.BatchesFailed, MissingScores: run.MissingScores, URL: url, Criteria: []WebhookCriterion{}}}
	if run.Status == models.RunFailed {
		m.Event = EventRunFailed
	}
	if run.BatchesDone > 0 {
		if rep, err := r.messageReport(ctx, run); err == nil {
			for _, c := range rep.Criteria {
				wc := WebhookCriterion{Name: c.Criterion.Name}
				if p := c.Pearson.Coef; c.HasHuman && !math.IsNaN(p) && !math.IsInf(p, 0) {
					wc.Pearson = &p
				}
				m.Run.Criteria = append(m.Run.Criteria, wc)
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "BatchEval run “%s” (%s)", run.Name, methods.Label(run.Method))
	if run.Status == models.RunFailed {
		fmt.Fprintf(&b, " failed: %s", run.Error)
	} else {
		b.WriteString(" finished.")
		for _, c := range m.Run.Criteria {
			if c.Pearson != nil {
				fmt.Fprintf(&b, " %s: Pearson %.3f.", c.Name, *c.Pearson)
			}
		}
		if run.MissingScores > 0 {
			fmt.Fprintf(&b, " %d scores could not be read.", run.MissingScores)
		}
	}
	if run.Simulated {
		b.WriteString(" (simulated judge)")
	}
	if baseURL != "" {
		// Slack's link syntax; other receivers read run.url.
		fmt.Fprintf(&b, " <%s|Open the run>", url)
	} else {
		fmt.Fprintf(&b, " Run page: %s", url)
	}
	m.Text = b.String()
	return m
}

// deliver posts the message with retries and returns the outcome.
func (r *Runner) deliver(ctx context.Context, url string, msg WebhookMessage) string {
	return deliverWith(ctx, r.cfg.Webhooks.withDefaults(), url, msg)
}

// errPermanent marks an answer that a retry would not change.
var errPermanent = errors.New("permanent")

func deliverWith(ctx context.Context, cfg WebhookConfig, url string, msg WebhookMessage) string {
	body, err := json.Marshal(msg)
	if err != nil {
		return "could not encode the message: " + err.Error()
	}
	client := webhookClient(cfg)
	wait := cfg.Backoff
	var outcome string
	for attempt := 1; attempt <= cfg.Attempts; attempt++ {
		outcome, err = postOnce(ctx, client, url, body)
		if err == nil || errors.Is(err, errPermanent) {
			return outcome
		}
		if attempt == cfg.Attempts {
			break
		}
		select {
		case <-ctx.Done():
			return outcome
		case <-time.After(wait):
		}
		wait *= 2
	}
	return outcome
}

func postOnce(ctx context.Context, client *http.Client, url string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "invalid webhook address", errPermanent
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "BatchEval-webhook")
	resp, err := client.Do(req)
	if err != nil {
		var refused *judge.EgressError
		if errors.As(err, &refused) {
			return "refused: " + refused.Error(), errPermanent
		}
		return "not delivered: " + shortNetError(err), err
	}
	// The answer's body is not kept or shown: only its status.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	outcome := resp.Status
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return outcome, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return outcome + " (redirects are not followed)", errPermanent
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return outcome, errors.New(outcome)
	}
	return outcome, errPermanent
}

// shortNetError keeps the kind of a network failure, not a long chain.
func shortNetError(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op + " failed"
	}
	return "network error"
}

// webhookClient follows no redirect and checks every address it connects
// to after name resolution, with the judges' egress policy (link-local and
// cloud metadata addresses always refused; loopback and private ranges as
// the operator allows for webhooks).
func webhookClient(cfg WebhookConfig) *http.Client {
	c := webhookEgress(cfg).HTTPClient()
	c.Timeout = cfg.Timeout
	if tr, ok := c.Transport.(*http.Transport); ok {
		tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout = cfg.Timeout, cfg.Timeout
		tr.DisableKeepAlives = true // one message now and then
	}
	return c
}

// webhookEgress is the egress policy of webhook deliveries.
func webhookEgress(cfg WebhookConfig) judge.Egress {
	return judge.Egress{AllowLoopback: cfg.AllowLoopback, AllowPrivate: cfg.AllowPrivate,
		LoopbackSetting: "allowed only for a server on loopback", PrivateSetting: "BATCHEVAL_WEBHOOK_ALLOW_PRIVATE"}
}

// checkEgress decides whether a webhook may connect to address (ip:port).
func checkEgress(cfg WebhookConfig, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused: %q is not an address", address)
	}
	return webhookEgress(cfg).Check(ap)
}

// messageReport is the report a run's webhook message quotes. The message
// is sent from a goroutine of its own, where a panic would end the process
// (the web server too): a panic of the report is an error, and the
// message goes without its figures.
func (r *Runner) messageReport(ctx context.Context, run models.Run) (rep *report.Report, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("webhook: building the run's report panicked", "run", run.ID, "panic", p, "stack", string(debug.Stack()))
			rep, err = nil, fmt.Errorf("building the report of run %d panicked: %v", run.ID, p)
		}
	}()
	build := r.buildReport
	if build == nil {
		build = report.Build
	}
	return build(ctx, r.db, run.WorkspaceID, run.ID)
}
