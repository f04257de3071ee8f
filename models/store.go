package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// notFound turns GORM's record-not-found into the product's error.
func notFound(err error, what string, id int64) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Errorf(ENotFound, "%s %d does not exist (or is not in this workspace)", what, id)
	}
	if err != nil {
		return fmt.Errorf("find %s %d: %w", what, id, err)
	}
	return nil
}

// SQLTx returns the database/sql transaction under a GORM transaction, so
// the job engine can enqueue in the same transaction.
func SQLTx(tx *gorm.DB) (*sql.Tx, error) {
	t, ok := tx.Statement.ConnPool.(*sql.Tx)
	if !ok {
		return nil, errors.New("not inside a database/sql transaction")
	}
	return t, nil
}

// EnsureDefaultWorkspace returns the default workspace, creating it once.
func (db *DB) EnsureDefaultWorkspace(ctx context.Context) (Workspace, error) {
	var ws Workspace
	// The workspace and its simulated judge are written in one
	// transaction: a failure between the two (a closed connection, a
	// judge refused) leaves neither, never a workspace without its judge.
	// A struct condition (not a SQL string) so FirstOrCreate also writes
	// the slug into the row it creates.
	first := func() error {
		return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			ws = Workspace{}
			err := tx.Where(Workspace{Slug: DefaultWorkspaceSlug}).
				Attrs(Workspace{Name: "Default workspace", CreatedAt: time.Now().UTC()}).
				FirstOrCreate(&ws).Error
			if err != nil {
				return err
			}
			_, err = ensureSimulatedJudgeTx(tx, ws.ID)
			return err
		})
	}
	err := first()
	if isUniqueViolation(err) {
		// Processes that start together on a fresh database (a dashboard
		// and its workers) all look for the row, find none and insert it:
		// the losers find the winner's row on a second look (a new
		// transaction: PostgreSQL's failed one reads nothing more).
		err = first()
	}
	if err != nil {
		return Workspace{}, fmt.Errorf("ensure default workspace: %w", err)
	}
	if err := db.EnsureSimulatedJudges(ctx); err != nil {
		return ws, err
	}
	return ws, nil
}

// ---- projects ----

// CreateProject stores a new project in the workspace.
func (db *DB) CreateProject(ctx context.Context, p *Project) error {
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" {
		return NameNeeded(KindProject)
	}
	if err := checkName("project name", p.Name, MaxNameLength); err != nil {
		return err
	}
	if err := checkLength("project description", p.Description, MaxDescriptionLength); err != nil {
		return err
	}
	return createProjectTx(db.Gorm.WithContext(ctx), p)
}

// createProjectTx is CreateProject's write, in tx.
func createProjectTx(tx *gorm.DB, p *Project) error {
	err := tx.Create(p).Error
	if isUniqueViolation(err) {
		return Errorf(EConflict, "this workspace already has the project %q was seeded as", p.Name)
	}
	return err
}

// FindSeededProject returns the workspace's project seeded under key,
// archived or in the trash included (it still holds the key); ENotFound
// when there is none. It reads the primary database: a process that lost
// the race to seed reads the winner's project at once.
func (db *DB) FindSeededProject(ctx context.Context, wsID int64, key string) (Project, error) {
	var p Project
	err := db.Gorm.WithContext(ctx).Where("workspace_id = ? AND seed_key = ?", wsID, key).First(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return p, Errorf(ENotFound, "this workspace has no %s project", key)
	}
	return p, err
}

// ListProjects lists the workspace's projects, newest first: the active
// ones unless the options ask for archived ones; never trashed ones.
func (db *DB) ListProjects(ctx context.Context, wsID int64, opts ...ListOption) ([]Project, error) {
	var ps []Project
	err := db.Reader(ctx).Where("workspace_id = ?", wsID).Scopes(listScope(opts)).Order("id DESC").Find(&ps).Error
	return ps, err
}

// ListProjectsAfter is a page of the workspace's active projects, oldest
// first: at most limit of those with an id above afterID, read in the
// database (through projects_workspace), as the API's keyset pages ask.
func (db *DB) ListProjectsAfter(ctx context.Context, wsID, afterID int64, limit int) ([]Project, error) {
	var ps []Project
	err := db.Reader(ctx).Where("workspace_id = ? AND id > ?", wsID, afterID).Scopes(listScope(nil)).Order("id").Limit(limit).Find(&ps).Error
	return ps, err
}

// FindProject finds a project in the workspace.
func (db *DB) FindProject(ctx context.Context, wsID, id int64) (Project, error) {
	var p Project
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).First(&p).Error
	return p, notFound(err, "project", id)
}

// ---- datasets ----

// CreateDataset stores a dataset and all its rows in one transaction:
// either everything is imported or nothing is. The rows get their ids.
func (db *DB) CreateDataset(ctx context.Context, d *Dataset, rows []DatasetRow) error {
	if err := checkDataset(d); err != nil {
		return err
	}
	if len(rows) == 0 {
		return Errorf(EInvalid, "the dataset has no rows")
	}
	d.RowCount = len(rows)
	// ctx stops the import before it starts, never inside a statement (the
	// commit): see ImportDataset.
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := db.Gorm.WithContext(context.WithoutCancel(ctx)).Transaction(func(tx *gorm.DB) error { return createDatasetTx(tx, d, rows) }); err != nil {
		return err
	}
	db.analyzeFilled(context.WithoutCancel(ctx), "dataset_rows", len(rows))
	return nil
}

// createDatasetTx is CreateDataset's writes, in tx, once checked.
func createDatasetTx(tx *gorm.DB, d *Dataset, rows []DatasetRow) error {
	var stats RatingStats
	for _, r := range rows {
		stats.Add(r.Ratings)
	}
	d.RatingStats = stats.storable()
	if err := tx.Create(d).Error; err != nil {
		return fmt.Errorf("create dataset: %w", err)
	}
	for i := range rows {
		rows[i].ID = 0
		rows[i].DatasetID = d.ID
	}
	// Chunks sized from the columns keep each INSERT under the
	// dialect's parameter limit.
	if err := insertChunked(tx, rows); err != nil {
		return fmt.Errorf("store dataset rows: %w", err)
	}
	return nil
}

