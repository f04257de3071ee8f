package judge

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestWebPageWithSuccessStatus: a base URL that answers 200 with a web
// page (a chat front end's address such as Open WebUI's, a corporate
// sign-in page or proxy) was taken for a broken answer: retried as a
// temporary fault (a run spent 18 s on 40 retries) and reported as
// "invalid character '<' looking for beginning of value". It is now its own
// kind, not retried, and names the page by its title.
func TestWebPageWithSuccessStatus(t *testing.T) {
	for _, tc := range []struct {
		name, body, wantTitle string
		wantKind              ErrorKind
	}{
		{"sign-in page", "\n<!DOCTYPE html><html><head><title>\n  Sign in &amp; continue - Corporate Proxy </title></head><body><script>alert(1)</script></body></html>", `"Sign in & continue - Corporate Proxy"`, KindNotAPI},
		{"page without a title", "<html><body>Open WebUI</body></html>", "web page, not JSON", KindNotAPI},
		{"not JSON, not a page", "Bad Gateway", "not JSON", KindMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply{status: http.StatusOK, body: tc.body, header: map[string]string{"Content-Type": "text/html; charset=utf-8"}})
			c := mustNew(t, testConfig(f))
			_, err := c.Complete(context.Background(), simpleRequest())
			var je *Error
			if !errors.As(err, &je) || je.Kind != tc.wantKind {
				t.Fatalf("err %v, want kind %q", err, tc.wantKind)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.wantTitle) {
				t.Errorf("message %q lacks %q", msg, tc.wantTitle)
			}
			if tc.wantKind != KindNotAPI {
				return
			}
			if f.hits() != 1 {
				t.Errorf("%d requests, want 1: the same page comes again", f.hits())
			}
			if !strings.Contains(msg, "check the base URL") || strings.Contains(msg, "invalid character") {
				t.Errorf("message %q: want what to check, not a JSON parser's complaint", msg)
			}
			if _, ok := OwnWords(msg); !ok {
				t.Errorf("OwnWords does not recognise %q", msg)
			}
		})
	}
}
