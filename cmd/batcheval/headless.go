package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dataimport"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
)

const runUsage = `Usage: batcheval run --data FILE --rubric FILE (--judge-url URL --model NAME | --simulated) [--method M] [flags]

Judges every sample of a data file with BatchEval and stores the run in the
same database as the dashboard, so it shows there too. Prints a correlation
table per criterion and, with --out, writes the run's results as ` + "`batcheval export`" + `
and the run page's Export buttons write them: CSV for a name ending in .csv
(one line per sample with every round's score), else JSON (each criterion's
statistics and every sample's final and per-round scores).

The rubric file (YAML or JSON) holds what the browser editor holds:
  task: what one sample is
  fields:            # the data columns the judge sees, under these labels
    - {column: context, label: Conversation history}
  criteria:
    - name: Coherent
      description: ...
      lo: 1
      hi: 3
      levels: {low: ..., middle: ..., high: ...}
      human_column: scores.Coherent   # nested JSON keys are dotted
      annotator_columns: [scores.Coherent_a, scores.Coherent_b]  # optional

annotator_columns name each annotator's own rating of the criterion; with two
or more, the result shows the human ceiling (Krippendorff's alpha and the
leave-one-annotator-out correlation). A file with one row per annotator and
sample takes --annotator-column instead. --group-column names a column that
groups the samples (the dialogue or document each belongs to): the result then
adds each criterion's correlation within groups, averaged over the groups.

Progress goes to stderr: a bar on a terminal, one line per change otherwise.

Interrupted (Ctrl-C or SIGTERM), it lets the calls already sent finish,
stores their answers, says how many batches were answered and hands the run
to ` + "`batcheval worker` or `batcheval serve`" + ` on the same database. Exit status:
0 finished; 1 an error (the run failed, or bad input); 3 stopped by its
spending cap; 4 paused from the dashboard; 130 interrupted by Ctrl-C
(SIGINT), 143 by SIGTERM.

Flags:
`