// checkDataset checks what a dataset's name and labels may be.
func checkDataset(d *Dataset) error {
	if strings.TrimSpace(d.Name) == "" {
		return NameNeeded(KindDataset)
	}
	if err := checkName("dataset name", d.Name, MaxComposedNameLength); err != nil {
		return err
	}
	for i, f := range d.Fields {
		if err := checkName(fmt.Sprintf("label of field %d", i+1), f.Label, MaxNameLength); err != nil {
			return err
		}
	}
	return nil
}

// FindDataset finds a dataset in the workspace.
func (db *DB) FindDataset(ctx context.Context, wsID, id int64) (Dataset, error) {
	var d Dataset
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).First(&d).Error
	return d, notFound(err, "dataset", id)
}

// DatasetNames returns the names of the live datasets among ids, read in
// one statement (id and name only): the datasets of a page of runs. A
// dataset in the trash, purged or of another workspace has none.
func (db *DB) DatasetNames(ctx context.Context, wsID int64, ids []int64) (map[int64]string, error) {
	names := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return names, nil
	}
	var rows []struct {
		ID   int64
		Name string
	}
	err := db.Reader(ctx).Model(&Dataset{}).Select("id", "name").Where("workspace_id = ? AND id IN ?", wsID, ids).Scopes(live).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read the names of %d datasets: %w", len(ids), err)
	}
	for _, r := range rows {
		names[r.ID] = r.Name
	}
	return names, nil
}

// ListDatasets lists a project's datasets, newest first (active ones
// unless the options say otherwise).
func (db *DB) ListDatasets(ctx context.Context, wsID, projectID int64, opts ...ListOption) ([]Dataset, error) {
	var ds []Dataset
	err := db.Reader(ctx).Where("workspace_id = ? AND project_id = ?", wsID, projectID).Scopes(listScope(opts)).Order("id DESC").Find(&ds).Error
	return ds, err
}

// SetMainDataset marks a dataset as its project's main one, the launch
// form's default. A derived copy (ParentDatasetID set) cannot be main: the
// point of "main" is that runs never land on a copy by accident.
func (db *DB) SetMainDataset(ctx context.Context, wsID, datasetID int64) (Dataset, error) {
	d, err := db.FindDataset(ctx, wsID, datasetID)
	if err != nil {
		return d, err
	}
	if d.ParentDatasetID != nil {
		return d, Errorf(EInvalid, "%q is a derived copy of another dataset; only an original can be the main dataset", d.Name)
	}
	res := db.Gorm.WithContext(ctx).Model(&Project{}).Where("workspace_id = ? AND id = ?", wsID, d.ProjectID).Scopes(live).
		Updates(map[string]any{"main_dataset_id": d.ID, "updated_at": time.Now().UTC()})
	if res.Error != nil {
		return d, fmt.Errorf("mark dataset %d main: %w", d.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return d, Errorf(ENotFound, "the project of dataset %d does not exist", d.ID)
	}
	return d, nil
}

// ListDatasetRows returns a page of rows in file order.
func (db *DB) ListDatasetRows(ctx context.Context, datasetID int64, offset, limit int) ([]DatasetRow, error) {
	var rows []DatasetRow
	q := db.Reader(ctx).Where("dataset_id = ?", datasetID).Order("position")
	if limit > 0 {
		q = q.Offset(offset).Limit(limit)
	}
	err := q.Find(&rows).Error
	return rows, err
}

// LongestDatasetRows returns the dataset's n longest rows, longest first,
// measured on all their columns: the launch form builds the longest
// prompt a run can send from them. It reads every row's length (a scan of
// the dataset), so callers ask only when they will use the answer.
func (db *DB) LongestDatasetRows(ctx context.Context, datasetID int64, n int) ([]DatasetRow, error) {
	var rows []DatasetRow
	err := db.Reader(ctx).Where("dataset_id = ?", datasetID).Order("octet_length(data) DESC, position").Limit(n).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read the longest rows of dataset %d: %w", datasetID, err)
	}
	return rows, nil
}

// FindDatasetRows returns the rows of dataset datasetID with the given ids,
// keyed by id. The rows are read by their keys alone and those of another
// dataset dropped here: with "dataset_id = ?" in the query SQLite's planner
// took the dataset's index (dataset_rows_length) and read every row of the
// dataset to find a page's 50 (the run page's samples, 90% of its time at
// a million rows). The ids are asked for findRowsChunk at a time: an
// alignment's held-out part of a large run asks for hundreds of
// thousands, and one IN list of them passed either dialect's limit of
// parameters a statement (SQLite's 32,766: every held-out part of over
// 32,766 samples failed to launch).
func (db *DB) FindDatasetRows(ctx context.Context, datasetID int64, ids []int64) (map[int64]DatasetRow, error) {
	m := make(map[int64]DatasetRow, len(ids))
	for start := 0; start < len(ids); start += findRowsChunk {
		var rows []DatasetRow
		if err := db.Reader(ctx).Where("id IN ?", ids[start:min(start+findRowsChunk, len(ids))]).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.DatasetID == datasetID {
				m[r.ID] = r
			}
		}
	}
	return m, nil
}

// findRowsChunk is how many rows FindDatasetRows asks for in one
// statement: under either dialect's limit of parameters (SQLite's 32,766),
// and large enough that a held-out part reads as fast as in one statement
// (BenchmarkFindDatasetRows: 1,000 a statement was measurably slower).
const findRowsChunk = 10000

// ---- rubrics ----

// SaveRubric creates or updates a rubric in the workspace, keeping its
// versions (a change of task, fields or criteria is a new version).
func (db *DB) SaveRubric(ctx context.Context, r *Rubric) error {
	return db.SaveRubricIf(ctx, r, nil)
}

