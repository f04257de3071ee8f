package handlers

import (
	"html"
	"regexp"
	"strings"
	"testing"
)

// supportCSV is a newcomer's file (QA): fourteen bot answers to six
// customer questions, each question asked more than once, a channel that
// is a category of two short values, and a rating.
const supportCSV = "id,Customer question,Bot answer,support_channel,quality\n" +
	"1,How do I reset my password?,Open Settings and choose Reset password.,web chat,4\n" +
	"2,How do I reset my password?,I cannot help with that.,phone call,1\n" +
	"3,Where is my parcel right now?,Your parcel is on its way and arrives tomorrow.,web chat,5\n" +
	"4,Where is my parcel right now?,Please ask the courier.,web chat,2\n" +
	"5,Can I change my delivery address?,Yes: edit it under Orders before it ships.,phone call,5\n" +
	"6,Can I change my delivery address?,No.,web chat,1\n" +
	"7,How do I cancel my subscription?,Choose Cancel under Plans; it ends this month.,web chat,4\n" +
	"8,How do I cancel my subscription?,Write to us and we will see.,phone call,2\n" +
	"9,Why was I charged twice this month?,The second charge is a hold that disappears in a few days.,web chat,4\n" +
	"10,Why was I charged twice this month?,Charges are final.,phone call,1\n" +
	"11,Do you ship to Canada and Mexico?,We ship to both; delivery takes a week.,web chat,5\n" +
	"12,Do you ship to Canada and Mexico?,Maybe.,web chat,1\n" +
	"13,How do I reset my password?,Use the Forgot password link on the sign-in page.,phone call,5\n" +
	"14,Where is my parcel right now?,Track it with the link in your email.,web chat,4\n"

// mappingColumn is one column's row of the mapping form, as a person sees it.
type mappingColumn struct {
	shown    bool   // "Judge sees it" ticked
	label    string // the label field's value
	showNote string // why it is not ticked for the judge ("" none)
}

// mappingColumns reads the mapping form's table of the mapping page body.
func mappingColumns(t *testing.T, body string) map[string]mappingColumn {
	t.Helper()
	rows := regexp.MustCompile(`(?s)<tr><td><code>([^<]*)</code></td>(.*?)</tr>`)
	out := map[string]mappingColumn{}
	for _, m := range rows.FindAllStringSubmatch(body, -1) {
		var c mappingColumn
		show := regexp.MustCompile(`<input type="checkbox" name="show_\d+"[^>]*>`).FindString(m[2])
		c.shown = strings.Contains(show, " checked")
		if l := regexp.MustCompile(`name="label_\d+" value="([^"]*)"`).FindStringSubmatch(m[2]); l != nil {
			c.label = html.UnescapeString(l[1])
		}
		if n := regexp.MustCompile(`data-testid="show-note">([^<]*)<`).FindStringSubmatch(m[2]); n != nil {
			c.showNote = html.UnescapeString(n[1])
		}
		out[html.UnescapeString(m[1])] = c
	}
	if len(out) == 0 {
		t.Fatalf("no column rows on the mapping page:\n%s", body)
	}
	return out
}

// TestMappingLabelsFollowTheHeader: every column is offered under one
// kind of label, the header as written with its separators tidied and a
// capital first letter (QA: the ticked "Bot answer" was offered as "Bot
// Answer" beside "Customer question" kept as written, and an unticked
// "support_channel" kept its underscore).
func TestMappingLabelsFollowTheHeader(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("support.csv", supportCSV)
		cols := mappingColumns(t, env.get(env.mapPath()+"?token="+token).Body.String())
		for col, want := range map[string]string{
			"Bot answer":        "Bot answer",
			"Customer question": "Customer question",
			"support_channel":   "Support channel",
		} {
			if got := cols[col].label; got != want {
				t.Errorf("column %q is offered with the label %q, want %q", col, got, want)
			}
		}
	})
}

// TestMappingTicksRepeatedQuestions: a column of questions asked several
// times (6 values over 14 rows) is ticked for the judge, which would
// otherwise score answers without seeing what they reply to (QA: it was
// taken for a category, unticked, and nothing said why); a real category
// of short values stays unticked, and the page says why, as it does for
// rating columns.
func TestMappingTicksRepeatedQuestions(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("support.csv", supportCSV)
		cols := mappingColumns(t, env.get(env.mapPath()+"?token="+token).Body.String())
		for _, tc := range []struct {
			col   string
			shown bool
			note  string // what the note says ("" none)
		}{
			{"Customer question", true, ""},
			{"Bot answer", true, ""},
			{"support_channel", false, `Not ticked: its 14 rows hold only 2 different short values (e.g. “web chat”), so it reads as a category`},
			{"id", false, ""},
			{"quality", false, ""},
		} {
			c, ok := cols[tc.col]
			if !ok {
				t.Fatalf("no row for column %q: %v", tc.col, cols)
			}
			if c.shown != tc.shown {
				t.Errorf("column %q: judge sees it %v, want %v", tc.col, c.shown, tc.shown)
			}
			if (tc.note == "") != (c.showNote == "") || !strings.Contains(c.showNote, tc.note) {
				t.Errorf("column %q: note %q, want %q", tc.col, c.showNote, tc.note)
			}
		}
		if note := cols["support_channel"].showNote; !strings.Contains(note, "Tick it if the judge needs it") {
			t.Errorf("the note does not say what to do: %q", note)
		}
	})
}
