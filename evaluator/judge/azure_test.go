package judge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAzure is Azure OpenAI's classic per-deployment endpoint as far as a
// judge sees it: POST /openai/deployments/<deployment>/chat/completions
// with ?api-version= and the key in the api-key header. It refuses every
// other call the way Azure does (404 for another path, 400 without
// api-version, 401 without the key, as when it comes as a Bearer token)
// and records what it was sent.
type fakeAzure struct {
	srv        *httptest.Server
	deployment string
	apiVersion string
	key        string

	mu   sync.Mutex
	seen []string // "METHOD request-URI api-key=... authorization=..."
}

func newFakeAzure(t *testing.T, deployment, apiVersion, key string) *fakeAzure {
	t.Helper()
	f := &fakeAzure{deployment: deployment, apiVersion: apiVersion, key: key}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.RequestURI+" api-key="+r.Header.Get("api-key")+" authorization="+r.Header.Get("Authorization"))
		f.mu.Unlock()
		code, msg := f.refusal(r)
		w.Header().Set("Content-Type", "application/json")
		if code != 0 {
			w.WriteHeader(code)
			_, _ = io.WriteString(w, `{"error":{"code":"`+http.StatusText(code)+`","message":"`+msg+`"}}`)
			return
		}
		_, _ = io.WriteString(w, okBody("OK"))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// refusal is the status and message Azure answers r with, 0 when it
// answers the call.
func (f *fakeAzure) refusal(r *http.Request) (int, string) {
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/openai/deployments/"+f.deployment+"/chat/completions":
		return http.StatusNotFound, "Resource not found"
	case r.URL.Query().Get("api-version") == "":
		return http.StatusBadRequest, "Missing API version"
	case r.URL.Query().Get("api-version") != f.apiVersion:
		return http.StatusNotFound, "Resource not found"
	case r.Header.Get("api-key") != f.key:
		return http.StatusUnauthorized, "Access denied due to invalid subscription key or wrong API endpoint."
	}
	return 0, ""
}

func (f *fakeAzure) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// TestAzureDeploymentEndpoint: a judge on Azure OpenAI's per-deployment
// address (…/openai/deployments/NAME?api-version=…, key in the api-key
// header) is called at that deployment's chat path with the api-version
// and the key as Azure wants them. The client dropped the base URL's query
// string and could only send the key as a Bearer token, so Azure refused
// every call. A credential parameter in the base URL is still never sent.
func TestAzureDeploymentEndpoint(t *testing.T) {
	const key, version = "az-k3y-0042", "2024-10-21"
	az := newFakeAzure(t, "gpt4o-judge", version, key)
	base := az.srv.URL + "/openai/deployments/gpt4o-judge"
	cases := []struct {
		name      string
		baseURL   string
		keyHeader KeyHeader
		wantKind  ErrorKind // "" when the call is answered
	}{
		{"api-key header and api-version", base + "?api-version=" + version, KeyAPIKey, ""},
		{"trailing slash", base + "/?api-version=" + version, KeyAPIKey, ""},
		{"another parameter beside it", base + "?foo=bar&api-version=" + version, KeyAPIKey, ""},
		{"Bearer token", base + "?api-version=" + version, KeyBearer, KindAuth},
		{"no api-version", base, KeyAPIKey, KindBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustNew(t, Config{BaseURL: tc.baseURL, Model: "gpt-4o", APIKey: key, KeyHeader: tc.keyHeader, MaxAttempts: 1})
			resp, err := c.Ping(context.Background())
			if tc.wantKind == "" {
				if err != nil || resp.Text() != "OK" {
					t.Fatalf("Ping = %q, %v; want OK; Azure saw %q", resp.Text(), err, az.requests())
				}
				return
			}
			var je *Error
			if err == nil || !errors.As(err, &je) || je.Kind != tc.wantKind {
				t.Fatalf("Ping error = %v, want kind %s", err, tc.wantKind)
			}
		})
	}

	// Every call the client makes carries the api-version and the key as
	// the judge says, and never as a Bearer token as well. A deployment's
	// address has no model list (Azure answers 404): it is not asked for.
	az.mu.Lock()
	az.seen = nil
	az.mu.Unlock()
	c := mustNew(t, Config{BaseURL: base + "?api-version=" + version + "&api_key=never-sent", Model: "gpt-4o", APIKey: key, KeyHeader: KeyAPIKey, MaxAttempts: 1})
	if _, err := c.Complete(context.Background(), simpleRequest()); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if _, found, err := c.ContextWindow(context.Background()); found || !errors.Is(err, ErrNoModelList) {
		t.Errorf("ContextWindow of a deployment = found %v, %v; want ErrNoModelList", found, err)
	}
	want := []string{
		"POST /openai/deployments/gpt4o-judge/chat/completions?api-version=" + version + " api-key=" + key + " authorization=",
	}
	if got := az.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Azure saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestKeyHeaderModes: the key goes in exactly one header, the one the
// mode names; an unknown mode is refused by New, naming the two.
func TestKeyHeaderModes(t *testing.T) {
	cs := newCaptureServer(t)
	for _, tc := range []struct {
		mode                 KeyHeader
		wantAuth, wantAPIKey string
	}{
		{"", "Bearer sk-1", ""},
		{KeyBearer, "Bearer sk-1", ""},
		{KeyAPIKey, "", "sk-1"},
	} {
		got := sendWireConfig(t, cs, Config{BaseURL: cs.srv.URL + "/v1", Model: "m", APIKey: "sk-1", KeyHeader: tc.mode, MaxAttempts: 1})
		if a, k := got.Header.Get("Authorization"), got.Header.Get("Api-Key"); a != tc.wantAuth || k != tc.wantAPIKey {
			t.Errorf("mode %q: Authorization %q, api-key %q; want %q and %q", tc.mode, a, k, tc.wantAuth, tc.wantAPIKey)
		}
	}
	if _, err := New(Config{BaseURL: "https://llm.example/v1", Model: "m", KeyHeader: "x-api-key"}); err == nil ||
		!strings.Contains(err.Error(), `"bearer"`) || !strings.Contains(err.Error(), `"api-key"`) {
		t.Errorf("New with an unknown key header: %v, want an error naming bearer and api-key", err)
	}
}
