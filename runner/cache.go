package runner

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// cachedJudge wraps a run's judge client with its workspace's answer cache
// (judge.Cache): an identical request made before, by this run or an
// earlier one of the workspace, is answered without calling the endpoint,
// and counted in the run's cached calls. The key names the snapshot's
// address, not the simulated judge's port of the moment, so re-runs of a
// simulated run also match.
//
// spend, when not nil, is the run's spending cap: answers replayed as paid
// calls count on it, as the calls they were.
func cachedJudge(db *models.DB, store judge.AnswerStore, run models.Run, client Completer, baseURL string, spend *spendCap, flights *judge.Flights) *judge.Cache {
	if run.JudgeSnapshot.Simulated {
		baseURL = "simulated:" + run.JudgeSnapshot.BaseURL
	}
	// An answer thought over at one reasoning effort is not replayed for
	// another; without one, the keys are as they always were.
	c := judge.NewCache(client, store, baseURL, judge.CacheModel(run.JudgeSnapshot.Model, run.JudgeSnapshot.SendsReasoningEffort()))
	// A run that reuses no answers still keeps its own, under keys no
	// other run finds: a resume after a stop or a crash replays what the
	// run paid for instead of paying again.
	c.Run, c.Private = run.ID, run.Settings.NoCache
	c.Flights, c.Scope = flights, strconv.FormatInt(run.WorkspaceID, 10)
	if run.Settings.HedgeSlowCalls {
		c.Hedge = judge.NewHedger()
	}
	if spend != nil {
		c.OnReplay = func(_ context.Context, resp judge.Response) { spend.replayed(resp) }
		c.OnAssumedLoss = func(_ context.Context, p, cp int) { spend.assumed(p, cp) }
	}
	c.OnHit = func(ctx context.Context, paid judge.Hit) {
		// A counter lost to a database error only understates the cached
		// calls; the answer itself is still used.
		_ = db.AddCachedCall(context.WithoutCancel(ctx), run.ID, paid.PromptTokens, paid.CompletionTokens)
	}
	return c
}

// answerStore is a workspace's answer cache whose saves, on SQLite, go
// into the runner's group commit (Runner.saveAnswer).
type answerStore struct {
	*models.ResponseCache
	r *Runner
}

func (s answerStore) SaveAnswer(ctx context.Context, requestHash string, occurrence int, answer []byte) error {
	return s.r.saveAnswer(ctx, s.ResponseCache, requestHash, occurrence, answer)
}

// noteResent records on the run how many slow calls this execution
// re-sent (judge.Hedger), when it re-sent any: the run's calls count them
// with the others, and the event says how many of them were re-sends.
func (r *Runner) noteResent(ctx context.Context, run models.Run, h *judge.Hedger, log interface{ Warn(string, ...any) }) {
	n := h.Resent()
	if n == 0 {
		return
	}
	calls := "calls"
	if n == 1 {
		calls = "call"
	}
	owner := models.LeaseOwnerFrom(ctx)
	now := time.Now()
	ev := models.RunEvent{RunID: run.ID, At: now, Kind: models.RunEventResent, Worker: owner,
		Message: fmt.Sprintf("Re-sent %d slow judge %s (the run's setting \"Re-send slow judge calls\"): each went out a second time "+
			"after taking much longer than the run's other calls, and the first answer was used. Each re-send is a paid call, "+
			"counted in the run's calls, tokens and cost.", n, calls)}
	if err := r.addEvent(context.WithoutCancel(ctx), ev); err != nil {
		log.Warn("could not record the re-sent slow calls on the run", "err", err)
	}
}