// SaveRubricIf is SaveRubric for an update that expects the stored rubric
// to be as its writer read it: when expect is not met, nothing is written
// and the error's code is EChanged. A nil expect saves unconditionally.
func (db *DB) SaveRubricIf(ctx context.Context, r *Rubric, expect Expectation) error {
	if err := checkRubric(r); err != nil {
		return err
	}
	return db.storeRubric(ctx, r, "", expect)
}

// checkRubric refuses a rubric that cannot be stored or run.
func checkRubric(r *Rubric) error {
	if strings.TrimSpace(r.Name) == "" {
		return NameNeeded(KindRubric)
	}
	if err := validateRubricLengths(r); err != nil {
		return err
	}
	if err := r.Evaluator().Validate(); err != nil {
		return &Error{Code: EInvalid, Message: err.Error()}
	}
	if r.Fields == nil {
		// No fields means "show the dataset's fields". A nil slice would be
		// serialised as SQL NULL, which the NOT NULL fields column refuses
		// (demo.Seed stores its rubric this way); store an empty list.
		r.Fields = []evaluator.Field{}
	}
	return nil
}

// FindRubric finds a rubric in the workspace.
func (db *DB) FindRubric(ctx context.Context, wsID, id int64) (Rubric, error) {
	var r Rubric
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).First(&r).Error
	return r, notFound(err, "rubric", id)
}

// ListRubrics lists a project's rubrics (active ones unless the options
// say otherwise).
func (db *DB) ListRubrics(ctx context.Context, wsID, projectID int64, opts ...ListOption) ([]Rubric, error) {
	var rs []Rubric
	err := db.Reader(ctx).Where("workspace_id = ? AND project_id = ?", wsID, projectID).Scopes(listScope(opts)).Order("id DESC").Find(&rs).Error
	return rs, err
}

// ---- judges ----

// CheckBaseURLCredentials refuses a judge base URL holding a credential: a
// user name or password, or a credential parameter in its query string or
// fragment. Every member reads a judge's base URL (the judges page, the
// API, a run's recorded judge), while a stored key is never shown. The
// message names the parameters, never their values. An address that does
// not parse is refused too: what in it is a credential cannot be told
// (it is quoted cut before any '@', '?' and '#'), and so is any fragment
// (judge.URLFragment). Saving a judge and `batcheval run --judge-url` both
// check it.
func CheckBaseURLCredentials(baseURL string) error {
	userInfo, params, fragment := judge.URLCredentials(baseURL)
	switch {
	case !judge.URLParses(baseURL):
		return Errorf(EInvalid, "the base URL %q cannot be read as an address (a space or %% sign out of place?): write it as e.g. https://api.openai.com/v1", judge.RedactURL(baseURL))
	case userInfo:
		return Errorf(EInvalid, "the base URL must not hold a user name or password (every member of the workspace sees it): remove them and put the key in API key, which is stored encrypted and never shown")
	case len(params) > 0:
		// A query string itself is fine (Azure's ?api-version=), a
		// credential in it is not.
		return Errorf(EInvalid, "the base URL must not hold a credential in its query string (%s; every member of the workspace sees the base URL): remove it and put the key in API key, which is stored encrypted and never shown",
			strings.Join(params, "=…, ")+"=…")
	case len(fragment) > 0:
		// A fragment is never sent: a key there only shows.
		return Errorf(EInvalid, "the base URL must not hold a credential in its fragment (#%s; every member of the workspace sees the base URL, and what follows # is never sent to the judge): remove it and put the key in API key, which is stored encrypted and never shown",
			strings.Join(fragment, "=…, ")+"=…")
	case judge.URLFragment(baseURL):
		// Nothing after # reaches a chat endpoint, and a bare key there
		// (#sk-…, no name=) cannot be told from a word: any is refused.
		return Errorf(EInvalid, "the base URL must not have a fragment (a # and what follows it): what follows # is never sent to the judge, so it does nothing there but show to every member of the workspace. Remove it; if it is a key, put it in API key, which is stored encrypted and never shown")
	}
	return nil
}

// CheckJudgeBaseURL refuses a judge base URL that is not an absolute http
// or https address, the usual slips first: the scheme left off
// ("api.openai.com/v1", "localhost:11434/v1", which a browser's URL field
// lets through as an address with the scheme "localhost") or misspelt
// ("htps://"). Saved, such a judge fails every run at its first call; the
// message says the address to write, and quotes no part of the address
// that could hold a credential (nothing after an '@', '?' or '#').
func CheckJudgeBaseURL(baseURL string) error {
	s := strings.TrimSpace(baseURL)
	u, err := url.Parse(s)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	const example = "e.g. https://api.openai.com/v1, or http://localhost:11434/v1 for a server on this machine"
	i := strings.Index(s, "://")
	if err != nil && i >= 0 {
		// Its message quotes the address cut before anything that could
		// hold a credential.
		return CheckBaseURLCredentials(s)
	}
	if i < 0 {
		// No scheme at all: suggest the address with one, http for this
		// machine (local servers rarely speak TLS), https otherwise.
		scheme := "https://"
		host := strings.ToLower(s)
		for _, local := range []string{"localhost", "127.", "[::1]", "0.0.0.0"} {
			if strings.HasPrefix(host, local) {
				scheme = "http://"
			}
		}
		fixed := scheme + strings.TrimLeft(s, "/")
		// "https//host" or "http:/host": the scheme is there, its ://
		// is not.
		for _, sc := range []string{"https", "http"} {
			if rest := s[min(len(sc), len(s)):]; strings.HasPrefix(host, sc) && strings.TrimLeft(rest, ":/") != rest {
				fixed = sc + "://" + strings.TrimLeft(rest, ":/")
				break
			}
		}
		if f, ferr := url.Parse(fixed); ferr == nil && f.Host != "" && f.User == nil && !strings.ContainsAny(s, "@?#") {
			return Errorf(EInvalid, "the base URL must start with http:// or https://: write %s", fixed)
		}
		return Errorf(EInvalid, "the base URL must start with http:// or https:// (%s)", example)
	}
	scheme := s[:i]
	if len(scheme) <= 10 && !strings.ContainsAny(scheme, "@?#/") {
		return Errorf(EInvalid, "the base URL must start with http:// or https://, not %s:// (%s)", scheme, example)
	}
	return Errorf(EInvalid, "the base URL must start with http:// or https:// (%s)", example)
}

