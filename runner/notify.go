package runner

import (
	"bytes"
	"context"
	"database/sql"
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
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/stats"
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
	// ShowAddrs lets a refusal name the address refused (judge.Egress's
	// ShowAddrs: local mode); nil never does.
	ShowAddrs func(ctx context.Context) bool
	// Timeout bounds one delivery attempt (10 s when zero).
	Timeout time.Duration
	// Attempts is how many times a delivery is tried
	// (DefaultWebhookAttempts when zero); Backoff
	// is the wait before the second attempt, doubled after each (10 s
	// when zero), never more than maxWebhookBackoff.
	Attempts int
	Backoff  time.Duration
	// grant is the permission of the workspace a delivery is for to reach
	// the private and loopback addresses the settings above allow
	// (models.DB.NetworkPermit); set per delivery, asked at connection.
	grant judge.Grant
}

// DefaultWebhookAttempts is how many times a webhook delivery is tried
// by default. With the default backoff the attempts span about 20
// minutes: a receiver restarted or redeployed meanwhile still gets the
// message. The webhook page states it.
const DefaultWebhookAttempts = 8

func (w WebhookConfig) withDefaults() WebhookConfig {
	if w.Timeout <= 0 {
		// A chat service answers in well under a second; ten covers a slow
		// network without holding a worker for long.
		w.Timeout = 10 * time.Second
	}
	if w.Attempts <= 0 {
		w.Attempts = DefaultWebhookAttempts
	}
	if w.Backoff <= 0 {
		w.Backoff = 10 * time.Second
	}
	return w
}

// maxWebhookBackoff bounds the wait between two attempts of a delivery:
// a message hours late is hardly news.
const maxWebhookBackoff = time.Hour

// retryWait is the wait after the attempt-th attempt failed.
func (w WebhookConfig) retryWait(attempt int) time.Duration {
	d := w.Backoff
	for i := 1; i < attempt && d < maxWebhookBackoff; i++ {
		d *= 2
	}
	return min(d, maxWebhookBackoff)
}

// WebhookArgs is the job that delivers one run's end to its workspace's
// webhook. It is queued in the transaction that stores the run as
// finished (models.FinishRunNotify), so no crash can store the one
// without the other, and River retries it with backoff (WebhookConfig).
// Delivery is at least once: an attempt whose answer was lost is sent
// again, with the same message id.
type WebhookArgs struct {
	RunID int64 `json:"run_id"`
	// Status is the end the run was stored with; a run resumed and
	// finished again since has a delivery of its own.
	Status string `json:"status"`
}

// Kind is the stable job name stored in River's table.
func (WebhookArgs) Kind() string { return webhookKind }

// queueWebhook queues the delivery of a run's end, in tx (the
// transaction that stores the end), on the shared queue: a command-line
// run's process may be gone before the receiver answers, and the `serve`
// and `worker` processes deliver it then.
func (r *Runner) queueWebhook(ctx context.Context, tx *sql.Tx, end models.RunEnd) error {
	cfg := r.cfg.Webhooks.withDefaults()
	_, err := r.river.InsertTx(ctx, tx, WebhookArgs{RunID: end.RunID, Status: end.Status},
		&river.InsertOpts{Queue: river.QueueDefault, MaxAttempts: cfg.Attempts})
	return err
}

// finishRun stores the run's end (models.FinishRunNotify) with the
// delivery to its webhook queued in the same transaction, and, once that
// transaction has committed, wakes the workers of the shared queue
// (wakeShared): on SQLite River wakes none for a job inserted in a
// transaction, and the delivery went out at their next poll. A finish
// whose transaction was tried again may wake them once for nothing: one
// fetch more.
func (r *Runner) finishRun(ctx context.Context, runID int64, status, reason string) error {
	queued := false
	err := r.db.FinishRunNotify(ctx, runID, status, reason, func(ctx context.Context, tx *sql.Tx, end models.RunEnd) error {
		err := r.queueWebhook(ctx, tx, end)
		queued = queued || err == nil
		return err
	})
	if err == nil && queued {
		r.wakeShared()
	}
	return err
}

type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	r *Runner
}

// webhookReportTime bounds the reads and the report a message is built
// from, on top of the attempt's own timeout.
const webhookReportTime = 30 * time.Second

// Timeout bounds an attempt, which also tells River's rescuer when a
// delivery still marked running was left by a dead process (Config.
// RescueAfter).
func (w *webhookWorker) Timeout(*river.Job[WebhookArgs]) time.Duration {
	return w.r.cfg.Webhooks.withDefaults().attemptTime()
}

// attemptTime is the most one delivery attempt takes: building the
// message and posting it.
func (w WebhookConfig) attemptTime() time.Duration { return w.Timeout + webhookReportTime }

