package judge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestOwnWordsReadsEverySummary: OwnWords, which share links use to keep
// a failed run's reason in the client's words and drop the details,
// knows every summary an Error can open with (summaryForms is kept by
// hand next to summary), with and without details and attempts.
func TestOwnWordsReadsEverySummary(t *testing.T) {
	var errs []*Error
	for _, k := range []ErrorKind{KindRateLimited, KindAuth, KindBadRequest, KindNotFound, KindServer, KindTimeout, KindNetwork, KindMalformed, KindCancelled, KindRefused, "unknown"} {
		for _, status := range []int{0, 301, 400, 401, 403, 404, 408, 409, 422, 429, 500, 503} {
			errs = append(errs, &Error{Kind: k, Status: status})
		}
	}
	errs = append(errs,
		&Error{Kind: KindRateLimited, Status: 429, RetryAfter: 90 * time.Second, limit: time.Minute},
		&Error{Kind: KindRateLimited, Status: 429, RetryAfter: 2*time.Hour + 1500*time.Millisecond, limit: 30 * time.Second},
		&Error{Kind: KindTimeout, limit: 1500 * time.Millisecond},
		&Error{Kind: KindTimeout, limit: 2 * time.Minute},
		&Error{Kind: KindBadRequest, Status: 400, Message: "This model's maximum context length is 8192 tokens"},
		&Error{Kind: KindCancelled, Err: context.DeadlineExceeded},
		&Error{Kind: KindCancelled, Err: context.Canceled},
	)
	for _, e := range errs {
		want := e.summary()
		for _, text := range []string{
			want,
			e.Error(),
			(&Error{Kind: e.Kind, Status: e.Status, RetryAfter: e.RetryAfter, limit: e.limit, Err: e.Err, Attempts: 3,
				Message: e.Message + "dial tcp 10.0.0.7:8000: connect: connection refused. Details: more"}).Error(),
			(&Error{Kind: e.Kind, Status: e.Status, RetryAfter: e.RetryAfter, limit: e.limit, Err: e.Err, Attempts: 4, Message: e.Message}).Error(),
		} {
			if got, ok := OwnWords(text); !ok || got != want {
				t.Errorf("OwnWords(%q) = %q, %v; want %q", text, got, ok, want)
			}
		}
	}
	for _, text := range []string{
		"",
		"load dataset rows: sql: database is closed",
		"the endpoint failed (HTTP 500) at 10.0.0.7",
		fmt.Sprintf("find dataset 3: %v", errors.New("dial tcp 10.0.0.7:5432: connect: connection refused")),
		"the endpoint refused the API key (HTTP " + http.StatusText(401) + "): check the key",
	} {
		if got, ok := OwnWords(text); ok {
			t.Errorf("OwnWords(%q) = %q, true; want none", text, got)
		}
	}
}
