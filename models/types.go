package models

import (
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// Workspace owns projects and judges. There is one default workspace until
// accounts arrive; every query is still scoped by it.
type Workspace struct {
	ID        int64
	Slug      string
	Name      string
	CreatedAt time.Time
}

// DefaultWorkspaceSlug names the workspace used before accounts exist.
const DefaultWorkspaceSlug = "default"

// Project groups the datasets, rubrics and runs of one evaluation effort.
type Project struct {
	ID          int64
	WorkspaceID int64
	Name        string
	Description string
	// MainDatasetID is the dataset marked main: the launch form's default.
	// Nil means the first uploaded dataset that is not a derived copy.
	MainDatasetID *int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// ArchivedAt is set while the object is archived: hidden from default
	// lists, still readable by its address. TrashID is set while it is in
	// the trash (lifecycle.go): every lookup then treats it as absent.
	ArchivedAt *time.Time
	TrashID    *int64
	// SeedKey marks a project the product seeded ("demo"): a workspace
	// holds at most one project per key (a unique index), so processes
	// seeding together create it once. Nil for people's projects.
	SeedKey *string
}

// Dataset is an imported file of samples.
type Dataset struct {
	ID             int64
	WorkspaceID    int64
	ProjectID      int64
	Name           string
	SourceFilename string
	Format         string
	RowCount       int
	IDColumn       string
	Columns        []string          `gorm:"serializer:json"`
	Fields         []evaluator.Field `gorm:"serializer:json"`
	RatingColumns  []string          `gorm:"serializer:json"`
	// ParentDatasetID is set on a derived copy (the noise experiment).
	ParentDatasetID *int64
	// GroupColumn optionally names a column for grouped correlation (e.g.
	// the source document or dialogue context of each sample).
	GroupColumn string
	// RatingStats summarises the rows' ratings, counted when they were
	// stored (ratingstats.go); nil for a dataset stored before 00036 until
	// a page counts it (DB.DatasetRatingStats).
	RatingStats *RatingStats `gorm:"serializer:json"`
	// ImportNotes are what the import said about the file (fields the
	// judge sees that are empty in some rows, and which), stored with the
	// dataset in the import's transaction (migration 00042); nil when
	// there was nothing to say, or for a dataset imported before.
	ImportNotes []string `gorm:"serializer:json"`
	CreatedAt   time.Time
	// ArchivedAt is set while the object is archived: hidden from default
	// lists, still readable by its address. TrashID is set while it is in
	// the trash (lifecycle.go): every lookup then treats it as absent.
	ArchivedAt *time.Time
	TrashID    *int64
}

// DatasetRow is one sample: every column of the source as text, and the
// mapped human ratings (nil = not rated, never 0).
type DatasetRow struct {
	ID         int64
	DatasetID  int64
	Position   int
	ExternalID string
	Data       map[string]string   `gorm:"serializer:json"`
	Ratings    map[string]*float64 `gorm:"serializer:json"`
}

// Sample renders the row as the judge sees it through the given fields.
func (r DatasetRow) Sample(fields []evaluator.Field) evaluator.Sample {
	s := evaluator.Sample{ID: r.ExternalID}
	for _, f := range fields {
		s.Fields = append(s.Fields, evaluator.Text{Label: f.Label, Value: r.Data[f.Column]})
	}
	return s
}

// Rubric is a stored, editable rubric.
type Rubric struct {
	ID          int64
	WorkspaceID int64
	ProjectID   int64
	Name        string
	Task        string
	Fields      []evaluator.Field     `gorm:"serializer:json"`
	Criteria    []evaluator.Criterion `gorm:"serializer:json"`
	// Version is the number of the current version; every saved change of
	// the task, fields or criteria makes a new one (rubricversions.go).
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
	// ArchivedAt is set while the object is archived: hidden from default
	// lists, still readable by its address. TrashID is set while it is in
	// the trash (lifecycle.go): every lookup then treats it as absent.
	ArchivedAt *time.Time
	TrashID    *int64
}

// Evaluator returns the rubric as the engine's type.
func (r Rubric) Evaluator() evaluator.Rubric {
	return evaluator.Rubric{Task: r.Task, Fields: r.Fields, Criteria: r.Criteria}
}

// Judge is a stored judge setting: an OpenAI-compatible endpoint, or the
// built-in simulated judge.
type Judge struct {
	ID          int64
	WorkspaceID int64
	Name        string
	Simulated   bool
	BaseURL     string
	Model       string
	APIKeyEnv   string
	// KeyHeader is how the key is sent (judge.KeyBearer, the default, or
	// judge.KeyAPIKey for Azure's per-deployment endpoints); SaveJudge
	// stores "" as judge.KeyBearer.
	KeyHeader string
	// TokenLimit is the name the answer's cap is sent under
	// (judge.TokenLimitMaxTokens, the default, or
	// judge.TokenLimitMaxCompletionTokens for OpenAI's reasoning models);
	// SaveJudge stores "" as the default. Test connection sets it when the
	// endpoint refuses max_tokens (RecordJudgeRequestSettings).
	TokenLimit string
	// DefaultSamplingOnly is set for a judge that refuses any temperature
	// or top_p but the default (OpenAI's reasoning models): neither is sent
	// to it, and launch refuses a run whose settings say otherwise. Test
	// connection sets it when the endpoint refuses the temperature.
	DefaultSamplingOnly bool
	// ReasoningEffort is sent as reasoning_effort when set
	// (judge.ReasoningEffortLow, Medium or High: OpenAI's reasoning models
	// and OpenRouter take it); "", the default, sends none. SaveJudge
	// refuses other words and stores the value in lower case.
	ReasoningEffort string
	// APIKey is the key in plaintext, in memory only: FindJudge fills it
	// from SealedKey, SaveJudge seals it. Never rendered, logged or exported.
	APIKey string `gorm:"-" json:"-"`
	// SealedKey is the key as stored: AES-256-GCM under the server's secret
	// key (see secrets.go), or plaintext from before encryption existed.
	SealedKey string `gorm:"column:api_key" json:"-"`
	// KeyProblem says why a stored key could not be decrypted ("" if fine).
	KeyProblem     string `gorm:"-" json:"-"`
	Temperature    float64
	TopP           float64
	MaxConcurrency int
	TimeoutSeconds int
	// Prices in US dollars per million tokens; nil = unknown, never 0.
	PriceInputPerMTok  *float64 `gorm:"column:price_input_per_m_tok"`
	PriceOutputPerMTok *float64 `gorm:"column:price_output_per_m_tok"`
	// ContextTokens is the model's context window in tokens, prompt and
	// answer together; nil = not known. Launch warns when a run's longest
	// prompt would not fit (the judge may cut it without an error).
	ContextTokens *int
	// LastTestAt is when "Test connection" last ran (nil: never), and
	// LastTestError its error in a line, "" when the judge answered.
	// RecordJudgeTest writes them; SaveJudge leaves them alone.
	LastTestAt    *time.Time
	LastTestError string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// ArchivedAt is set while the object is archived: hidden from default
	// lists, still readable by its address. TrashID is set while it is in
	// the trash (lifecycle.go): every lookup then treats it as absent.
	ArchivedAt *time.Time
	TrashID    *int64
}

// LastTestFailed reports whether the judge's last "Test connection" failed.
func (j Judge) LastTestFailed() bool { return j.LastTestAt != nil && j.LastTestError != "" }

// HasStoredKey reports whether a key is stored (the key itself is never shown).
func (j Judge) HasStoredKey() bool { return j.SealedKey != "" }

// ShownBaseURL is the base URL as pages, the API and exports show it: a
// user name and password, or credentials in the query string or the
// fragment, stored before SaveJudge refused them, are replaced by
// judge.Redacted (every member reads the base URL; only the key field is
// kept secret).
func (j Judge) ShownBaseURL() string { return judge.RedactURL(j.BaseURL) }

// BaseURLHoldsCredentials reports whether the stored base URL holds a
// user name, password or credential parameter in its query string, or a
// fragment, which may be a bare key (stored before they were refused): its
// owner is asked to move it to the key field.
func (j Judge) BaseURLHoldsCredentials() bool {
	userInfo, params, fragment := judge.URLCredentials(j.BaseURL)
	return !j.Simulated && (userInfo || len(params) > 0 || len(fragment) > 0 || judge.URLFragment(j.BaseURL))
}

// SendsKeyAs is how the judge sends its key, as the judge client takes it.
func (j Judge) SendsKeyAs() judge.KeyHeader { return keyHeader(j.KeyHeader) }

// keyHeader reads a stored key header mode; one that is not known (none
// is stored: SaveJudge refuses them) is the default.
func keyHeader(s string) judge.KeyHeader {
	k, err := judge.ParseKeyHeader(s)
	if err != nil {
		return judge.KeyBearer
	}
	return k
}

// SendsTokenLimitAs is the name the judge's requests cap the answer under.
func (j Judge) SendsTokenLimitAs() judge.TokenLimit { return tokenLimit(j.TokenLimit) }

// SendsReasoningEffort is the reasoning_effort the judge's requests send
// ("": none).
func (j Judge) SendsReasoningEffort() judge.ReasoningEffort {
	return reasoningEffort(j.ReasoningEffort)
}

// reasoningEffort reads a stored reasoning effort; one that is not known
// (none is stored: SaveJudge refuses them) sends none.
func reasoningEffort(s string) judge.ReasoningEffort {
	e, err := judge.ParseReasoningEffort(s)
	if err != nil {
		return judge.ReasoningEffortUnset
	}
	return e
}

// tokenLimit reads a stored token limit name; one that is not known (none
// is stored: SaveJudge refuses them) is the default.
func tokenLimit(s string) judge.TokenLimit {
	t, err := judge.ParseTokenLimit(s)
	if err != nil {
		return judge.TokenLimitMaxTokens
	}
	return t
}

// JudgeSnapshot is what a run records of its judge (no key).
type JudgeSnapshot struct {
	Name      string `json:"name"`
	Simulated bool   `json:"simulated"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	APIKeyEnv string `json:"api_key_env"`
	// KeyHeader is how the run sends the key: "api-key" for Azure's
	// per-deployment endpoints; absent (runs launched before it was
	// recorded, and every judge that sends it as a Bearer token) is
	// "bearer".
	KeyHeader string `json:"key_header,omitempty"`
	// TokenLimit is the name the run sends the answer's cap under:
	// "max_completion_tokens" for OpenAI's reasoning models; absent (runs
	// launched before it was recorded, and every judge that sends
	// max_tokens) is "max_tokens".
	TokenLimit string `json:"token_limit,omitempty"`
	// DefaultSamplingOnly: the run sends the judge no temperature nor top_p
	// (it takes only the defaults); absent is false. ReasoningEffort is
	// the reasoning_effort the run sends (low, medium or high); absent
	// sends none.
	DefaultSamplingOnly bool     `json:"default_sampling_only,omitempty"`
	ReasoningEffort     string   `json:"reasoning_effort,omitempty"`
	MaxConcurrency      int      `json:"max_concurrency"`
	TimeoutSeconds      int      `json:"timeout_seconds"`
	PriceInputPerMTok   *float64 `json:"price_input_per_mtok"`
	PriceOutputPerMTok  *float64 `json:"price_output_per_mtok"`
}

// Shown is the snapshot as pages, the API and exports show it: the base
// URL without the credentials an old judge's address held (ShownBaseURL),
// and how the key is sent spelled out ("bearer" when not recorded). The
// run itself calls the judge with the snapshot as stored.
func (s JudgeSnapshot) Shown() JudgeSnapshot {
	s.BaseURL = judge.RedactURL(s.BaseURL)
	if !s.Simulated {
		s.KeyHeader = string(s.SendsKeyAs())
	}
	return s
}

// SendsKeyAs is how the run sends the judge's key.
func (s JudgeSnapshot) SendsKeyAs() judge.KeyHeader { return keyHeader(s.KeyHeader) }

// SendsTokenLimitAs is the name the run's requests cap the answer under.
func (s JudgeSnapshot) SendsTokenLimitAs() judge.TokenLimit { return tokenLimit(s.TokenLimit) }

// SendsReasoningEffort is the reasoning_effort the run's requests send
// ("": none).
func (s JudgeSnapshot) SendsReasoningEffort() judge.ReasoningEffort {
	return reasoningEffort(s.ReasoningEffort)
}

// Cost is what promptTokens and completionTokens cost at the snapshot's
// prices per million tokens, in US dollars; nil when either price is
// unknown (unknown is never $0).
func (s JudgeSnapshot) Cost(promptTokens, completionTokens int) *float64 {
	if s.PriceInputPerMTok == nil || s.PriceOutputPerMTok == nil {
		return nil
	}
	c := (float64(promptTokens)**s.PriceInputPerMTok + float64(completionTokens)**s.PriceOutputPerMTok) / 1e6
	return &c
}

// Snapshot copies the judge's settings for a run.
func (j Judge) Snapshot() JudgeSnapshot {
	snap := JudgeSnapshot{Name: j.Name, Simulated: j.Simulated, BaseURL: j.BaseURL, Model: j.Model, APIKeyEnv: j.APIKeyEnv,
		MaxConcurrency: j.MaxConcurrency, TimeoutSeconds: j.TimeoutSeconds,
		PriceInputPerMTok: j.PriceInputPerMTok, PriceOutputPerMTok: j.PriceOutputPerMTok}
	// Recorded only when it is not the default, so the snapshot of every
	// other judge reads as it did before the setting existed.
	if !j.Simulated && j.SendsKeyAs() != judge.KeyBearer {
		snap.KeyHeader = string(j.SendsKeyAs())
	}
	if !j.Simulated && j.SendsTokenLimitAs() != judge.TokenLimitMaxTokens {
		snap.TokenLimit = string(j.SendsTokenLimitAs())
	}
	snap.DefaultSamplingOnly = !j.Simulated && j.DefaultSamplingOnly
	if !j.Simulated {
		snap.ReasoningEffort = string(j.SendsReasoningEffort())
	}
	return snap
}

// Run statuses.
const (
	RunQueued    = "queued"
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
	// RunPaused is a run its user paused: no new calls start, answers
	// already on their way are stored, and it holds no worker. Continue
	// queues it again and it goes on where it stopped. Unlike a cancel,
	// a pause is not an end (Finished is false).
	RunPaused = "paused"
	// RunFinishedWithGaps is a run that went through every call but some
	// of its scores are missing (failed calls or unreadable answers); Error
	// says how many. A run with no readable score at all is RunFailed.
	RunFinishedWithGaps = "finished_with_gaps"
)

// RunStatusLabel is how a run status is shown to people: "finished with
// gaps" rather than its stored name.
func RunStatusLabel(status string) string {
	if status == RunFinishedWithGaps {
		return "finished with gaps"
	}
	return status
}

// hasEnded says how a finished run ended, as the predicate of a sentence
// about it ("run 4 has already been cancelled"): the statuses are not all
// verbs ("cancelled" is a participle, "finished_with_gaps" a label).
func hasEnded(status string) string {
	if status == RunCancelled {
		return "has already been cancelled"
	}
	return "has already " + RunStatusLabel(status)
}

// Methods (see evaluator.Method).
const (
	MethodBatchEval  = string(evaluator.MethodBatchEval)
	MethodGEval      = string(evaluator.MethodGEval)
	MethodLLMEval    = string(evaluator.MethodLLMEval)
	MethodCloserLook = string(evaluator.MethodCloserLook)
)

// Experiment groups runs on the same dataset and rubric, to compare
// methods, variants and judges.
type Experiment struct {
	ID          int64
	WorkspaceID int64
	ProjectID   int64
	DatasetID   int64
	RubricID    *int64
	Name        string
	// NameFolded is Name as a search compares it (FoldName), stored with
	// it (BeforeSave).
	NameFolded string `json:"-"`
	CreatedAt  time.Time
	// ArchivedAt is set while the object is archived: hidden from default
	// lists, still readable by its address. TrashID is set while it is in
	// the trash (lifecycle.go): every lookup then treats it as absent.
	ArchivedAt *time.Time
	TrashID    *int64
}

// Run is one evaluation of a dataset with a rubric and a judge. The rubric
// and judge are copied at launch so later edits don't change its meaning.
type Run struct {
	ID          int64
	WorkspaceID int64
	ProjectID   int64
	DatasetID   int64
	RubricID    *int64
	// RubricVersion is the version of the rubric the run was launched
	// with; nil when the run's rubric was never a stored version (a
	// reworded variant, the command line, runs from before versions).
	RubricVersion *int
	JudgeID       *int64
	Name          string
	// NameFolded is Name as a search compares it (FoldName), stored with
	// it (BeforeSave).
	NameFolded string `json:"-"`
	Method     string
	Status     string
	Settings   evaluator.Settings `gorm:"serializer:json"`
	// MethodSettings hold the baselines' settings (n, logprobs, scale, G-Eval steps).
	MethodSettings evaluator.MethodSettings `gorm:"serializer:json"`
	ExperimentID   *int64
	// ParentRunID and Variant mark a run derived from another: "reseed",
	// "noise" or "reworded".
	ParentRunID *int64
	Variant     string
	// PromptTemplateVersion is the version of the method's prompt
	// templates the run was launched with (runner.PrepareRun); "" for runs
	// stored before it was recorded.
	PromptTemplateVersion string
	// PromptVersions are the versions later executions of the run built
	// their prompts with, when they differ from the version before them
	// (RecordPromptVersion): a run resumed after an upgrade that changed
	// its method's wording has its launch version before the first entry's
	// Since and the entries' versions after. Empty when every execution
	// used PromptTemplateVersion.
	PromptVersions []PromptVersionSpan `gorm:"serializer:json"`
	RubricSnapshot evaluator.Rubric    `gorm:"serializer:json"`
	JudgeSnapshot  JudgeSnapshot       `gorm:"serializer:json"`
	Simulated      bool
	Error          string
	BatchesTotal   int
	BatchesDone    int
	BatchesFailed  int
	MissingScores  int
	// ShortScores counts the scores computed from fewer sampled answers
	// than the method asked for (G-Eval's sampling, CloserLook): some of
	// their calls failed, at least half the answers came. Each unit says
	// so in its problems and its details ("asked", "answered").
	ShortScores int
	// TooFewScores counts the scores left missing because some of their
	// sampled answers could be read but fewer than the run's fewest
	// readable answers for a score (MethodSettings.MinReadableShare);
	// they are among MissingScores. Each unit says so in its details
	// ("too_few_readable").
	TooFewScores     int
	Calls            int
	PromptTokens     int
	CompletionTokens int
	CostUSD          *float64 `gorm:"column:cost_usd"`
	// CachedCalls counts the calls answered from the judge answer cache
	// (respcache.go): they made no HTTP request and cost nothing.
	CachedCalls int
	// CachedPromptTokens and CachedCompletionTokens are what those
	// answers cost when they were paid for: the run's tokens plus these
	// are what it would have used without the cache (0 for answers
	// stored before they were kept, and for runs before they were counted).
	CachedPromptTokens     int
	CachedCompletionTokens int
	CurrentCriterion       int
	CurrentRound           int
	JobID                  *int64
	LeaseOwner             string
	LeaseUntil             *time.Time
	CancelRequested        bool
	// Retries counts the judge's HTTP attempts that failed with an error
	// worth trying again (rate limit, server error, timeout, network
	// failure, unusable answer): each is counted as it happens
	// (AddRunRetries), whether the call then succeeded, failed or was put
	// aside with its run.
	Retries int
	// ProbeCalls counts the breaker's probes: the tiny requests sent
	// while the run waited for its judge to answer again (AddRunProbe).
	// They are not among Calls, and their tokens not among the run's
	// tokens or cost: those stay the batches' figures. ProbePromptTokens
	// and ProbeCompletionTokens are the tokens the endpoint reported for
	// them (billed when it answered); ProbeCostUSD prices them.
	ProbeCalls            int
	ProbePromptTokens     int
	ProbeCompletionTokens int
	// WaitingSince is set while the run waits for its judge to answer again
	// (circuit breaker open, or rate limited); WaitingError says why and
	// when it goes on.
	WaitingSince *time.Time
	WaitingError string
	// Resumes counts how often the run was resumed to fill its gaps.
	Resumes int
	// HumansVersion counts the choices of the human ratings its report
	// uses (SetRunHumanSource): what a finished run's results depend on
	// apart from the run itself, so a cached report of another process
	// knows it is stale.
	HumansVersion int
	CreatedAt     time.Time
	StartedAt     *time.Time
	FinishedAt    *time.Time
	// PausedAt is when the run was paused (RequestPause); Continue clears
	// it. StoppedMS is the milliseconds the run, once started, spent
	// paused or finished before a resume: not part of its elapsed time.
	PausedAt  *time.Time
	StoppedMS int64
	// ArchivedAt is set while the object is archived: hidden from default
	// lists, still readable by its address. TrashID is set while it is in
	// the trash (lifecycle.go): every lookup then treats it as absent.
	ArchivedAt *time.Time
	TrashID    *int64
	// ShowAddrs lets ShownError and ShownWaitingError name the address a
	// judge call was refused at (judge.HideRefusedAddrs), as a refusal
	// stored in local mode does: set by whoever shows the run to the
	// local user of a loopback server without accounts (the operator), at
	// the time it is shown. Not stored; false (the address withheld) for
	// every other reader, whatever the mode was when the run failed.
	ShowAddrs bool `gorm:"-" json:"-"`
}

// WaitingForJudge reports whether the run is paused until its judge
// answers again (shown as the status "waiting for judge").
func (r Run) WaitingForJudge() bool {
	return r.Status == RunRunning && r.WaitingSince != nil
}

// Elapsed is how long the run has been going at now: from its start to
// its end (now while it goes), less the time it was paused or finished
// before a resume (PausedFor). ok is false before it started.
func (r Run) Elapsed(now time.Time) (d time.Duration, ok bool) {
	if r.StartedAt == nil {
		return 0, false
	}
	end := now
	if r.FinishedAt != nil {
		end = *r.FinishedAt
	}
	if r.PausedAt != nil && r.PausedAt.Before(end) {
		// Paused (and perhaps cancelled since): the clock stopped then.
		end = *r.PausedAt
	}
	return max(end.Sub(*r.StartedAt)-time.Duration(r.StoppedMS)*time.Millisecond, 0), true
}

// PausedFor is how long the started run has spent paused, or finished
// before a resume, at now: the time Elapsed leaves out.
func (r Run) PausedFor(now time.Time) time.Duration {
	if r.StartedAt == nil {
		return 0
	}
	d := time.Duration(r.StoppedMS) * time.Millisecond
	if r.PausedAt != nil {
		end := now
		if r.FinishedAt != nil {
			end = *r.FinishedAt
		}
		d += max(end.Sub(*r.PausedAt), 0)
	}
	return d
}

// stoppedSince is the milliseconds from since to now that the run spent
// stopped (paused, or finished before a resume), counted only once it had
// started: before its start nothing of its elapsed time is left out.
func (r Run) stoppedSince(since *time.Time, now time.Time) int64 {
	if r.StartedAt == nil || since == nil {
		return 0
	}
	return max(now.Sub(*since).Milliseconds(), 0)
}

// Paused reports whether the run is paused (RunPaused).
func (r Run) Paused() bool { return r.Status == RunPaused }

// Pausable reports whether the run can be paused: it is queued or
// running (a run waiting for its judge is running).
func (r Run) Pausable() bool { return r.Status == RunQueued || r.Status == RunRunning }

// Resumable reports whether a finished run can be resumed: it failed, or
// it ended with batches that have no usable answer. A resume sends only
// those batches (and the rounds never reached), so a run whose every
// batch was answered is not resumable even with scores missing: those are
// unreadable answers, which a resume would not ask for again.
func (r Run) Resumable() bool {
	switch r.Status {
	case RunFailed, RunFinishedWithGaps:
		return !r.EveryBatchAnswered()
	case RunSucceeded:
		return r.BatchesFailed > 0 || r.BatchesDone < r.BatchesTotal
	}
	return false
}

// JudgeSettingsStop opens the error of a run its runner stopped because
// no call can succeed with the judge as it is: the endpoint refused the
// key, has no such model or address, is an address this server does not
// call, answers with a web page instead of the API (its address, or a
// proxy in front of it refusing access), or its account is out of credits
// (evaluator/judge kinds auth, not_found, refused, not_api and payment:
// runner's runLevel). The runner writes it; the run page reads it to put
// fixing the judge (or, out of credits, adding credits) before Resume.
const JudgeSettingsStop = "the run stopped, since no call can succeed until the judge's settings are corrected"

// judgeSettingsStopBefore is how such runs were stopped before
// JudgeSettingsStop ("stopping the run: judge: the endpoint refused the
// API key..."): only those kinds of judge error stopped a run so.
const judgeSettingsStopBefore = "stopping the run: judge: "

// judgeCodePrefix opened the judge client's errors as older builds stored
// them ("judge: base URL ... is not an http(s) URL", "repair request
// failed: judge: the endpoint timed out"): a code path, not something a
// reader needs. The client no longer writes it; rows from before keep it.
const judgeCodePrefix = "judge: "

// ShownError is the run's error as every page, the API, exports and
// webhooks show it. Old runs stored it with the judge client's code-path
// prefix ("judge: ...", or "stopping the run: judge: ..." for a run its
// judge's settings stopped); it reads as a new run's does, the stored text
// untouched.
func (r Run) ShownError() string {
	if rest, ok := strings.CutPrefix(r.Error, judgeSettingsStopBefore); ok {
		return refusedAddrs(JudgeSettingsStop+": "+rest, r.ShowAddrs)
	}
	return shownJudgeText(r.Error, r.ShowAddrs)
}

// SharedError is a failed run's reason as a report read outside the run's
// workspace gives it (a share link's page, the downloadable report): only
// the product's own words (sharedReason, sharederror.go). What the judge
// client quotes after them ("Details: ...", the endpoint's or the
// transport's text, which names the judge's address and host and this
// server's network settings) is left out, and a failure outside the judge
// client (reading the dataset, the database) is given as an internal
// error, with what the run was doing when it is known: its raw text may
// name files, SQL, addresses and ids. The run's page keeps it whole.
func (r Run) SharedError() string { return sharedReason(r.ShownError()) }

// ShownJudgeText is a text quoting the judge client's error as a user
// sees it: without the code-path prefix "judge: " that older builds
// stored, at its start ("judge: the endpoint is rate limiting...") or
// after a label that quotes the error ("repair request failed: judge:
// ..."), and without the address a refused call was refused at
// (judge.HideRefusedAddrs): a refusal stored in local mode names it, and
// the text may be read after accounts came. Rows written now never have
// the prefix; the stored text is untouched.
func ShownJudgeText(s string) string { return shownJudgeText(s, false) }

// shownJudgeText is ShownJudgeText, naming refused addresses when
// showAddrs is set (the local user reads it).
func shownJudgeText(s string, showAddrs bool) string {
	s = strings.TrimPrefix(s, judgeCodePrefix)
	return refusedAddrs(strings.ReplaceAll(s, ": "+judgeCodePrefix, ": "), showAddrs)
}

// refusedAddrs is s as stored when showAddrs is set, else without the
// addresses a refusal stored in local mode names.
func refusedAddrs(s string, showAddrs bool) string {
	if showAddrs {
		return s
	}
	return judge.HideRefusedAddrs(s)
}

// ShownWaitingError is WaitingError as the run page and the API show it
// (ShownJudgeText).
func (r Run) ShownWaitingError() string { return shownJudgeText(r.WaitingError, r.ShowAddrs) }

// ShownError is the batch's error as every page shows it
// (ShownJudgeText).
func (b RunBatch) ShownError() string { return shownJudgeText(b.Error, b.ShowAddrs) }

// ShownProblems are the batch's problems as every page shows them
// (ShownJudgeText: a failed repair quotes the judge client's error).
func (b RunBatch) ShownProblems() []string {
	out := make([]string, len(b.Problems))
	for i, p := range b.Problems {
		out[i] = shownJudgeText(p, b.ShowAddrs)
	}
	return out
}

// StoppedByJudgeSettings reports whether the run stopped because no call
// can succeed with its judge's settings. Resuming it sends the same calls
// (the address and model it started with, the judge's current key while
// the judge keeps that endpoint), so it fails again until the judge
// answers them.
func (r Run) StoppedByJudgeSettings() bool {
	return r.Status == RunFailed && (strings.HasPrefix(r.Error, JudgeSettingsStop) || strings.HasPrefix(r.Error, judgeSettingsStopBefore))
}

// JudgeAddressProblem says why the judge address the run started with
// cannot be called at all ("the base URL must start with http:// or
// https://: write http://localhost:11434/v1"): a judge saved before base
// URLs were checked. A run keeps the address it started with, so resuming
// it can only fail; the judge must be corrected and a new run launched.
// "" for an address that can be called, for the simulated judge, and for
// a run that recorded no address (nothing to judge it by).
func (r Run) JudgeAddressProblem() string {
	if r.JudgeSnapshot.Simulated || strings.TrimSpace(r.JudgeSnapshot.BaseURL) == "" {
		return ""
	}
	if err := CheckJudgeBaseURL(r.JudgeSnapshot.BaseURL); err != nil {
		return err.Error()
	}
	return ""
}

// EveryBatchAnswered reports whether the run planned its batches and every
// one of them has an answer: none failed, none is still to be sent. Its
// missing scores, if any, are ones the judge's answers did not give in a
// readable form.
func (r Run) EveryBatchAnswered() bool {
	// A run that failed before planning has no total yet: it is not known
	// to be answered, and a resume plans it.
	return r.BatchesTotal > 0 && r.BatchesFailed == 0 && r.BatchesDone >= r.BatchesTotal
}

// Finished reports whether the run has reached a final state.
func (r Run) Finished() bool {
	return r.Status == RunSucceeded || r.Status == RunFinishedWithGaps || r.Status == RunFailed || r.Status == RunCancelled
}

// Completed reports whether the run went through every call, with or
// without gaps: its results cover the whole dataset and can be compared.
func (r Run) Completed() bool {
	return r.Status == RunSucceeded || r.Status == RunFinishedWithGaps
}

// PaidCalls is how many of the run's calls were sent to the judge and
// paid for: the calls the answer cache did not answer.
func (r Run) PaidCalls() int {
	return max(r.Calls-r.CachedCalls, 0)
}

// PartlyCached reports whether the answer cache answered some of the run's
// calls but not all: its tokens and cost are then what it paid for the
// other calls, less than its method costs.
func (r Run) PartlyCached() bool {
	return r.CachedCalls > 0 && r.CachedCalls < r.Calls
}

// WhollyCached reports whether the answer cache answered every call of the
// run: it paid nothing, and its tokens and cost say nothing of its method.
func (r Run) WhollyCached() bool {
	return r.CachedCalls > 0 && r.CachedCalls >= r.Calls
}

// CostSoFar is what the run's batches have cost: CostUSD, which stays nil
// until the first paid call is counted, or $0 while none has been when the
// run's judge has prices (as ProbeCostUSD prices no probes). Nil only when
// the prices are unknown: a priced judge's run that has paid for nothing
// yet did not cost an unknown amount.
func (r Run) CostSoFar() *float64 {
	if r.CostUSD != nil {
		return r.CostUSD
	}
	return r.JudgeSnapshot.Cost(0, 0)
}

// ProbeCostUSD is what the run's probes cost at the run's prices (nil
// when they are unknown): not part of CostUSD, the batches' cost.
func (r Run) ProbeCostUSD() *float64 {
	return r.JudgeSnapshot.Cost(r.ProbePromptTokens, r.ProbeCompletionTokens)
}

// FullTokens are the tokens the run would have used without the answer
// cache, and whether they are known: every cached call's cost must have
// been kept (answers stored before it was are counted without tokens).
func (r Run) FullTokens() (prompt, completion int, known bool) {
	if r.CachedCalls > 0 && r.CachedPromptTokens == 0 {
		return 0, 0, false
	}
	return r.PromptTokens + r.CachedPromptTokens, r.CompletionTokens + r.CachedCompletionTokens, true
}

// Batch statuses.
const (
	BatchPending = "pending"
	BatchDone    = "done"
	BatchFailed  = "failed"
)

// RunBatch is one judge call's worth of samples, with everything that was
// sent and received, kept as soon as the answer arrives.
type RunBatch struct {
	ID               int64
	RunID            int64
	CriterionIndex   int
	Round            int
	BatchIndex       int
	RowIDs           []int64 `gorm:"serializer:json"`
	Status           string
	Request          string
	Response         string
	RepairRequest    string
	RepairResponse   string
	Problems         []string `gorm:"serializer:json"`
	PromptTokens     int
	CompletionTokens int
	LatencyMS        int64 `gorm:"column:latency_ms"`
	Attempts         int
	Calls            int
	Error            string
	// ErrorKind is why a failed call got no answer, as the judge client
	// classified it (evaluator/judge.ErrorKind: "network", "timeout",
	// "auth"...); empty when the call did not fail.
	ErrorKind string
	// Details holds method-specific facts of the call (G-Eval's score
	// probabilities and their source, sampled ratings...).
	Details map[string]any `gorm:"serializer:json"`
	DoneAt  *time.Time
	// ShowAddrs is Run.ShowAddrs for ShownError and ShownProblems.
	ShowAddrs bool `gorm:"-" json:"-"`
}

// RunScore is one sample's score in one round, with the judge's analysis.
// Score is nil when the judge's answer could not be read.
type RunScore struct {
	ID             int64
	RunID          int64
	BatchID        int64
	CriterionIndex int
	Round          int
	RowID          int64
	Label          int
	Score          *float64
	Analysis       string
}
