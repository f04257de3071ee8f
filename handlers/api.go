package handlers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/internal/stamp"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dataimport"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// The JSON API (/api/v1) does what the browser does, through the same
// functions: uploads go through acceptUpload and importUpload, launches
// through planLaunch and launchPlanned, results through the report cache.
// Its routes sit in routes() with their rules like every page; its
// document is openapi.json (openapi.go); errors come from ErrorHandler.

// Pagination of list endpoints: ?limit= (default apiDefaultLimit, at most
// apiMaxLimit) and ?cursor=, the opaque next_cursor of the previous page.
// Items come in ascending id order and the cursor is the last id seen, so a
// walk never repeats an item, and lists every item that existed when it
// began (and still does when its page is read). An item created during the
// walk is listed on SQLite, which gives ids in commit order (one writer at
// a time), but not always on PostgreSQL: a sequence gives the id when the
// row is written, the row shows when its transaction commits, and a page
// read in between can already have gone past that id. The OpenAPI document
// and the README state this; a cursor that cannot skip would need ids
// handed out in commit order (e.g. creations serialised per table).
const (
	apiDefaultLimit = 50
	apiMaxLimit     = 200
)

// apiMaxJSONBody bounds a JSON request body (rubrics with long level
// descriptions and G-Eval steps fit many times over).
const apiMaxJSONBody = 1 << 20

// apiCompareRows is how many sample rows the compare endpoint returns at
// most, largest disagreement first (the page shows the same cap).
const apiCompareRows = compareRowsShown

// Page is one page of a list.
type Page[T any] struct {
	Items []T `json:"items"`
	// NextCursor fetches the next page; absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// pageParams reads a list's ?limit= and ?cursor= (the last id listed).
func pageParams(c echo.Context) (limit int, after int64, err error) {
	limit = apiDefaultLimit
	if q := c.QueryParam("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > apiMaxLimit {
			return 0, 0, models.Errorf(models.EInvalid, "limit must be a whole number from 1 to %d", apiMaxLimit)
		}
		limit = n
	}
	if q := c.QueryParam("cursor"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, models.Errorf(models.EInvalid, "cursor %q is not one this server gave out", q)
		}
		after = n
	}
	return limit, after, nil
}

// keysetPage is the API page of rows, read in the database as the
// contract asks: ascending ids above the cursor, the page's limit and one
// more, which says there is a next page (then next_cursor is the last id
// listed). conv turns a row into its item.
func keysetPage[R, T any](rows []R, limit int, idOf func(R) int64, conv func(R) T) Page[T] {
	out := Page[T]{Items: make([]T, 0, min(len(rows), limit))}
	if len(rows) > limit {
		rows = rows[:limit]
		out.NextCursor = strconv.FormatInt(idOf(rows[limit-1]), 10)
	}
	for _, r := range rows {
		out.Items = append(out.Items, conv(r))
	}
	return out
}

// ascendingByID returns a copy of items sorted by id (the stores list
// newest first in places, for pages).
func ascendingByID[T any](items []T, idOf func(T) int64) []T {
	out := slices.Clone(items)
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(idOf(a), idOf(b)) })
	return out
}

// decodeJSON reads a JSON request body into dst with decodeJSONValue.
func decodeJSON(c echo.Context, dst any) error {
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, apiMaxJSONBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", apiMaxJSONBody))
		}
		return echo.NewHTTPError(http.StatusBadRequest, "the request body could not be read; send it again")
	}
	return decodeJSONValue(data, dst, "")
}

// decodeJSONValue is the one decoder of the API's JSON: it reads data into
// dst, refusing unknown fields (a typo in a setting must not silently
// launch with a default), keys given twice and keys that match a field
// only when case is ignored (strictKeys), each named by its JSON path.
// within is the path of the value decoded, "" for the whole body.
func decodeJSONValue(data []byte, dst any, within string) error {
	if err := strictKeys(data, reflect.TypeOf(dst), within); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonBodyError(err, within)
	}
	if dec.More() {
		return echo.NewHTTPError(http.StatusBadRequest, "the request body holds more than one JSON value: send one object")
	}
	return nil
}

// jsonBodyError is a 400 saying, in the API's terms, what is wrong with a
// request body and where: the field by its JSON path and the kind of value
// it takes, never the server's Go types (it said "cannot unmarshal string
// into Go struct field APILaunch.dataset_id of type int64"). within is the
// path of the value decoded, "" for the whole body.
func jsonBodyError(err error, within string) error {
	at := func(field string) string {
		switch {
		case within == "":
			return field
		case field == "":
			return within
		}
		return within + "." + field
	}
	var msg string
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF) && within == "":
		msg = "the request body is empty: send a JSON object (Content-Type: application/json)"
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the request body's JSON ends too early: it was cut short, or a bracket or a quote is not closed"
	case errors.As(err, &syntax):
		msg = fmt.Sprintf("the request body is not valid JSON at byte %d (%s)", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ) && at(typ.Field) == "":
		msg = fmt.Sprintf("the request body must be %s, not %s", jsonKind(typ.Type), jsonValue(typ.Value))
	case errors.As(err, &typ) && jsonKind(typ.Type) == "a number" && strings.HasPrefix(typ.Value, "number"):
		// A number too large for a float64 (1e400).
		msg = fmt.Sprintf("%q must be a number within ±1.7e308, not %s", at(typ.Field), jsonValue(typ.Value))
	case errors.As(err, &typ) && jsonKind(typ.Type) == "a whole number" && strings.HasPrefix(typ.Value, "number "):
		msg = wholeNumberError(at(typ.Field), typ.Type, strings.TrimPrefix(typ.Value, "number "))
	case errors.As(err, &typ):
		msg = fmt.Sprintf("%q must be %s, not %s", at(typ.Field), jsonKind(typ.Type), jsonValue(typ.Value))
	default:
		// encoding/json names an unknown field only in its text.
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			msg = fmt.Sprintf("unknown field %s%s: this endpoint does not take it; check its spelling against /api/v1/openapi.json",
				name, map[bool]string{true: "", false: " in " + strconv.Quote(within)}[within == ""])
		} else {
			msg = "the request body is not the JSON this endpoint takes: " + strings.TrimPrefix(err.Error(), "json: ")
		}
	}
	return echo.NewHTTPError(http.StatusBadRequest, msg)
}

// wholeNumberError says why a number sent for a whole-number field was
// refused. "must be a whole number, not 99999999999999999999" said of a
// whole number that is only too large, and "not 2.0" of one written with a
// decimal point: each now says what is wrong with it.
func wholeNumberError(field string, t reflect.Type, n string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	f, _, ferr := big.ParseFloat(n, 10, 256, big.ToNearestEven)
	if ferr == nil && f.IsInt() {
		i, _ := f.Int(nil)
		var lo, hi *big.Int
		switch t.Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			lo, hi = big.NewInt(0), new(big.Int).SetUint64(math.MaxUint64>>(64-t.Bits()))
		default:
			lo, hi = big.NewInt(math.MinInt64>>(64-t.Bits())), big.NewInt(math.MaxInt64>>(64-t.Bits()))
		}
		if i.Cmp(lo) < 0 || i.Cmp(hi) > 0 {
			return fmt.Sprintf("%q is %s, which is out of range: it must be a whole number from %s to %s", field, n, lo, hi)
		}
		return fmt.Sprintf("%q must be written as a whole number, without a decimal point or exponent (%s), not %s", field, i, n)
	}
	return fmt.Sprintf("%q must be a whole number, not %s", field, n)
}

// jsonKind names the JSON value a Go type takes, for people writing JSON.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// jsonValue describes the value sent, as encoding/json reports it ("string",
// "number 2.5", "array").
func jsonValue(v string) string {
	switch {
	case v == "array":
		return "a list"
	case v == "object":
		return "an object"
	case v == "bool":
		return "true or false"
	case v == "string":
		return "a string"
	case v == "number":
		return "a number"
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	return v
}

// ---- shapes ----

// APIProject is a project.
type APIProject struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	CreatedAt   stamp.Time `json:"created_at"`
	UpdatedAt   stamp.Time `json:"updated_at"`
}

func apiProject(p models.Project) APIProject {
	return APIProject{ID: p.ID, Name: p.Name, Description: p.Description, CreatedAt: stamp.Of(p.CreatedAt), UpdatedAt: stamp.Of(p.UpdatedAt)}
}

// APIProjectDetail is a project with its datasets and rubrics.
type APIProjectDetail struct {
	APIProject
	// Datasets and Rubrics are the project's first apiMaxLimit of each,
	// oldest first; a project with more says where the rest are listed
	// a page at a time (DatasetsNext, RubricsNext).
	Datasets []APIDataset `json:"datasets"`
	Rubrics  []APIRubric  `json:"rubrics"`
	// DatasetsNext and RubricsNext are the address of the list's next
	// page (GET /api/v1/projects/{id}/datasets?cursor=...); absent when
	// every one is listed here.
	DatasetsNext string `json:"datasets_next,omitempty"`
	RubricsNext  string `json:"rubrics_next,omitempty"`
}

// APIExperimentItem is an experiment as the experiments list gives it:
// its runs' ids, not their figures (GET /api/v1/experiments/{id}).
type APIExperimentItem struct {
	ID        int64      `json:"id"`
	ProjectID int64      `json:"project_id"`
	DatasetID int64      `json:"dataset_id"`
	Name      string     `json:"name"`
	CreatedAt stamp.Time `json:"created_at"`
	RunIDs    []int64    `json:"run_ids"`
}

// APIDataset is an imported dataset (its rows stay on the server).
type APIDataset struct {
	ID             int64             `json:"id"`
	ProjectID      int64             `json:"project_id"`
	Name           string            `json:"name"`
	SourceFilename string            `json:"source_filename"`
	Format         string            `json:"format"`
	RowCount       int               `json:"row_count"`
	IDColumn       string            `json:"id_column"`
	Columns        []string          `json:"columns"`
	Fields         []evaluator.Field `json:"fields"`
	RatingColumns  []string          `json:"rating_columns"`
	GroupColumn    string            `json:"group_column"`
	CreatedAt      stamp.Time        `json:"created_at"`
	// ImportNotes say what the import found in the file (rows with an
	// empty field the judge sees), as the dataset's page says them: stored
	// with the dataset; absent when there is nothing to say (or for a
	// dataset imported before the notes were kept). On an alignment's
	// held-out copy they say where its human ratings come from when the
	// copying replaced the imported ones (runner.HeldOutHumans).
	ImportNotes []string `json:"import_notes,omitempty"`
}

func apiDataset(d models.Dataset) APIDataset {
	return APIDataset{ID: d.ID, ProjectID: d.ProjectID, Name: d.Name, SourceFilename: d.SourceFilename, Format: d.Format,
		RowCount: d.RowCount, IDColumn: d.IDColumn, Columns: nonNil(d.Columns), Fields: nonNil(d.Fields),
		RatingColumns: nonNil(d.RatingColumns), GroupColumn: d.GroupColumn, CreatedAt: stamp.Of(d.CreatedAt), ImportNotes: d.ImportNotes}
}

// nonNil makes an absent list [] in JSON, never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// APIMapping says which columns the judge sees and which hold ratings.
type APIMapping struct {
	IDColumn        string            `json:"id_column"`
	AnnotatorColumn string            `json:"annotator_column"`
	Fields          []evaluator.Field `json:"fields"`
	RatingColumns   []string          `json:"rating_columns"`
}

