package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Timings of the progress stream. Handlers.progressPoll and
// accessRecheck replace them when above 0, so that a test can wait for a
// stream on a shorter clock (see shortStreamTimings); the product never
// changes them.
const (
	// defaultProgressPoll is how often the stream re-reads the run: fast
	// enough to feel live, slow enough to cost the database nothing
	// noticeable.
	defaultProgressPoll = 500 * time.Millisecond
	// defaultAccessRecheck is how often a stream checks that whoever
	// opened it may still read the workspace: a member removed, or whose
	// sessions were signed out (a password change or reset), stops
	// receiving within it.
	defaultAccessRecheck = 2 * time.Second
)

// streamTimings are the progress stream's poll and access recheck.
func (h *Handlers) streamTimings() (poll, recheck time.Duration) {
	poll, recheck = defaultProgressPoll, defaultAccessRecheck
	if h.progressPoll > 0 {
		poll = h.progressPoll
	}
	if h.accessRecheck > 0 {
		recheck = h.accessRecheck
	}
	return poll, recheck
}

const (
	// keepAliveEvery sends a comment so proxies that drop idle connections
	// (often after 30-60 s) keep a slow run's stream open.
	keepAliveEvery = 15 * time.Second
)

// runProbesText is the run's probe calls (the tiny requests sent while it
// waited for its judge) as the page shows them beside its counters: how
// many, and when any, their tokens and cost at the run's prices.
func runProbesText(run models.Run) string {
	if run.ProbeCalls == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%s tokens, %s)", runCount(run.ProbeCalls), runCount(run.ProbePromptTokens+run.ProbeCompletionTokens),
		costText(run.Simulated, run.ProbeCostUSD()))
}

// runProgress summarises a run's state at now for the page and the stream.
// noAnswer is how many of the run's missing scores belong to failed calls
// (models.DB.CountNoAnswerScores).
func runProgress(run models.Run, noAnswer int, now time.Time) web.RunProgress {
	p := web.RunProgress{
		Criteria: len(run.RubricSnapshot.Criteria), Passes: len(methods.For(run.Method).Passes(run.RubricSnapshot)), Rounds: run.Settings.Rounds,
		BatchesDone: run.BatchesDone, BatchesTotal: run.BatchesTotal,
		Failed: run.BatchesFailed, Missing: run.MissingScores, Calls: run.Calls, Cached: run.CachedCalls,
		Tokens: run.PromptTokens + run.CompletionTokens, Status: models.RunStatusLabel(run.Status), Finished: run.Finished(), Paused: run.Paused(),
		Cost: runCostText(run), ETA: "—", Elapsed: "—", Words: methods.For(run.Method).Words(), Retries: run.Retries,
	}
	p.TokensText, p.CallsText, p.StatusClass = web.Count(p.Tokens), web.Count(p.Calls), run.Status
	p.Short, p.Sampling = run.ShortScores, methods.SamplesAnswers(methods.For(run.Method))
	p.Probes, p.ProbesText = run.ProbeCalls, runProbesText(run)
	p.StoppedByJudge = run.StoppedByJudgeSettings()
	p.CapCanBind = run.JudgeSnapshot.Simulated || run.JudgeSnapshot.Cost(0, 0) != nil
	if c := run.Settings.SpendCapUSD; c != nil {
		p.SpendCap = strconv.FormatFloat(*c, 'f', -1, 64)
	}
	// Scores, each: missing for too few readable answers, for no answer
	// (a failed call), or unreadable (the rest).
	p.TooFew = min(max(run.TooFewScores, 0), run.MissingScores)
	p.Unreadable = max(run.MissingScores-noAnswer-p.TooFew, 0)
	p.NoAnswer = max(run.MissingScores-p.Unreadable-p.TooFew, 0)
	if run.WaitingForJudge() {
		p.Status, p.Waiting, p.StatusClass = models.StatusWaitingForJudge, run.ShownWaitingError(), "waiting"
	}
	if run.StartedAt != nil {
		// Shown 1-based; before the first batch is planned there is nothing
		// to count yet, so they stay 0.
		p.Criterion, p.Round = run.CurrentCriterion+1, run.CurrentRound+1
	}
	if run.BatchesTotal > 0 {
		p.Percent = math.Round(float64(run.BatchesDone)/float64(run.BatchesTotal)*1000) / 10
	}
	if run.Completed() {
		p.Percent = 100
	}
	if elapsed, ok := run.Elapsed(now); ok {
		// Only the time the run was going: a run paused overnight read
		// as if it had run all night. The time left out is said apart.
		p.Elapsed = elapsedText(run, now)
		// Time left from the rate so far: batches are alike in size, so
		// the average pace is a fair guess for the rest.
		if !p.Finished && run.BatchesDone > 0 && run.BatchesTotal > run.BatchesDone {
			left := time.Duration(float64(elapsed) / float64(run.BatchesDone) * float64(run.BatchesTotal-run.BatchesDone))
			p.ETA = "about " + durationText(left)
			if left < time.Second {
				p.ETA = durationText(left) // not "about under 1s"
			}
		}
	}
	if p.Finished || p.Paused {
		p.ETA = "—"
	}
	return p
}

