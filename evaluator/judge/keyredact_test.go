package judge

import (
	"context"
	"strings"
	"testing"
)

// Keys shaped as providers issue them (made up).
const (
	openAIKey    = "sk-proj-Xq7Lm2Rt9Vb4Nc8Kd1Fh6Jg3Ps5Wz0Ya2Ub7Ie4Oc9TwxyZ"
	anthropicKey = "sk-ant-api03-4fGh7Jk2Lm9Np3Qr8St1Uv6Wx0Yz5Ab-Cd4Ef7Gh2IjKwxyZAA"
	azureKey     = "3f9a1c7e5b2d4f8a9c0e6b1d7a3f5c2e"
	googleKey    = "AIzaSyD3kF8mQ2nR7tV1wX5yZ9aB4cE6gH0jK2L"
)

// TestRedactKeyHidesWhatEndpointsQuoteOfIt: redaction replaced the whole
// key only, so an endpoint that quotes part of it (OpenAI's masked
// "sk-proj-Xq7L****wxyZ", a proxy's "sk-...wxyZ", the first 20
// characters, a key cut or wrapped in two) had its message shown as is.
// Every substantial fragment is now hidden; the message around it stays.
func TestRedactKeyHidesWhatEndpointsQuoteOfIt(t *testing.T) {
	for _, tc := range []struct {
		name, key, text, want string
	}{
		{"OpenAI masked key", openAIKey,
			"Incorrect API key provided: sk-proj-Xq7L********************************************wxyZ. You can find your API key at https://platform.openai.com/account/api-keys.",
			"Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"OpenAI short masked key", "sk-abc1Xy9Qw3Er5Ty7Ui0Op2Lk4Jh6wxyz",
			"Incorrect API key provided: sk-abc1****wxyz.",
			"Incorrect API key provided: [redacted]."},
		{"proxy's ellipsis with the last characters", openAIKey,
			"Authentication Error, Invalid proxy server token passed. Received API Key = sk-...wxyZ, Key Hash (Token) =9f2c. Unable to find token in cache.",
			"Authentication Error, Invalid proxy server token passed. Received API Key = [redacted], Key Hash (Token) =9f2c. Unable to find token in cache."},
		{"unicode ellipsis", anthropicKey,
			"invalid x-api-key: sk-ant-api03-4fGh…wxyZAA",
			"invalid x-api-key: [redacted]"},
		{"first 20 characters", openAIKey,
			`{"detail":"key sk-proj-Xq7Lm2Rt9Vb4 is not active"}`,
			`{"detail":"key [redacted] is not active"}`},
		{"last characters without the prefix", azureKey,
			"Access denied due to invalid subscription key ending in 6b1d7a3f5c2e. Make sure to provide a valid key for an active subscription.",
			"Access denied due to invalid subscription key ending in [redacted]. Make sure to provide a valid key for an active subscription."},
		{"key split over two lines", googleKey,
			"API key not valid: AIzaSyD3kF8mQ2nR7t\nV1wX5yZ9aB4cE6gH0jK2L. Please pass a valid API key.",
			"API key not valid: [redacted]\n[redacted]. Please pass a valid API key."},
		{"key cut at the end", anthropicKey,
			"authentication_error: invalid bearer token sk-ant-api03-4fGh7Jk2Lm9Np3Qr8St1Uv6Wx0",
			"authentication_error: invalid bearer token [redacted]"},
		{"whole key", openAIKey,
			"Incorrect API key provided: " + openAIKey + ".",
			"Incorrect API key provided: [redacted]."},
		// Nothing of the key: the message stays as it is.
		{"a well-known prefix alone", openAIKey,
			"Incorrect API key provided: sk-proj-****. Keys start with sk-proj-",
			"Incorrect API key provided: sk-proj-****. Keys start with sk-proj-"},
		{"two characters masked", openAIKey,
			"Incorrect API key provided: sk-****yZ.",
			"Incorrect API key provided: sk-****yZ."},
		{"another key's fragment", openAIKey,
			"Incorrect API key provided: sk-proj-Ab3dEf6hIj9kLm2nOp5q. Loading... done",
			"Incorrect API key provided: sk-proj-Ab3dEf6hIj9kLm2nOp5q. Loading... done"},
		{"short fragments", openAIKey,
			"model Xq7Lm2 not found, retry in 4Nc8 seconds",
			"model Xq7Lm2 not found, retry in 4Nc8 seconds"},
		// Keys that are words, or short, do not blank out the message.
		{"key made of words", "sk-internal-development-environment-key",
			"The model gpt-4o is in development: use another environment (internal error)",
			"The model gpt-4o is in development: use another environment (internal error)"},
		{"word-like key quoted whole", "sk-internal-development-environment-key",
			"invalid key sk-internal-development-environment-key",
			"invalid key [redacted]"},
		{"local server's dummy key", "ollama",
			`model "llama3.1:8b" not found, try pulling it first (ollama pull llama3.1:8b); Ollama and llamas`,
			`model "llama3.1:8b" not found, try pulling it first ([redacted] pull llama3.1:8b); Ollama and llamas`},
		{"vLLM's example key", "token-abc123",
			"Unauthorized: Bearer token-abc123 (token-abc is not a key)",
			"Unauthorized: Bearer [redacted] (token-abc is not a key)"},
		{"one-letter key", "x",
			"max tokens exceeded: x is too long", "max tokens exceeded: x is too long"},
		{"EMPTY", "EMPTY",
			"the prompt is EMPTYish", "the prompt is EMPTYish"},
		{"no key", "", "Incorrect API key provided: sk-abc1****wxyz.", "Incorrect API key provided: sk-abc1****wxyz."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactKey(tc.text, tc.key); got != tc.want {
				t.Errorf("RedactKey(%q)\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestJudgeErrorHidesAPartOfTheKey: the client's errors, which runs,
// batches and "Test connection" show, hide what the endpoint quotes of
// the key, not only the key whole.
func TestJudgeErrorHidesAPartOfTheKey(t *testing.T) {
	for _, tc := range []struct{ name, body, fragment string }{
		{"OpenAI", `{"error":{"message":"Incorrect API key provided: sk-proj-Xq7L****************************************wxyZ. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"Xq7L"},
		{"gateway quoting the first characters", `{"error":{"message":"token sk-proj-Xq7Lm2Rt9Vb4Nc8K revoked","code":401}}`, "Xq7Lm2Rt9Vb4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply{status: 401, body: tc.body})
			cfg := testConfig(f)
			cfg.APIKey = openAIKey
			_, err := mustNew(t, cfg).Complete(context.Background(), simpleRequest())
			if err == nil {
				t.Fatal("Complete succeeded, want an error")
			}
			if strings.Contains(err.Error(), tc.fragment) || !strings.Contains(err.Error(), "[redacted]") {
				t.Errorf("error %q shows the key's %q", err, tc.fragment)
			}
		})
	}
}

// TestRedactURLInHidesAPartOfAKeyParameter: a key written in a base
// URL's query string (stored before that was refused) is hidden where the
// text quotes part of it, as the key field's is.
func TestRedactURLInHidesAPartOfAKeyParameter(t *testing.T) {
	base := "https://generativelanguage.googleapis.com/v1beta/openai?key=" + googleKey
	text := "API key not valid (key AIzaSyD3kF8mQ2nR7tV1wX5y...). Please pass a valid API key."
	got := RedactURLIn(text, base)
	if want := "API key not valid (key " + Redacted + "). Please pass a valid API key."; got != want {
		t.Errorf("RedactURLIn(%q)\n got %q\nwant %q", text, got, want)
	}
}