// headless implements `batcheval run`.
func headless(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("run", getenv, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, runUsage); printFlags(stderr, fs) }
	def := evaluator.DefaultSettings()
	var (
		dataPath    = fs.String("data", "", "data file: CSV with a header, JSON Lines, or a JSON array (required)")
		rubricPath  = fs.String("rubric", "", "rubric file, YAML or JSON (required)")
		idColumn    = fs.String("id-column", "id", "column holding sample ids; empty or absent generates ids")
		judgeURL    = fs.String("judge-url", "", "OpenAI-compatible base URL, e.g. http://localhost:11434/v1")
		model       = fs.String("model", "", "model name at the judge")
		keyEnv      = fs.String("api-key-env", "", "environment variable holding the API key (e.g. OPENAI_API_KEY)")
		keyHeader   = new(string)
		tokenLimit  = new(string)
		effort      = new(string)
		defaultOnly = fs.Bool("default-sampling-only", false, "the judge takes only its default temperature and top_p (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5): neither is sent, and --temperature, --top-p and --sample-temperature must be left out or 1")
		simulated   = fs.Bool("simulated", false, "use the built-in simulated judge (offline; not a language model)")
		rounds      = fs.Int("rounds", def.Rounds, "rounds N: each sample is scored N times in different batches")
		batchSize   = fs.Int("batch-size", def.BatchSize, "batch size B: samples per judge call")
		seed        = fs.Int64("seed", def.Seed, "seed for batch composition and the judge requests (the simulated judge's noise follows it)")
		concurrency = fs.Int("concurrency", 4, "judge calls in flight at once")
		temperature = fs.Float64("temperature", def.Temperature, "sampling temperature")
		topP        = fs.Float64("top-p", def.TopP, "nucleus sampling top_p")
		procedure   = enumFlag(fs, "procedure", string(def.Procedure), words(evaluator.OneStage, evaluator.TwoStage, evaluator.ThreeStage), "one, two or three stage prompt")
		composition = enumFlag(fs, "composition", string(def.Composition), words(evaluator.Heterogeneous, evaluator.Random, evaluator.Homogeneous), "heterogeneous, random or homogeneous batches")
		sortKey     = enumFlag(fs, "sort-key", string(def.SortKey), words(evaluator.SortByPrevious, evaluator.SortByMean), "score that orders samples when composing the next round's batches: previous (the last round's, as in the paper) or mean (the running mean of the rounds so far)")
		annotator   = fs.String("annotator-column", "", "column naming the annotator, for files with one row per annotator and sample (rows sharing an id are averaged)")
		groupCol    = fs.String("group-column", "", "column grouping the samples (e.g. the dialogue or source document each reply belongs to): the result adds each criterion's correlation within groups, averaged over them, as the dashboard does for a dataset's group column")
		scoring     = enumFlag(fs, "scoring", string(def.Scoring), words(evaluator.Decimal, evaluator.Integer), "decimal or integer scores")
		timeout     = fs.Duration("timeout", 2*time.Minute, "judge request timeout per attempt")
		method      = enumFlag(fs, "method", "batcheval", methodNames(), "judging method: "+orList(methodNames()))
		nSamples    = fs.Int("samples", 20, "geval/closerlook: n sampled completions per sample")
		noLogprobs  = fs.Bool("no-logprobs", false, "geval: estimate score probabilities by sampling even if the endpoint returns logprobs")
		noCache     = fs.Bool("no-cache", false, "ask the judge for every request, even one answered before by the same judge, model and seed (by default identical answers are reused at no cost)")
		hedge       = fs.Bool("hedge-slow-calls", true, "re-send a judge call still unanswered after twice the run's typical wait (and at least 1 s) and use the first answer; each re-send is a paid call, at most one per 20 calls (on by default; --hedge-slow-calls=false never pays for a call twice)")
		sampleTemp  = fs.Float64("sample-temperature", 1, "geval/closerlook: temperature of the sampled completions")
		llmScale    = enumFlag(fs, "llmeval-scale", string(evaluator.LLMEvalFive), words(evaluator.LLMEvalFive, evaluator.LLMEvalHundred), "llmeval: 0-5 (one decimal) or 0-100 (integers)")
		out         = fs.String("out", "", "write the run's results to this `FILE`, as batcheval export does: CSV for a name ending in .csv, else JSON")
		project     = fs.String("project", "Command-line runs", "project the run is stored under")
		spendCap    = fs.String("spend-cap-usd", "", "spending cap in `USD`, e.g. 2.50: no new judge call starts once the run's cost so far plus the next call's estimate would pass it; the run then stops, and batcheval resume --spend-cap-usd with a higher cap finishes it. Needs the judge's prices (--prices)")
	)
	// The key's header is a word read in any case, as saving a judge
	// reads it; refused as the other word flags are.
	wordsFlag(fs, keyHeader, "key-header", string(judge.KeyBearer), words(judge.KeyBearer, judge.KeyAPIKey),
		func(s string) bool { _, err := judge.ParseKeyHeader(s); return err == nil },
		"how the key is sent: bearer (Authorization: Bearer) or api-key (the api-key header of Azure OpenAI's per-deployment URLs, .../openai/deployments/NAME?api-version=...)")
	// The judge settings the judge form calls "Token limit" and "Takes
	// only the default temperature and top p": without them a reasoning
	// model refuses every call.
	wordsFlag(fs, tokenLimit, "token-limit", string(judge.TokenLimitMaxTokens), words(judge.TokenLimitMaxTokens, judge.TokenLimitMaxCompletionTokens),
		func(s string) bool { _, err := judge.ParseTokenLimit(s); return err == nil },
		fmt.Sprintf("the name the answer's cap is sent under: max_tokens (local servers, OpenAI's chat models) or max_completion_tokens (OpenAI's reasoning models: o1, o3, o4-mini, gpt-5; each cap is sent %d tokens higher, room for the hidden reasoning)", judge.ReasoningAllowance))
	// The judge form's "Reasoning effort": blank (the default) sends none.
	wordsFlag(fs, effort, "reasoning-effort", "", words(judge.ReasoningEffortLow, judge.ReasoningEffortMedium, judge.ReasoningEffortHigh),
		func(s string) bool { _, err := judge.ParseReasoningEffort(s); return err == nil },
		"sent as reasoning_effort: low, medium or high, how long a reasoning model (OpenAI's o1, o3, o4-mini, gpt-5; OpenRouter's) thinks before it answers; left out, none is sent and the model thinks as its default says")
	// Readable but senseless values are refused with the settings, before
	// anything is read or opened (a zero concurrency or timeout used to be
	// taken for the default in silence).
	c.require("concurrency", "", func() bool { return *concurrency >= 1 }, "a whole number from 1 up, e.g. 4 (the default)")
	c.require("timeout", "", func() bool { return *timeout >= time.Second }, "a duration of 1s or more, e.g. 2m (the default)")
	c.require("samples", "", func() bool { return *nSamples >= 1 && *nSamples <= evaluator.MaxSamples },
		fmt.Sprintf("a whole number from 1 to %d, e.g. 20 (the default)", evaluator.MaxSamples))
	// The run's settings, checked here too (settings.Validate checks them
	// again) so that the message names the flag, with the other settings
	// and before the data file is read.
	c.require("rounds", "", func() bool { return *rounds >= 1 && *rounds <= evaluator.MaxRounds },
		fmt.Sprintf("a whole number from 1 to %d, e.g. %d (the default)", evaluator.MaxRounds, def.Rounds))
	c.require("batch-size", "", func() bool { return *batchSize >= 1 && *batchSize <= evaluator.MaxBatchSize },
		fmt.Sprintf("a whole number from 1 to %d, e.g. %d (the default)", evaluator.MaxBatchSize, def.BatchSize))
	c.require("temperature", "", func() bool { return *temperature >= 0 && *temperature <= evaluator.MaxTemperature },
		fmt.Sprintf("a number from 0 to %g, e.g. %g (the default)", evaluator.MaxTemperature, def.Temperature))
	c.require("top-p", "", func() bool { return *topP > 0 && *topP <= 1 }, fmt.Sprintf("a number above 0, at most 1, e.g. %g (the default)", def.TopP))
	c.require("sample-temperature", "", func() bool { return *sampleTemp >= 0 && *sampleTemp <= evaluator.MaxTemperature },
		fmt.Sprintf("a number from 0 to %g, e.g. 1 (the default)", evaluator.MaxTemperature))
	if err := c.parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the usage was printed, as asked
		}
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *dataPath == "" || *rubricPath == "" {
		fs.Usage()
		var missing []string
		if *dataPath == "" {
			missing = append(missing, "--data (the data file: CSV with a header, JSON Lines or a JSON array)")
		}
		if *rubricPath == "" {
			missing = append(missing, "--rubric (the rubric file, YAML or JSON, as shown above)")
		}
		return fmt.Errorf("run needs %s", andList(missing))
	}
	if !*simulated && (*judgeURL == "" || *model == "") {
		return errors.New("give --judge-url and --model, or --simulated for the built-in simulated judge")
	}
	// Checked before anything is read or judged: a name the project
	// cannot take failed after the data was imported, in the model's
	// words, which did not name the flag.
	if strings.TrimSpace(*project) == "" {
		return errors.New(`--project is empty: give the project the run is stored under a name, e.g. --project "Command-line runs" (the default)`)
	}
	if err := checkOutPath(*out); err != nil {
		return err
	}
	// The run records its judge's base URL, which every member of the
	// workspace reads: a credential in it is refused as on the judge form
	// (the message names parameters, never values).
	if !*simulated {
		if err := models.CheckBaseURLCredentials(*judgeURL); err != nil {
			msg := models.ErrorMessage(err)
			if judge.URLParses(*judgeURL) {
				msg += " (on the command line, name the key's variable with --api-key-env)"
			}
			return fmt.Errorf("--judge-url: %s", msg)
		}
		// A whole endpoint pasted (.../chat/completions, as Azure's
		// portal and OpenAI's reference show it) is shortened as saving a
		// judge does: every call adds that path itself.
		if short, suffix := judge.TrimEndpoint(*judgeURL); suffix != "" {
			*judgeURL = short
			fmt.Fprintf(stderr, "note: --judge-url ended in %s, which every call adds itself: it was shortened to %s\n", suffix, judge.RedactURL(short))
		}
	}
	// Whoever runs this command is the operator: the variable named by
	// --api-key-env is added to the listed ones for this process only.
	getenv = withKeyVar(getenv, *keyEnv)
	if err := models.ValidateKeyEnv(getenv, *keyEnv); err != nil {
		return fmt.Errorf("--api-key-env: %w", err)
	}
	sendKeyAs, err := judge.ParseKeyHeader(*keyHeader)
	if err != nil {
		return fmt.Errorf("--key-header: %w", err)
	}
	sendCapAs, err := judge.ParseTokenLimit(*tokenLimit)
	if err != nil {
		return fmt.Errorf("--token-limit: %w", err)
	}
	sendEffort, err := judge.ParseReasoningEffort(*effort)
	if err != nil {
		return fmt.Errorf("--reasoning-effort: %w", err)
	}
	if *defaultOnly && !*simulated {
		if err := defaultSamplingProblem(fs, *method, *temperature, *topP, *sampleTemp); err != nil {
			return err
		}
		// The only temperature and top_p the judge takes, recorded as
		// the run's so that what it records is what the judge did.
		*temperature, *topP = 1, 1
	}
	settings := def
	settings.Rounds, settings.BatchSize, settings.Seed = *rounds, *batchSize, *seed
	settings.Temperature, settings.TopP = *temperature, *topP
	settings.Procedure, settings.Composition, settings.Scoring = evaluator.Procedure(*procedure), evaluator.Composition(*composition), evaluator.Scoring(*scoring)
	settings.SortKey = evaluator.SortKey(*sortKey)
	settings.NoCache = *noCache
	settings.HedgeSlowCalls = *hedge
	capUSD, err := parseSpendCap(*spendCap)
	if err != nil {
		return err
	}
	settings.SpendCapUSD = capUSD
	if err := settings.Validate(); err != nil {
		return err
	}
	prices, err := parsePrices(c.Prices)
	if err != nil {
		return err
	}
	// A cap is kept against the run's cost, which needs the judge's prices
	// (the simulated judge's are zero); checked before anything is stored,
	// as the launch form does.
	if _, priced := prices[*model]; settings.SpendCapUSD != nil && !*simulated && !priced {
		return fmt.Errorf("--spend-cap-usd: model %q has no prices, so the run's cost is unknown and a cap cannot be kept; "+
			"give them with --prices %s=INPUT:OUTPUT (USD per million tokens) or leave the cap out", *model, *model)
	}
	rub, err := readRubric(*rubricPath)
	if err != nil {
		return err
	}
	table, err := readData(*dataPath)
	if err != nil {
		return err
	}
	if *groupCol != "" && !slices.Contains(table.Columns, *groupCol) {
		return fmt.Errorf("--group-column: %s has no column %q; its columns are %s", *dataPath, *groupCol, strings.Join(table.Columns, ", "))
	}
	mapping := ratingMapping(rub)
	mapping.AnnotatorColumn = *annotator
	if slices.Contains(table.Columns, *idColumn) {
		mapping.IDColumn = *idColumn
	}
	rows, err := demo.ImportRows(table, mapping)
	if err != nil {
		return fmt.Errorf("%s: %w", *dataPath, err)
	}

	prog := newProgress(stderr)
	log := c.logger(prog.logs())
	db, ws, err := openWorkspace(ctx, c, log)
	if err != nil {
		return err
	}
	db.Getenv = getenv
	defer db.Close()
	proj, err := findOrCreateProject(ctx, db, ws, strings.TrimSpace(*project))
	if err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			return fmt.Errorf("--project: %w", err)
		}
		return err
	}
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: proj.ID, Name: models.OneLine(filepath.Base(*dataPath)), SourceFilename: filepath.Base(*dataPath),
		Format: string(table.Format), IDColumn: mapping.IDColumn, Columns: table.Columns, Fields: rub.Fields, RatingColumns: mapping.RatingColumns,
		GroupColumn: *groupCol}
	// The same file judged again judges the dataset it made before, so
	// that the runs compare as runs on the same samples (and share the
	// reviews given to them in the browser).
	if same, found, err := db.FindSameDataset(ctx, ds, rows); err != nil {
		return err
	} else if found {
		ds = same
		fmt.Fprintf(stderr, "note: %s holds the same rows as dataset %d of project %q, which this run judges again (its runs compare with this one)\n",
			*dataPath, ds.ID, proj.Name)
	} else if err := db.CreateDataset(ctx, &ds, rows); err != nil {
		return err
	}

	sim, err := simjudge.Start(simjudge.Options{Seed: 1})
	if err != nil {
		return err
	}
	defer sim.Close()
	if err := c.applyJudgeEgress(sim.URL, db); err != nil {
		return err
	}
	snap := models.JudgeSnapshot{Name: "command line", BaseURL: *judgeURL, Model: *model, APIKeyEnv: *keyEnv,
		MaxConcurrency: *concurrency, TimeoutSeconds: int(timeout.Seconds())}
	if sendKeyAs != judge.KeyBearer {
		snap.KeyHeader = string(sendKeyAs)
	}
	if sendCapAs != judge.TokenLimitMaxTokens {
		snap.TokenLimit = string(sendCapAs)
	}
	snap.DefaultSamplingOnly = *defaultOnly
	snap.ReasoningEffort = string(sendEffort)
	if p, ok := prices[*model]; ok {
		snap.PriceInputPerMTok, snap.PriceOutputPerMTok = &p.Input, &p.Output
	}
	if *simulated {
		zero := 0.0
		snap = models.JudgeSnapshot{Name: "Simulated judge", Simulated: true, Model: simjudge.DefaultModel, MaxConcurrency: *concurrency,
			TimeoutSeconds: 30, PriceInputPerMTok: &zero, PriceOutputPerMTok: &zero}
	}
	// A private queue: this process judges its own run, not the dashboard's.
	queue := fmt.Sprintf("cli_%d_%d", os.Getpid(), time.Now().UnixNano())
	rc, err := c.runnerConfig()
	if err != nil {
		return err
	}
	rc.DB, rc.Log, rc.Work, rc.MaxRuns, rc.SimulatedURL, rc.Getenv = db, log, true, 1, sim.URL, getenv
	rc.Webhooks.ShowAddrs = addrsShownTo(c.LocalMode(), db)
	rc.PollInterval, rc.Queue = 100*time.Millisecond, queue
	// This command has no judge page: a refused call names its flags.
	rc.JudgeSettingsAt = judge.SettingsAsFlags
	r, err := runner.New(rc)
	if err != nil {
		return err
	}
	ms := evaluator.MethodSettings{Samples: *nSamples, UseLogprobs: !*noLogprobs, SampleTemperature: *sampleTemp, LLMEvalScale: evaluator.LLMEvalScale(*llmScale)}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: proj.ID, DatasetID: ds.ID, Name: methods.Label(*method) + " (CLI): " + models.OneLine(filepath.Base(*dataPath)),
		Method: *method, Settings: settings, MethodSettings: ms, RubricSnapshot: rub, JudgeSnapshot: snap, Simulated: *simulated}
	if !isSet(fs, "temperature") && !(*defaultOnly && !*simulated) {
		// The method's own temperature, if it has one (LLM-Eval: greedy).
		run.Settings.Temperature = methods.DefaultTemperature(methods.For(*method), run.Settings.Temperature)
	}
	if err := r.Launch(ctx, &run); err != nil {
		return err
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	log.Info("judging", "run", run.ID, "judge", snap.Name, "tag", r.Tag())
	if w := methods.For(run.Method).Words(); w.Round != "" {
		fmt.Fprintf(prog.logs(), "run %d (%s): %d samples, %d criteria, %d %s of %s of %d\n", run.ID, methods.Label(run.Method), len(rows), len(rub.Criteria),
			run.Settings.Rounds, w.Rounds, w.Units, run.Settings.BatchSize)
	} else {
		fmt.Fprintf(prog.logs(), "run %d (%s): %d samples, %d criteria, each sample judged on its own\n", run.ID, methods.Label(run.Method), len(rows), len(rub.Criteria))
	}
	final, werr := waitFinished(ctx, db, ws.ID, run.ID, prog)
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownGrace)
	defer cancel()
	_ = r.Stop(sctx)
	if werr != nil {
		// Interrupted: hand the run to the shared queue so `serve` or
		// `worker` finishes it.
		if herr := r.HandOver(context.WithoutCancel(ctx), ws.ID, run.ID); herr != nil {
			log.Warn("hand the run over to the shared queue", "run", run.ID, "judge", run.JudgeSnapshot.Name, "err", herr)
		}
		return interruptedError(context.WithoutCancel(ctx), db, ws.ID, run.ID, werr)
	}
	if final.Paused() {
		return &pausedError{run: final}
	}
	fmt.Fprintln(stderr, runSummaryLine(final))
	// The report only reads; a dropped connection is worth another try.
	rep, err := backoff.Retry(ctx, func() (*report.Report, error) {
		rep, err := report.Build(ctx, db, ws.ID, run.ID)
		if err != nil && !models.IsTransient(err) {
			return nil, backoff.Permanent(err)
		}
		return rep, err
	}, backoff.WithMaxElapsedTime(c.DBRetryFor))
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.CorrelationTable())
	if *out != "" {
		// The export's own writer, as `batcheval export` and the run
		// page's Export buttons write it (a .csv name gets the CSV; it got
		// the JSON), written whole or not at all.
		h, err := exportHandlers(db, ws, log, getenv)
		if err != nil {
			return err
		}
		format := runOutFormat(*out)
		if err := writeFileAtomically(*out, func(w io.Writer) error { return h.WriteRunExport(ctx, ws, run.ID, format, w) }); err != nil {
			return err
		}
	}
	if why, capped := runner.SpendCapStop(final); capped {
		return &spendCapStopError{runID: final.ID, why: why}
	}
	switch final.Status {
	case models.RunSucceeded:
	case models.RunFinishedWithGaps:
		// The figures above leave the missing scores out; say so, but the
		// run did finish.
		fmt.Fprintf(stderr, "run %d %s: %s\n", run.ID, models.RunStatusLabel(final.Status), final.Error)
	default:
		return fmt.Errorf("run %d %s: %s", run.ID, models.RunStatusLabel(final.Status), final.Error)
	}
	return nil
}