// elapsedText is how long the started run has been going at now, as its
// page and its report say it: "10m 00s", with the time left out said
// apart, "10m 00s (not counting 14h 00m paused or stopped)"; "" before it
// started. Only the time the run was going counts: a run paused overnight
// read as if it had run all night.
func elapsedText(run models.Run, now time.Time) string {
	elapsed, ok := run.Elapsed(now)
	if !ok {
		return ""
	}
	text := durationText(elapsed)
	if paused := run.PausedFor(now); paused >= time.Second {
		text += " (not counting " + durationText(paused) + " paused or stopped)"
	}
	return text
}

// durationText is "under 1s", "45s", "3m 05s" or "2h 07m". Under a
// second is said so: the demo run, over in 0.3 s, read "Took 0s".
func durationText(d time.Duration) string {
	if d < time.Second {
		return "under 1s"
	}
	s := int(d.Round(time.Second).Seconds())
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh %02dm", s/3600, (s%3600)/60)
	}
}

// streamEndedNoAccess is the "ended" event's data when the reader lost
// access to the workspace while the stream was open: app.js shows its
// message where the live progress was.
const streamEndedNoAccess = `{"message":"Live progress stopped: you no longer have access to this workspace (you were removed from it, or your sessions were signed out). The figures above are as they were then; sign in again to see the run."}`

// streamEndedTrashed is the "ended" event's data when the run could no
// longer be read while its stream was open: someone moved it (or its
// dataset or project) to the trash, through any server process, which
// cancels a run still going first.
const streamEndedTrashed = `{"message":"Live progress stopped: this run is no longer there. Someone moved it (or its dataset or project) to the trash, which cancels a run still going, or deleted it for good. The figures above are as they were then; the Trash page lists what can still be restored."}`