// NextRetry waits Backoff after the first failed attempt, doubling after
// each (River's default waits grow as the attempt's fourth power).
func (w *webhookWorker) NextRetry(job *river.Job[WebhookArgs]) time.Time {
	return time.Now().Add(w.r.cfg.Webhooks.withDefaults().retryWait(job.Attempt))
}

// Work makes one attempt at delivering the run's end. Every attempt's
// outcome is recorded on the webhook (the owner's settings page shows it),
// a failed delivery with the run it was about and whether it is tried
// again; an answer that no retry would change ends the delivery.
func (w *webhookWorker) Work(ctx context.Context, job *river.Job[WebhookArgs]) error {
	r := w.r
	started := r.jobStarted()
	defer r.jobEnded()
	if !started {
		return river.JobSnooze(time.Second)
	}
	run, err := r.db.GetRun(ctx, job.Args.RunID)
	if models.ErrorCode(err) == models.ENotFound {
		return river.JobCancel(err)
	} else if err != nil {
		return err
	}
	if run.Status != job.Args.Status {
		return nil // resumed since: its next end is delivered by itself
	}
	wh, err := r.db.FindWebhook(ctx, run.WorkspaceID)
	if models.ErrorCode(err) == models.ENotFound {
		return nil // removed since
	} else if err != nil {
		return err
	}
	if !wh.Wants(run.Status) {
		return nil // turned off since
	}
	if wh.URLProblem != "" {
		// No attempt can succeed until an owner acts: said where they
		// look (the settings page's last outcome), not tried again.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer rcancel()
		if err := r.db.RecordWebhookDelivery(rctx, run.WorkspaceID, fmt.Sprintf("not sent: %s (run %d)", wh.URLProblem, run.ID)); err != nil {
			r.log.Warn("record the webhook's outcome", "err", err)
		}
		return river.JobCancel(errors.New(wh.URLProblem))
	}
	msg := r.runMessage(ctx, run, wh.BaseURL)
	msg.ID, msg.Attempt = deliveryID(job.ID), job.Attempt
	cfg := r.cfg.Webhooks.withDefaults()
	cfg.grant = r.db.NetworkPermit(run.WorkspaceID)
	body, err := json.Marshal(msg)
	if err != nil {
		return river.JobCancel(fmt.Errorf("encode the message: %w", err))
	}
	outcome, err := postOnce(ctx, webhookClient(cfg), wh.URL, body)
	recorded := outcome
	switch {
	case err == nil:
	case errors.Is(err, errPermanent):
		recorded = fmt.Sprintf("%s (run %d; not tried again)", outcome, run.ID)
	case job.Attempt >= job.MaxAttempts:
		recorded = fmt.Sprintf("%s (run %d; gave up after %d attempts)", outcome, run.ID, job.Attempt)
	default:
		next := time.Now().Add(cfg.retryWait(job.Attempt)).UTC()
		recorded = fmt.Sprintf("%s (run %d; attempt %d of %d, tried again at %s)", outcome, run.ID, job.Attempt, job.MaxAttempts, next.Format("15:04:05 UTC"))
	}
	if err != nil {
		r.log.Warn("webhook delivery failed", "run", run.ID, "judge", judgeName(run.JudgeSnapshot), "outcome", recorded)
	}
	// The outcome is recorded even when the attempt used the job's time up.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	if rerr := r.db.RecordWebhookDelivery(rctx, run.WorkspaceID, recorded); rerr != nil {
		r.log.Warn("webhook: record delivery", "run", run.ID, "judge", judgeName(run.JudgeSnapshot), "err", rerr)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errPermanent):
		return river.JobCancel(fmt.Errorf("webhook of run %d: %s", run.ID, outcome))
	}
	return fmt.Errorf("webhook of run %d: %s", run.ID, outcome)
}

// deliveryID is a delivery's message id: the same for every attempt of
// it, so a receiver can drop a message it already has.
func deliveryID(jobID int64) string { return "delivery-" + strconv.FormatInt(jobID, 10) }