// parseSpendCap reads --spend-cap-usd: blank is no cap, anything else must
// be a positive, finite amount of US dollars.
func parseSpendCap(v string) (*float64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	x, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
	if err != nil || !(x > 0) || math.IsInf(x, 0) {
		return nil, fmt.Errorf("--spend-cap-usd: %q is not a positive amount of US dollars; give one such as 2.50", v)
	}
	return &x, nil
}

// exitSpendCap is the exit status of a command whose run stopped at its
// spending cap: not 0, since the run did not finish, and not 1, any other
// failure, so that a script can tell "raise the cap and resume" apart.
const exitSpendCap = 3

// spendCapStopError ends a command whose run its spending cap stopped;
// why is the cap's own account (runner.SpendCapStop).
type spendCapStopError struct {
	runID int64
	why   string
}

func (e *spendCapStopError) Error() string {
	return fmt.Sprintf("run %d stopped: %s\n"+
		"The answers received are stored. To finish the run, resume it with a higher cap: batcheval resume --spend-cap-usd AMOUNT %d "+
		"(or raise the cap and resume it on the run's page in the dashboard)", e.runID, e.why, e.runID)
}

// exitPaused is the exit status of a command whose run was paused (from
// the dashboard or the API) while the command waited for it: the run is
// not finished nor failed, and goes on only when someone continues it.
const exitPaused = 4