// startEventStream answers with the headers of a server-sent event stream
// and sends them at once, so the client sees the stream open before the
// first event.
func startEventStream(c echo.Context) *echo.Response {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set(echo.HeaderCacheControl, "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx would otherwise buffer the stream
	w.WriteHeader(http.StatusOK)
	w.Flush()
	return w
}

// maxStreamsPerHolder is how many progress streams one holder may keep
// open at once in a server process: an API token (GET
// /api/v1/runs/{id}/events), a signed-in account, over all its sessions
// (the run page's GET /runs/{id}/events), or the local user of a loopback
// server with no accounts, over its tabs and scripts together. The rate limit counts an API
// stream once, when it opens, and the run page's stream skips the page
// gate, yet each open stream reads the run twice a second for as long as
// the run goes on (hours, or a run waiting for its judge): without a
// bound, a token opening its 600 requests a minute as streams added 1,200
// database reads a second every minute, and a session cookie as many as it
// cared to open. A script follows a few runs at a time, a person a few
// tabs (a browser opens at most 6 connections to one server over HTTP/1.1
// anyway); more is a loop that forgot to close its connections.
const maxStreamsPerHolder = 10

// streamHolder is whom an open progress stream is counted against.
type streamHolder struct {
	kind PrincipalKind
	id   int64 // the token's id, or the account's user id (0: the local user)
}

// localStreamsRefusal is the message of a refused stream of the local user,
// whose page and API streams count together.
var localStreamsRefusal = fmt.Sprintf("this server's local user already has %d live progress streams open (the most one holder may keep, "+
	"over all its tabs and scripts): close some of the pages or scripts following a run; the run page refreshes its figures without one, "+
	"and a script can poll GET /api/v1/runs/{id}", maxStreamsPerHolder)

// openStreams counts the progress streams open per holder.
type openStreams struct {
	mu   sync.Mutex
	open map[streamHolder]int
}

// take counts one more stream of k, unless it has max open already.
func (s *openStreams) take(k streamHolder, max int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[k] >= max {
		return false
	}
	if s.open == nil {
		s.open = map[streamHolder]int{}
	}
	s.open[k]++
	return true
}

// done counts a stream of k closed.
func (s *openStreams) done(k streamHolder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[k]--; s.open[k] <= 0 {
		delete(s.open, k)
	}
}

// streamRetryAfter is the Retry-After of a refused stream, in seconds.
const streamRetryAfter = 15

// holdStream counts the progress stream c opens against its principal (an
// API token, or a signed-in account whatever its session), or refuses it
// 429 with Retry-After and refusal as the message when that holder has
// maxStreamsPerHolder open already. release counts it closed: call it when
// the stream ends. The local user of a loopback server (no account) is one
// holder, its page and API streams together: a local browser tab or
// script that leaks streams is as costly as an account's.
func (h *Handlers) holdStream(c echo.Context, refusal string) (release func(), err error) {
	var k streamHolder
	switch p := principalOf(c.Request().Context()); p.Kind {
	case Token:
		k = streamHolder{Token, p.TokenID}
	case Account:
		k = streamHolder{Account, p.User.ID}
	case LocalUser:
		k, refusal = streamHolder{LocalUser, 0}, localStreamsRefusal
	default:
		return func() {}, nil
	}
	if !h.streams.take(k, maxStreamsPerHolder) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
		return nil, echo.NewHTTPError(http.StatusTooManyRequests, refusal)
	}
	return func() { h.streams.done(k) }, nil
}

