package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"golang.org/x/sync/errgroup"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	r *Runner
}

// Timeout: none; see Config.LeaseTTL.
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return -1 }

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	return w.r.Execute(ctx, job.Args.RunID)
}

// errDraining means the process is shutting down; the job is snoozed so the
// next start picks the run up where it stopped.
var errDraining = errors.New("worker is shutting down")

// Execute runs (or resumes) one run to its end. It is what the job does.
func (r *Runner) Execute(ctx context.Context, runID int64) error {
	run, err := r.db.GetRun(ctx, runID)
	if err != nil {
		if models.ErrorCode(err) == models.ENotFound {
			return river.JobCancel(err)
		}
		return err
	}
	if run.Finished() {
		return nil
	}
	// The lease owner names this execution, not just this process: two
	// executions of one job in one process must still tell each other apart.
	owner := fmt.Sprintf("%s/%d", r.id, r.executions.Add(1))
	ok, err := r.db.ClaimRun(ctx, runID, owner, time.Now().Add(r.cfg.LeaseTTL))
	if err != nil {
		return err
	}
	if !ok {
		run, err = r.db.GetRun(ctx, runID)
		if err == nil && run.Finished() {
			return nil
		}
		// Another live worker holds the run; look again later.
		return river.JobSnooze(r.cfg.LeaseTTL)
	}
	log := r.log.With("run", runID, "judge", run.JudgeSnapshot.Name)
	ctx = models.WithLeaseOwner(ctx, owner) // fences every run-state write on this lease
	log.Info("run started", "worker", owner)

	// work is cancelled when the run is cancelled, the lease is lost or the
	// job is cancelled; calls already sent are allowed to finish then.
	work, stopWork := context.WithCancelCause(ctx)
	defer stopWork(nil)
	leaseDone := make(chan struct{})
	go func() {
		defer close(leaseDone)
		r.keepLease(work, stopWork, runID, owner)
	}()
	defer func() { stopWork(nil); <-leaseDone }()

	err = r.execute(ctx, work, run, log)
	switch {
	case err == nil:
		if ferr := r.db.FinishRun(context.WithoutCancel(ctx), runID, models.RunSucceeded, ""); ferr != nil {
			return ferr
		}
		log.Info("run finished")
		return nil
	case errors.Is(err, errDraining):
		_ = r.db.ReleaseLease(context.WithoutCancel(ctx), runID, owner)
		log.Info("run paused for shutdown; it resumes on the next start")
		return river.JobSnooze(time.Second)
	case leaseLost(work, err):
		log.Warn("run paused: its lease could not be renewed; it resumes when claimed again")
		return river.JobSnooze(r.cfg.LeaseTTL)
	case errors.Is(context.Cause(work), errCancelled) || errors.Is(err, errCancelled):
		log.Info("run cancelled")
		return nil
	case ctx.Err() != nil:
		// Killed or job cancelled: what was answered is stored.
		_ = r.db.ReleaseLease(context.WithoutCancel(ctx), runID, owner)
		return r.handBack(ctx, log)
	case models.IsTransient(err):
		return r.pauseForDatabase(ctx, runID, owner, err, log)
	default:
		var rl *rateLimited
		if errors.As(err, &rl) {
			_ = r.db.ReleaseLease(context.WithoutCancel(ctx), runID, owner)
			log.Warn("judge rate limit: run snoozed", "for", rl.after)
			return river.JobSnooze(rl.after)
		}
		log.Error("run failed", "err", err)
		if ferr := r.db.FinishRun(context.WithoutCancel(ctx), runID, models.RunFailed, err.Error()); ferr != nil {
			return ferr
		}
		return river.JobCancel(err)
	}
}

var errCancelled = errors.New("run cancelled")

// errLeaseLost stops work whose lease could not be renewed in time; the
// run resumes wherever its lease is next claimed.
var errLeaseLost = errors.New("could not renew the run's lease in time")

// keepLease renews the run's lease until work ends; if the run was
// cancelled or taken over, it stops the work.
func (r *Runner) keepLease(work context.Context, stop context.CancelCauseFunc, runID int64, owner string) {
	t := time.NewTicker(r.cfg.LeaseTTL / 3)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-work.Done():
			return
		case <-t.C:
		}
		ok, err := r.db.RenewLease(work, runID, owner, time.Now().Add(r.cfg.LeaseTTL))
		if err != nil {
			// A passing database error: the next tick tries again. But once
			// the lease may have lapsed, another worker may own the run:
			// stop sending calls rather than risk sending them twice.
			if time.Since(renewed) >= r.cfg.LeaseTTL {
				stop(errLeaseLost)
				return
			}
			continue
		}
		renewed = time.Now()
		if !ok {
			stop(errCancelled)
			return
		}
	}
}