// SaveJudge creates or updates a judge setting. An empty APIKey on update
// keeps the stored key (the form never shows it back). Given an audit
// (described with the judge saved), its entry is written in the same
// transaction.
func (db *DB) SaveJudge(ctx context.Context, j *Judge, audit ...Audit[Judge]) error {
	return db.SaveJudgeIf(ctx, j, nil, audit...)
}

// SaveJudgeIf is SaveJudge for an update that expects the stored judge to
// be as its writer read it: when expect is not met, nothing is written and
// the error's code is EChanged. A nil expect saves unconditionally.
func (db *DB) SaveJudgeIf(ctx context.Context, j *Judge, expect Expectation, audit ...Audit[Judge]) error {
	return db.SaveJudgeWithLimitsIf(ctx, j, nil, expect, audit...)
}

// SaveJudgeWithLimitsIf is SaveJudgeIf that also stores the judge's shared
// limits (nil: leaves them), in the same transaction, under the same
// expectation: the judge's revision covers its limits (SetJudgeLimits
// moves it too), so a form filled before a limits-only change elsewhere
// cannot silently put the old limits back. Limits equal to the stored
// ones are left as they are (storing them restarts the adaptive
// concurrency). Given an audit, its entry is written in the same
// transaction.
func (db *DB) SaveJudgeWithLimitsIf(ctx context.Context, j *Judge, lim *JudgeLimits, expect Expectation, audit ...Audit[Judge]) error {
	if lim != nil {
		if err := CheckJudgeLimits(*lim); err != nil {
			return err
		}
	}
	if strings.TrimSpace(j.Name) == "" {
		return NameNeeded(KindJudge)
	}
	// Each field apart, saying what to write (it was one clause for both,
	// "a judge needs a base URL and a model name", whichever was empty).
	if !j.Simulated && strings.TrimSpace(j.BaseURL) == "" {
		return Errorf(EInvalid, "Give the judge a base URL (e.g. https://api.openai.com/v1): its base URL is empty.")
	}
	if !j.Simulated && strings.TrimSpace(j.Model) == "" {
		return Errorf(EInvalid, "Give the judge a model name (for Azure, the deployment name): its model is empty.")
	}
	// A stored judge's name is checked against the stored one in the
	// saving transaction (checkKeptName): one with line breaks from
	// before names had to be one line is kept when sent back unchanged.
	// The same for one longer than today's limit, stored before it.
	if j.ID == 0 || !NameKeptOnlyUnchanged(j.Name, MaxNameLength) {
		if err := checkName("judge name", j.Name, MaxNameLength); err != nil {
			return err
		}
	}
	if err := checkNames(lengthCheck{"base URL", j.BaseURL, MaxSettingLength},
		lengthCheck{"model name", j.Model, MaxSettingLength}, lengthCheck{"key variable", j.APIKeyEnv, MaxSettingLength},
		lengthCheck{"API key", j.APIKey, MaxSettingLength}); err != nil {
		return err
	}
	if err := ValidateKeyEnv(db.getenv, j.APIKeyEnv); err != nil {
		return err
	}
	if j.APIKeyEnv != "" {
		if err := db.KeyEnvAllowedIn(ctx, j.WorkspaceID); err != nil {
			return err
		}
	}
	if !j.Simulated {
		if err := CheckJudgeBaseURL(j.BaseURL); err != nil {
			return err
		}
		if err := CheckBaseURLCredentials(j.BaseURL); err != nil {
			return err
		}
	}
	keyHeader, err := judge.ParseKeyHeader(j.KeyHeader)
	if err != nil {
		return Errorf(EInvalid, "%s", err.Error())
	}
	j.KeyHeader = string(keyHeader)
	limit, err := judge.ParseTokenLimit(j.TokenLimit)
	if err != nil {
		return Errorf(EInvalid, "%s", err.Error())
	}
	j.TokenLimit = string(limit)
	effort, err := judge.ParseReasoningEffort(j.ReasoningEffort)
	if err != nil {
		return Errorf(EInvalid, "%s", err.Error())
	}
	j.ReasoningEffort = string(effort)
	if j.MaxConcurrency < 1 {
		j.MaxConcurrency = 1
	}
	if j.TimeoutSeconds < 1 {
		j.TimeoutSeconds = 120
	}
	if j.APIKey != "" {
		if err := db.sealJudgeKey(j); err != nil {
			return err
		}
	}
	if j.ID == 0 {
		return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(j).Error; err != nil {
				return err
			}
			return withJudgeWrite(tx, *j, lim, audit)
		})
	}
	cols := []string{"name", "base_url", "model", "api_key_env", "key_header", "token_limit", "default_sampling_only", "reasoning_effort", "temperature", "top_p", "max_concurrency", "timeout_seconds", "price_input_per_m_tok", "price_output_per_m_tok", "context_tokens", "updated_at"}
	if j.APIKey != "" {
		cols = append(cols, "api_key")
	}
	j.UpdatedAt = time.Now().UTC()
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if expect != nil || NameKeptOnlyUnchanged(j.Name, MaxNameLength) {
			// The row stays locked until the update commits (PostgreSQL;
			// SQLite's immediate transaction holds the whole database):
			// no other save comes between the check and the write.
			var cur Judge
			err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("workspace_id = ? AND id = ?", j.WorkspaceID, j.ID).Scopes(live).First(&cur).Error
			if err != nil {
				return notFound(err, "judge", j.ID)
			}
			if expect != nil && !expect.met(cur.Revision()) {
				return changedError("judge", j.ID)
			}
			if err := checkKeptName("judge name", j.Name, cur.Name, MaxNameLength); err != nil {
				return err
			}
		}
		res := tx.Model(j).Where("workspace_id = ?", j.WorkspaceID).Scopes(live).Select(cols).Updates(j)
		if res.Error != nil {
			return fmt.Errorf("update judge %d: %w", j.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			return Errorf(ENotFound, "judge %d does not exist", j.ID)
		}
		return withJudgeWrite(tx, *j, lim, audit)
	})
}