// interruptedError is what `batcheval run` and `batcheval resume` say when
// stopped (Ctrl-C, SIGTERM) before their run ended, once its calls out are
// answered and it is handed to the shared queue: how far it got, that
// the answers are kept, and which command finishes it. It said only
// "run N is stored; `batcheval serve` resumes it", and `batcheval resume
// N` then refused the run as still running.
func interruptedError(ctx context.Context, db *models.DB, wsID, runID int64, err error) error {
	done := ""
	if run, ferr := db.FindRun(ctx, wsID, runID); ferr == nil {
		done = fmt.Sprintf(" with %d of %d batches answered", run.BatchesDone-run.BatchesFailed, run.BatchesTotal)
	}
	return fmt.Errorf("%w: run %d stopped%s, and every answer received is stored. "+
		"It is queued for `batcheval worker` or `batcheval serve` on this database: start either to finish it (only the batches without an answer are sent)",
		err, runID, done)
}

// pausedError ends a command whose run was paused while it waited. The
// command does not wait on: Continue queues the run for the dashboard's
// workers, not for this process.
type pausedError struct{ run models.Run }

func (e *pausedError) Error() string {
	return fmt.Sprintf("run %d was paused (from the dashboard or the API) with %d of %d batches answered; its answers are stored.\n"+
		"To go on, press Continue on the run's page (or POST /api/v1/runs/%d/continue): `batcheval serve` or `batcheval worker` then finishes it, "+
		"sending only the batches without an answer", e.run.ID, e.run.BatchesDone, e.run.BatchesTotal, e.run.ID)
}