type rateLimited struct{ after time.Duration }

func (e *rateLimited) Error() string { return fmt.Sprintf("judge rate limit; wait %s", e.after) }

func (r *Runner) judgeFor(ctx context.Context, run models.Run) (*judge.Client, error) {
	snap := run.JudgeSnapshot
	cfg := judge.Config{
		BaseURL:     snap.BaseURL,
		Model:       snap.Model,
		Timeout:     time.Duration(snap.TimeoutSeconds) * time.Second,
		MaxAttempts: r.cfg.JudgeTuning.MaxAttempts,
		MinBackoff:  r.cfg.JudgeTuning.MinBackoff,
		MaxBackoff:  r.cfg.JudgeTuning.MaxBackoff,
	}
	if snap.Simulated {
		if r.cfg.SimulatedURL == "" {
			return nil, errors.New("this run uses the simulated judge, but it is not running in this process")
		}
		cfg.BaseURL = r.cfg.SimulatedURL
	} else {
		if run.JudgeID != nil {
			if j, err := r.db.FindJudge(ctx, run.WorkspaceID, *run.JudgeID); err == nil {
				cfg.APIKey = j.APIKey
				if cfg.APIKey == "" && j.APIKeyEnv != "" {
					key, err := models.KeyFromEnv(r.cfg.Getenv, j.APIKeyEnv)
					if err != nil {
						return nil, err
					}
					cfg.APIKey = key
				}
			}
		}
		if cfg.APIKey == "" && snap.APIKeyEnv != "" {
			key, err := models.KeyFromEnv(r.cfg.Getenv, snap.APIKeyEnv)
			if err != nil {
				return nil, err
			}
			cfg.APIKey = key
		}
	}
	return judge.New(r.guardJudge(ctx, run, cfg)) // fencing, circuit breaker, metrics (guard.go)
}

// execute is the BatchEval loop: criteria in turn, rounds in sequence,
// the batches of a round concurrently.
func (r *Runner) execute(ctx, work context.Context, run models.Run, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) error {
	s := run.Settings
	if err := s.Validate(); err != nil {
		return fmt.Errorf("run settings: %w", err)
	}
	rub := run.RubricSnapshot
	ds, err := r.db.FindDataset(ctx, run.WorkspaceID, run.DatasetID)
	if err != nil {
		return err
	}
	rows, err := r.db.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		return fmt.Errorf("load dataset rows: %w", err)
	}
	if len(rows) == 0 {
		return errors.New("the dataset has no rows")
	}
	fields := rub.Fields
	if len(fields) == 0 {
		fields = ds.Fields
	}
	client, err := r.judgeFor(ctx, run)
	if err != nil {
		return err
	}
	if run.Method != "" && run.Method != models.MethodBatchEval {
		return r.executeSampleWise(ctx, work, run, rows, fields, client)
	}
	index := make(map[int64]int, len(rows))
	for i, row := range rows {
		index[row.ID] = i
	}
	perRound := (len(rows) + s.BatchSize - 1) / s.BatchSize
	total := perRound * s.Rounds * len(rub.Criteria)
	concurrency := max(1, run.JudgeSnapshot.MaxConcurrency)

	for ci, crit := range rub.Criteria {
		for round := 0; round < s.Rounds; round++ {
			if err := r.db.SetRunPlan(ctx, run.ID, total, ci, round); err != nil {
				return err
			}
			batches, err := r.db.RoundBatches(ctx, run.ID, ci, round)
			if err != nil {
				return err
			}
			if len(batches) == 0 {
				plan, err := r.composeRound(ctx, run, ci, round, rows, index)
				if err != nil {
					return err
				}
				if batches, err = r.db.CreateRoundBatches(ctx, run.ID, ci, round, plan); err != nil {
					return err
				}
			}
			g, gctx := errgroup.WithContext(work)
			g.SetLimit(concurrency)
			failed := 0
			results := make(chan bool, len(batches))
			for _, b := range batches {
				if b.Status != models.BatchPending {
					results <- b.Status == models.BatchFailed
					continue
				}
				g.Go(func() error {
					if err := r.stopping(gctx); err != nil {
						return err
					}
					// Was context.WithoutCancel(gctx): then Kill, and Stop
					// once out of patience, waited for hung calls for good.
					calls, stopCalls := callContext(ctx)
					defer stopCalls()
					res, err := r.judgeBatch(calls, client, run, rub, crit, b, rows, index, fields)
					if res.Batch.Status != "" {
						results <- res.Batch.Status == models.BatchFailed
					}
					return r.store(context.WithoutCancel(ctx), res, err)
				})
			}
			werr := g.Wait()
			close(results)
			for f := range results {
				if f {
					failed++
				}
			}
			if werr != nil {
				return werr
			}
			if err := r.stopping(work); err != nil {
				return err
			}
			if failed == len(batches) {
				return fmt.Errorf("every batch of round %d of %q failed: the judge is not answering usefully (see the batches for its errors)", round+1, crit.Name)
			}
		}
	}
	return nil
}

