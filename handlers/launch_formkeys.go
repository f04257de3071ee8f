package handlers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// The launch form carries a one-time key in a hidden field, so that a
// double click, or a browser sending the form again (after a timeout, on a
// reload of the answer), starts one paid run or experiment, not two. It is
// the API's Idempotency-Key under another name (api_launchkeys.go): stored
// in the transaction that creates what it launched (models.WithLaunchKey),
// among the keys of the same person, with a hash of the post.
//
// Every rendering of the form carries a new key (planLaunch), and the hash
// covers the post's path and fields, as the API's covers its body:
//   - the same post again is answered with a redirect (303) to what the
//     first one launched;
//   - the same key with other fields (the form was changed and sent again
//     while the first post was under way, or the back button showed a kept
//     copy of the page) launches nothing and shows the form again with the
//     person's changes, a link to what it launched and a new key, so one
//     more press launches the changes.
//
// Leaving the fields out of the hash was the other choice; it would answer
// a changed form with the first run, whose settings are not the ones just
// sent, and the person would believe them launched. A refused post (a field
// to fix, the workspace's run limit) stores no key, so its own key would
// still work; the form shown with the messages has a new one all the same,
// which keeps the rule simple: each form shown launches at most once.
const (
	// formLaunchKeyField is the hidden field holding the key.
	formLaunchKeyField = "launch_key"
	// formLaunchKeyPrefix starts a form's key as stored, keeping the
	// form's keys apart from those a script sends in Idempotency-Key.
	formLaunchKeyPrefix = "form:"
)

// newFormLaunchKey is a new key for a launch form: 128 random bits
// (rand.Text), so two forms never share one.
func newFormLaunchKey() string { return rand.Text() }

// formLaunchKey reads the launch form's key; keyed is false without one (a
// script posting the form, or a page rendered before forms carried keys).
// The form must have been parsed (readLaunchForm).
func formLaunchKey(c echo.Context, launches string) (k models.LaunchKey, keyed bool, err error) {
	req := c.Request()
	values := req.PostForm[formLaunchKeyField]
	if len(values) == 0 {
		return k, false, nil
	}
	if len(values) > 1 {
		return k, false, echo.NewHTTPError(http.StatusBadRequest, "the launch form sent "+strconv.Itoa(len(values))+" launch keys: open the launch form again")
	}
	if err := checkIdempotencyKey(values[0], "the launch form's key", "open the launch form again"); err != nil {
		return k, false, err
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "%s %s\n", req.Method, req.URL.Path)
	sum.Write([]byte(req.PostForm.Encode())) // sorted by field: the same post hashes the same
	return models.LaunchKey{WorkspaceID: workspaceOf(req.Context()), Principal: launchPrincipal(principalOf(req.Context())),
		IdempotencyKey: formLaunchKeyPrefix + values[0], BodyHash: hex.EncodeToString(sum.Sum(nil)), Launches: launches}, true, nil
}

// beginFormLaunch reads the launch form's key (formLaunchKey). done: the
// form launched before with that key and has been answered
// (replayFormLaunch), or the key was refused (err). Otherwise the launch
// goes on, with the key to be stored in its transaction.
func (h *Handlers) beginFormLaunch(c echo.Context, launches string, pl *launchPlan) (k models.LaunchKey, keyed, done bool, err error) {
	k, keyed, err = formLaunchKey(c, launches)
	if err != nil || !keyed {
		return k, keyed, err != nil, err
	}
	if done, err := h.replayFormLaunch(c, k, pl); done {
		return k, true, true, err
	}
	withLaunchKey(c, k)
	return k, true, false, nil
}

// replayFormLaunch answers a post of a launch form whose key launched
// before: the same post is sent to what it launched (303), another post
// gets the form back with its fields and a link to what the key launched.
// done is false when the key launched nothing (yet).
func (h *Handlers) replayFormLaunch(c echo.Context, k models.LaunchKey, pl *launchPlan) (done bool, err error) {
	ctx := c.Request().Context()
	found, err := h.DB.FindLaunchKey(ctx, k.WorkspaceID, k.Principal, k.IdempotencyKey)
	switch {
	case models.ErrorCode(err) == models.ENotFound:
		return false, nil
	case err != nil:
		return true, err
	}
	before, err := h.launchedBefore(ctx, k.WorkspaceID, found)
	if err != nil {
		return true, err
	}
	if found.BodyHash == k.BodyHash {
		return true, redirect(c, before.URL, fmt.Sprintf("The launch form was sent twice (a double click, or the page sent again): the first sending launched this %s, so nothing more was launched.", before.What))
	}
	v := pl.view
	v.Page = page(c, "New run")
	v.LaunchedBefore = &before
	return true, render(c, http.StatusConflict, web.RunLaunchPage(v))
}

// launchedBefore names what a launch key launched, for the form's link.
func (h *Handlers) launchedBefore(ctx context.Context, wsID int64, k models.LaunchKey) (web.LaunchedBefore, error) {
	if k.RunID != nil {
		run, err := h.DB.FindRun(ctx, wsID, *k.RunID)
		return web.LaunchedBefore{What: "run", Name: run.Name, URL: runURL(run.ID)}, err
	}
	if k.ExperimentID == nil {
		return web.LaunchedBefore{}, fmt.Errorf("launch key %d names nothing launched", k.ID)
	}
	e, err := h.DB.FindExperiment(ctx, wsID, *k.ExperimentID)
	return web.LaunchedBefore{What: "experiment", Name: e.Name, URL: launchedExperimentURL(e.ID)}, err
}
