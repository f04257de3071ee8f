package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outcomeCase is one answer of an endpoint; what the client makes of it
// is pinned in testdata/outcomes.json, written by the openai-go based
// client before it was replaced.
type outcomeCase struct {
	name   string
	status int
	ctype  string // Content-Type of the answer; "" means application/json
	header map[string]string
	body   string
}

// outcome is what one call produced: a Response or an *Error's fields.
type outcome struct {
	// Choices is rendered by renderChoices: it may hold infinities and
	// invalid UTF-8, which JSON cannot.
	Choices          string `json:",omitempty"`
	PromptTokens     int    `json:",omitempty"`
	CompletionTokens int    `json:",omitempty"`
	Model            string `json:",omitempty"`

	Kind       ErrorKind     `json:",omitempty"`
	Status     int           `json:",omitempty"`
	Message    string        `json:",omitempty"`
	RetryAfter time.Duration `json:",omitempty"`
	Text       string        `json:",omitempty"` // Error()
}

func outcomeCases() []outcomeCase {
	const choice = `{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Score: 4"}}`
	wrap := func(choices, rest string) string {
		return `{"id":"x","object":"chat.completion","created":1,"model":"m-1","choices":[` + choices + `]` + rest + `}`
	}
	usage := `,"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}`
	return []outcomeCase{
		{name: "ok", status: 200, body: wrap(choice, usage)},
		{name: "ok 201", status: 201, body: wrap(choice, usage)},
		{name: "no usage", status: 200, body: wrap(choice, "")},
		{name: "usage null", status: 200, body: wrap(choice, `,"usage":null`)},
		{name: "tokens as strings", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":"12","completion_tokens":"3"}`)},
		{name: "tokens as floats", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":12.0,"completion_tokens":3.7}`)},
		{name: "tokens negative", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":-12,"completion_tokens":-3}`)},
		{name: "tokens overflow", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":1e30,"completion_tokens":99999999999999999999}`)},
		{name: "tokens bool", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":true,"completion_tokens":null}`)},
		{name: "usage is a string", status: 200, body: wrap(choice, `,"usage":"lots"`)},
		{name: "model missing", status: 200, body: `{"choices":[` + choice + `]}`},
		{name: "model null", status: 200, body: `{"model":null,"choices":[` + choice + `]}`},
		{name: "model number", status: 200, body: `{"model":7,"choices":[` + choice + `]}`},
		{name: "content null", status: 200, body: wrap(`{"finish_reason":"stop","message":{"role":"assistant","content":null}}`, "")},
		{name: "content number", status: 200, body: wrap(`{"finish_reason":"stop","message":{"content":42}}`, "")},
		{name: "content object", status: 200, body: wrap(`{"finish_reason":"stop","message":{"content":{"a":1}}}`, "")},
		{name: "content array", status: 200, body: wrap(`{"finish_reason":"stop","message":{"content":[{"type":"text","text":"hi"}]}}`, "")},
		{name: "message missing", status: 200, body: wrap(`{"finish_reason":"stop"}`, "")},
		{name: "message null", status: 200, body: wrap(`{"finish_reason":"stop","message":null}`, "")},
		{name: "message string", status: 200, body: wrap(`{"finish_reason":"stop","message":"hi"}`, "")},
		{name: "finish reason null", status: 200, body: wrap(`{"finish_reason":null,"message":{"content":"a"}}`, "")},
		{name: "finish reason number", status: 200, body: wrap(`{"finish_reason":3,"message":{"content":"a"}}`, "")},
		{name: "choice null", status: 200, body: wrap(`null,`+choice, "")},
		{name: "choice string", status: 200, body: wrap(`"x"`, "")},
		{name: "choices empty", status: 200, body: wrap(``, usage)},
		{name: "choices null", status: 200, body: `{"choices":null}`},
		{name: "choices object", status: 200, body: `{"choices":{"0":` + choice + `}}`},
		{name: "choices string", status: 200, body: `{"choices":"none"}`},
		{name: "no choices with error object", status: 200, body: `{"error":{"message":"upstream failed","type":"server_error"}}`},
		{name: "error and choices", status: 200, body: `{"error":"ignored","choices":[` + choice + `]}`},
		{name: "top level array", status: 200, body: `[` + choice + `]`},
		{name: "top level null", status: 200, body: `null`},
		{name: "top level string", status: 200, body: `"hello"`},
		{name: "top level number", status: 200, body: `42`},
		{name: "empty body", status: 200, body: ``},
		{name: "white space body", status: 200, body: " \n"},
		{name: "not JSON", status: 200, body: `<html>oops</html>`},
		{name: "truncated", status: 200, body: `{"choices":[{"message":`},
		{name: "trailing garbage", status: 200, body: wrap(choice, "") + ` xyz`},
		{name: "two values", status: 200, body: wrap(choice, "") + `{}`},
		{name: "leading BOM", status: 200, body: "\ufeff" + wrap(choice, "")},
		{name: "duplicate keys", status: 200, body: `{"model":"a","model":"b","choices":[{"message":{"content":"1","content":"2"}}]}`},
		{name: "case insensitive keys", status: 200, body: `{"Model":"a","Choices":[{"Message":{"Content":"1"},"Finish_Reason":"stop"}],"Usage":{"Prompt_Tokens":5}}`},
		{name: "invalid UTF-8 in content", status: 200, body: wrap(`{"message":{"content":"a\xff\xfeb"}}`, "")},
		{name: "escapes in content", status: 200, body: wrap(`{"message":{"content":"\ud83d\ude42 \ud800 lone \u00e9 \n \/ \" \\"}}`, "")},
		{name: "text/plain content type", status: 200, ctype: "text/plain", body: wrap(choice, usage)},
		{name: "no content type", status: 200, ctype: "-", body: wrap(choice, usage)},
		{name: "logprobs", status: 200, body: wrap(`{"finish_reason":"stop","message":{"content":"4"},"logprobs":{"content":[`+
			`{"token":"4","logprob":-0.1,"bytes":[52],"top_logprobs":[{"token":"4","logprob":-0.1},{"token":"5","logprob":-2.5}]},`+
			`{"token":"!","logprob":-1e-300,"top_logprobs":null},{"token":null,"logprob":"x","top_logprobs":[null]}]}}`, "")},
		{name: "logprobs null content", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":{"content":null}}`, "")},
		{name: "logprobs string", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":"none"}`, "")},
		{name: "logprob as string", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":{"content":[{"token":"4","logprob":"-0.5"}]}}`, "")},
		{name: "logprob huge", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":{"content":[{"token":"4","logprob":-1e400}]}}`, "")},
		{name: "two choices", status: 200, body: wrap(choice+`,{"finish_reason":"length","message":{"content":"Score: 5"}}`, usage)},

		{name: "raw invalid UTF-8 in content", status: 200, body: wrap("{\"message\":{\"content\":\"a\xff\xfeb \xe2\x82\"}}", "")},
		{name: "bad surrogate pair", status: 200, body: wrap(`{"message":{"content":"x\ud800\u0041y \udc00z \ud83d"}}`, "")},
		{name: "escaped keys", status: 200, body: `{"\u0063hoices":[{"m\u0065ssage":{"content":"k"}}],"mod\u0065l":"e"}`},
		{name: "top level true", status: 200, body: `true`},
		{name: "top level false", status: 200, body: ` false `},
		{name: "top level negative number", status: 200, body: `-1.5e3`},
		{name: "tokens odd strings", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":"12.9","completion_tokens":" 12"}`)},
		{name: "tokens odd strings 2", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":"abc","completion_tokens":"1e400"}`)},
		{name: "tokens odd strings 3", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":"-99999999999999999999","completion_tokens":"-1e400"}`)},
		{name: "tokens beyond 2^53", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":9007199254740993,"completion_tokens":-9007199254740993}`)},
		{name: "tokens exponent", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":12.0e0,"completion_tokens":-1e30}`)},
		{name: "tokens fractions", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":-3.7,"completion_tokens":0.999}`)},
		{name: "tokens containers", status: 200, body: wrap(choice, `,"usage":{"prompt_tokens":[1],"completion_tokens":{"n":1}}`)},
		{name: "usage array", status: 200, body: wrap(choice, `,"usage":[1,2]`)},
		{name: "logprob odd values", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":{"content":[{"token":"a","logprob":"abc"},{"token":"b","logprob":"1e400"},{"token":"c","logprob":true},{"token":"d","logprob":1e400},{"token":"e","logprob":[1]},{"token":"f","logprob":"NaN"},{"token":"g","logprob":false}]}}`, "")},
		{name: "logprobs one bad element", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":{"content":[{"token":"a","logprob":-1},"bad"]}}`, "")},
		{name: "top logprobs bad element", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":{"content":[{"token":"a","logprob":-1,"top_logprobs":[{"token":"a","logprob":-1},7]},{"token":"b","top_logprobs":{"x":1}}]}}`, "")},
		{name: "token odd values", status: 200, body: wrap(`{"message":{"content":"4"},"logprobs":{"content":[{"token":12},{"token":1.50},{"token":true},{"token":{"t":1}}]}}`, "")},
		{name: "content odd numbers", status: 200, body: wrap(`{"message":{"content":3.50},"finish_reason":true},{"message":{"content":1e2},"finish_reason":false},{"message":{"content":-0},"finish_reason":-12},{"message":{"content":12345678901234567890123},"finish_reason":1e400},{"message":{"content":{ "a" : [1, 2] }},"finish_reason":[ ]}`, "")},
		{name: "one bad choice drops all", status: 200, body: wrap(choice+`,"x"`, usage)},
		{name: "choice array", status: 200, body: wrap(`[]`, usage)},
		{name: "message array", status: 200, body: wrap(`{"message":[],"finish_reason":"stop"}`, usage)},
		{name: "deep unknown fields", status: 200, body: `{"x":{"y":[1,{"z":"]}\"{"},[[]],null,true,-0.5e-3]},"choices":[{"message":{"content":"deep","extra":{"choices":[]}},"z":"\\"}],"model":"m","w":[]}`},
		{name: "white space everywhere", status: 200, body: "\n { \"choices\" : [ { \"message\" : { \"content\" : \"ws\" } , \"finish_reason\" : \"stop\" } ] , \"usage\" : { \"prompt_tokens\" : 4 } } \n"},

		{name: "400 openai error", status: 400, body: `{"error":{"message":"Invalid 'temperature'","type":"invalid_request_error","param":"temperature","code":null}}`},
		{name: "401 plain text", status: 401, ctype: "text/plain", body: "Unauthorized"},
		{name: "403 error string", status: 403, body: `{"error":"no access"}`},
		{name: "404 fastapi", status: 404, body: `{"detail":"Not Found"}`},
		{name: "404 empty", status: 404, body: ``},
		{name: "408", status: 408, body: `{"message":"timeout"}`},
		{name: "409", status: 409, body: `{"error":{"message":"conflict"}}`},
		{name: "413", status: 413, body: `{"error":{"message":"too large"}}`},
		{name: "422 vllm", status: 422, body: `{"object":"error","message":"bad schema","type":"BadRequestError","code":422}`},
		{name: "429 long retry-after", status: 429, header: map[string]string{"Retry-After": "3600"}, body: `{"error":{"message":"quota","type":"tokens"}}`},
		{name: "429 retry-after-ms", status: 429, header: map[string]string{"retry-after-ms": "1500"}, body: `{"error":{"message":"slow down"}}`},
		{name: "429 error is a number", status: 429, body: `{"error":5}`},
		{name: "429 invalid JSON", status: 429, body: `{"error":`},
		{name: "500 html", status: 500, ctype: "text/html", body: `<html>Internal</html>`},
		{name: "502 error null", status: 502, body: `{"error":null}`},
		{name: "503 empty", status: 503, body: ``},
		{name: "599", status: 599, body: `{"error":{"message":"odd"}}`},
		{name: "301 no location", status: 301, body: ``},
		{name: "302 location", status: 302, header: map[string]string{"Location": "https://93.184.216.34:8443/v1/chat/completions?x=1"}, body: ``},
		{name: "302 location, a name that does not resolve", status: 302, header: map[string]string{"Location": "https://judge.nowhere.invalid/v1/chat/completions"}, body: ``},
		{name: "307 relative location", status: 307, header: map[string]string{"Location": "/v2/chat/completions"}, body: ``},
		{name: "304", status: 304, body: ``},
		{name: "204 no content", status: 204, body: ``},
	}
}

// runOutcome makes one call, with one attempt, against a server answering
// tc, and returns what came of it.
func runOutcome(t *testing.T, tc outcomeCase) outcome {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch tc.ctype {
		case "":
			w.Header().Set("Content-Type", "application/json")
		case "-":
			w.Header()["Content-Type"] = nil // no sniffing either
		default:
			w.Header().Set("Content-Type", tc.ctype)
		}
		for k, v := range tc.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(tc.status)
		_, _ = w.Write([]byte(tc.body))
	}))
	defer srv.Close()
	c := mustNew(t, Config{BaseURL: srv.URL + "/v1", Model: "judge-model", APIKey: "sk-secret", MaxAttempts: 1, MaxRetryAfter: time.Minute})
	resp, err := c.Complete(context.Background(), simpleRequest())
	if err != nil {
		e := judgeError(t, err)
		return outcome{Kind: e.Kind, Status: e.Status, Message: e.Message, RetryAfter: e.RetryAfter, Text: e.Error()}
	}
	return outcome{Choices: renderChoices(resp.Choices), PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens, Model: resp.Model}
}

// TestOutcomes pins what the client makes of every kind of answer: the
// decoded Response of a 2xx, or the *Error (kind, status, message,
// Retry-After, text) of anything else.
func TestOutcomes(t *testing.T) {
	path := filepath.Join("testdata", "outcomes.json")
	got := map[string]outcome{}
	for _, tc := range outcomeCases() {
		got[tc.name] = runOutcome(t, tc)
	}
	if *updateWire {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-wire to write it)", err)
	}
	var want map[string]outcome
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for _, tc := range outcomeCases() {
		g, w := got[tc.name], want[tc.name]
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, gb, wb)
		}
	}
	if len(want) != len(got) {
		t.Errorf("golden has %d outcomes, the table %d", len(want), len(got))
	}
}

// renderChoices prints choices exactly: strings quoted (invalid UTF-8
// shown as \x escapes), floats in their shortest exact form, and whether a
// slice is nil or empty.
func renderChoices(cs []Choice) string {
	var b strings.Builder
	slice := func(n int, isNil bool) {
		if isNil {
			b.WriteString("nil")
		} else {
			fmt.Fprintf(&b, "%d", n)
		}
	}
	slice(len(cs), cs == nil)
	for _, c := range cs {
		fmt.Fprintf(&b, " {%q %q ", c.Text, c.FinishReason)
		slice(len(c.Logprobs), c.Logprobs == nil)
		for _, t := range c.Logprobs {
			fmt.Fprintf(&b, " (%q %v ", t.Token, t.Logprob)
			slice(len(t.Top), t.Top == nil)
			for _, a := range t.Top {
				fmt.Fprintf(&b, " %q %v", a.Token, a.Logprob)
			}
			b.WriteString(")")
		}
		b.WriteString("}")
	}
	return b.String()
}