// APIUpload is a pending upload: the mapping step's material.
type APIUpload struct {
	Token            string     `json:"upload_token"`
	Filename         string     `json:"filename"`
	Format           string     `json:"format"`
	Rows             int        `json:"rows"`
	Columns          []string   `json:"columns"`
	SuggestedMapping APIMapping `json:"suggested_mapping"`
	// ReadNotes say how the file was read, as the browser's mapping step
	// does: its encoding and separator when not UTF-8 with commas ("The
	// file was read as UTF-16 text, tab-separated."), and header columns
	// renamed because their names repeat; empty when there is nothing to
	// say. The dataset's import_notes start with them.
	ReadNotes []string `json:"read_notes"`
	// IDNotes explain the columns named like an id (id, uuid, sample_id…)
	// that the suggested mapping did not take as the id because values
	// repeat or are missing, as the browser's mapping step does; empty
	// when there is nothing to explain.
	IDNotes []APIIDNote `json:"id_notes"`
	// Preview is the first rows, one value per column in Columns' order,
	// each cut at PreviewCellChars characters as in the browser's mapping
	// step (a preview is for recognising columns; the import keeps every
	// value whole).
	Preview [][]string `json:"preview"`
	// PreviewTruncated has Preview's shape: true where the value was cut.
	PreviewTruncated [][]bool `json:"preview_truncated"`
	// PreviewCellChars is where preview values are cut, in characters.
	PreviewCellChars int `json:"preview_cell_chars"`
}

// APIIDNote says why a column named like an id is not the suggested id.
type APIIDNote struct {
	Column string `json:"column"`
	// Message says it in words, with what to do.
	Message string `json:"message"`
	// Repeated are the most repeated values (at most five), most rows first.
	Repeated []APIRepeatedID `json:"repeated"`
	// RepeatedIDs counts the values found on more than one row,
	// RepeatedRows the rows carrying one; EmptyRows the rows without an id.
	RepeatedIDs  int `json:"repeated_ids"`
	RepeatedRows int `json:"repeated_rows"`
	EmptyRows    int `json:"empty_rows"`
	// AnnotatorColumn, when set, tells apart the rows of one id: the file
	// probably has one row per annotator, and a mapping with this column
	// as annotator_column (and Column as id_column) reads it so.
	AnnotatorColumn string `json:"annotator_column"`
}

// APIRepeatedID is one id value found on several rows.
type APIRepeatedID struct {
	ID   string `json:"id"`
	Rows int    `json:"rows"`
}

// APINewDataset imports a pending upload with a mapping.
type APINewDataset struct {
	UploadToken string `json:"upload_token"`
	Name        string `json:"name"`
	// Mapping nil takes the suggested mapping of the upload.
	Mapping     *APIMapping `json:"mapping"`
	GroupColumn string      `json:"group_column"`
}

// APIRubric is a rubric.
type APIRubric struct {
	ID        int64                 `json:"id"`
	ProjectID int64                 `json:"project_id"`
	Name      string                `json:"name"`
	Task      string                `json:"task"`
	Fields    []evaluator.Field     `json:"fields"`
	Criteria  []evaluator.Criterion `json:"criteria"`
	CreatedAt stamp.Time            `json:"created_at"`
	UpdatedAt stamp.Time            `json:"updated_at"`
	// NameNote says that the stored name has line breaks (see
	// storedNameNote); absent otherwise.
	NameNote string `json:"name_note,omitempty"`
}

func apiRubric(r models.Rubric) APIRubric {
	return APIRubric{ID: r.ID, ProjectID: r.ProjectID, Name: r.Name, Task: r.Task, Fields: nonNil(r.Fields),
		Criteria: nonNil(r.Criteria), CreatedAt: stamp.Of(r.CreatedAt), UpdatedAt: stamp.Of(r.UpdatedAt), NameNote: storedNameNote(r.Name)}
}

// storedNameNote is what an answer says of a stored name with line breaks
// (saved before names had to be one line): it is kept while sent back
// unchanged, and a new name must be one line. "" for a name of one line.
//
// A stored name longer than models.MaxNameLength (saved before the limit)
// gets the same kind of note.
func storedNameNote(name string) string {
	var notes []string
	if models.HasLineBreak(name) {
		notes = append(notes, "The stored name has line breaks (it was saved before names had to be one line). Sent back unchanged it is kept; a new name must be one line.")
	}
	if n := utf8.RuneCountInString(name); n > models.MaxNameLength {
		notes = append(notes, fmt.Sprintf("The stored name is %d characters long (it was saved before names were limited to %d). "+
			"Sent back unchanged it is kept; a new name must be at most %d characters.", n, models.MaxNameLength, models.MaxNameLength))
	}
	return strings.Join(notes, " ")
}

// APIRubricInput creates or replaces a rubric. It takes every key of an
// APIRubric, so a rubric read with GET can be edited and sent back.
type APIRubricInput struct {
	Name string `json:"name"`
	Task string `json:"task"`
	// Fields are the dataset columns the judge sees, each with its label
	// (blank: the column's name). Absent (or null) keeps the stored fields,
	// none for a new rubric; [] shows the judge the dataset's own fields.
	Fields []evaluator.Field `json:"fields"`
	// Criteria are read one by one (apiCriteria) to tell a missing lo or
	// hi from a 0.
	Criteria []json.RawMessage `json:"criteria"`
	// ID, ProjectID, CreatedAt, UpdatedAt and NameNote are read-only: accepted so
	// that a GET answer can be sent back, and otherwise ignored, except
	// that a PUT naming another rubric's id is refused.
	ID        int64           `json:"id"`
	ProjectID int64           `json:"project_id"`
	CreatedAt json.RawMessage `json:"created_at"`
	UpdatedAt json.RawMessage `json:"updated_at"`
	NameNote  json.RawMessage `json:"name_note"`
}

// APIJudge is a judge. Its key is never returned: HasStoredKey says
// whether one is stored.
type APIJudge struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Simulated bool   `json:"simulated"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	APIKeyEnv string `json:"api_key_env"`
	// KeyHeader is how the key is sent: "bearer" (Authorization: Bearer)
	// or "api-key" (Azure's per-deployment endpoints).
	KeyHeader string `json:"key_header"`
	// TokenLimit is the name the answer's cap is sent under: "max_tokens"
	// or "max_completion_tokens" (OpenAI's reasoning models).
	// DefaultSamplingOnly: the judge is sent no temperature nor top_p, and
	// a run launches only with both at 1. Test connection sets both from
	// the endpoint's refusals. ReasoningEffort is sent as
	// reasoning_effort: "low", "medium" or "high"; "" sends none.
	TokenLimit          string   `json:"token_limit"`
	DefaultSamplingOnly bool     `json:"default_sampling_only"`
	ReasoningEffort     string   `json:"reasoning_effort"`
	HasStoredKey        bool     `json:"has_stored_key"`
	Temperature         float64  `json:"temperature"`
	TopP                float64  `json:"top_p"`
	MaxConcurrency      int      `json:"max_concurrency"`
	TimeoutSeconds      int      `json:"timeout_seconds"`
	PriceInputPerMTok   *float64 `json:"price_input_per_mtok"`
	PriceOutputPerMTok  *float64 `json:"price_output_per_mtok"`
	ContextTokens       *int     `json:"context_tokens"`
	// LastTestAt is when "Test connection" last ran on the judge page
	// (absent: never); LastTestError its error, "" when the judge answered.
	LastTestAt    *stamp.Time `json:"last_test_at,omitempty"`
	LastTestError string      `json:"last_test_error,omitempty"`
	CreatedAt     stamp.Time  `json:"created_at"`
	UpdatedAt     stamp.Time  `json:"updated_at"`
	// BaseURLNote, in the answer to a create or update only, says that the
	// base_url sent ended in an endpoint path (/chat/completions), which
	// every call adds itself, and was saved without it.
	BaseURLNote string `json:"base_url_note,omitempty"`
	// NameNote says that the stored name has line breaks (see
	// storedNameNote); absent otherwise.
	NameNote string `json:"name_note,omitempty"`
}

func apiJudge(j models.Judge) APIJudge {
	return APIJudge{ID: j.ID, Name: j.Name, Simulated: j.Simulated, BaseURL: j.ShownBaseURL(), Model: j.Model, APIKeyEnv: j.APIKeyEnv,
		KeyHeader: string(j.SendsKeyAs()), TokenLimit: string(j.SendsTokenLimitAs()), DefaultSamplingOnly: j.DefaultSamplingOnly,
		ReasoningEffort: string(j.SendsReasoningEffort()), HasStoredKey: j.HasStoredKey(), Temperature: j.Temperature, TopP: j.TopP, MaxConcurrency: j.MaxConcurrency,
		TimeoutSeconds: j.TimeoutSeconds, PriceInputPerMTok: j.PriceInputPerMTok, PriceOutputPerMTok: j.PriceOutputPerMTok,
		ContextTokens: j.ContextTokens, LastTestAt: stamp.OfPtr(j.LastTestAt), LastTestError: j.LastTestError,
		CreatedAt: stamp.Of(j.CreatedAt), UpdatedAt: stamp.Of(j.UpdatedAt), NameNote: storedNameNote(j.Name)}
}

// APIJudgeInput creates or updates a judge. APIKey is write-only: stored
// (an empty one keeps the stored key on update), never sent back. It takes
// every key of an APIJudge, so a judge read with GET can be edited and
// sent back, as a rubric can.
type APIJudgeInput struct {
	Name      string `json:"name"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	APIKey    string `json:"api_key"`
	APIKeyEnv string `json:"api_key_env"`
	// KeyHeader is "bearer" or "api-key"; absent keeps the judge's (a new
	// judge's: "bearer").
	KeyHeader *string `json:"key_header"`
	// TokenLimit and DefaultSamplingOnly: absent keeps the judge's (a new
	// judge's: "max_tokens", false). ReasoningEffort is "low", "medium" or
	// "high", "" for none; absent keeps the judge's (a new judge's: none).
	TokenLimit          *string  `json:"token_limit"`
	DefaultSamplingOnly *bool    `json:"default_sampling_only"`
	ReasoningEffort     *string  `json:"reasoning_effort"`
	Temperature         *float64 `json:"temperature"`
	TopP                *float64 `json:"top_p"`
	MaxConcurrency      *int     `json:"max_concurrency"`
	TimeoutSeconds      *int     `json:"timeout_seconds"`
	PriceInputPerMTok   *float64 `json:"price_input_per_mtok"`
	PriceOutputPerMTok  *float64 `json:"price_output_per_mtok"`
	ContextTokens       *int     `json:"context_tokens"`
	// ID and Simulated are read-only: accepted so that a GET answer can be
	// sent back, and refused only when they say something else (another
	// judge's id on PUT; a simulated that is not the judge's, or true for a
	// new judge: the simulated judge is built in). The other read-only keys
	// of an APIJudge are ignored whatever they hold.
	ID            int64           `json:"id"`
	Simulated     *bool           `json:"simulated"`
	HasStoredKey  json.RawMessage `json:"has_stored_key"`
	LastTestAt    json.RawMessage `json:"last_test_at"`
	LastTestError json.RawMessage `json:"last_test_error"`
	CreatedAt     json.RawMessage `json:"created_at"`
	UpdatedAt     json.RawMessage `json:"updated_at"`
	BaseURLNote   json.RawMessage `json:"base_url_note"`
	NameNote      json.RawMessage `json:"name_note"`
}