// WaitNotifications waits until no webhook delivery is queued, waiting
// for a retry or under way (tests).
func (r *Runner) WaitNotifications() {
	params := river.NewJobListParams().Kinds(WebhookArgs{}.Kind()).First(1).States(rivertype.JobStateAvailable,
		rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled, rivertype.JobStatePending)
	for {
		res, err := r.river.JobList(context.Background(), params)
		if err == nil && len(res.Jobs) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WebhookMessage is what a webhook receives: Slack's incoming webhooks
// read Text; other receivers can read the structured fields.
type WebhookMessage struct {
	// ID is the same for every attempt of one delivery: a receiver told
	// twice (delivery is at least once) drops the second by it.
	ID string `json:"id"`
	// Attempt numbers the delivery's attempts from 1.
	Attempt int        `json:"attempt,omitempty"`
	Text    string     `json:"text"`
	Event   string     `json:"event"` // "run.finished" or "run.failed"
	Run     WebhookRun `json:"run"`
	Test    bool       `json:"test,omitempty"`
}

// WebhookRun is the run a message is about.
type WebhookRun struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Status        string `json:"status"`
	Method        string `json:"method"`
	Simulated     bool   `json:"simulated"`
	Error         string `json:"error,omitempty"`
	BatchesDone   int    `json:"batches_done"`
	BatchesFailed int    `json:"batches_failed"`
	MissingScores int    `json:"missing_scores"`
	// ShortScores are the scores computed from fewer sampled answers than
	// asked (G-Eval's sampling, CloserLook), as the API's run object says.
	ShortScores int `json:"short_scores"`
	// TooFewScores are the missing scores (counted in MissingScores) left
	// so because too few of their sampled answers could be read, as the
	// API's run object says.
	TooFewScores int                `json:"too_few_scores"`
	Criteria     []WebhookCriterion `json:"criteria"`
	// URL is the run's page on the dashboard (sign-in needed), absolute
	// when the webhook names the dashboard's address.
	URL string `json:"url"`
}

// WebhookCriterion is one criterion's agreement with the human ratings;
// Pearson is null when it cannot be computed (no ratings, no scores).
type WebhookCriterion struct {
	Name    string   `json:"name"`
	Pearson *float64 `json:"pearson"`
	// reading is the criterion's agreement in the run page's words (the
	// report's Reading), for the text; "" without human ratings.
	reading string
}

// Run-end events.
const (
	EventRunFinished = "run.finished"
	EventRunFailed   = "run.failed"
)

// WebhookNetwork reports which addresses the operator's settings let
// this process's webhook messages reach beyond public ones (the test
// message, and the runs' messages this process delivers): private-network
// and loopback. Only the default workspace and those the operator grants
// may use them (models.DB.NetworkPermit).
func (r *Runner) WebhookNetwork() (private, loopback bool) {
	return r.cfg.Webhooks.AllowPrivate, r.cfg.Webhooks.AllowLoopback
}

// SendTestWebhook sends a sample message to the workspace's webhook at
// once and returns the outcome ("200 OK", or why it failed).
func (r *Runner) SendTestWebhook(ctx context.Context, wsID int64) (string, error) {
	wh, err := r.db.FindWebhook(ctx, wsID)
	if err != nil {
		return "", err
	}
	if wh.URLProblem != "" {
		return "not sent: " + wh.URLProblem, nil
	}
	msg := WebhookMessage{ID: "test-" + strconv.FormatInt(time.Now().UnixNano(), 36), Event: EventRunFinished, Test: true,
		Run:  WebhookRun{Name: "Test message", Status: models.RunSucceeded, Method: models.MethodBatchEval, URL: wh.BaseURL + "/runs"},
		Text: "BatchEval test message: this webhook will be told when runs of the workspace finish or fail."}
	cfg := r.cfg.Webhooks.withDefaults()
	cfg.Attempts = 1
	cfg.grant = r.db.NetworkPermit(wsID)
	status := deliverWith(ctx, cfg, wh.URL, msg)
	if err := r.db.RecordWebhookDelivery(ctx, wsID, status); err != nil {
		return status, err
	}
	return status, nil
}

// runMessage composes the message of a finished or failed run.
func (r *Runner) runMessage(ctx context.Context, run models.Run, baseURL string) WebhookMessage {
	url := baseURL + "/runs/" + strconv.FormatInt(run.ID, 10)
	// A chat channel may be wider than the workspace: a failed run's
	// reason goes as a share link gives it, in the product's own words,
	// without what the judge client quotes after them (the judge's address,
	// this server's network settings) or the raw text of an internal error
	// (files, SQL, database addresses). The run's page, which the message
	// links to, gives it whole to members.
	reason := run.SharedError()
	m := WebhookMessage{Event: EventRunFinished, Run: WebhookRun{ID: run.ID, Name: run.Name, Status: run.Status,
		Method: run.Method, Simulated: run.Simulated, Error: reason, BatchesDone: run.BatchesDone,
		BatchesFailed: run.BatchesFailed, MissingScores: run.MissingScores, ShortScores: run.ShortScores, TooFewScores: run.TooFewScores, URL: url, Criteria: []WebhookCriterion{}}}
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
				if c.HasHuman {
					wc.reading = c.Reading
				}
				m.Run.Criteria = append(m.Run.Criteria, wc)
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "BatchEval run “%s” (%s)", slackText(models.OneLine(run.Name)), methods.Label(run.Method))
	if run.Status == models.RunFailed {
		fmt.Fprintf(&b, " failed: %s", slackText(reason))
	} else {
		b.WriteString(" finished.")
		// Each criterion with human ratings in the sentence its run page
		// reads it in (stats.Interpret, as the report stored it), numbers
		// signed as the page signs them: "Coherent: Strong agreement
		// (Pearson r = 0.51) over 40 samples, 95% interval 0.30 to 0.68."
		// It wrote "Coherent: Pearson 0.512." (and "Pearson −0.812 over 3
		// samples, too few to tell." in its own words): a chat channel's
		// readers are the least likely to know what 0.512 is worth, and
		// the page's sentence says it, with the caveats (few samples,
		// chance, a wide interval) the bare figure left out, and why an
		// agreement could not be measured. run.criteria[].pearson keeps
		// the exact number for programs.
		for _, c := range m.Run.Criteria {
			if c.reading != "" {
				fmt.Fprintf(&b, " %s: %s", slackText(c.Name), slackText(stats.TrueMinus(c.reading)))
			}
		}
		// The scores missing for too few readable answers are among the
		// missing ones, said apart: some of their answers were read.
		tooFew := min(max(run.TooFewScores, 0), run.MissingScores)
		switch unread := run.MissingScores - tooFew; {
		case unread == 1:
			b.WriteString(" 1 score could not be read.")
		case unread > 1:
			fmt.Fprintf(&b, " %d scores could not be read.", unread)
		}
		switch {
		case tooFew == 1:
			b.WriteString(" 1 score is missing for too few readable answers.")
		case tooFew > 1:
			fmt.Fprintf(&b, " %d scores are missing for too few readable answers.", tooFew)
		}
		switch {
		case run.ShortScores == 1:
			b.WriteString(" 1 score was computed from fewer sampled answers than asked.")
		case run.ShortScores > 1:
			fmt.Fprintf(&b, " %d scores were computed from fewer sampled answers than asked.", run.ShortScores)
		}
	}
	if run.Simulated {
		b.WriteString(" (simulated judge)")
	}
	if baseURL != "" {
		// Slack's link syntax; other receivers read run.url.
		fmt.Fprintf(&b, " <%s|Open the run>", slackLinkURL(url))
	} else {
		fmt.Fprintf(&b, " Run page: %s", url)
	}
	m.Text = b.String()
	return m
}