// interrupted is waitFinished's error when the command was stopped: it
// reads "interrupted" and carries why (a *stopSignal: Ctrl-C or SIGTERM)
// to the exit status.
type interrupted struct{ cause error }

func (e *interrupted) Error() string { return "interrupted" }
func (e *interrupted) Unwrap() error { return e.cause }

// exitStatus is the process's exit status for what run returned: a
// command stopped by a signal exits as the shell expects of it (128 plus
// the signal's number: 130 for Ctrl-C, 143 for SIGTERM), after its
// message saying how far its run got; it exited 1, as for a failure.
func exitStatus(err error) int {
	var cs *spendCapStopError
	var pe *pausedError
	var sig *stopSignal
	switch {
	case err == nil:
		return 0
	case errors.As(err, &sig) && sig.sig > 0:
		return sig.exitCode()
	case errors.As(err, &cs):
		return exitSpendCap
	case errors.As(err, &pe):
		return exitPaused
	}
	return 1
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func waitFinished(ctx context.Context, db *models.DB, wsID, runID int64, progress *progress) (models.Run, error) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	var waiting time.Time // the start of the judge wait last reported
	for {
		run, err := db.FindRun(context.WithoutCancel(ctx), wsID, runID)
		if err != nil && !models.IsTransient(err) {
			return run, err
		}
		if err == nil {
			waiting = reportJudgeWait(progress, run, waiting)
		}
		// A dropped connection only delays the next look.
		if u := methods.For(run.Method).Words().Units; u != "" {
			progress.unit = u
		}
		progress.update(run.BatchesDone, run.BatchesTotal)
		if run.Finished() || run.Paused() {
			// Paused: the caller says so and exits (pausedError).
			progress.done()
			return run, nil
		}
		select {
		case <-ctx.Done():
			progress.done()
			return run, &interrupted{cause: context.Cause(ctx)}
		case <-t.C:
		}
	}
}