// checkReadOnly refuses the read-only keys of a judge body that say
// something other than what they would read for j (a new judge: ID 0).
func (in APIJudgeInput) checkReadOnly(j models.Judge) error {
	if j.ID != 0 && in.ID != 0 && in.ID != j.ID {
		return models.Errorf(models.EInvalid, "the body's id %d is not this judge's (%d): the address says which judge to replace; leave id out or send this judge's", in.ID, j.ID)
	}
	if in.Simulated != nil && *in.Simulated != j.Simulated {
		if j.ID == 0 {
			return models.Errorf(models.EInvalid, "simulated cannot be changed: the simulated judge is built into every workspace, and a judge made here calls the endpoint at base_url; leave simulated out or send false")
		}
		return models.Errorf(models.EInvalid, "simulated cannot be changed: this judge's is %t; leave simulated out or send %t", j.Simulated, j.Simulated)
	}
	return nil
}

// APILaunch launches a run, or with the experiments endpoint every method.
// Absent settings take the launch form's defaults.
type APILaunch struct {
	DatasetID int64  `json:"dataset_id"`
	RubricID  int64  `json:"rubric_id"`
	JudgeID   int64  `json:"judge_id"`
	Name      string `json:"name"`
	Method    string `json:"method"`
	// Criteria are indexes into the rubric's criteria; absent = all.
	Criteria []int             `json:"criteria"`
	Settings APILaunchSettings `json:"settings"`
}

// APILaunchSettings are the launch form's settings fields.
type APILaunchSettings struct {
	Rounds            *int     `json:"rounds"`
	BatchSize         *int     `json:"batch_size"`
	Temperature       *float64 `json:"temperature"`
	TopP              *float64 `json:"top_p"`
	Seed              *int64   `json:"seed"`
	Procedure         string   `json:"procedure"`
	Composition       string   `json:"composition"`
	SortKey           string   `json:"sort_key"`
	Scoring           string   `json:"scoring"`
	Samples           *int     `json:"samples"`
	SampleTemperature *float64 `json:"sample_temperature"`
	LLMEvalScale      string   `json:"llmeval_scale"`
	UseLogprobs       *bool    `json:"use_logprobs"`
	// MinReadableShare is the fewest readable answers for a sampled
	// score, as a share (0 to 1) of the answers asked for (absent: a half).
	MinReadableShare *float64 `json:"min_readable_share"`
	// GEvalSteps are G-Eval's evaluation steps by criterion index ("0",
	// "1", ...); absent ones are generated when the run starts.
	GEvalSteps map[string]string `json:"geval_steps"`
	// SpendCapUSD caps what the run may spend (absent: no cap).
	SpendCapUSD *float64 `json:"spend_cap_usd"`
	// NoCache asks the judge every time, even for requests answered
	// before (absent or false: identical answers are reused).
	NoCache bool `json:"no_cache"`
	// HedgeSlowCalls re-sends a call much slower than the run's others
	// (absent or true: at most one in 20 calls; false: never); each
	// re-send is a paid call.
	HedgeSlowCalls *bool `json:"hedge_slow_calls"`
}

// formValues writes the launch as the launch form would post it, so the
// API goes through the form's own parsing and checks (parseLaunchInput).
func (l APILaunch) formValues() url.Values {
	v := url.Values{}
	id := func(key string, n int64) {
		if n != 0 {
			v.Set(key, strconv.FormatInt(n, 10))
		}
	}
	id("dataset", l.DatasetID)
	id("rubric", l.RubricID)
	id("judge", l.JudgeID)
	v.Set("name", l.Name)
	v.Set("method", l.Method)
	// The indexes belong to the rubric named: criteria_of says so (without
	// it the form would also drop the typed G-Eval steps).
	id("criteria_of", l.RubricID)
	if l.Criteria == nil {
		// Absent means every criterion of the rubric.
		v.Set("criteria_all", "1")
	}
	for _, k := range l.Criteria {
		v.Add("criteria", strconv.Itoa(k))
	}
	s := l.Settings
	num := func(key string, x *float64) {
		if x != nil {
			v.Set(key, strconv.FormatFloat(*x, 'g', -1, 64))
			// A value given is a value chosen, even when it equals the
			// default the form would have shown (NaN equals nothing).
			v.Set(key+"_shown", "NaN")
		}
	}
	whole := func(key string, n *int) {
		if n != nil {
			v.Set(key, strconv.Itoa(*n))
		}
	}
	whole("rounds", s.Rounds)
	whole("batch_size", s.BatchSize)
	whole("samples", s.Samples)
	num("temperature", s.Temperature)
	num("top_p", s.TopP)
	if s.SampleTemperature != nil {
		v.Set("sample_temperature", strconv.FormatFloat(*s.SampleTemperature, 'g', -1, 64))
	}
	if s.MinReadableShare != nil {
		v.Set("min_readable_share", strconv.FormatFloat(*s.MinReadableShare, 'g', -1, 64))
	}
	if s.Seed != nil {
		v.Set("seed", strconv.FormatInt(*s.Seed, 10))
	}
	if s.SpendCapUSD != nil {
		v.Set("spend_cap_usd", strconv.FormatFloat(*s.SpendCapUSD, 'g', -1, 64))
	}
	if s.NoCache {
		v.Set("reuse_answers_shown", "1") // the box shown and left unticked
	}
	if s.HedgeSlowCalls != nil && !*s.HedgeSlowCalls {
		v.Set("hedge_slow_calls_shown", "1") // the box shown and left unticked
	}
	for key, val := range map[string]string{"procedure": s.Procedure, "composition": s.Composition, "sort_key": s.SortKey,
		"scoring": s.Scoring, "llmeval_scale": s.LLMEvalScale} {
		if val != "" {
			v.Set(key, val)
		}
	}
	if s.UseLogprobs != nil {
		v.Set("use_logprobs", map[bool]string{true: "1", false: "0"}[*s.UseLogprobs])
	}
	for k, steps := range s.GEvalSteps {
		v.Set("steps_"+k, steps)
	}
	return v
}

// APIRun is a run's status and settings.
type APIRun struct {
	ID           int64  `json:"id"`
	ProjectID    int64  `json:"project_id"`
	DatasetID    int64  `json:"dataset_id"`
	RubricID     *int64 `json:"rubric_id"`
	JudgeID      *int64 `json:"judge_id"`
	ExperimentID *int64 `json:"experiment_id"`
	ParentRunID  *int64 `json:"parent_run_id"`
	Variant      string `json:"variant"`
	Name         string `json:"name"`
	Method       string `json:"method"`
	Status       string `json:"status"`
	// WaitingForJudge is true while a running run waits for its judge (down,
	// or asked the run to wait); WaitingError says why and what happens
	// next ("" when not waiting). The run page shows "waiting for judge".
	WaitingForJudge bool   `json:"waiting_for_judge"`
	WaitingError    string `json:"waiting_error"`
	Finished        bool   `json:"finished"`
	Simulated       bool   `json:"simulated_judge"`
	Error           string `json:"error"`
	// Settings and MethodSettings are the ones the run's method reads
	// (methods.Method.Reads), as the JSON export states them.
	Settings       report.JSONSettings       `json:"settings"`
	MethodSettings report.MethodSettingsJSON `json:"method_settings"`
	Criteria       []string                  `json:"criteria"`
	Judge          models.JudgeSnapshot      `json:"judge"`
	BatchesTotal   int                       `json:"batches_total"`
	BatchesDone    int                       `json:"batches_done"`
	BatchesFailed  int                       `json:"batches_failed"`
	MissingScores  int                       `json:"missing_scores"`
	// ShortScores are the scores computed from fewer sampled answers than
	// asked (G-Eval's sampling, CloserLook), counted within the scores.
	ShortScores int `json:"short_scores"`
	// TooFewScores are the scores left missing because too few of their
	// sampled answers could be read (a run with a fewest readable answers
	// for a score), counted within the missing scores.
	TooFewScores int `json:"too_few_scores"`
	Calls        int `json:"calls"`
	// CachedCalls are the calls answered from the judge answer cache (no
	// request sent, no cost), counted within Calls.
	CachedCalls int `json:"cached_calls"`
	// Retries counts the judge's HTTP attempts beyond the first of each
	// call (each may be billed; the run page shows them as "Retries").
	Retries int `json:"retries"`
	// ProbeCalls counts the tiny requests sent while the run waited for
	// its judge to answer again, with their tokens and cost at the run's
	// prices (null when unknown): paid calls when answered, outside the
	// run's calls, tokens and cost, which stay the batches' figures.
	ProbeCalls            int         `json:"probe_calls"`
	ProbePromptTokens     int         `json:"probe_prompt_tokens"`
	ProbeCompletionTokens int         `json:"probe_completion_tokens"`
	ProbeCostUSD          *report.USD `json:"probe_cost_usd"`
	// CachedPromptTokens and CachedCompletionTokens are what those calls
	// cost when first paid for (0 when not kept), outside the run's tokens.
	CachedPromptTokens     int `json:"cached_prompt_tokens"`
	CachedCompletionTokens int `json:"cached_completion_tokens"`
	// RubricVersion is the version of the stored rubric the run used (nil
	// when none was recorded); LabelledExamples counts the labelled
	// examples its criteria showed the judge in every prompt.
	RubricVersion    *int        `json:"rubric_version"`
	LabelledExamples int         `json:"labelled_examples"`
	PromptTokens     int         `json:"prompt_tokens"`
	CompletionTokens int         `json:"completion_tokens"`
	CostUSD          *report.USD `json:"cost_usd"`
	CreatedAt        stamp.Time  `json:"created_at"`
	StartedAt        *stamp.Time `json:"started_at"`
	FinishedAt       *stamp.Time `json:"finished_at"`
	// ArchivedAt is when the run was archived, nil when it is not: an
	// archived run is left out of the lists but opens by its id, and
	// said nothing of it before.
	ArchivedAt *stamp.Time `json:"archived_at"`
	// ElapsedSeconds is how long the run has been going (null before it
	// started): paused time, and time finished before a resume, left out;
	// PausedSeconds is that time.
	ElapsedSeconds *float64 `json:"elapsed_seconds"`
	PausedSeconds  float64  `json:"paused_seconds"`
	// Events are what happened to the run's execution that its counters
	// do not show (a worker lost its lease, another took the run over),
	// oldest first; only GET /api/v1/runs/{id} lists them.
	Events *[]APIRunEvent `json:"events,omitempty"`
}

// APIRunEvent is one of a run's events: kind is lease_lost, taken_over,
// resumed, requeued, late_count (a call's answer or failure counted,
// or stored, after the run ended; also G-Eval's steps call, a call
// answered from the answer cache, a probe or a failed attempt) or resent_slow_calls (slow calls the run re-sent,
// Settings.HedgeSlowCalls); worker the worker (lease owner) it is about.
type APIRunEvent struct {
	At      stamp.Time `json:"at"`
	Kind    string     `json:"kind"`
	Worker  string     `json:"worker"`
	Message string     `json:"message"`
}