// withJudgeWrite writes in tx, a judge's save, what goes with it: its
// limits when given, and its audit entries.
func withJudgeWrite(tx *gorm.DB, j Judge, lim *JudgeLimits, audit []Audit[Judge]) error {
	if lim != nil {
		l := *lim
		l.JudgeID = j.ID
		if err := setJudgeLimitsIfChanged(tx, l); err != nil {
			return err
		}
	}
	return recordAudits(tx, audit, j)
}

// RecordJudgeTest stores the outcome of the judge's "Test connection" at
// the time given: errText is its error ("" when the judge answered). Only
// the last outcome is kept.
func (db *DB) RecordJudgeTest(ctx context.Context, wsID, id int64, at time.Time, errText string) error {
	res := db.Gorm.WithContext(ctx).Model(&Judge{}).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).
		UpdateColumns(map[string]any{"last_test_at": at.UTC(), "last_test_error": errText}) // a test is no change of settings: updated_at stays
	if res.Error != nil {
		return fmt.Errorf("record the test of judge %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return Errorf(ENotFound, "judge %d does not exist", id)
	}
	return nil
}

// RecordJudgeRequestSettings stores what Test connection found the
// judge's endpoint takes of a request: the name of its token limit and
// whether it takes only the default temperature and top_p. It is a change
// of the judge's settings (updated_at moves, so a form opened before it
// must be saved again knowingly), made only when the judge still has the
// base URL and model the test called: a test racing an edit of the
// endpoint records nothing. Given an audit, its entry (described from the
// judge as the test found it, its settings updated) is written in the
// same transaction.
func (db *DB) RecordJudgeRequestSettings(ctx context.Context, j Judge, limit judge.TokenLimit, defaultSamplingOnly bool, audit ...Audit[Judge]) error {
	limit, err := judge.ParseTokenLimit(string(limit))
	if err != nil {
		return Errorf(EInvalid, "%s", err.Error())
	}
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Judge{}).
			Where("workspace_id = ? AND id = ? AND base_url = ? AND model = ? AND simulated = ?", j.WorkspaceID, j.ID, j.BaseURL, j.Model, false).Scopes(live).
			UpdateColumns(map[string]any{"token_limit": string(limit), "default_sampling_only": defaultSamplingOnly, "updated_at": time.Now().UTC()})
		if res.Error != nil {
			return fmt.Errorf("record the request settings of judge %d: %w", j.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			return Errorf(EChanged, "judge %d changed its endpoint or model while it was tested: test it again", j.ID)
		}
		j.TokenLimit, j.DefaultSamplingOnly = string(limit), defaultSamplingOnly
		return recordAudits(tx, audit, j)
	})
}

// FindJudge finds a judge in the workspace.
func (db *DB) FindJudge(ctx context.Context, wsID, id int64) (Judge, error) {
	var j Judge
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).First(&j).Error
	if err == nil {
		db.openJudgeKey(&j)
	}
	return j, notFound(err, "judge", id)
}

// ListJudges lists the workspace's judges, the simulated one first
// (active ones unless the options say otherwise).
func (db *DB) ListJudges(ctx context.Context, wsID int64, opts ...ListOption) ([]Judge, error) {
	var js []Judge
	err := db.Reader(ctx).Where("workspace_id = ?", wsID).Scopes(listScope(opts)).Order("simulated DESC, id").Find(&js).Error
	return js, err
}

// ListJudgesAfter is a page of the workspace's active judges, oldest first
// (the simulated one in its place by id, not first as in ListJudges): at
// most limit of those with an id above afterID, read in the database
// (through judges_workspace), as the API's keyset pages ask.
func (db *DB) ListJudgesAfter(ctx context.Context, wsID, afterID int64, limit int) ([]Judge, error) {
	var js []Judge
	err := db.Reader(ctx).Where("workspace_id = ? AND id > ?", wsID, afterID).Scopes(listScope(nil)).Order("id").Limit(limit).Find(&js).Error
	return js, err
}

// EnsureSimulatedJudge returns the workspace's simulated judge, creating it once.
func (db *DB) EnsureSimulatedJudge(ctx context.Context, wsID int64) (Judge, error) {
	var j Judge
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		j, err = ensureSimulatedJudgeTx(tx, wsID)
		return err
	})
	return j, err
}

// EnsureSimulatedJudges gives every workspace its simulated judge (the
// product's promise: it is built into every workspace), creating only the
// missing ones. Every process calls it at start (EnsureDefaultWorkspace),
// so a workspace made before the judge was made with it, or a dashboard
// started without the demo, has one too.
func (db *DB) EnsureSimulatedJudges(ctx context.Context) error {
	var ids []int64
	err := db.Gorm.WithContext(ctx).Model(&Workspace{}).
		Where("NOT EXISTS (SELECT 1 FROM judges WHERE judges.workspace_id = workspaces.id AND judges.simulated = ? AND judges.trash_id IS NULL)", true).
		Order("id").Pluck("id", &ids).Error
	if err != nil {
		return fmt.Errorf("find workspaces without the simulated judge: %w", err)
	}
	for _, id := range ids {
		if _, err := db.EnsureSimulatedJudge(ctx, id); err != nil {
			return fmt.Errorf("give workspace %d its simulated judge: %w", id, err)
		}
	}
	return nil
}