// reportJudgeWait says once when the run starts waiting for its judge
// (unreachable, failing, or rate limited: the runner's breaker holds the
// calls and probes) and once when it goes on. Without it the command
// printed nothing but the runner's warnings and seemed to hang. It
// returns the start of the wait now reported (zero: none).
func reportJudgeWait(progress *progress, run models.Run, reported time.Time) time.Time {
	switch {
	case run.WaitingSince != nil && !run.WaitingSince.Equal(reported):
		fmt.Fprintf(progress.logs(), "waiting for the judge: %s\n"+
			"  The run goes on by itself when the judge answers again. Ctrl-C stops here; every answer received is kept.\n",
			strings.TrimSuffix(run.ShownWaitingError(), "."))
		return *run.WaitingSince
	case run.WaitingSince == nil && !reported.IsZero():
		fmt.Fprintln(progress.logs(), "the judge answers again: the run goes on.")
		return time.Time{}
	}
	return reported
}

// ratingMapping is the dataset mapping a rubric file asks for: its fields,
// and as rating columns every criterion's human column and its annotators'
// columns (as the web import does when those columns are ticked), each once.
func ratingMapping(rub evaluator.Rubric) dataimport.Mapping {
	// RatingColumns starts empty, not nil: a rubric without human columns
	// is stored with an empty list (the column is NOT NULL).
	m := dataimport.Mapping{Fields: rub.Fields, RatingColumns: []string{}}
	for _, cr := range rub.Criteria {
		for _, col := range append([]string{cr.HumanColumn}, cr.AnnotatorColumns...) {
			if col != "" && !slices.Contains(m.RatingColumns, col) {
				m.RatingColumns = append(m.RatingColumns, col)
			}
		}
	}
	return m
}