// callContext is the context judge calls run under. A call already sent
// outlives a cancelled run, a lost lease or a cancelled job (River's
// JobCancel), so its answer is stored; it does not outlive a hard stop of
// the worker (Kill, or Stop out of patience: River's StopAndCancel), which
// must return promptly, as a crash would.
func callContext(job context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(job))
	stop := context.AfterFunc(job, func() {
		if cause := context.Cause(job); !errors.Is(cause, river.ErrJobCancelledRemotely) {
			cancel(cause)
		}
	})
	return ctx, func() { stop(); cancel(nil) }
}

// stopping reports why no new call should start, if any.
func (r *Runner) stopping(work context.Context) error {
	select {
	case <-r.draining:
		return errDraining
	default:
	}
	if cause := context.Cause(work); cause != nil {
		return cause
	}
	return nil
}

// composeRound forms the batches of one round: a seeded shuffle for the
// first, the chosen composition strategy over earlier scores after that.
func (r *Runner) composeRound(ctx context.Context, run models.Run, ci, round int, rows []models.DatasetRow, index map[int64]int) ([][]int64, error) {
	s := run.Settings
	rng := rand.New(rand.NewPCG(uint64(s.Seed), seedMix(ci, round)))
	var idx [][]int
	if round == 0 {
		idx = evaluator.ComposeFirstRound(len(rows), s.BatchSize, rng)
	} else {
		byRow, err := r.db.CriterionScores(ctx, run.ID, ci, s.Rounds)
		if err != nil {
			return nil, err
		}
		past := make([][]float64, round)
		for k := range past {
			past[k] = make([]float64, len(rows))
			for i := range past[k] {
				past[k][i] = math.NaN()
			}
		}
		for rowID, scores := range byRow {
			i, ok := index[rowID]
			if !ok {
				continue
			}
			for k := 0; k < round; k++ {
				if scores[k] != nil {
					past[k][i] = *scores[k]
				}
			}
		}
		keys := evaluator.SortKeys(s.SortKey, past)
		idx = evaluator.ComposeRound(s.Composition, keys, s.BatchSize, rng)
	}
	out := make([][]int64, len(idx))
	for b, members := range idx {
		for _, i := range members {
			out[b] = append(out[b], rows[i].ID)
		}
	}
	return out, nil
}

// seedMix derives a distinct, reproducible stream per criterion and round.
// The run's id is deliberately not part of it: two runs with the same seed
// on the same data start from the same first-round batches, so comparing
// settings (e.g. compositions) is paired, and the seed alone decides.
func seedMix(ci, round int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", ci, round)
	return h.Sum64()
}

