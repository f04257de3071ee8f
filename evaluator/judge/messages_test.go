package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestMessagesJSONIsMarshal: the stored form of a request's messages is
// what json.Marshal wrote, for every kind of text (HTML characters are
// escaped as json.Marshal escapes them, invalid UTF-8 becomes U+FFFD).
func TestMessagesJSONIsMarshal(t *testing.T) {
	for _, msgs := range [][]evaluator.Message{
		nil,
		{},
		{{Role: "system", Content: "You are a careful judge."}, {Role: "user", Content: "Sample1:\n<b>\"quoted\" & 'tabbed'\t</b>\r\n"}},
		{{Role: "user", Content: "control \x00\x01\x1f, invalid \xff\xfe, line sep \u2028 \u2029, emoji 🙂, é"}},
		{{Role: "", Content: ""}},
	} {
		want, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if got := MessagesJSON(msgs); got != string(want) {
			t.Errorf("MessagesJSON(%q)\n got %s\nwant %s", msgs, got, want)
		}
	}
}

func FuzzMessagesJSONIsMarshal(f *testing.F) {
	f.Add("system", "You are a judge.", "user", "Sample1: <x> & \"y\"\n\xff")
	f.Fuzz(func(t *testing.T, r1, c1, r2, c2 string) {
		msgs := []evaluator.Message{{Role: r1, Content: c1}, {Role: r2, Content: c2}}
		want, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if got := MessagesJSON(msgs); got != string(want) {
			t.Errorf("MessagesJSON(%q)\n got %s\nwant %s", msgs, got, want)
		}
	})
}

// TestMessagesJSONAllocatesOnce: the stored messages cost one allocation,
// the string itself, whatever escapes the text needs (a growing buffer
// and then a copy of it were three prompt-sized allocations a call).
func TestMessagesJSONAllocatesOnce(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector empties sync.Pool at random: allocation counts are its own")
	}
	msgs := []evaluator.Message{{Role: "system", Content: "You are a careful judge."},
		{Role: "user", Content: strings.Repeat("Sample1: <b>\"quoted\" & 'tabbed'</b>\n", 200)}}
	want := MessagesJSON(msgs)
	if got := testing.AllocsPerRun(50, func() {
		if MessagesJSON(msgs) != want {
			t.Fatal("MessagesJSON changed between calls")
		}
	}); got != 1 {
		t.Errorf("MessagesJSON allocates %v times a call, want 1", got)
	}
}
