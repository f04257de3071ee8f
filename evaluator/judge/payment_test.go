package judge

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestOutOfCreditsIsNoBadRequest: OpenRouter answers a key out of credits
// with HTTP 402 and a JSON error (regression: it was a bad request, so the
// run page told the user to check the model name and the parameters sent,
// G-Eval took it for a refusal of logprobs and kept it in the answer
// cache, and the run went on sending every batch). It is its own kind, not
// retried, says to add credits and quotes the endpoint's message.
func TestOutOfCreditsIsNoBadRequest(t *testing.T) {
	f := newFake(t, reply{status: http.StatusPaymentRequired, body: `{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 1024 tokens, but can only afford 12.","code":402,"metadata":{"provider_name":null}},"user_id":"user_2x"}`})
	c := mustNew(t, testConfig(f))
	_, err := c.Complete(context.Background(), simpleRequest())
	var je *Error
	if !errors.As(err, &je) {
		t.Fatalf("err %v, want a judge error", err)
	}
	if je.Kind != KindPayment || je.Status != http.StatusPaymentRequired {
		t.Errorf("kind %q status %d, want %q 402", je.Kind, je.Status, KindPayment)
	}
	if f.hits() != 1 {
		t.Errorf("%d requests, want 1: a 402 is not retried", f.hits())
	}
	msg := err.Error()
	for _, want := range []string{"HTTP 402", "out of credits", "add credits", "can only afford 12"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "check the model name") {
		t.Errorf("message %q sends the user to the model name", msg)
	}
	if words, ok := OwnWords(msg); !ok || !strings.Contains(words, "out of credits") {
		t.Errorf("OwnWords(%q) = %q, %v: want the client's own words recognised", msg, words, ok)
	}
	if r := refusalOf(KeepRefusal(context.Background()), err); r != nil {
		t.Errorf("a 402 is kept as the endpoint's refusal of the request: %+v", r)
	}
}

// TestInsufficientQuotaIsOutOfCredits: OpenAI answers an account without
// credit HTTP 429 with code insufficient_quota (regression: it was a rate
// limit, retried with backoff, and the run waited a minute at a time,
// "waiting for judge", for ever). It is an account out of credits, not
// retried; a 429 that is a rate limit stays one.
func TestInsufficientQuotaIsOutOfCredits(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       ErrorKind
		wantHits   int
	}{
		{"insufficient_quota", `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, KindPayment, 1},
		{"rate limit", `{"error":{"message":"Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, KindRateLimited, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply{status: http.StatusTooManyRequests, body: tc.body})
			c := mustNew(t, testConfig(f))
			_, err := c.Complete(context.Background(), simpleRequest())
			var je *Error
			if !errors.As(err, &je) || je.Kind != tc.want {
				t.Fatalf("err %v, want kind %q", err, tc.want)
			}
			if f.hits() != tc.wantHits {
				t.Errorf("%d requests, want %d", f.hits(), tc.wantHits)
			}
			if tc.want == KindPayment {
				msg := err.Error()
				if !strings.Contains(msg, "HTTP 429") || !strings.Contains(msg, "add credits") || !strings.Contains(msg, "exceeded your current quota") {
					t.Errorf("message %q: want the status, what to do and the endpoint's words", msg)
				}
				if _, ok := OwnWords(msg); !ok {
					t.Errorf("OwnWords does not recognise %q", msg)
				}
			}
		})
	}
}

// TestOutOfCreditsWordedForWhereItShows: the out-of-credits error said
// "then resume the run" wherever it showed, Test connection included,
// where there is no run (regression). Error's words now fit anywhere;
// InRun, which a run's stop stores, adds the run's next step. OwnWords
// knows both, and the wording runs stored before.
func TestOutOfCreditsWordedForWhereItShows(t *testing.T) {
	f := newFake(t, reply{status: http.StatusPaymentRequired, body: `{"error":{"message":"Insufficient credits","code":402}}`})
	c := mustNew(t, testConfig(f))
	_, err := c.Complete(context.Background(), simpleRequest())
	var je *Error
	if !errors.As(err, &je) || je.Kind != KindPayment {
		t.Fatalf("err %v, want kind %q", err, KindPayment)
	}
	const stored = "the endpoint refused to answer for payment (HTTP 402): the account behind the API key is out of credits or over its spending limit; add credits (or raise the key's limit) with the provider, then resume the run. Details: Insufficient credits"
	for _, tc := range []struct {
		name, text string
		wantResume bool
	}{
		{"anywhere (Error)", je.Error(), false},
		{"a run's error (InRun)", je.InRun(), true},
		{"a run's error stored before", stored, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.text, "add credits") || !strings.Contains(tc.text, "Insufficient credits") {
				t.Errorf("%q: want what to do and the endpoint's words", tc.text)
			}
			if got := strings.Contains(tc.text, "resume the run"); got != tc.wantResume {
				t.Errorf("%q says to resume the run = %v, want %v", tc.text, got, tc.wantResume)
			}
			words, ok := OwnWords(tc.text)
			if !ok || strings.Contains(words, "Insufficient") || !strings.HasSuffix(words, "with the provider"+map[bool]string{true: ", then resume the run"}[tc.wantResume]) {
				t.Errorf("OwnWords(%q) = %q, %v: want the client's whole words without the details", tc.text, words, ok)
			}
		})
	}
	if other := (&Error{Kind: KindAuth, Status: 401, Message: "bad key"}); other.InRun() != other.Error() {
		t.Errorf("InRun %q differs from Error %q for a refused key", other.InRun(), other.Error())
	}
}