func apiRun(r models.Run) APIRun {
	out := APIRun{ID: r.ID, ProjectID: r.ProjectID, DatasetID: r.DatasetID, RubricID: r.RubricID, JudgeID: r.JudgeID,
		ExperimentID: r.ExperimentID, ParentRunID: r.ParentRunID, Variant: r.Variant, Name: r.Name, Method: r.Method,
		Status: r.Status, Finished: r.Finished(), Simulated: r.Simulated, Error: r.ShownError(), Settings: report.SettingsJSON(r),
		MethodSettings: report.RunMethodSettingsJSON(r), Criteria: []string{}, Judge: r.JudgeSnapshot.Shown(), BatchesTotal: r.BatchesTotal,
		BatchesDone: r.BatchesDone, BatchesFailed: r.BatchesFailed, MissingScores: r.MissingScores, ShortScores: r.ShortScores, TooFewScores: r.TooFewScores, Calls: r.Calls,
		CachedCalls: r.CachedCalls, Retries: r.Retries, CachedPromptTokens: r.CachedPromptTokens, CachedCompletionTokens: r.CachedCompletionTokens, RubricVersion: r.RubricVersion,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, CostUSD: report.USDOf(r.CostSoFar()), CreatedAt: stamp.Of(r.CreatedAt),
		StartedAt: stamp.OfPtr(r.StartedAt), FinishedAt: stamp.OfPtr(r.FinishedAt), ArchivedAt: stamp.OfPtr(r.ArchivedAt), ProbeCalls: r.ProbeCalls, ProbePromptTokens: r.ProbePromptTokens,
		ProbeCompletionTokens: r.ProbeCompletionTokens, ProbeCostUSD: report.USDOf(r.ProbeCostUSD())}
	if out.Method == "" {
		out.Method = models.MethodBatchEval
	}
	if r.WaitingForJudge() {
		out.WaitingForJudge, out.WaitingError = true, r.ShownWaitingError()
	}
	out.ElapsedSeconds, out.PausedSeconds = report.RunSeconds(r, time.Now())
	for _, c := range r.RubricSnapshot.Criteria {
		out.Criteria = append(out.Criteria, c.Name)
		out.LabelledExamples += len(c.Examples)
	}
	return out
}

// APIExperiment is an experiment with one summary per run.
type APIExperiment struct {
	ID        int64      `json:"id"`
	ProjectID int64      `json:"project_id"`
	DatasetID int64      `json:"dataset_id"`
	Name      string     `json:"name"`
	CreatedAt stamp.Time `json:"created_at"`
	Criteria  []string   `json:"criteria"`
	// AverageNote says which criteria the runs' averages leave out and
	// why (every run is averaged over the criteria all finished runs have
	// a Pearson r for); "" when none is left out.
	AverageNote string `json:"average_note"`
	// HumansNote says on which criteria the runs' correlations are with
	// different human ratings (a run recomputed with browser ratings) and
	// which each reads there, as the experiment page does; absent when
	// they read the same.
	HumansNote string             `json:"humans_note,omitempty"`
	Runs       []APIExperimentRun `json:"runs"`
}

// APIExperimentRun is one row of the experiment table. Figures that cannot
// be computed yet (no scores) are null, never 0.
type APIExperimentRun struct {
	Run APIRun `json:"run"`
	// Pearson and Spearman are per criterion, in the experiment's order.
	Pearson         []*float64           `json:"pearson"`
	Spearman        []*float64           `json:"spearman"`
	AveragePearson  *float64             `json:"average_pearson"`
	AverageSpearman *float64             `json:"average_spearman"`
	TokensPerSample *float64             `json:"tokens_per_sample"`
	CostPerSample   *report.USDPerSample `json:"cost_per_sample_usd"`
	// PartlyCached says that the answer cache answered some of the run's
	// calls but not all: tokens and cost per sample are then what the run
	// paid for its other calls, less than its method costs.
	PartlyCached bool `json:"partly_cached"`
	// CachedAsPaid says that the run's calls answered from the answer
	// cache are counted in tokens and cost per sample at what they cost
	// when first paid for: the figures are its method's, comparable.
	CachedAsPaid bool `json:"cached_counted_as_paid"`
	Failures     int  `json:"failures"`
	Partial      bool `json:"partial"`
}

// APICompareCost is what one compared run's calls cost beyond the run
// object's calls, tokens and cost_usd: the run page's words and the cost
// per sample of its dataset.
type APICompareCost struct {
	CostText      string               `json:"cost_text"`
	CostPerSample *report.USDPerSample `json:"cost_per_sample_usd"`
	// CachedAsPaid says that calls the answer cache answered are counted
	// in cost_per_sample_usd at what they cost when first paid for.
	CachedAsPaid bool `json:"cached_counted_as_paid"`
}

// APIComparison is two runs side by side on one criterion.
type APIComparison struct {
	A           APIRun          `json:"a"`
	B           APIRun          `json:"b"`
	CostA       APICompareCost  `json:"a_cost"`
	CostB       APICompareCost  `json:"b_cost"`
	Criterion   int             `json:"criterion"`
	Name        string          `json:"criterion_name"`
	SameDataset bool            `json:"same_dataset"`
	Pearson     APICorrelation  `json:"pearson"`
	Spearman    APICorrelation  `json:"spearman"`
	Reading     string          `json:"reading"`
	Matched     int             `json:"matched"`
	Unmatched   int             `json:"unmatched"`
	Rows        []APICompareRow `json:"rows"`
	// MissingA and MissingB are each run's missing scores on the compared
	// criterion, as its card on the compare page says them; null while
	// the runs' figures are not read yet.
	MissingA *APICompareMissing `json:"a_missing"`
	MissingB *APICompareMissing `json:"b_missing"`
	// Agreement is the compare page's verdict on which run agrees better
	// with the human ratings, with its paired tests.
	Agreement APIAgreement `json:"agreement"`
}

// APICompareMissing is one compared run's missing scores on the compared
// criterion: samples without a final score (which its figures leave out;
// pending of them not judged yet while the run is going) and its round
// scores missing because the answer could not be read, the call got no
// answer, or too few of a unit's sampled answers could be read; Text is
// the compare page's sentences.
type APICompareMissing struct {
	Samples    int    `json:"samples"`
	NoFinal    int    `json:"no_final_score"`
	Pending    int    `json:"not_judged_yet"`
	Unreadable int    `json:"unreadable"`
	NoAnswer   int    `json:"no_answer"`
	TooFew     int    `json:"too_few_readable"`
	Text       string `json:"text"`
}

// apiCompareMissing is m as the API gives it, nil when unknown.
func apiCompareMissing(run models.Run, m web.CompareMissing) *APICompareMissing {
	if !m.Known {
		return nil
	}
	c := m.Counts
	noAnswer := min(max(c.NoAnswer, 0), c.Missing)
	return &APICompareMissing{Samples: m.Samples, NoFinal: m.NoFinal, Pending: m.Pending,
		Unreadable: max(c.Missing-noAnswer-c.TooFew, 0), NoAnswer: noAnswer, TooFew: c.TooFew, Text: web.CompareMissingText(run, m)}
}

// The states of a comparison's agreement verdict (APIAgreement.Status).
const (
	// AgreementComputed: the paired tests are done; reading is the verdict.
	AgreementComputed = "computed"
	// AgreementPending: the paired tests of two large runs are being
	// computed in the background; ask again after retry_after_seconds.
	AgreementPending = "pending"
	// AgreementNoHumans: the criterion has no human ratings to agree with.
	AgreementNoHumans = "no_human_ratings"
	// AgreementDifferentCriteria: the runs judged different criteria, so
	// their agreement is measured against different ratings: no verdict.
	AgreementDifferentCriteria = "different_criteria"
)

// APIAgreement is which run agrees better with the human ratings, as the
// compare page says it: the reading is the page's sentence (it follows
// Williams' t on Pearson's r, and says when Zou's interval reads the
// other way); null while pending.
type APIAgreement struct {
	Status            string  `json:"status"`
	Reading           *string `json:"reading"`
	RetryAfterSeconds *int    `json:"retry_after_seconds"`
	LastAttemptFailed bool    `json:"last_attempt_failed"`
	// HumansNote is the compare page's note that the two reports read
	// different human ratings; absent when they read the same.
	HumansNote string `json:"humans_note,omitempty"`
	// PairedN is the samples the differences are over (both runs scored
	// them and the humans rated them), OwnNA and OwnNB those of each
	// run's own agreement with the humans (its report's Pearson r); all
	// null unless the differences are computed.
	PairedN *int `json:"paired_n"`
	OwnNA   *int `json:"a_own_n"`
	OwnNB   *int `json:"b_own_n"`
	// PairedNote is the compare page's note on those counts, present
	// only when they differ.
	PairedNote  string                   `json:"paired_note,omitempty"`
	Differences []APIAgreementDifference `json:"differences"`
}

// APIAgreementDifference is one coefficient's paired comparison of the two
// runs' agreement with the humans (figures null when undefined).
type APIAgreementDifference struct {
	Method   string          `json:"method"`
	A        *float64        `json:"a"`
	B        *float64        `json:"b"`
	Diff     *float64        `json:"difference"`
	CILow    *float64        `json:"ci_low"`
	CIHigh   *float64        `json:"ci_high"`
	Interval string          `json:"interval"`
	N        int             `json:"n"`
	Missing  int             `json:"missing"`
	Tests    []APIPairedTest `json:"tests"`
	// Resamples and ResamplesUsed say how many bootstrap resamples the
	// interval is taken from, and ResamplesNote says it as the page
	// does; present only when some were left out (a coefficient
	// undefined on them).
	Resamples     *int   `json:"resamples,omitempty"`
	ResamplesUsed *int   `json:"resamples_used,omitempty"`
	ResamplesNote string `json:"resamples_note,omitempty"`
}

// APIPairedTest is one paired test of a difference, the one the reading
// follows first; p is null when undefined.
type APIPairedTest struct {
	Name string   `json:"name"`
	P    *float64 `json:"p"`
}

// apiAgreement turns the compare page's agreement into its API shape.
func apiAgreement(v web.CompareView) APIAgreement {
	out := APIAgreement{Differences: []APIAgreementDifference{}}
	if v.HasHuman && !v.DifferentCriteria {
		out.HumansNote = v.HumansNote
	}
	reading := func(s string) *string { return &s }
	switch {
	case !v.HasHuman:
		out.Status, out.Reading = AgreementNoHumans, reading(web.NoHumanAgreementText)
	case v.DifferentCriteria:
		out.Status, out.Reading = AgreementDifferentCriteria, reading(v.AgreementReading)
	case v.AgreementPending != nil:
		secs := v.AgreementPending.RefreshSeconds
		out.Status, out.RetryAfterSeconds, out.LastAttemptFailed = AgreementPending, &secs, v.AgreementPending.LastFailed
	default:
		out.Status, out.Reading = AgreementComputed, reading(v.AgreementReading)
		if n, nA, nB, ok := pairedSampleCounts(v.Agreement, v.HumanA, v.HumanB); ok {
			out.PairedN, out.OwnNA, out.OwnNB = &n, &nA, &nB
			if n != nA || n != nB {
				out.PairedNote = fmt.Sprintf("The differences are over the %d samples that both runs scored and the humans rated; "+
					"each run's own agreement with the humans (its report's Pearson r, GET /api/v1/runs/{id}/results) is over its own %d (A) and %d (B), "+
					"so its figure there can differ from a and b here.", n, nA, nB)
			}
		}
	}
	for _, d := range v.Agreement {
		ad := APIAgreementDifference{Method: string(d.Method), A: finite(d.A), B: finite(d.B), Diff: finite(d.Diff),
			CILow: finite(d.CILow), CIHigh: finite(d.CIHigh), Interval: d.Interval, N: d.N, Missing: d.Missing, Tests: []APIPairedTest{}}
		for _, t := range d.Tests {
			ad.Tests = append(ad.Tests, APIPairedTest{Name: t.Name, P: finite(t.P)})
		}
		if d.LeftOutResamples() {
			drawn, used := d.Resamples, d.ResamplesUsed
			ad.Resamples, ad.ResamplesUsed, ad.ResamplesNote = &drawn, &used, web.ResamplesNote(d)
		}
		out.Differences = append(out.Differences, ad)
	}
	return out
}