// checkOutPath refuses, before any judge call, an --out the result
// cannot be written to (a folder that does not exist or cannot be
// written): it was found only once the run had been judged and paid
// for, and the result was then only in the database. The file itself is
// written at the end (an old result there stays until then).
func checkOutPath(out string) error {
	if out == "" {
		return nil
	}
	dir := filepath.Dir(out)
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("--out %s is a folder: give a file's path, e.g. %s", out, filepath.Join(out, "result.json"))
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("--out %s: the folder %s does not exist: create it, or choose another path (nothing was judged)", out, dir)
	}
	probe, err := os.CreateTemp(dir, ".batcheval-out-*")
	if err != nil {
		return fmt.Errorf("--out %s: the folder %s cannot be written to: choose another path (nothing was judged)", out, dir)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

func findOrCreateProject(ctx context.Context, db *models.DB, ws models.Workspace, name string) (models.Project, error) {
	// An archived project of that name is still the one to use.
	ps, err := db.ListProjects(ctx, ws.ID, models.WithArchived())
	if err != nil {
		return models.Project{}, err
	}
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
	}
	p := models.Project{WorkspaceID: ws.ID, Name: name, Description: "Runs started with `batcheval run`."}
	return p, db.CreateProject(ctx, &p)
}

func readRubric(path string) (evaluator.Rubric, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return evaluator.Rubric{}, err
	}
	// The dashboard imports the same files with the same parser.
	r, err := evaluator.ParseRubricFile(b)
	if err != nil {
		return r, fmt.Errorf("rubric %s: %w", path, err)
	}
	if len(r.Fields) == 0 {
		return r, fmt.Errorf("rubric %s: list the data columns the judge sees under `fields`", path)
	}
	return r, nil
}

