package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// A run's progress as a stream for scripts: GET /api/v1/runs/{id}/events
// answers server-sent events, each "event: run" carrying the run as
// GET /api/v1/runs/{id} answers it (without its events list), sent when
// anything but its elapsed time changed. The stream ends after the run
// finished or paused (the last event says which), or with "event: ended"
// carrying the API's error shape when the run went to the trash or the
// token stopped working. The browser's stream (/runs/{id}/events) speaks
// the page's words and takes no token; a CI pipeline polled instead.

// apiStreamEnded* are the data of an "event: ended".
var (
	apiStreamEndedTrashed = apiErrorJSON(models.ENotFound, "the run is no longer there: it (or its dataset or project) was moved to the trash, "+
		"which cancels a run still going, or deleted for good")
	apiStreamEndedNoAccess = apiErrorJSON(models.EUnauthorized, "the token no longer works (revoked, expired, or its account left the workspace): "+
		"the stream stopped; make a new token on the API tokens page")
)

func apiErrorJSON(code, message string) []byte {
	b, err := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": message}})
	if err != nil {
		panic(err)
	}
	return b
}

// apiStreamRun streams a run's progress (see above).
func (h *Handlers) apiStreamRun(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	release, err := h.holdStream(c, fmt.Sprintf(
		"this token already has %d progress streams open (the most one token may hold): close one, or poll GET /api/v1/runs/{id} for the other runs", maxStreamsPerHolder))
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
	send := func(event string, data []byte) bool {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false // the client went away
		}
		w.Flush()
		return true
	}
	var last []byte
	checked := time.Now()
	for {
		out := apiRun(run)
		seconds := out.ElapsedSeconds
		out.ElapsedSeconds = nil
		key, err := json.Marshal(out)
		if err != nil {
			return err
		}
		if !bytes.Equal(key, last) {
			out.ElapsedSeconds = seconds
			data, err := json.Marshal(out)
			if err != nil {
				return err
			}
			if !send("run", data) {
				return nil
			}
			last = key
		}
		if run.Finished() || run.Paused() {
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
			switch may, err := h.apiMayStillRead(c); {
			case err != nil:
				// No answer is no refusal: ask again at the next poll.
				if ctx.Err() == nil {
					h.Log.Warn("API progress stream: access not rechecked", "run", run.ID, "err", err)
				}
			case !may:
				send("ended", apiStreamEndedNoAccess)
				return nil
			default:
				checked = time.Now()
			}
		}
		next, err := h.DB.FindRun(ctx, h.workspaceID(c), run.ID)
		if models.ErrorCode(err) == models.ENotFound {
			send("ended", apiStreamEndedTrashed)
			return nil
		}
		if err != nil {
			if ctx.Err() == nil {
				h.Log.Warn("API progress stream stopped", "run", run.ID, "err", err)
			}
			return nil
		}
		run = next
	}
}

// apiMayStillRead reports whether the API caller a stream was opened for
// would still be let in: its token not revoked or expired and its account
// still a member of the token's workspace (the local user always is).
func (h *Handlers) apiMayStillRead(c echo.Context) (bool, error) {
	p := principalOf(c.Request().Context())
	if p.Kind != Token {
		return p.Kind == LocalUser, nil
	}
	token, ok := bearerToken(c.Request())
	if !ok {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	defer cancel()
	_, _, ws, _, err := h.DB.AuthenticateAPIToken(ctx, token)
	if err != nil {
		return false, unlessRefusal(err)
	}
	return ws.ID == p.Workspace.ID, nil
}
