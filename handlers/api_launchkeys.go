package handlers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// A launch through the API (POST .../runs, .../experiments) may carry an
// Idempotency-Key header: a script that retries after losing the answer
// then gets the run or experiment it already started, not a second paid
// one. The key is recorded with what it launched in the transaction that
// creates it (models.WithLaunchKey), for models.LaunchKeyTTL.
const (
	idempotencyHeader = "Idempotency-Key"
	// replayedHeader marks an answer that is a retry's: nothing new was
	// launched.
	replayedHeader = "Idempotent-Replayed"
	// maxIdempotencyKey bounds a key: a UUID is 36 characters; 255 leaves
	// room for a script's own scheme without storing arbitrary text.
	maxIdempotencyKey = 255
)

// launchKey reads a launch's Idempotency-Key; keyed is false without one.
// The key identifies the request by a hash of its method, path and body,
// so the body is read here and put back for the launch to decode.
func launchKey(c echo.Context, launches string) (k models.LaunchKey, keyed bool, err error) {
	req := c.Request()
	values := req.Header.Values(idempotencyHeader)
	if len(values) == 0 {
		return k, false, nil
	}
	key := values[0]
	if len(values) > 1 {
		return k, false, echo.NewHTTPError(http.StatusBadRequest, "send one Idempotency-Key header, not "+strconv.Itoa(len(values)))
	}
	if err := checkIdempotencyKey(key, "the Idempotency-Key header", "a new UUID for each launch is a good key"); err != nil {
		return k, false, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, apiMaxJSONBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return k, false, echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", apiMaxJSONBody))
		}
		return k, false, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	hash := func(body []byte) string {
		sum := sha256.New()
		fmt.Fprintf(sum, "%s %s\n", req.Method, req.URL.Path)
		sum.Write(body)
		return hex.EncodeToString(sum.Sum(nil))
	}
	k = models.LaunchKey{WorkspaceID: workspaceOf(req.Context()), Principal: launchPrincipal(principalOf(req.Context())),
		IdempotencyKey: key, BodyHash: hash(body), Launches: launches}
	if canonical, ok := canonicalJSON(body); ok && !bytes.Equal(canonical, body) {
		k.BodyHash, k.SentBodyHash = hash(canonical), k.BodyHash
	}
	return k, true, nil
}

// canonicalJSON is body as one JSON text in a single spelling: object keys
// sorted, no spaces, strings and numbers written as the encoder writes them
// (numbers keep their digits). A retry that sends the same request spelled
// otherwise (another client library, keys in another order, pretty-printed)
// is then the same request. ok is false when body is not one JSON value.
func canonicalJSON(body []byte) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// checkIdempotencyKey refuses a launch key that cannot be stored: empty,
// longer than maxIdempotencyKey, or with other than printable ASCII. what
// names where it came from, hint what to send instead.
func checkIdempotencyKey(key, what, hint string) error {
	if key == "" || len(key) > maxIdempotencyKey {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s must hold 1 to %d characters (%s)", what, maxIdempotencyKey, hint))
	}
	for _, r := range key {
		if r < 0x20 || r > 0x7e {
			return echo.NewHTTPError(http.StatusBadRequest, what+" must be printable ASCII characters ("+hint+")")
		}
	}
	return nil
}

// launchPrincipal names whose keys a launch's key is among: an API
// token's, a signed-in person's, or the local user's.
func launchPrincipal(p Principal) string {
	switch p.Kind {
	case Token:
		return "token:" + strconv.FormatInt(p.TokenID, 10)
	case Account:
		return "user:" + strconv.FormatInt(p.User.ID, 10)
	}
	return "local"
}

// withLaunchKey has the launch of c record k (models.WithLaunchKey).
func withLaunchKey(c echo.Context, k models.LaunchKey) {
	c.SetRequest(c.Request().WithContext(models.WithLaunchKey(c.Request().Context(), k)))
}

// replayLaunch answers a launch whose key was used before: 200 with what
// that launch made and its Location when the request is the same, 422
// when it is another. done is false when the key is new (or expired).
func (h *Handlers) replayLaunch(c echo.Context, k models.LaunchKey) (done bool, err error) {
	ctx := c.Request().Context()
	found, err := h.DB.FindLaunchKey(ctx, k.WorkspaceID, k.Principal, k.IdempotencyKey)
	switch {
	case models.ErrorCode(err) == models.ENotFound:
		return false, nil
	case err != nil:
		return true, err
	case found.BodyHash != k.BodyHash && (k.SentBodyHash == "" || found.BodyHash != k.SentBodyHash):
		return true, models.Errorf(models.EInvalid,
			"the Idempotency-Key %q was sent before with another request (another path or body), which it launched: "+
				"use a new key for a new launch, or send exactly the same request to get what it launched", k.IdempotencyKey)
	}
	c.Response().Header().Set(replayedHeader, "true")
	if found.RunID != nil {
		run, err := h.DB.FindRun(ctx, k.WorkspaceID, *found.RunID)
		if err != nil {
			return true, err
		}
		c.Response().Header().Set(echo.HeaderLocation, "/api/v1/runs/"+strconv.FormatInt(run.ID, 10))
		return true, c.JSON(http.StatusOK, apiRun(run))
	}
	if found.ExperimentID == nil {
		return true, fmt.Errorf("launch key %d names nothing launched", found.ID)
	}
	e, err := h.DB.FindExperiment(ctx, k.WorkspaceID, *found.ExperimentID)
	if err != nil {
		return true, err
	}
	out, err := h.apiExperiment(c, e)
	if err != nil {
		return true, answerPreparing(c, err)
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10))
	return true, c.JSON(http.StatusOK, out)
}

// beginKeyedLaunch reads a launch's Idempotency-Key (launchKey). done: a
// launch made with that key before has been answered again (replayLaunch),
// or the header was refused (err). Otherwise the launch goes on, with the
// key to be stored in its transaction when there is one.
func (h *Handlers) beginKeyedLaunch(c echo.Context, launches string) (k models.LaunchKey, keyed, done bool, err error) {
	k, keyed, err = launchKey(c, launches)
	if err != nil {
		return k, keyed, true, err
	}
	if !keyed {
		return k, false, false, nil
	}
	if done, err := h.replayLaunch(c, k); done {
		return k, true, true, err
	}
	withLaunchKey(c, k)
	return k, true, false, nil
}