// streamRunEvents sends the run's progress as server-sent events: a
// "progress" event whenever something changed, a comment every 15 s so the
// connection stays open, and a last event with finished (or paused) true.
func (h *Handlers) streamRunEvents(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// The page works without its stream (app.js then refreshes the
	// figures from the page itself, see data-run-events).
	release, err := h.holdStream(c, fmt.Sprintf(
		"you already have %d live progress streams open (the most one account may hold, over all its tabs and sessions): close some of the pages following a run; this page refreshes its figures without one", maxStreamsPerHolder))
	if err != nil {
		return err
	}
	defer release()
	w := startEventStream(c)

	pollEvery, recheckEvery := h.streamTimings()
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	var last []byte
	// The unanswered scores are counted again only when the run's failed
	// calls changed, not on every poll.
	noAnswer, failedSeen := 0, -1
	reader, checked := principalOf(ctx), time.Now()
	// The session the stream was opened with: signing it out (Sign out in
	// another tab) ends the stream as it ends every later request of it.
	session := h.Sessions.Token(ctx)
	for {
		if run.BatchesFailed != failedSeen {
			counts, _, err := h.runFailures(ctx, run)
			if err != nil {
				if ctx.Err() == nil {
					h.Log.Warn("progress stream stopped", "run", run.ID, "err", err)
				}
				return nil
			}
			noAnswer, failedSeen = sumCounts(counts), run.BatchesFailed
		}
		p := runProgress(run, noAnswer, time.Now())
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, last) {
			if _, err := fmt.Fprintf(w, "event: progress\ndata: %s\n\n", data); err != nil {
				return nil // the client went away
			}
			w.Flush()
			last = data
		}
		if p.Finished || p.Paused {
			// Paused: the page reloads to offer Continue.
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			w.Flush()
			continue
		case <-poll.C:
		}
		if time.Since(checked) >= recheckEvery {
			switch may, err := h.mayStillRead(ctx, reader, session); {
			case err != nil:
				// No answer (the database busy under load, or
				// restarting) is not a refusal: ask again at the next
				// poll rather than tell a member they lost access.
				if ctx.Err() == nil {
					h.Log.Warn("progress stream: access not rechecked", "run", run.ID, "err", err)
				}
			case !may:
				// The stream ends, saying so: the browser's reconnection
				// is refused as any request of theirs now is, and the page
				// would otherwise go on showing the last progress as if
				// the run had stalled there.
				fmt.Fprintf(w, "event: ended\ndata: %s\n\n", streamEndedNoAccess)
				w.Flush()
				return nil
			default:
				checked = time.Now()
			}
		}
		next, err := h.DB.FindRun(ctx, h.workspaceID(c), run.ID)
		if models.ErrorCode(err) == models.ENotFound {
			fmt.Fprintf(w, "event: ended\ndata: %s\n\n", streamEndedTrashed)
			w.Flush()
			return nil
		}
		if err != nil {
			if ctx.Err() == nil {
				h.Log.Warn("progress stream stopped", "run", run.ID, "err", err)
			}
			return nil
		}
		run = next
	}
}

// mayStillRead reports whether the person a long-lived answer was opened
// for (a progress stream, which can stay open for the hours a run takes)
// may still read its workspace, as their next request would be checked:
// still a member, and their session not signed out since: neither by a
// password change, a reset or "sign out my other sessions" (which move the
// account's session epoch) nor by Sign out of that session itself, or its
// expiry (session is its token, which must still be in the store). The
// local user of a loopback server always may.
func (h *Handlers) mayStillRead(ctx context.Context, p Principal, session string) (bool, error) {
	if p.Kind != Account {
		return p.Kind == LocalUser, nil
	}
	switch found, err := h.sessionLive(ctx, session); {
	case err != nil:
		return false, err
	case !found:
		return false, nil
	}
	u, err := h.DB.FindUser(ctx, p.User.ID)
	if err != nil {
		return false, unlessRefusal(err)
	}
	if u.SessionEpoch != p.User.SessionEpoch {
		return false, nil
	}
	if _, err = h.DB.MemberRole(ctx, p.Workspace.ID, u.ID); err != nil {
		return false, unlessRefusal(err)
	}
	return true, nil
}

// unlessRefusal is nil for an error that answers an access recheck with
// no (the account, membership or token is gone: not found, unauthorized),
// and err for one that does not answer it (the database busy or away), on
// which a stream asks again later instead of ending. A busy SQLite under
// load ended a member's stream with "you no longer have access"
// (TestAccessRecheckErrorIsNoRefusal).
func unlessRefusal(err error) error {
	switch models.ErrorCode(err) {
	case models.ENotFound, models.EUnauthorized:
		return nil
	}
	return err
}

// sessionLive reports whether the session of token is still in the
// session store (not signed out, not expired).
func (h *Handlers) sessionLive(ctx context.Context, token string) (bool, error) {
	if token == "" {
		return false, nil
	}
	var found bool
	var err error
	if store, ok := h.Sessions.Store.(scs.CtxStore); ok {
		_, found, err = store.FindCtx(ctx, token)
	} else {
		_, found, err = h.Sessions.Store.Find(token)
	}
	return found, err
}