// ensureSimulatedJudgeTx is EnsureSimulatedJudge in tx. It first writes
// the workspace's row (a change to nothing) so that of two transactions
// ensuring the judge at once (processes starting together), the second
// waits for the first and then finds its judge: a row lock on PostgreSQL,
// the database's write lock on SQLite.
func ensureSimulatedJudgeTx(tx *gorm.DB, wsID int64) (Judge, error) {
	var j Judge
	if err := tx.Exec("UPDATE workspaces SET id = id WHERE id = ?", wsID).Error; err != nil {
		return j, err
	}
	err := tx.Where("workspace_id = ? AND simulated = ?", wsID, true).Scopes(live).First(&j).Error
	if err == nil {
		return j, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return j, err
	}
	zero := 0.0
	j = Judge{WorkspaceID: wsID, Name: "Simulated judge (offline demo)", Simulated: true, Model: "simulated-judge",
		Temperature: 0.2, TopP: 0.9, MaxConcurrency: 4, TimeoutSeconds: 30,
		PriceInputPerMTok: &zero, PriceOutputPerMTok: &zero}
	// The simulated judge takes every parameter: its token limit and
	// sampling are the columns' defaults (00093), as is its reasoning
	// effort (00097), left out so that a
	// database still migrating to them (the migration tests seed older
	// schemas with today's code) is seeded too.
	return j, tx.Omit("token_limit", "default_sampling_only", "reasoning_effort").Create(&j).Error
}

// ---- runs ----

// CreateRun stores a queued run and, in the same transaction, calls enqueue
// (which inserts the background job) and records its job id, and the
// Idempotency-Key of its launch when ctx carries one (WithLaunchKey).
func (db *DB) CreateRun(ctx context.Context, r *Run, enqueue func(ctx context.Context, tx *sql.Tx, r *Run) (int64, error)) error {
	if err := checkName("run name", r.Name, MaxComposedNameLength); err != nil {
		return err
	}
	if err := checkGEvalSteps(r.MethodSettings.GEvalSteps); err != nil {
		return err
	}
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return db.createRunTx(ctx, tx, r, enqueue, db.MaxActiveRunsPerWorkspace)
	})
}

// createRunTx is CreateRun's writes, in tx; limit is the workspace's run
// limit (0: none).
func (db *DB) createRunTx(ctx context.Context, tx *gorm.DB, r *Run, enqueue func(ctx context.Context, tx *sql.Tx, r *Run) (int64, error), limit int) error {
	r.Status = RunQueued
	if err := takeRunPlace(tx, db.Dialect, r.WorkspaceID, limit, "wait for one to finish or cancel one, then launch again"); err != nil {
		return err
	}
	if err := checkLaunchable(tx, db.Dialect, r); err != nil {
		return err
	}
	if err := tx.Create(r).Error; err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	if k, ok := launchKeyOf(ctx, LaunchKeyRun); ok {
		k.RunID = &r.ID
		if err := recordLaunchKey(tx, k); err != nil {
			return err
		}
	}
	if enqueue == nil {
		return nil
	}
	stx, err := SQLTx(tx)
	if err != nil {
		return err
	}
	jobID, err := enqueue(ctx, stx, r)
	if err != nil {
		return fmt.Errorf("enqueue run %d: %w", r.ID, err)
	}
	r.JobID = &jobID
	return tx.Model(r).Update("job_id", jobID).Error
}

// FindRun finds a run in the workspace.
func (db *DB) FindRun(ctx context.Context, wsID, id int64) (Run, error) {
	var r Run
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).First(&r).Error
	return r, notFound(err, "run", id)
}

// FindTrashedRun finds a run of the workspace that is in the trash (its
// TrashID set), for a page that must say so rather than that the run does
// not exist; a live run, or one of another workspace, is not found, with
// FindRun's message.
func (db *DB) FindTrashedRun(ctx context.Context, wsID, id int64) (Run, error) {
	var r Run
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ? AND trash_id IS NOT NULL", wsID, id).First(&r).Error
	return r, notFound(err, "run", id)
}

// GetRun finds a run by id alone, for the job engine. It sees trashed
// runs too: a run is cancelled before it goes to the trash, and its job
// must still read that to stop.
func (db *DB) GetRun(ctx context.Context, id int64) (Run, error) {
	var r Run
	err := db.Reader(ctx).First(&r, id).Error
	return r, notFound(err, "run", id)
}

// ListRuns lists a project's runs, newest first (all projects when
// projectID is 0; active runs unless the options say otherwise).
func (db *DB) ListRuns(ctx context.Context, wsID, projectID int64, opts ...ListOption) ([]Run, error) {
	var rs []Run
	err := db.runsOf(ctx, wsID, RunFilter{ProjectID: projectID}, opts).Order("id DESC").Find(&rs).Error
	return rs, err
}

// RunName is a run as a list of choices names it.
type RunName struct {
	ID         int64
	Name       string
	ArchivedAt *time.Time
}

// NameSearch narrows a list of names (ListRunNames, ListExperimentNames)
// in the database, so that a list of choices stays as short as its page
// shows, however many runs or experiments the workspace has. A zero field
// narrows nothing.
type NameSearch struct {
	// Match keeps those whose name contains it, compared folded (FoldName:
	// in any case, without Latin and Greek accents), and the one whose id
	// it is ("7", "#7", "run 7").
	Match string
	// IDs keeps these only (a nil slice keeps all, an empty one none).
	IDs []int64
	// Limit keeps the newest Limit.
	Limit int
}

// RunNameSearch narrows ListRunNames (NameSearch).
type RunNameSearch = NameSearch

