package judge

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestCredentialParam(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "key": true, "token": true, "access_token": true, "api-key": true, "sig": true,
		"apiKey": true, "subscription-key": true, "x-goog-api-key": true, "client_secret": true, "code": true,
		"Signature": true, "X-Amz-Signature": true, "password": true,
		"api-version": false, "format": false, "model": false, "deployment": false, "sv": false,
	} {
		if got := CredentialParam(name); got != want {
			t.Errorf("CredentialParam(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"https://res.openai.azure.com/openai/v1?api-version=2024-06-01", "https://res.openai.azure.com/openai/v1?api-version=2024-06-01"},
		{"https://svc:s3cr3t@llm.example/v1", "https://REDACTED@llm.example/v1"},
		{"https://sk-abc123@llm.example/v1", "https://REDACTED@llm.example/v1"},
		{"https://llm.example/v1?api-version=1&api_key=qk-s3cr3t", "https://llm.example/v1?api-version=1&api_key=REDACTED"},
		{"https://llm.example/v1?sv=2022&sig=abc%2Bdef&Token=t1", "https://llm.example/v1?sv=2022&sig=REDACTED&Token=REDACTED"},
		{"https://llm.example/v1?api%2Dkey=x", "https://llm.example/v1?api%2Dkey=REDACTED"},
		// Not an address: cut before anything that could hold a secret.
		{"https://u:p@ho st/v1?key=k", "[REDACTED]@ho st/v1 [REDACTED]"},
	}
	for _, tc := range cases {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactURLIn(t *testing.T) {
	base := "https://svc:pw-s3cret@llm.example/v1?api-version=1&api_key=qk-s3cret"
	for _, text := range []string{
		`Post "https://svc:***@llm.example/v1/chat/completions": dial tcp: lookup llm.example: no such host`,
		`Post "https://svc:pw-s3cret@llm.example/v1/chat/completions?api-version=1&api_key=qk-s3cret": EOF`,
	} {
		got := RedactURLIn(text, base)
		for _, secret := range []string{"svc", "pw-s3cret", "qk-s3cret"} {
			if strings.Contains(got, secret) {
				t.Errorf("RedactURLIn(%q) = %q: still holds %q", text, got, secret)
			}
		}
		if !strings.Contains(got, "REDACTED@llm.example") {
			t.Errorf("RedactURLIn(%q) = %q, want the address kept with REDACTED", text, got)
		}
	}
	if got := RedactURLIn("the server said svc is down", base); got != "the server said svc is down" {
		t.Errorf("a user name outside an address was replaced: %q", got)
	}
}

// TestClientErrorsHideBaseURLCredentials: an error calling a judge whose
// base URL holds a user name (a key written as one, saved before that was
// refused) does not show it; the HTTP client's error names the address it
// called, user name included (only the password is masked), and the
// message reaches the run's page, the test-connection result and the logs.
func TestClientErrorsHideBaseURLCredentials(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := New(Config{BaseURL: "http://sk-live-user:pw-s3cret@" + addr + "/v1?api_key=qk-s3cret", Model: "m",
		MaxAttempts: 1, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Ping(context.Background())
	if err == nil {
		t.Fatal("a call to a closed port succeeded")
	}
	for _, secret := range []string{"sk-live-user", "pw-s3cret", "qk-s3cret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows %q", err, secret)
		}
	}
	if _, err := New(Config{BaseURL: "ftp://sk-live-user:pw-s3cret@host/v1", Model: "m"}); err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "sk-live") {
		t.Errorf("refusing a base URL that is not http(s): %v, want an error without its credentials", err)
	}
}

// TestFragmentCredentials: a credential written in the base URL's fragment
// (#key=…, #access_token=…, after a path of its own too) is found like one
// in the query string. Any fragment, a bare key after # without name=
// among them (#sk-…, which no parameter name gives away and which was
// shown as written), is found by URLFragment and redacted whole wherever
// the address is shown or quoted in a message.
func TestFragmentCredentials(t *testing.T) {
	cases := []struct {
		in        string
		fragment  []string
		redacted  string
		secretOut string
	}{
		{"https://llm.example/v1#key=fk-s3cret", []string{"key"}, "https://llm.example/v1#REDACTED", "fk-s3cret"},
		{"https://llm.example/v1#access_token=at-s3cret&token_type=bearer", []string{"access_token"},
			"https://llm.example/v1#REDACTED", "at-s3cret"},
		{"https://llm.example/v1?api-version=1#/cb?api_key=fk-s3cret;x=1", []string{"api_key"},
			"https://llm.example/v1?api-version=1#REDACTED", "fk-s3cret"},
		{"https://llm.example/v1#Api%2DKey=fk-s3cret", []string{"Api-Key"}, "https://llm.example/v1#REDACTED", "fk-s3cret"},
		{"https://h/v1#sk-abc123def456ghi789", nil, "https://h/v1#REDACTED", "sk-abc123def456ghi789"},
		{"https://h/v1?api-version=1#sk%2Dabc123", nil, "https://h/v1?api-version=1#REDACTED", "abc123"},
		{"https://svc:pw@h/v1#sk-abc123", nil, "https://REDACTED@h/v1#REDACTED", "sk-abc123"},
		{"https://llm.example/v1#section-2", nil, "https://llm.example/v1#REDACTED", "section-2"},
		{"https://llm.example/v1#format=json", nil, "https://llm.example/v1#REDACTED", "format=json"},
	}
	for _, tc := range cases {
		_, params, fragment := URLCredentials(tc.in)
		if len(params) != 0 || strings.Join(fragment, ",") != strings.Join(tc.fragment, ",") {
			t.Errorf("URLCredentials(%q) = %q, %q; want no parameters, fragment %q", tc.in, params, fragment, tc.fragment)
		}
		if !URLFragment(tc.in) {
			t.Errorf("URLFragment(%q) = false", tc.in)
		}
		if got := RedactURL(tc.in); got != tc.redacted {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.redacted)
		}
		if got := RedactURLIn("calling "+tc.in+" failed", tc.in); strings.Contains(got, tc.secretOut) || !strings.Contains(got, "#REDACTED failed") {
			t.Errorf("RedactURLIn kept %q: %q", tc.secretOut, got)
		}
	}
	for _, in := range []string{"https://llm.example/v1", "https://llm.example/v1?api-version=1"} {
		if URLFragment(in) || RedactURL(in) != in {
			t.Errorf("%q: URLFragment %v, RedactURL %q; want false and the address as is", in, URLFragment(in), RedactURL(in))
		}
	}
}

// TestKeptQuery: of the base URL's query string, the parameters that
// carry no credential are sent, as written.
func TestKeptQuery(t *testing.T) {
	for in, want := range map[string]string{
		"":                                "",
		"api-version=2024-10-21":          "api-version=2024-10-21",
		"api-version=1&api_key=k&x=a%20b": "api-version=1&x=a%20b",
		"sig=abc&sv=2022":                 "sv=2022",
		"token=t":                         "",
		"api-version=2024-10-21&&flag":    "api-version=2024-10-21&flag",
	} {
		if got := keptQuery(in); got != want {
			t.Errorf("keptQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTrimEndpoint: a pasted endpoint path is cut from the end of a base
// URL's path, in any case and with a final '/', keeping the query string
// and fragment as written; anything else comes back as is.
func TestTrimEndpoint(t *testing.T) {
	for _, tc := range []struct{ in, want, suffix string }{
		{"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
			"https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "/chat/completions"},
		{"https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1", "/chat/completions"},
		{" http://localhost:11434/v1/chat/completions/ ", "http://localhost:11434/v1", "/chat/completions"},
		{"https://x.example/V1/Chat/Completions#frag", "https://x.example/V1#frag", "/Chat/Completions"},
		{"https://x.example/v1/completions?a=%2F", "https://x.example/v1?a=%2F", "/completions"},
		{"https://x.example/v1", "https://x.example/v1", ""},
		{"https://x.example/v1?next=/chat/completions", "https://x.example/v1?next=/chat/completions", ""},
		{"https://x.example/mycompletions", "https://x.example/mycompletions", ""},
		{"http://u:se cret@x.example/chat/completions", "http://u:se cret@x.example/chat/completions", ""},
	} {
		got, suffix := TrimEndpoint(tc.in)
		if got != tc.want || suffix != tc.suffix {
			t.Errorf("TrimEndpoint(%q) = %q, %q; want %q, %q", tc.in, got, suffix, tc.want, tc.suffix)
		}
	}
}
