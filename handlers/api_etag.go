package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// Optimistic concurrency for the API's editable objects (rubrics, judges):
// every answer carrying one sends its ETag, a strong tag naming the stored
// state (models' Revision); a PUT with If-Match saves only over that state.
// The check runs in the saving transaction with the row locked, so of two
// clients that read the same state the first save wins and the second gets
// 412, whatever the timing. A PUT without If-Match saves as before.

// setETag sends the ETag of a stored state (RFC 9110 §8.8.3: quoted, strong).
func setETag(c echo.Context, revision string) {
	c.Response().Header().Set("ETag", strconv.Quote(revision))
}

// notModified sets the ETag of the stored state named by revision and
// reports whether the request's If-None-Match names it, so that a GET can
// answer 304 without its body (RFC 9110 §13.1.2: compared weakly, so a
// W/ tag matches too; "*" matches any stored state). A header that is no
// list of quoted tags matches nothing: the answer is the whole object.
func notModified(c echo.Context, revision string) bool {
	setETag(c, revision)
	return noneMatch(c, revision)
}

// notModifiedWeak is notModified with a weak ETag (W/"…"): for answers
// whose stored inputs are the same but whose bytes are not promised to be
// (a run's results and exports, built again from its stored figures).
func notModifiedWeak(c echo.Context, tag string) bool {
	c.Response().Header().Set("ETag", "W/"+strconv.Quote(tag))
	return noneMatch(c, tag)
}

// noneMatch reports whether the request's If-None-Match names tag.
func noneMatch(c echo.Context, tag string) bool {
	revision := tag
	values := c.Request().Header.Values("If-None-Match")
	if len(values) == 0 {
		return false
	}
	raw := strings.TrimSpace(strings.Join(values, ","))
	if raw == "*" {
		return true
	}
	for _, part := range strings.Split(raw, ",") {
		tag := strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' && tag[1:len(tag)-1] == revision {
			return true
		}
	}
	return false
}

// ifMatch reads the request's If-Match into what the save expects: nil
// without the header (saves over any state), any state for "*", otherwise
// a state whose ETag is one of those listed. Weak tags (W/"…") never match:
// If-Match compares strongly. A header that is no list of quoted tags is
// refused, saying how to write it (an unquoted ETag is a common slip).
func ifMatch(c echo.Context) (models.Expectation, error) {
	values := c.Request().Header.Values("If-Match")
	if len(values) == 0 {
		return nil, nil
	}
	raw := strings.TrimSpace(strings.Join(values, ","))
	if raw == "*" {
		return func(string) bool { return true }, nil
	}
	var strong []string
	listed := false
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue // a list may hold empty elements (RFC 9110 §5.6.1)
		}
		weak := strings.HasPrefix(part, "W/")
		tag := strings.TrimPrefix(part, "W/")
		if len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' || strings.Contains(tag[1:len(tag)-1], `"`) {
			return nil, echo.NewHTTPError(http.StatusBadRequest, "If-Match must be * or the ETag header of a GET answer exactly as sent, "+
				"quotes included (If-Match: \"…\"); got "+strconv.Quote(raw))
		}
		listed = true
		if !weak {
			strong = append(strong, tag[1:len(tag)-1])
		}
	}
	if !listed {
		return nil, echo.NewHTTPError(http.StatusBadRequest, "If-Match is empty: send the ETag header of a GET answer, or leave If-Match out to save whatever is stored")
	}
	return func(revision string) bool {
		for _, s := range strong {
			if s == revision {
				return true
			}
		}
		return false
	}, nil
}

// changedSinceRead rewrites a conditional save's EChanged error in the
// API's words: what happened and how to go on.
func changedSinceRead(err error, what, address string) error {
	if models.ErrorCode(err) != models.EChanged {
		return err
	}
	return models.Errorf(models.EChanged, "this %s was changed since you read it (its ETag is no longer the one in If-Match), "+
		"so nothing was saved: GET %s again, make your change to what it holds now, and send it with the new ETag in If-Match", what, address)
}

// staleRead answers 412 (changed) at once when If-Match names another
// state than the stored revision, before the body is read or checked: a
// precondition is evaluated ahead of the request content (RFC 9110
// §13.2.1), so a stale edit hears "read it again" rather than a complaint
// about a body written against what is no longer stored. The save checks
// again in its transaction, for a change made after this read.
func staleRead(expect models.Expectation, revision, what, address string) error {
	if expect == nil || expect(revision) {
		return nil
	}
	return changedSinceRead(models.Errorf(models.EChanged, "%s changed", what), what, address)
}

// expectRevision is what a browser form's save expects of the stored
// object: the revision the form was filled from, posted back in its hidden
// "revision" field (the forms' If-Match). A post without one (a page shown
// before forms carried it) saves over any state, as a PUT without If-Match.
func expectRevision(revision string) models.Expectation {
	if revision == "" {
		return nil
	}
	return func(stored string) bool { return stored == revision }
}

// Conditional GETs of runs. GET /api/v1/runs/{id} sends a strong ETag, the
// hash of the answer's bytes: any change of the run (a batch answered, an
// event) changes it, so a poller's If-None-Match gets 304 only while
// nothing moved. A run's results and exports send a weak ETag naming what
// they are built from (runResultsTag): the run as stored (every counter,
// its status and end), its events, its samples' inputs and human ratings,
// its dataset's columns and name, and the format. A run still going has a
// new tag with each answer stored; a finished run keeps its tag until it
// is resumed, renamed, rated again or its dataset renamed.

// resultsFormat names the version of the results' and exports' layout:
// change it when their writing changes, so no client keeps a stale copy
// across an upgrade.
const resultsFormat = "results-1"

// runResultsTag is the weak ETag of run's results in variant (the
// address's format: results, json, csv, excel csv).
func (h *Handlers) runResultsTag(ctx context.Context, run models.Run, variant string) (string, error) {
	key, err := report.ResultsKey(ctx, h.DB, run)
	if err != nil {
		return "", err
	}
	evs, err := h.DB.RunEvents(ctx, run.ID)
	if err != nil {
		return "", err
	}
	stored, err := json.Marshal(struct {
		Run    models.Run
		Events []models.RunEvent
	}{run, evs})
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%s\x00", resultsFormat, variant, key)
	sum.Write(stored)
	return hex.EncodeToString(sum.Sum(nil)[:16]), nil
}

// jsonWithETag answers v as JSON with a strong ETag of its bytes, or 304
// when If-None-Match names them.
func jsonWithETag(c echo.Context, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	body = append(body, '\n')
	sum := sha256.Sum256(body)
	if notModified(c, hex.EncodeToString(sum[:16])) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.JSONBlob(http.StatusOK, body)
}