// APICorrelation is a coefficient with its p-value; null when undefined.
type APICorrelation struct {
	Coef    *float64 `json:"coef"`
	P       *float64 `json:"p"`
	N       int      `json:"n"`
	Missing int      `json:"missing"`
}

// APICompareRow is one sample judged by both runs (scores null when
// unreadable; human, a and b written as GET /api/v1/runs/{id}/results
// writes the sample's human and final, so they read the same there;
// unit_* are the scores mapped onto 0-1, written without the noise of
// the division, and unit_difference is unit_a − unit_b worked
// out in decimals, the exact difference of the two numbers given, which
// the compare page rounds: see unitDifference).
type APICompareRow struct {
	RowID      int64             `json:"row_id"`
	ExternalID string            `json:"sample_id"`
	Human      *report.JSONMean  `json:"human"`
	A          *report.JSONScore `json:"a"`
	B          *report.JSONScore `json:"b"`
	UnitA      *float64          `json:"unit_a"`
	UnitB      *float64          `json:"unit_b"`
	Diff       *json.Number      `json:"unit_difference"`
}

// apiUnitDifference is a compared row's difference as the API writes it:
// the exact decimal the page rounds; null when either score is missing.
func apiUnitDifference(r web.CompareRow) *json.Number {
	if r.Diff == nil {
		return nil
	}
	if r.DiffDecimal == "" {
		return (*json.Number)(finiteText(*r.Diff))
	}
	n := json.Number(r.DiffDecimal)
	return &n
}

// finiteText is v as the shortest decimal that reads back as it; nil when
// NaN or infinite.
func finiteText(v float64) *string {
	if finite(v) == nil {
		return nil
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	return &s
}

// finite is a figure as JSON: nil when NaN or infinite.
func finite(v float64) *float64 {
	if v != v || v > 1e308 || v < -1e308 {
		return nil
	}
	return &v
}

// ---- handlers ----

// apiCreated answers 201 with v and, in Location, the address that reads
// the new object again (RFC 9110 §15.3.2): a script keeps that address
// instead of building it from the id.
func apiCreated(c echo.Context, location string, v any) error {
	c.Response().Header().Set(echo.HeaderLocation, location)
	return c.JSON(http.StatusCreated, v)
}

// apiListProjects lists the workspace's active projects, oldest first: the
// page's projects and one more are read in the database, not every project
// of the workspace (TestAPIListsReadTheirPage).
func (h *Handlers) apiListProjects(c echo.Context) error {
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	ps, err := h.DB.ListProjectsAfter(c.Request().Context(), h.workspaceID(c), after, limit+1)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, keysetPage(ps, limit, func(p models.Project) int64 { return p.ID }, apiProject))
}

func (h *Handlers) apiCreateProject(c echo.Context) error {
	var in struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	p := models.Project{WorkspaceID: h.workspaceID(c), Name: strings.TrimSpace(in.Name), Description: strings.TrimSpace(in.Description)}
	if err := h.DB.CreateProject(c.Request().Context(), &p); err != nil {
		return err
	}
	return apiCreated(c, "/api/v1/projects/"+strconv.FormatInt(p.ID, 10), apiProject(p))
}

func (h *Handlers) apiGetProject(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	// The first page (of the largest size) of each, read in the
	// database: a project of thousands of datasets read them all.
	ctx, ws := c.Request().Context(), h.workspaceID(c)
	ds, err := h.DB.ListDatasetsAfter(ctx, ws, p.ID, 0, apiMaxLimit+1)
	if err != nil {
		return err
	}
	rs, err := h.DB.ListRubricsAfter(ctx, ws, p.ID, 0, apiMaxLimit+1)
	if err != nil {
		return err
	}
	dp := keysetPage(ds, apiMaxLimit, func(d models.Dataset) int64 { return d.ID }, apiDataset)
	rp := keysetPage(rs, apiMaxLimit, func(r models.Rubric) int64 { return r.ID }, apiRubric)
	out := APIProjectDetail{APIProject: apiProject(p), Datasets: dp.Items, Rubrics: rp.Items}
	next := func(list, cursor string) string {
		if cursor == "" {
			return ""
		}
		return fmt.Sprintf("/api/v1/projects/%d/%s?limit=%d&cursor=%s", p.ID, list, apiMaxLimit, cursor)
	}
	out.DatasetsNext, out.RubricsNext = next("datasets", dp.NextCursor), next("rubrics", rp.NextCursor)
	return c.JSON(http.StatusOK, out)
}

// apiListDatasets is a page of the project's active datasets, oldest first.
func (h *Handlers) apiListDatasets(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	ds, err := h.DB.ListDatasetsAfter(c.Request().Context(), h.workspaceID(c), p.ID, after, limit+1)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, keysetPage(ds, limit, func(d models.Dataset) int64 { return d.ID }, apiDataset))
}

// apiListRubrics is a page of the project's active rubrics, oldest first.
func (h *Handlers) apiListRubrics(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	rs, err := h.DB.ListRubricsAfter(c.Request().Context(), h.workspaceID(c), p.ID, after, limit+1)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, keysetPage(rs, limit, func(r models.Rubric) int64 { return r.ID }, apiRubric))
}

// apiListExperiments is a page of the workspace's active experiments (of
// one project with ?project_id=), oldest first, each with its runs' ids.
func (h *Handlers) apiListExperiments(c echo.Context) error {
	project, err := h.projectFilter(c)
	if err != nil {
		return err
	}
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	ctx, ws := c.Request().Context(), h.workspaceID(c)
	es, err := h.DB.ListExperimentsAfter(ctx, ws, project, after, limit+1)
	if err != nil {
		return err
	}
	page := keysetPage(es, limit, func(e models.Experiment) int64 { return e.ID }, func(e models.Experiment) models.Experiment { return e })
	ids := make([]int64, len(page.Items))
	for i, e := range page.Items {
		ids[i] = e.ID
	}
	runs, err := h.DB.ExperimentRunIDs(ctx, ws, ids)
	if err != nil {
		return err
	}
	out := Page[APIExperimentItem]{Items: make([]APIExperimentItem, 0, len(page.Items)), NextCursor: page.NextCursor}
	for _, e := range page.Items {
		out.Items = append(out.Items, APIExperimentItem{ID: e.ID, ProjectID: e.ProjectID, DatasetID: e.DatasetID, Name: e.Name,
			CreatedAt: stamp.Of(e.CreatedAt), RunIDs: nonNil(runs[e.ID])})
	}
	return c.JSON(http.StatusOK, out)
}

// projectFilter reads a list's ?project_id=: 0 when absent. A project that
// does not exist (a typo, another workspace's, one in the trash) is a 404,
// not an empty list a script reads as "none yet".
func (h *Handlers) projectFilter(c echo.Context) (int64, error) {
	q := c.QueryParam("project_id")
	if q == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(q, 10, 64)
	if err != nil || n <= 0 {
		return 0, models.Errorf(models.EInvalid, "project_id %q is not a project id", q)
	}
	if _, err := h.DB.FindProject(c.Request().Context(), h.workspaceID(c), n); err != nil {
		return 0, err
	}
	return n, nil
}

// apiUpload takes a multipart upload (field "file", CSV/JSONL/JSON) the way
// the browser's upload step does and answers the mapping step's material.
func (h *Handlers) apiUpload(c echo.Context) error {
	if _, err := h.findProject(c); err != nil {
		return err
	}
	u, _, t, err := h.acceptUpload(c, false)
	if status, ok := uploadQuotaStatus(err); ok && status == http.StatusRequestEntityTooLarge {
		return echo.NewHTTPError(status, models.ErrorMessage(err))
	}
	if err != nil { // past the quota with uploads waiting: EConflict, 409
		if errors.Is(err, errUploadTooLarge) {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, models.ErrorMessage(err))
		}
		return err
	}
	m := dataimport.SuggestMapping(t.Table)
	out := APIUpload{Token: u.Token, Filename: u.Filename, Format: u.Format, Rows: t.Rows, Columns: nonNil(t.Columns),
		SuggestedMapping: APIMapping{IDColumn: m.IDColumn, AnnotatorColumn: m.AnnotatorColumn, Fields: nonNil(m.Fields),
			RatingColumns: nonNil(m.RatingColumns)}, ReadNotes: nonNil(readNotes(t.Read, t.Renamed, nil)), IDNotes: apiIDNotes(idNotes(t.Table, m), t),
		Preview: [][]string{}, PreviewTruncated: [][]bool{}, PreviewCellChars: previewCellRunes}
	for _, rec := range t.Preview(previewRows) {
		cells, cut := make([]string, len(t.Columns)), make([]bool, len(t.Columns))
		for i, col := range t.Columns {
			cells[i] = shortenText(rec.Values[col], previewCellRunes)
			cut[i] = cells[i] != rec.Values[col]
		}
		out.Preview = append(out.Preview, cells)
		out.PreviewTruncated = append(out.PreviewTruncated, cut)
	}
	return c.JSON(http.StatusCreated, out)
}

// apiIDNotes are the mapping step's id notes in the API's terms: the
// browser's words, the repeated values, and what to send instead of what
// to click.
func apiIDNotes(notes []web.IDNote, t uploadSample) []APIIDNote {
	out := []APIIDNote{}
	for _, n := range notes {
		a := APIIDNote{Column: n.Column, Message: n.Summary(), Repeated: []APIRepeatedID{}, RepeatedIDs: n.RepeatedIDs,
			RepeatedRows: n.RepeatedRows, EmptyRows: n.EmptyRows, AnnotatorColumn: n.AnnotatorColumn}
		var examples []string
		for _, e := range n.Examples {
			a.Repeated = append(a.Repeated, APIRepeatedID{ID: e.ID, Rows: e.Rows})
			examples = append(examples, fmt.Sprintf("%q (%d %s)", e.ID, e.Rows, plural(e.Rows, "row", "rows")))
		}
		if len(examples) > 0 {
			a.Message += " Most repeated: " + strings.Join(examples, ", ") + "."
		}
		switch {
		case n.PerAnnotator && n.AnnotatorColumn != "":
			a.Message += fmt.Sprintf(" Rows sharing an id carry different ratings in %s: the file probably has one row per annotator. "+
				"Send a mapping with id_column %q and annotator_column %q: rows of one id then become one sample rated with the annotators' average.",
				quoteAll(n.RatingsDiffer), n.Column, n.AnnotatorColumn)
		case n.PerAnnotator:
			a.Message += fmt.Sprintf(" Rows sharing an id carry different ratings in %s: the file probably has one row per annotator. "+
				"Send a mapping with id_column %q and the column naming the annotator as annotator_column.", quoteAll(n.RatingsDiffer), n.Column)
		case len(n.TextDiffers) > 0:
			a.Message += fmt.Sprintf(" Rows sharing an id also differ in %s: they look like different samples under one id, not one sample rated by several annotators. In the file, give each sample its own id.",
				quoteAll(n.TextDiffers))
		case n.RepeatedIDs > 0:
			a.Message += " If these are the same samples written twice, remove the copies; if they are different samples, give them different ids."
		}
		if len(t.Records) < t.Rows {
			a.Message += fmt.Sprintf(" Counted in the first %d rows; the import checks every row.", len(t.Records))
		}
		out = append(out, a)
	}
	return out
}