func readData(path string) (*dataimport.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	format, err := dataimport.DetectFormat(path, head[:n])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	t, err := dataimport.Parse(f, format, dataimport.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// withKeyVar returns getenv with name added to the operator's list of key
// variables (models.KeyVarsSetting); an empty name changes nothing.
func withKeyVar(getenv func(string) string, name string) func(string) string {
	if name == "" {
		return getenv
	}
	return func(k string) string {
		if k == models.KeyVarsSetting {
			return getenv(k) + "," + name
		}
		return getenv(k)
	}
}

// runSummaryLine is what a finished run cost in calls, every retry
// counted, and the scores computed from fewer sampled answers than asked
// and those left missing for too few readable answers when there are any
// (the run page shows the same figures).
func runSummaryLine(run models.Run) string {
	return fmt.Sprintf("run %d: %d judge calls, %d judge retries, %d prompt + %d completion tokens, %s%s",
		run.ID, run.Calls, run.Retries, run.PromptTokens, run.CompletionTokens, runCostLine(run), shortScoresNote(run))
}

// shortScoresNote says how many of a run's scores were computed from fewer
// sampled answers than asked (G-Eval's sampling, CloserLook) and how many
// were left missing because fewer of their sampled answers could be read
// than the run's fewest readable answers for a score (Run.TooFewScores),
// for the command line's summary lines; "" when neither happened.
func shortScoresNote(run models.Run) string {
	var note string
	switch {
	case run.ShortScores == 1:
		note = "; 1 score computed from fewer sampled answers than asked"
	case run.ShortScores > 1:
		note = fmt.Sprintf("; %d scores computed from fewer sampled answers than asked", run.ShortScores)
	}
	switch {
	case run.TooFewScores == 1:
		note += "; 1 score missing for too few readable answers"
	case run.TooFewScores > 1:
		note += fmt.Sprintf("; %d scores missing for too few readable answers", run.TooFewScores)
	}
	return note
}

// runCostLine is what a finished run paid, for its summary line: the
// amount as the JSON export writes it (report.USD, to the micro-dollar), so
// the two agree to the byte; "unknown" without prices, never $0; the
// simulated judge's $0 said to be one; and the calls the answer cache
// answered, which cost nothing. A run answered wholly from the cache reads
// "cached", as on its page, never a $0 that would read as a free judge.
func runCostLine(run models.Run) string {
	var cost string
	switch {
	case run.Simulated:
		return "cost $0 (simulated judge)"
	case run.WhollyCached():
		return fmt.Sprintf("cost: cached (all %d calls answered from the answer cache at no cost)", run.Calls)
	case run.CostSoFar() == nil:
		cost = "cost unknown (no prices for model " + run.JudgeSnapshot.Model + "; give them with --prices)"
	default:
		b, _ := report.USD(*run.CostSoFar()).MarshalJSON()
		cost = "cost $" + string(b) + " paid"
	}
	if run.CachedCalls > 0 {
		cost += fmt.Sprintf("; %d of %d calls answered from the answer cache at no cost", run.CachedCalls, run.Calls)
	} else {
		cost = strings.TrimSuffix(cost, " paid")
	}
	return cost
}

// words are a flag's allowed values, from the named values they take.
func words[T ~string](values ...T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// methodNames are the judging methods --method takes.
func methodNames() []string {
	var out []string
	for _, m := range methods.All() {
		out = append(out, string(m.Name()))
	}
	return out
}

// defaultSamplingProblem refuses, with --default-sampling-only, a
// temperature or top_p set to anything but 1 that the method sends: the
// judge is never sent them, so the run would record a setting it did not
// follow (the launch form refuses the same).
func defaultSamplingProblem(fs *flag.FlagSet, method string, temperature, topP, sampleTemp float64) error {
	m := methods.For(method)
	for _, f := range []struct {
		flag    string
		setting methods.Setting
		v       float64
	}{
		{"temperature", methods.SettingTemperature, temperature},
		{"top-p", methods.SettingTopP, topP},
		{"sample-temperature", methods.SettingSampleTemperature, sampleTemp},
	} {
		if isSet(fs, f.flag) && f.v != 1 && methods.Reads(m, f.setting) {
			return fmt.Errorf("--%s: %g cannot be used with --default-sampling-only: the judge takes only its default (as OpenAI's reasoning models do) and is never sent it; leave --%s out or set it to 1", f.flag, f.v, f.flag)
		}
	}
	return nil
}