// where narrows q, a statement over the table of kind k, as s says.
func (s NameSearch) where(q *gorm.DB, k Kind) *gorm.DB {
	q = q.Order("id DESC")
	if s.IDs != nil {
		q = q.Where("id IN ?", s.IDs)
	}
	if m := strings.TrimSpace(s.Match); m != "" {
		id, err := strconv.ParseInt(idQuery(m, string(k)), 10, 64)
		if err != nil {
			id = 0
		}
		q = q.Where(`(`+foldedNameLike+` OR id = ?)`, foldedPattern(m), id)
	}
	if s.Limit > 0 {
		q = q.Limit(s.Limit)
	}
	return q
}

// ListRunNames returns the id, name and archive date of a workspace's runs
// that s and opts keep, newest first: what the share links' page offers and
// names its links by. It reads those three columns only, not each run's
// rubric, settings and judge, which ListRuns decodes for every run.
func (db *DB) ListRunNames(ctx context.Context, wsID int64, s RunNameSearch, opts ...ListOption) ([]RunName, error) {
	out := []RunName{}
	if s.IDs != nil && len(s.IDs) == 0 {
		return out, nil
	}
	q := s.where(db.runsOf(ctx, wsID, RunFilter{}, opts).Select("id", "name", "archived_at"), KindRun)
	if err := q.Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("list the names of workspace %d's runs: %w", wsID, err)
	}
	return out, nil
}

// idQuery is the id a search for a run (word "run") or an experiment
// may be written as: "7", "#7", or as the lists name it, "run 7",
// "(run 7)" or a whole choice pasted, "run 7 · <name>" (any case).
func idQuery(m, word string) string {
	m, _, _ = strings.Cut(m, " · ")
	m = strings.TrimSuffix(strings.TrimPrefix(m, "("), ")")
	if p := word + " "; len(m) > len(p) && strings.EqualFold(m[:len(p)], p) {
		m = strings.TrimSpace(m[len(p):])
	}
	return strings.TrimPrefix(m, "#")
}

// foldedNameLike keeps the rows whose folded name (FoldName) contains a
// folded search (foldedPattern), the same way on both databases: the
// search neither SQLite's LIKE (ASCII letters only) nor PostgreSQL's
// collation folds.
const foldedNameLike = `name_folded LIKE ? ESCAPE '\'`

// foldedPattern is the LIKE pattern of a search for names containing m.
func foldedPattern(m string) string { return "%" + likeEscaper.Replace(FoldName(m)) + "%" }

// likeEscaper escapes what LIKE reads as wildcards (and its escape
// character), so a searched "50%" finds names containing "50%" only.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// RunFilter narrows a listing of a workspace's runs (CountRuns,
// ListRunsPage, ListRunsAfter, RunDatasetIDs) in the database, so that a
// page of a long list reads its own runs only: a zero field narrows
// nothing.
type RunFilter struct {
	ProjectID, DatasetID int64
	Status, Method, Name string
	// Judged keeps the runs with at least one finished batch.
	Judged bool
	// ID keeps that run only (0: any).
	ID int64
}