// quoteAll writes names quoted and comma-separated.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// apiCreateDataset applies a mapping to a pending upload, as the browser's
// mapping step does.
func (h *Handlers) apiCreateDataset(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	var in APINewDataset
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.UploadToken) == "" {
		// Missing, not expired: looking an empty token up answered 404
		// "that upload has expired", sending the caller to upload again.
		return models.Errorf(models.EInvalid,
			"\"upload_token\" is missing: send the upload_token that POST /api/v1/projects/%d/uploads answered for the file", p.ID)
	}
	u, t, err := h.pendingTable(c, in.UploadToken, false, true)
	if err != nil {
		return err
	}
	m := dataimport.SuggestMapping(t.Table)
	if in.Mapping != nil {
		m = dataimport.Mapping{IDColumn: in.Mapping.IDColumn, AnnotatorColumn: in.Mapping.AnnotatorColumn,
			Fields: in.Mapping.Fields, RatingColumns: in.Mapping.RatingColumns}
		for i, f := range m.Fields {
			if strings.TrimSpace(f.Label) == "" {
				// The API's documented rule: a blank label is the column's
				// name (the browser offers SuggestedLabel instead).
				m.Fields[i].Label = f.Column
			}
		}
	}
	if in.GroupColumn != "" && groupColumn(in.GroupColumn, t.Table) == "" {
		return models.Errorf(models.EInvalid, "group_column %q is not a column of the upload", in.GroupColumn)
	}
	ds, _, err := h.importUpload(c.Request().Context(), p, u, t, strings.TrimSpace(in.Name), m, in.GroupColumn)
	if err != nil {
		var ve *dataimport.ValidationError
		if errors.As(err, &ve) {
			return models.Errorf(models.EInvalid, "%s", ve.Error())
		}
		return err
	}
	out := apiDataset(ds)
	return apiCreated(c, "/api/v1/datasets/"+strconv.FormatInt(ds.ID, 10), out)
}