// judgeBatch sends one batch (and at most one repair request for missing
// scores) and returns what to store. A judge failure after all retries
// becomes a failed batch with missing scores, except failures that concern
// the whole run (bad key, rate limit), which are returned as errors.
func (r *Runner) judgeBatch(ctx context.Context, client *judge.Client, run models.Run, rub evaluator.Rubric, crit evaluator.Criterion,
	b models.RunBatch, rows []models.DatasetRow, index map[int64]int, fields []evaluator.Field) (models.BatchResult, error) {
	s := run.Settings
	samples := make([]evaluator.Sample, len(b.RowIDs))
	for k, id := range b.RowIDs {
		samples[k] = rows[index[id]].Sample(fields)
	}
	msgs := evaluator.BuildBatchPrompt(rub, crit, samples, s)
	req := judge.Request{Messages: msgs, Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens}
	seed := s.Seed + int64(b.Round)
	req.Seed = &seed
	b.Request = encodeMessages(msgs)

	started := time.Now()
	resp, err := client.Complete(ctx, req)
	b.Calls = 1
	b.Attempts = judge.AttemptsOf(err)
	if err != nil {
		if fatal := runLevel(err); fatal != nil {
			return models.BatchResult{}, fatal
		}
		b.Status = models.BatchFailed
		b.Error = err.Error()
		b.LatencyMS = time.Since(started).Milliseconds()
		b.Problems = []string{"the judge gave no usable answer: " + err.Error()}
		return r.result(run, b, nil, nil), nil
	}
	b.Attempts = resp.Attempts
	b.PromptTokens, b.CompletionTokens = resp.PromptTokens, resp.CompletionTokens
	b.LatencyMS = resp.Latency.Milliseconds()
	text := ""
	if len(resp.Choices) > 0 {
		text = resp.Choices[0].Text
	}
	b.Response = text
	ans := evaluator.ParseBatchAnswer(text, len(samples), crit)
	problems := append([]string{}, ans.Problems...)

	if missing := ans.Missing(); len(missing) > 0 {
		rmsgs := evaluator.BuildRepairMessages(msgs, text, crit, s, missing)
		b.RepairRequest = rmsgs[len(rmsgs)-1].Content
		rreq := req
		rreq.Messages = rmsgs
		rresp, rerr := client.Complete(ctx, rreq)
		b.Calls++
		// The repair's own attempts (rresp when it worked, rerr when not);
		// this used to add the first call's attempts again.
		b.Attempts += max(rresp.Attempts, judge.AttemptsOf(rerr))
		if rerr != nil {
			problems = append(problems, "repair request failed: "+rerr.Error())
			if fatal := runLevel(rerr); fatal != nil {
				// The first answer is paid for: keep it (its missing
				// scores stay missing) and then stop or pause the run.
				b.Status, b.Problems = models.BatchDone, problems
				return r.result(run, b, ans.Scores, ans.Analyses), fatal
			}
		} else {
			b.PromptTokens += rresp.PromptTokens
			b.CompletionTokens += rresp.CompletionTokens
			if len(rresp.Choices) > 0 {
				b.RepairResponse = rresp.Choices[0].Text
			}
			rep := evaluator.ParseBatchAnswer(b.RepairResponse, len(samples), crit)
			for _, label := range missing {
				if v := rep.Scores[label-1]; v != nil {
					ans.Scores[label-1] = v
					problems = append(problems, fmt.Sprintf("Sample%d: score recovered by the repair request", label))
				}
			}
		}
	}
	b.Status = models.BatchDone
	b.Problems = problems
	return r.result(run, b, ans.Scores, ans.Analyses), nil
}

func (r *Runner) result(run models.Run, b models.RunBatch, scores []*float64, analyses []string) models.BatchResult {
	out := models.BatchResult{Batch: b}
	for k, rowID := range b.RowIDs {
		sc := models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: b.CriterionIndex, Round: b.Round, RowID: rowID, Label: k + 1}
		if k < len(scores) {
			sc.Score = scores[k]
		}
		if k < len(analyses) {
			sc.Analysis = analyses[k]
		}
		out.Scores = append(out.Scores, sc)
	}
	out.Cost = Cost(run.JudgeSnapshot, b.PromptTokens, b.CompletionTokens)
	return out
}

// Cost prices tokens; nil when either price is unknown (never 0 for unknown).
func Cost(j models.JudgeSnapshot, promptTokens, completionTokens int) *float64 {
	if j.PriceInputPerMTok == nil || j.PriceOutputPerMTok == nil {
		return nil
	}
	c := (float64(promptTokens)**j.PriceInputPerMTok + float64(completionTokens)**j.PriceOutputPerMTok) / 1e6
	return &c
}

// runLevel returns the error that stops or pauses the whole run, or nil
// when the failure only concerns this batch.
func runLevel(err error) error {
	var je *judge.Error
	if !errors.As(err, &je) {
		return err
	}
	switch je.Kind {
	case judge.KindCancelled:
		return err
	case judge.KindAuth, judge.KindNotFound:
		return fmt.Errorf("stopping the run: %w", err)
	case judge.KindRateLimited:
		after := je.RetryAfter
		if after <= 0 {
			after = time.Minute
		}
		return &rateLimited{after: after}
	}
	return nil
}

func encodeMessages(msgs []evaluator.Message) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}

// DecodeMessages reads a stored request back.
func DecodeMessages(s string) []evaluator.Message {
	var msgs []evaluator.Message
	if err := json.Unmarshal([]byte(s), &msgs); err != nil {
		return []evaluator.Message{{Role: "user", Content: strings.TrimSpace(s)}}
	}
	return msgs
}

// store saves what a batch produced, if anything, then returns err (a
// run-level failure that may come with a stored answer). An answer another
// execution already stored is not an error: it is simply not stored twice.
func (r *Runner) store(ctx context.Context, res models.BatchResult, err error) error {
	if res.Batch.Status != "" {
		if serr := r.db.SaveBatchResult(ctx, res); serr != nil {
			if models.ErrorCode(serr) != models.EConflict {
				return serr
			}
			r.log.Warn("batch already answered by another execution; this answer is not stored", "run", res.Batch.RunID, "batch", res.Batch.ID)
		}
	}
	return err
}