// runsOf is the statement over the runs f keeps, opts saying which of the
// live ones (active unless they say otherwise).
func (db *DB) runsOf(ctx context.Context, wsID int64, f RunFilter, opts []ListOption) *gorm.DB {
	q := db.Reader(ctx).Model(&Run{}).Where("workspace_id = ?", wsID).Scopes(listScope(opts))
	if f.ProjectID != 0 {
		q = q.Where("project_id = ?", f.ProjectID)
	}
	if f.DatasetID != 0 {
		q = q.Where("dataset_id = ?", f.DatasetID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Method != "" {
		q = q.Where("method = ?", f.Method)
	}
	if f.Name != "" {
		q = q.Where("name = ?", f.Name)
	}
	if f.Judged {
		q = q.Where("batches_done > 0")
	}
	if f.ID != 0 {
		q = q.Where("id = ?", f.ID)
	}
	return q
}

// CountRuns counts the runs f keeps.
func (db *DB) CountRuns(ctx context.Context, wsID int64, f RunFilter, opts ...ListOption) (int, error) {
	var n int64
	err := db.runsOf(ctx, wsID, f, opts).Count(&n).Error
	return int(n), err
}

// ListRunsPage returns the runs f keeps, newest first, limit of them
// (every one when limit is 0) from the offset-th.
func (db *DB) ListRunsPage(ctx context.Context, wsID int64, f RunFilter, offset, limit int, opts ...ListOption) ([]Run, error) {
	var rs []Run
	q := db.runsOf(ctx, wsID, f, opts).Order("id DESC")
	if limit > 0 {
		q = q.Limit(limit)
	}
	if offset > 0 {
		q = q.Offset(offset)
	}
	err := q.Find(&rs).Error
	return rs, err
}

// ListRunsAfter returns up to limit active runs f keeps with ids above
// afterID, oldest first: a page of a walk through the list by cursor.
func (db *DB) ListRunsAfter(ctx context.Context, wsID int64, f RunFilter, afterID int64, limit int) ([]Run, error) {
	var rs []Run
	err := db.runsOf(ctx, wsID, f, nil).Where("id > ?", afterID).Order("id").Limit(limit).Find(&rs).Error
	return rs, err
}

// RunDatasetIDs returns the datasets of the runs f keeps, each once, the
// newest run's first.
func (db *DB) RunDatasetIDs(ctx context.Context, wsID int64, f RunFilter, opts ...ListOption) ([]int64, error) {
	var rows []struct{ DatasetID int64 }
	err := db.runsOf(ctx, wsID, f, opts).Select("dataset_id, MAX(id) AS newest").Group("dataset_id").Order("newest DESC").Scan(&rows).Error
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.DatasetID
	}
	return ids, err
}

// ListSameSampleRuns returns the live runs of a project (archived ones
// included) on the dataset datasetID or on any dataset of the same family
// (an original and the copies derived from it hold the same samples),
// newest first: the runs a run page offers to compare with. Reading only
// these, not every run of the project, keeps a page's cost independent of
// the runs on other datasets. A dataset that is not live has no family.
func (db *DB) ListSameSampleRuns(ctx context.Context, wsID, projectID, datasetID int64) ([]Run, error) {
	var ds []Dataset
	err := db.Reader(ctx).Select("id", "parent_dataset_id").Where("workspace_id = ? AND project_id = ? AND id = ?", wsID, projectID, datasetID).
		Scopes(live).Limit(1).Find(&ds).Error
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	root := ds[0].ID
	if ds[0].ParentDatasetID != nil {
		root = *ds[0].ParentDatasetID
	}
	family := db.Reader(ctx).Model(&Dataset{}).Select("id").
		Where("workspace_id = ? AND project_id = ? AND (id = ? OR parent_dataset_id = ?)", wsID, projectID, root, root).Scopes(live)
	var rs []Run
	err = db.Reader(ctx).Where("workspace_id = ? AND project_id = ? AND dataset_id IN (?)", wsID, projectID, family).
		Scopes(listScope([]ListOption{WithArchived()})).Order("id DESC").Find(&rs).Error
	return rs, err
}

// RequestCancel marks a run cancelled (a paused one too); the engine stops
// making calls at its next check and the job is cancelled by the caller.
// Cancelling is final: a cancelled run is neither resumed nor continued.
func (db *DB) RequestCancel(ctx context.Context, wsID, id int64) (Run, error) {
	r, err := db.FindRun(ctx, wsID, id)
	if err != nil {
		return r, err
	}
	if r.Finished() {
		return r, Errorf(EConflict, "run %d %s: only a queued, running or paused run can be cancelled", id, hasEnded(r.Status))
	}
	now := time.Now().UTC()
	res := db.Gorm.WithContext(ctx).Model(&Run{}).Where("id = ? AND status IN ?", id, []string{RunQueued, RunRunning, RunPaused}).
		Updates(map[string]any{"cancel_requested": true, "status": RunCancelled, "finished_at": now})
	if res.Error != nil {
		return r, fmt.Errorf("cancel run %d: %w", id, res.Error)
	}
	// Ended between the read and the update (another cancel, the worker
	// finishing it): this request changed nothing, and says so.
	if res.RowsAffected != 1 {
		return r, Errorf(EConflict, "run %d changed while it was being cancelled; look at it again", id)
	}
	return db.FindRun(ctx, wsID, id)
}

// ListBatches returns a run's batches in order.
func (db *DB) ListBatches(ctx context.Context, runID int64) ([]RunBatch, error) {
	var bs []RunBatch
	err := db.Reader(ctx).Where("run_id = ?", runID).Order("criterion_index, round, batch_index").Find(&bs).Error
	return bs, err
}

// FindBatch finds one batch of a run.
func (db *DB) FindBatch(ctx context.Context, runID, batchID int64) (RunBatch, error) {
	var b RunBatch
	err := db.Reader(ctx).Where("run_id = ? AND id = ?", runID, batchID).First(&b).Error
	return b, notFound(err, "batch", batchID)
}

// ListScores returns every score of a run.
func (db *DB) ListScores(ctx context.Context, runID int64) ([]RunScore, error) {
	var ss []RunScore
	err := db.Reader(ctx).Where("run_id = ?", runID).Order("criterion_index, round, row_id").Find(&ss).Error
	return ss, err
}

// ScoreCounts counts a run's stored scores and, of them, the missing ones
// (no readable score): what a run's end is decided on, without reading
// the scores themselves (a million-sample run has millions).
func (db *DB) ScoreCounts(ctx context.Context, runID int64) (total, missing int64, err error) {
	q := hotSQL.get(db.Dialect, "score counts", 0, func() string {
		return "SELECT COUNT(*), COUNT(score) FROM run_scores WHERE run_id = ?"
	})
	var readable int64
	err = db.retry(ctx, "count scores", func() error {
		return db.hotQueryRow(ctx, db.SQL, nil, q, runID).Scan(&total, &readable)
	})
	return total, total - readable, err
}

// ListRowScores returns every score of one sample in a run, by criterion
// and round.
//
// The only index with row_id, run_scores_place, has it last, after
// (run_id, criterion_index, round): a WHERE on run_id and row_id alone
// uses the index's first column only and reads every score of the run
// (200,000 for a run of 100,000 samples and 2 rounds: 0.1-0.3 s, and a
// sample page read it twice). So the run's criteria and rounds are found
// first, each largest one by a seek at the end of the index, and the
// scores are read with every (criterion, round) named: one seek each.
// No index is added for it: every stored answer would pay for one more.
func (db *DB) ListRowScores(ctx context.Context, runID, rowID int64) ([]RunScore, error) {
	r := db.Reader(ctx)
	var maxCriterion sql.NullInt64
	if err := r.Raw("SELECT MAX(criterion_index) FROM run_scores WHERE run_id = ?", runID).Scan(&maxCriterion).Error; err != nil {
		return nil, fmt.Errorf("read the criteria of run %d: %w", runID, err)
	}
	if !maxCriterion.Valid {
		return nil, nil // no score yet
	}
	criteria := make([]int64, 0, maxCriterion.Int64+1)
	var rounds int64
	for ci := range maxCriterion.Int64 + 1 {
		var maxRound sql.NullInt64
		err := r.Raw("SELECT MAX(round) FROM run_scores WHERE run_id = ? AND criterion_index = ?", runID, ci).Scan(&maxRound).Error
		if err != nil {
			return nil, fmt.Errorf("read the rounds of run %d: %w", runID, err)
		}
		if maxRound.Valid {
			criteria = append(criteria, ci)
			rounds = max(rounds, maxRound.Int64+1)
		}
	}
	roundList := make([]int64, rounds)
	for i := range roundList {
		roundList[i] = int64(i)
	}
	var ss []RunScore
	err := r.Where("run_id = ? AND criterion_index IN ? AND round IN ? AND row_id = ?", runID, criteria, roundList, rowID).
		Order("criterion_index, round").Find(&ss).Error
	return ss, err
}

func notFoundText(err error, msg string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Errorf(ENotFound, "%s", msg)
	}
	return err
}