func (h *Handlers) apiGetDataset(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	ds, err := h.DB.FindDataset(c.Request().Context(), h.workspaceID(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, apiDataset(ds))
}

func (h *Handlers) apiCreateRubric(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	return h.apiSaveRubric(c, models.Rubric{WorkspaceID: h.workspaceID(c), ProjectID: p.ID}, http.StatusCreated)
}

func (h *Handlers) apiUpdateRubric(c echo.Context) error {
	r, _, err := h.findRubric(c)
	if err != nil {
		return err
	}
	return h.apiSaveRubric(c, r, http.StatusOK)
}

// apiSaveRubric stores the rubric of the request body over r, with the
// same checks as the editor (models.SaveRubric), and, for its fields, that
// each column is one of the project's datasets'.
func (h *Handlers) apiSaveRubric(c echo.Context, r models.Rubric, status int) error {
	var expect models.Expectation
	if r.ID != 0 {
		var err error
		if expect, err = ifMatch(c); err != nil {
			return err
		}
		if err := staleRead(expect, r.Revision(), "rubric", "/api/v1/rubrics/"+strconv.FormatInt(r.ID, 10)); err != nil {
			return err
		}
	}
	var in APIRubricInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if r.ID != 0 && in.ID != 0 && in.ID != r.ID {
		return models.Errorf(models.EInvalid, "the body's id %d is not this rubric's (%d): the address says which rubric to replace; leave id out or send this rubric's", in.ID, r.ID)
	}
	if len(in.Criteria) > maxCriteria {
		return models.Errorf(models.EInvalid, "a rubric has at most %d criteria", maxCriteria)
	}
	criteria, err := apiCriteria(in.Criteria)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	datasets, err := h.DB.ListDatasets(ctx, r.WorkspaceID, r.ProjectID)
	if err != nil {
		return err
	}
	// As in the editor, a column the stored criterion of that name already
	// named is kept when no dataset has it any more: a rubric read and sent
	// back as it is saves.
	cols := columnsOf(criteria)
	for i := range cols {
		for _, cr := range r.Criteria {
			if cr.Name == cols[i].Name {
				cols[i].Kept = append([]string{cr.HumanColumn}, cr.AnnotatorColumns...)
			}
		}
	}
	for _, p := range unknownRatingColumns(cols, datasets, apiColumnWords) {
		if !p.Kept {
			return models.Errorf(models.EInvalid, "%s", p.Message)
		}
	}
	if in.Fields != nil {
		fields, err := h.apiRubricFields(ctx, r.WorkspaceID, r.ProjectID, in.Fields)
		if err != nil {
			return err
		}
		r.Fields = fields
	}
	r.Name, r.Task, r.Criteria = strings.TrimSpace(in.Name), strings.TrimSpace(in.Task), criteria
	if err := h.DB.SaveRubricIf(ctx, &r, expect); err != nil {
		return changedSinceRead(err, "rubric", "/api/v1/rubrics/"+strconv.FormatInt(r.ID, 10))
	}
	stored, err := h.DB.FindRubric(ctx, r.WorkspaceID, r.ID)
	if err != nil {
		return err
	}
	setETag(c, stored.Revision())
	if status == http.StatusCreated {
		return apiCreated(c, "/api/v1/rubrics/"+strconv.FormatInt(stored.ID, 10), apiRubric(stored))
	}
	return c.JSON(status, apiRubric(stored))
}

// apiCriteria reads the criteria of a rubric body. Each must give lo and
// hi: left out, they would read as 0, and a criterion without them was
// refused as "the range [0, 0] is empty" (or, with hi alone, judged on a
// scale from 0 nobody chose).
func apiCriteria(raw []json.RawMessage) ([]evaluator.Criterion, error) {
	out := make([]evaluator.Criterion, len(raw))
	for i, msg := range raw {
		if err := decodeJSONValue(msg, &out[i], fmt.Sprintf("criteria[%d]", i)); err != nil {
			return nil, err
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(msg, &keys); err != nil {
			return nil, jsonBodyError(err, fmt.Sprintf("criteria[%d]", i))
		}
		if _, ok := keys["rubric_scale"]; ok {
			// A run's record of the rubric's range under a method's own
			// scale (LLM-Eval), never part of a rubric: lo and hi are.
			return nil, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("the request body is not the JSON this endpoint takes: criteria[%d]: unknown field \"rubric_scale\" (a criterion's scale is lo and hi)", i))
		}
		cr := &out[i]
		cr.Name, cr.Description = strings.TrimSpace(cr.Name), strings.TrimSpace(cr.Description)
		var missing []string
		for _, k := range []string{"lo", "hi"} {
			if v, ok := keys[k]; !ok || string(v) == "null" {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			who := fmt.Sprintf("criterion %d", i+1)
			if cr.Name != "" {
				who += fmt.Sprintf(" (%q)", cr.Name)
			}
			return nil, models.Errorf(models.EInvalid, "%s has no %s: give its lowest and highest score as lo and hi, e.g. \"lo\": 1, \"hi\": 5",
				who, strings.Join(missing, " and no "))
		}
	}
	return out, nil
}

// maxColumnsNamed caps the columns a refused field's message lists.
const maxColumnsNamed = 20

// apiRubricFields checks the fields of a rubric body: each names a column
// (trimmed), labelled with the column's name when the label is blank, and
// the column must be one of the project's datasets' (when it has any: a
// rubric may be written before its data is uploaded). A misspelt column
// would show the judge an empty text on every sample.
func (h *Handlers) apiRubricFields(ctx context.Context, ws, projectID int64, in []evaluator.Field) ([]evaluator.Field, error) {
	datasets, err := h.DB.ListDatasets(ctx, ws, projectID)
	if err != nil {
		return nil, err
	}
	columns := map[string]bool{}
	var names []string
	for _, d := range datasets {
		for _, col := range d.Columns {
			if !columns[col] {
				columns[col] = true
				names = append(names, strconv.Quote(col))
			}
		}
	}
	slices.Sort(names)
	// A wide file has hundreds of columns; a few show the spelling.
	if len(names) > maxColumnsNamed {
		names = append(names[:maxColumnsNamed], fmt.Sprintf("… (%d columns in all)", len(columns)))
	}
	fields := make([]evaluator.Field, len(in))
	for i, f := range in {
		f.Column, f.Label = strings.TrimSpace(f.Column), strings.TrimSpace(f.Label)
		if f.Column == "" {
			return nil, models.Errorf(models.EInvalid, "field %d names no column: give the dataset column the judge reads", i+1)
		}
		if f.Label == "" {
			f.Label = f.Column // the API's documented rule (openapi.yaml)
		}
		if len(datasets) > 0 && !columns[f.Column] {
			return nil, models.Errorf(models.EInvalid, "field %d: the column %q is in none of this project's datasets; use one of %s", i+1, f.Column, strings.Join(names, ", "))
		}
		fields[i] = f
	}
	return fields, nil
}

func (h *Handlers) apiGetRubric(c echo.Context) error {
	r, _, err := h.findRubric(c)
	if err != nil {
		return err
	}
	if notModified(c, r.Revision()) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.JSON(http.StatusOK, apiRubric(r))
}

// apiListJudges lists the workspace's active judges, oldest first (the
// simulated one in its place by id): the page's judges and one more are
// read in the database (TestAPIListsReadTheirPage).
func (h *Handlers) apiListJudges(c echo.Context) error {
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	js, err := h.DB.ListJudgesAfter(c.Request().Context(), h.workspaceID(c), after, limit+1)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, keysetPage(js, limit, func(j models.Judge) int64 { return j.ID }, apiJudge))
}

func (h *Handlers) apiGetJudge(c echo.Context) error {
	j, err := h.findJudge(c)
	if err != nil {
		return err
	}
	if notModified(c, j.Revision()) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.JSON(http.StatusOK, apiJudge(j))
}

// judgeForm turns the API's judge into the judge form's fields, so the
// form's checks (applyJudgeForm) apply; absent numbers keep base's.
func (in APIJudgeInput) judgeForm(base web.JudgeForm) web.JudgeForm {
	f := base
	f.Name, f.BaseURL, f.Model = strings.TrimSpace(in.Name), strings.TrimSpace(in.BaseURL), strings.TrimSpace(in.Model)
	f.APIKeyEnv = strings.TrimPrefix(strings.TrimSpace(in.APIKeyEnv), "$")
	if in.KeyHeader != nil {
		f.KeyHeader = strings.TrimSpace(*in.KeyHeader)
	}
	if in.TokenLimit != nil {
		f.TokenLimit = strings.TrimSpace(*in.TokenLimit)
	}
	if in.DefaultSamplingOnly != nil {
		f.DefaultSamplingOnly = *in.DefaultSamplingOnly
	}
	if in.ReasoningEffort != nil {
		f.ReasoningEffort = strings.TrimSpace(*in.ReasoningEffort)
	}
	if in.Temperature != nil {
		f.Temperature = formatNumber(*in.Temperature)
	}
	if in.TopP != nil {
		f.TopP = formatNumber(*in.TopP)
	}
	if in.MaxConcurrency != nil {
		f.MaxConcurrency = strconv.Itoa(*in.MaxConcurrency)
	}
	if in.TimeoutSeconds != nil {
		f.TimeoutSeconds = strconv.Itoa(*in.TimeoutSeconds)
	}
	f.PriceInput, f.PriceOutput = "", ""
	if in.PriceInputPerMTok != nil {
		f.PriceInput = formatNumber(*in.PriceInputPerMTok)
	}
	if in.PriceOutputPerMTok != nil {
		f.PriceOutput = formatNumber(*in.PriceOutputPerMTok)
	}
	f.ContextTokens = ""
	if in.ContextTokens != nil {
		f.ContextTokens = strconv.Itoa(*in.ContextTokens)
	}
	return f
}

// simulatedChanges names the settings of a PUT to the simulated judge
// that ask for another value than the judge has (f is the body applied
// over stored): every one but max_concurrency, which is all it takes. A
// setting left out, an empty text, or a null price or window asks for no
// change.
func (in APIJudgeInput) simulatedChanges(f, stored web.JudgeForm) []string {
	var changed []string
	add := func(name string, differs bool) {
		if differs {
			changed = append(changed, name)
		}
	}
	add("name", f.Name != "" && f.Name != strings.TrimSpace(stored.Name))
	add("base_url", f.BaseURL != "" && f.BaseURL != stored.BaseURL)
	add("model", f.Model != "" && f.Model != stored.Model)
	add("api_key", strings.TrimSpace(in.APIKey) != "")
	add("api_key_env", f.APIKeyEnv != "" && f.APIKeyEnv != stored.APIKeyEnv)
	add("key_header", f.KeyHeader != stored.KeyHeader)
	add("token_limit", f.TokenLimit != stored.TokenLimit)
	add("default_sampling_only", f.DefaultSamplingOnly != stored.DefaultSamplingOnly)
	add("temperature", f.Temperature != stored.Temperature)
	add("top_p", f.TopP != stored.TopP)
	add("timeout_seconds", f.TimeoutSeconds != stored.TimeoutSeconds)
	add("price_input_per_mtok", in.PriceInputPerMTok != nil && f.PriceInput != stored.PriceInput)
	add("price_output_per_mtok", in.PriceOutputPerMTok != nil && f.PriceOutput != stored.PriceOutput)
	add("context_tokens", in.ContextTokens != nil && f.ContextTokens != stored.ContextTokens)
	return changed
}

func (h *Handlers) apiCreateJudge(c echo.Context) error {
	var in APIJudgeInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	j := models.Judge{WorkspaceID: h.workspaceID(c), APIKey: strings.TrimSpace(in.APIKey)}
	if err := in.checkReadOnly(j); err != nil {
		return err
	}
	if err := applyJudgeForm(&j, in.judgeForm(newJudgeForm())); err != nil {
		return err
	}
	note := shortenPastedEndpoint(&j)
	if err := h.DB.SaveJudge(c.Request().Context(), &j, judgeCreated(c, j.APIKey != "")); err != nil {
		return err
	}
	// Answered as read back (times at the database's precision), as GET
	// answers it, so its ETag is the one a PUT is checked against.
	stored, err := h.DB.FindJudge(c.Request().Context(), j.WorkspaceID, j.ID)
	if err != nil {
		return err
	}
	setETag(c, stored.Revision())
	out := apiJudge(stored)
	out.BaseURLNote = note
	return apiCreated(c, "/api/v1/judges/"+strconv.FormatInt(j.ID, 10), out)
}

func (h *Handlers) apiUpdateJudge(c echo.Context) error {
	j, err := h.findJudge(c)
	if err != nil {
		return err
	}
	expect, err := ifMatch(c)
	if err != nil {
		return err
	}
	if err := staleRead(expect, j.Revision(), "judge", "/api/v1/judges/"+strconv.FormatInt(j.ID, 10)); err != nil {
		return err
	}
	var in APIJudgeInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if err := in.checkReadOnly(j); err != nil {
		return err
	}
	f := in.judgeForm(judgeFormOf(j))
	if j.Simulated {
		// As in the browser: the simulated judge only takes a concurrency.
		// Any other setting sent with another value than the judge's is
		// refused, naming it: saving the concurrency alone and answering
		// 200 told the caller its new name, model or prices were saved.
		stored := judgeFormOf(j)
		if changed := in.simulatedChanges(f, stored); len(changed) > 0 {
			return models.Errorf(models.EInvalid,
				"nothing was saved: the simulated judge is built in and takes only max_concurrency, so %s cannot be changed: send %s as GET /api/v1/judges/%d answers, or leave %s out",
				quotedList(changed), map[bool]string{true: "it", false: "them"}[len(changed) == 1], j.ID,
				map[bool]string{true: "it", false: "them"}[len(changed) == 1])
		}
		stored.MaxConcurrency = f.MaxConcurrency
		f = stored
		in.APIKey = ""
	}
	j.APIKey = strings.TrimSpace(in.APIKey)
	typedKey, oldKeyEnv := j.APIKey != "", j.APIKeyEnv
	if err := applyJudgeForm(&j, f); err != nil {
		return err
	}
	note := shortenPastedEndpoint(&j)
	ctx := c.Request().Context()
	if err := h.DB.SaveJudgeIf(ctx, &j, expect, judgeUpdated(c, typedKey, oldKeyEnv)); err != nil {
		return changedSinceRead(err, "judge", "/api/v1/judges/"+strconv.FormatInt(j.ID, 10))
	}
	stored, err := h.DB.FindJudge(ctx, j.WorkspaceID, j.ID)
	if err != nil {
		return err
	}
	setETag(c, stored.Revision())
	out := apiJudge(stored)
	out.BaseURLNote = note
	return c.JSON(http.StatusOK, out)
}

// apiPlanLaunch reads a launch body and plans it as the launch form would.
// An experiment (all is true) launches every method, so a method other
// than the default (batcheval, which a body shared with POST .../runs may
// name) is refused rather than ignored: the caller meant that method's one
// run and would otherwise start every method's runs.
func (h *Handlers) apiPlanLaunch(c echo.Context, all bool) (launchInput, *launchPlan, error) {
	p, err := h.findProject(c)
	if err != nil {
		return launchInput{}, nil, err
	}
	var l APILaunch
	if err := decodeJSON(c, &l); err != nil {
		return launchInput{}, nil, err
	}
	if l.DatasetID == 0 || l.RubricID == 0 || l.JudgeID == 0 {
		// Name the ones missing, so a script sees which of the three
		// it left out (or sent as 0).
		var missing []string
		for _, f := range []struct {
			name string
			id   int64
		}{{"dataset_id", l.DatasetID}, {"rubric_id", l.RubricID}, {"judge_id", l.JudgeID}} {
			if f.id == 0 {
				missing = append(missing, f.name)
			}
		}
		return launchInput{}, nil, models.Errorf(models.EInvalid,
			"nothing was launched: a launch names its dataset_id, rubric_id and judge_id, and %s %s missing: give the id of each (GET /api/v1/projects/%d lists the project's datasets and rubrics, GET /api/v1/judges the judges)",
			quotedList(missing), map[bool]string{true: "is", false: "are"}[len(missing) == 1], p.ID)
	}
	if all && l.Method != "" && l.Method != models.MethodBatchEval {
		return launchInput{}, nil, models.Errorf(models.EInvalid,
			"nothing was launched: an experiment launches every method, so it takes no \"method\" but the default (here %q): leave it out, or launch that one method with POST /api/v1/projects/%d/runs",
			l.Method, p.ID)
	}
	in := parseLaunchInput(l.formValues())
	pl, err := h.planLaunch(c.Request().Context(), p.ID, in)
	if err != nil || pl.rubric == nil {
		return in, pl, err
	}
	// The form can only tick criteria that exist; a script can name any.
	seen := map[int]bool{}
	for _, k := range l.Criteria {
		if k < 0 || k >= len(pl.rubric.Criteria) {
			return in, pl, models.Errorf(models.EInvalid, "criterion %d does not exist: rubric %q has criteria 0 to %d", k, pl.rubric.Name, len(pl.rubric.Criteria)-1)
		}
		if seen[k] {
			return in, pl, models.Errorf(models.EInvalid, "nothing was launched: \"criteria\" lists criterion %d (%q) more than once; list each criterion once",
				k, pl.rubric.Criteria[k].Name)
		}
		seen[k] = true
	}
	return in, pl, nil
}

// launchRefused is the error of a launch that the checks stopped. The
// checks' texts are the launch form's sentences ("The chosen dataset
// ..."); after "nothing was launched:" the first one goes on the sentence,
// so it starts in lower case.
func launchRefused(errs []string) error {
	return models.Errorf(models.EInvalid, "nothing was launched: %s", continueSentence(strings.Join(errs, " ")))
}

// continueSentence is s written to follow a colon within a sentence: its
// first letter in lower case, unless its first word is an acronym or a
// name in capitals ("CSV", "URL").
func continueSentence(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) {
		return s
	}
	if next, _ := utf8.DecodeRuneInString(s[size:]); unicode.IsUpper(next) {
		return s
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// apiLaunchRun launches a run; with an Idempotency-Key used before, it
// answers what that launch made instead (replayLaunch).
func (h *Handlers) apiLaunchRun(c echo.Context) error {
	k, keyed, done, err := h.beginKeyedLaunch(c, models.LaunchKeyRun)
	if done || err != nil {
		return err
	}
	in, pl, err := h.apiPlanLaunch(c, false)
	if err != nil {
		return err
	}
	run, errs, err := h.launchPlanned(c, in, pl)
	if keyed && errors.Is(err, models.ErrLaunchKeyTaken) {
		// A retry raced the launch it retries and lost: nothing was
		// launched; answer what the other one launched.
		if done, err := h.replayLaunch(c, k); done {
			return err
		}
	}
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return launchRefused(errs)
	}
	return apiCreated(c, "/api/v1/runs/"+strconv.FormatInt(run.ID, 10), apiRun(run))
}

// apiLaunchExperiment launches every method as one experiment; with an
// Idempotency-Key used before, it answers what that launch made instead.
func (h *Handlers) apiLaunchExperiment(c echo.Context) error {
	k, keyed, done, err := h.beginKeyedLaunch(c, models.LaunchKeyExperiment)
	if done || err != nil {
		return err
	}
	in, pl, err := h.apiPlanLaunch(c, true)
	if err != nil {
		return err
	}
	e, _, _, errs, err := h.launchAllPlanned(c, in, pl)
	if len(errs) > 0 {
		return launchRefused(errs)
	}
	if keyed && errors.Is(err, models.ErrLaunchKeyTaken) {
		// Lost the race to the launch it retries (nothing was made, though
		// e has the id of the experiment rolled back).
		if done, err := h.replayLaunch(c, k); done {
			return err
		}
	}
	if err != nil {
		if e.ID == 0 {
			return err
		}
		// Some runs were launched: the experiment exists and says which.
		h.Log.Error("launch all methods: partly launched", "experiment", e.ID, "err", err)
	}
	out, err := h.apiExperiment(c, e)
	if err != nil {
		return err
	}
	return apiCreated(c, "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10), out)
}

func (h *Handlers) apiListRuns(c echo.Context) error {
	var project int64
	if q := c.QueryParam("project_id"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil || n <= 0 {
			return models.Errorf(models.EInvalid, "project_id %q is not a project id", q)
		}
		// A project that does not exist (a typo, another workspace's, one
		// in the trash) is a 404, not an empty list a script reads as "no
		// runs yet".
		if _, err := h.DB.FindProject(c.Request().Context(), h.workspaceID(c), n); err != nil {
			return err
		}
		project = n
	}
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	// The page's runs and one more (is there a next page?), read in the
	// database: a workspace of thousands of runs reads a page, not every
	// run (TestRunsListReadsItsPage).
	runs, err := h.DB.ListRunsAfter(c.Request().Context(), h.workspaceID(c), models.RunFilter{ProjectID: project}, after, limit+1)
	if err != nil {
		return err
	}
	page := Page[APIRun]{Items: make([]APIRun, 0, min(len(runs), limit))}
	for _, r := range runs[:min(len(runs), limit)] {
		page.Items = append(page.Items, apiRun(r))
	}
	if len(runs) > limit {
		page.NextCursor = strconv.FormatInt(runs[limit-1].ID, 10)
	}
	return c.JSON(http.StatusOK, page)
}

func (h *Handlers) apiGetRun(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	evs, err := h.DB.RunEvents(c.Request().Context(), run.ID)
	if err != nil {
		return err
	}
	out := apiRun(run)
	list := make([]APIRunEvent, 0, len(evs))
	for _, ev := range evs {
		list = append(list, APIRunEvent{At: stamp.Of(ev.At), Kind: ev.Kind, Worker: ev.Worker, Message: ev.Message})
	}
	out.Events = &list
	return jsonWithETag(c, out)
}

func (h *Handlers) apiCancelRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.Runner.Cancel(c.Request().Context(), h.workspaceID(c), id); err != nil {
		return h.alreadyInState(c, id, err, func(r models.Run) bool { return r.Status == models.RunCancelled })
	}
	h.audit(c, models.AuditRunCancelled, "run "+strconv.FormatInt(id, 10), "")
	run, err := h.DB.FindRun(c.Request().Context(), h.workspaceID(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, apiRun(run))
}

// alreadyInState answers a refused cancel, pause or continue (err) whose
// run is already in the state the request asks for (in): 200 with the run,
// changing nothing, so a client that sends the request again because the
// first answer was lost hears success, and no audit line is written twice
// (the request that made the change wrote it). A transition that cannot
// be made (continuing a cancelled run, pausing a finished one) keeps its
// 409 and its message.
func (h *Handlers) alreadyInState(c echo.Context, id int64, err error, in func(models.Run) bool) error {
	if models.ErrorCode(err) != models.EConflict {
		return err
	}
	run, ferr := h.DB.FindRun(c.Request().Context(), h.workspaceID(c), id)
	if ferr != nil || !in(run) {
		return err
	}
	return c.JSON(http.StatusOK, apiRun(run))
}

// apiPauseRun pauses a queued or running run (pauseRun).
func (h *Handlers) apiPauseRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	run, err := h.Runner.Pause(c.Request().Context(), h.workspaceID(c), id)
	if err != nil {
		return h.alreadyInState(c, id, err, models.Run.Paused)
	}
	h.audit(c, models.AuditRunPaused, "run "+strconv.FormatInt(id, 10), "")
	return c.JSON(http.StatusOK, apiRun(run))
}

// APIContinue is the optional body of POST /api/v1/runs/{id}/continue.
type APIContinue struct {
	// SpendCapUSD, when given, is the run's new spending cap, saved only
	// if the run is continued; absent, the run keeps its cap.
	SpendCapUSD *float64 `json:"spend_cap_usd"`
}

// apiContinueRun queues a paused run again (continueRun).
func (h *Handlers) apiContinueRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	// The body is optional: none, or {}, continues with the run's cap.
	var in APIContinue
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, apiMaxJSONBody))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "the request body could not be read; send it again")
	}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := decodeJSONValue(data, &in, ""); err != nil {
			return err
		}
	}
	run, err := h.Runner.Continue(c.Request().Context(), h.workspaceID(c), id, models.Requeue{SpendCapUSD: in.SpendCapUSD})
	if err != nil {
		// Continued already: queued or running, with the cap this request
		// asks for (a retry asking another cap is refused as before, so a
		// cap is never dropped silently).
		return h.alreadyInState(c, id, err, func(r models.Run) bool {
			return (r.Status == models.RunQueued || r.Status == models.RunRunning) &&
				(in.SpendCapUSD == nil || (r.Settings.SpendCapUSD != nil && *r.Settings.SpendCapUSD == *in.SpendCapUSD))
		})
	}
	h.audit(c, models.AuditRunContinued, "run "+strconv.FormatInt(id, 10), "")
	return c.JSON(http.StatusOK, apiRun(run))
}

