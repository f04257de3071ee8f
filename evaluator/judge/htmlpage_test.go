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

// TestWebPageWithErrorStatus: a 403 or 5xx whose body is a web page comes
// from something in front of the API (a proxy, firewall, gateway or
// sign-in page), not from the API. A proxy's 403 page read "check the API
// key has access to this model" and a gateway's 502 page only "it may be
// overloaded or down" (regression). The error now says a web page answered,
// names its title, and a 403 page is no refusal of the key (not_api, not
// retried) while a 5xx page stays a server failure that is retried. The
// API's own JSON errors keep their words.
func TestWebPageWithErrorStatus(t *testing.T) {
	const page = `<!DOCTYPE html><html><head><title>Access Denied &lt;b&gt; by Zscaler</title></head><body>Blocked</body></html>`
	for _, tc := range []struct {
		name                string
		status              int
		body, ctype         string
		wantKind            ErrorKind
		wantHits            int
		wantIn, wantNotIn   []string
		wantTemporary       bool
		wantOwnWordsKnowsIt bool
	}{
		{name: "proxy's 403 page", status: 403, body: page, ctype: "text/html", wantKind: KindNotAPI, wantHits: 1,
			wantIn:              []string{"HTTP 403", "web page", "in front of the API", `"Access Denied <b> by Zscaler"`},
			wantNotIn:           []string{"check the API key"},
			wantOwnWordsKnowsIt: true},
		{name: "gateway's 502 page", status: 502, body: page, ctype: "text/html", wantKind: KindServer, wantHits: 4,
			wantIn:              []string{"HTTP 502", "web page", "in front of the API", `"Access Denied <b> by Zscaler"`, "try again later"},
			wantTemporary:       true,
			wantOwnWordsKnowsIt: true},
		// The same for a 401, 404 or 429 page (lead39c): a sign-in page's 401
		// read "check the key", a web server's 404 page "check ... the model
		// name", and a 429 page's markup was the detail.
		{name: "sign-in page's 401", status: 401, body: page, ctype: "text/html", wantKind: KindNotAPI, wantHits: 1,
			wantIn:              []string{"HTTP 401", "web page", "in front of the API", `"Access Denied <b> by Zscaler"`},
			wantNotIn:           []string{"refused the API key", "check the key"},
			wantOwnWordsKnowsIt: true},
		{name: "web server's 404 page", status: 404, body: page, ctype: "text/html", wantKind: KindNotFound, wantHits: 1,
			wantIn:              []string{"404", "web page", "web server's, not the API's", "check the base URL", `"Access Denied <b> by Zscaler"`},
			wantNotIn:           []string{"model name"},
			wantOwnWordsKnowsIt: true},
		{name: "rate limiter's 429 page", status: 429, body: page, ctype: "text/html", wantKind: KindRateLimited, wantHits: 4,
			wantIn: []string{"HTTP 429", `"Access Denied <b> by Zscaler"`}, wantNotIn: []string{"<title>", "DOCTYPE"}, wantTemporary: true},
		{name: "API's own 404", status: 404, body: `{"error":{"message":"The model gpt-5o does not exist"}}`, ctype: "application/json", wantKind: KindNotFound, wantHits: 1,
			wantIn: []string{"and the model name", "gpt-5o"}, wantNotIn: []string{"web page"}},
		{name: "API's own 403", status: 403, body: `{"error":{"message":"no access to gpt-4o","type":"permission_error"}}`, ctype: "application/json", wantKind: KindAuth, wantHits: 1,
			wantIn: []string{"check the API key has access"}, wantNotIn: []string{"web page"}},
		{name: "API's own 503", status: 503, body: `{"error":{"message":"overloaded"}}`, ctype: "application/json", wantKind: KindServer, wantHits: 4,
			wantIn: []string{"it may be overloaded or down"}, wantNotIn: []string{"web page"}, wantTemporary: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply{status: tc.status, body: tc.body, header: map[string]string{"Content-Type": tc.ctype}})
			c := mustNew(t, testConfig(f))
			_, err := c.Complete(context.Background(), simpleRequest())
			var je *Error
			if !errors.As(err, &je) || je.Kind != tc.wantKind || je.Status != tc.status {
				t.Fatalf("err %v, want kind %q with HTTP %d", err, tc.wantKind, tc.status)
			}
			if f.hits() != tc.wantHits || je.Temporary() != tc.wantTemporary {
				t.Errorf("%d requests, temporary %v; want %d, %v", f.hits(), je.Temporary(), tc.wantHits, tc.wantTemporary)
			}
			msg := err.Error()
			for _, s := range tc.wantIn {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			for _, s := range tc.wantNotIn {
				if strings.Contains(msg, s) {
					t.Errorf("message %q says %q", msg, s)
				}
			}
			if words, ok := OwnWords(msg); tc.wantOwnWordsKnowsIt && (!ok || strings.Contains(words, "Zscaler")) {
				t.Errorf("OwnWords(%q) = %q, %v: want the client's words without the page's title", msg, words, ok)
			}
		})
	}
}