// slackMarkup are the characters Slack reads as markup in a message's
// text, written as the entities Slack's documentation asks for.
var slackMarkup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackText writes text typed by people or sent by a judge (a run's name,
// a criterion's name, a run's error) for the message's text. Slack reads
// <!channel>, <@U123> and <https://example.com|label> there as a mention
// of everyone, of a person and as a link under any label: a run named
// "<!channel>" would notify a whole channel, and one named
// "<https://elsewhere.example|Open the run>" would put a second link
// beside the real one. Escaped, they read as the characters typed; the
// structured fields (run.name, criteria) keep the text as it is.
func slackText(s string) string { return slackMarkup.Replace(s) }

// slackLinkURL writes an address (the dashboard's, set by an owner) for
// the URL part of Slack's <url|label> link. "|" would end the URL part
// there, and the rest of the address would become the label: it is
// written percent-encoded (%7C), which a browser reads as the same
// address. "&", "<" and ">" are written as the entities Slack's
// documentation asks for, so the link cannot be closed early or a
// mention or second link be put in after it.
func slackLinkURL(u string) string {
	return slackMarkup.Replace(strings.ReplaceAll(u, "|", "%7C"))
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
	tr, ok := c.Transport.(*http.Transport)
	if h, isH1 := c.Transport.(interface{ HTTPTransport() *http.Transport }); isH1 {
		// Plain HTTP goes out on the calling goroutine, HTTPS through
		// this transport; its settings hold on both paths.
		tr, ok = h.HTTPTransport(), true
	}
	if ok {
		tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout = cfg.Timeout, cfg.Timeout
		tr.DisableKeepAlives = true // one message now and then
	}
	return c
}

// webhookEgress is the egress policy of webhook deliveries, with the
// workspace's grant when cfg has one.
func webhookEgress(cfg WebhookConfig) judge.Egress {
	return judge.Egress{AllowLoopback: cfg.AllowLoopback, AllowPrivate: cfg.AllowPrivate, Grant: cfg.grant, ShowAddrs: cfg.ShowAddrs,
		LoopbackSetting: "allowed only in local mode or with BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK", PrivateSetting: "BATCHEVAL_WEBHOOK_ALLOW_PRIVATE"}
}

// checkEgress decides whether a webhook may connect to address (ip:port).
func checkEgress(cfg WebhookConfig, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused: %q is not an address", address)
	}
	return webhookEgress(cfg).Check(ap)
}

// messageReport is the report a run's webhook message quotes. A panic of
// the report is an error, and the message goes without its figures (a
// panic of the job would only be retried, and panic again).
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