// apiRunResults is the run's report: the same document as the JSON
// export, its samples streamed from the database.
func (h *Handlers) apiRunResults(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	tag, err := h.runResultsTag(c.Request().Context(), run, "results")
	if err != nil {
		return err
	}
	if notModifiedWeak(c, tag) {
		return c.NoContent(http.StatusNotModified)
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	return answerPreparing(c, h.writeRunJSON(c.Request().Context(), run, c.Response()))
}

func (h *Handlers) apiGetExperiment(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	e, err := h.DB.FindExperiment(c.Request().Context(), h.workspaceID(c), id)
	if err != nil {
		return err
	}
	out, err := h.apiExperiment(c, e)
	if err != nil {
		// A run's figures being prepared: 503 with Retry-After.
		return answerPreparing(c, err)
	}
	return c.JSON(http.StatusOK, out)
}

// apiExperiment builds an experiment's table from the same figures as the
// experiment page (figuresOf).
func (h *Handlers) apiExperiment(c echo.Context, e models.Experiment) (APIExperiment, error) {
	ctx := c.Request().Context()
	runs, err := h.DB.ListExperimentRuns(ctx, h.workspaceID(c), e.ID)
	if err != nil {
		return APIExperiment{}, err
	}
	out := APIExperiment{ID: e.ID, ProjectID: e.ProjectID, DatasetID: e.DatasetID, Name: e.Name, CreatedAt: stamp.Of(e.CreatedAt),
		Criteria: []string{}, Runs: []APIExperimentRun{}}
	for _, r := range runs {
		if len(r.RubricSnapshot.Criteria) > len(out.Criteria) {
			out.Criteria = out.Criteria[:0]
			for _, c := range r.RubricSnapshot.Criteria {
				out.Criteria = append(out.Criteria, c.Name)
			}
		}
	}
	figs := make([]runFigures, 0, len(runs))
	for _, r := range runs {
		f, err := h.figuresOf(ctx, r)
		if err != nil {
			return out, err
		}
		figs = append(figs, f)
	}
	// The averages of the page's table: over the same criteria for every run.
	out.AverageNote = alignAverages(figs, out.Criteria).note
	if lead := humansNoteLead(figs, out.Criteria); lead != "" {
		out.HumansNote = lead + "Their correlations then differ partly because of the ratings, not the judges: " +
			"recompute the runs with the same human ratings to compare the judges alone."
	}
	for _, f := range figs {
		r := f.run
		row := APIExperimentRun{Run: apiRun(r), Pearson: make([]*float64, len(out.Criteria)), Spearman: make([]*float64, len(out.Criteria)),
			AveragePearson: finite(f.avgP), AverageSpearman: finite(f.avgS), TokensPerSample: finite(f.tokens),
			CostPerSample: perSampleUSD(r, f.cost), PartlyCached: r.PartlyCached() && f.cached, CachedAsPaid: f.fromCache, Failures: f.failed, Partial: f.partial}
		if f.rep != nil {
			for i, cr := range f.rep.Criteria {
				if i < len(out.Criteria) {
					row.Pearson[i], row.Spearman[i] = finite(cr.Pearson.Coef), finite(cr.Spearman.Coef)
				}
			}
		}
		out.Runs = append(out.Runs, row)
	}
	return out, nil
}

// perSampleUSD is a run's cost_per_sample_usd: what the experiment and
// compare pages show per sample. A run of the simulated judge paid
// nothing, which they show as $0; it was answered null, the document's
// "unknown", beside the run's own cost_usd of 0.
func perSampleUSD(run models.Run, cost *float64) *report.USDPerSample {
	if run.Simulated {
		var zero report.USDPerSample
		return &zero
	}
	return report.USDPerSampleOf(cost)
}

// apiCompare pairs two runs' samples (?a=, ?b=, ?criterion=) as the
// compare page does.
func (h *Handlers) apiCompare(c echo.Context) error {
	cmp, err := h.loadComparison(c)
	if err != nil {
		return err
	}
	v, err := h.compareView(c.Request().Context(), cmp, 0, apiCompareRows, true)
	if err != nil {
		return answerPreparing(c, err)
	}
	corr := func(coef, p float64, n, missing int) APICorrelation {
		return APICorrelation{Coef: finite(coef), P: finite(p), N: n, Missing: missing}
	}
	cost := func(run models.Run, cc web.CompareCost) APICompareCost {
		return APICompareCost{CostText: cc.Cost, CostPerSample: perSampleUSD(run, cc.PerSampleUSD), CachedAsPaid: cc.AsIfPaid}
	}
	out := APIComparison{A: apiRun(v.A), B: apiRun(v.B), CostA: cost(v.A, v.CostA), CostB: cost(v.B, v.CostB), Criterion: v.Criterion, Name: v.CritA.Name, SameDataset: v.SameDataset,
		Pearson:  corr(v.Pearson.Coef, v.Pearson.P, v.Pearson.N, v.Pearson.Missing),
		Spearman: corr(v.Spearman.Coef, v.Spearman.P, v.Spearman.N, v.Spearman.Missing),
		Reading:  v.Reading, Matched: v.Total, Unmatched: v.Unmatched, Rows: []APICompareRow{}, Agreement: apiAgreement(v),
		MissingA: apiCompareMissing(v.A, v.MissingA), MissingB: apiCompareMissing(v.B, v.MissingB)}
	for _, r := range v.Rows {
		out.Rows = append(out.Rows, APICompareRow{RowID: r.RowID, ExternalID: r.ExternalID, Human: (*report.JSONMean)(r.Human), A: (*report.JSONScore)(r.A), B: (*report.JSONScore)(r.B),
			UnitA: r.UnitA, UnitB: r.UnitB, Diff: apiUnitDifference(r)})
	}
	return c.JSON(http.StatusOK, out)
}
