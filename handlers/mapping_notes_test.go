package handlers

import (
	"html"
	"regexp"
	"strings"
	"testing"
)

// The mapping page says why a column of numbers is not pre-ticked as a
// human rating, and that empty lines were skipped (QA: a column "score"
// with four words among nine rows was silently left unticked, and a file
// of ten lines with one empty line read "9 rows" with no word about it),
// and names the plain number to write for ratings typed as "4,5" or
// "80%"; ratings out of one maximum ("4/5") are ticked and read as their
// score, out of several not ticked, saying why.
func TestMappingSaysWhyNotRatingAndSkippedLines(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range []struct {
			name, file, content string
			notes               map[string]string // column -> its note ("" none)
			skipped             string            // "" none
		}{
			{"csv, words among numbers, an empty line", "replies.csv",
				"id,reply,score,quality\n" +
					"a,Happy to help,4,4\n" +
					"b,I cannot say,good,2\n" +
					"c,Here is the answer,5,5\n" +
					"\n" +
					"d,Let me look,n/a,3\n" + // n/a is no rating, not a word
					"e,Not something I know,1,1\n" +
					"f,Sure thing,bad,2\n" +
					"g,Maybe later,3,3\n" +
					"h,Try again,?,4\n" +
					"i,All done,2,5\n",
				map[string]string{"score": `Not ticked: 3 of 9 rows are not numbers (e.g. “good”)`, "quality": "", "reply": ""},
				"9 rows; 1 empty line skipped"},
			{"jsonl, a sparse number, two empty lines", "replies.jsonl",
				`{"id":"a","reply":"Happy to help","quality":4}` + "\n\n" +
					`{"id":"b","reply":"I cannot say","quality":2,"retries":1}` + "\n" +
					"   \n" +
					`{"id":"c","reply":"Here is the answer","quality":5}` + "\n",
				map[string]string{"retries": "Not ticked: only 1 of 3 rows have a number in it.", "quality": ""},
				"3 rows; 2 empty lines skipped"},
			// Ratings as typed in a spreadsheet: out of a maximum, with a
			// decimal comma, in percent (QA: such a column had no tick
			// and no word about why).
			{"csv, ratings written as text", "written.csv",
				"id,reply,out_of,mixed,comma,percent\n" +
					"a,Happy to help,4/5,4/5,\"4,5\",80%\n" +
					"b,I cannot say,2/5,7/10,\"2,0\",40%\n" +
					"c,Here is the answer,5 / 5,3/5,3,100%\n",
				map[string]string{
					// Out of one maximum: ticked and read as the score;
					// out of several: not ticked, saying why.
					"out_of":  `Its ratings written out of 5 (such as “4/5”) are read as their score (4), on a scale up to 5.`,
					"mixed":   `Not ticked: its ratings are written out of a maximum (such as “4/5”, out of 5), but not all out of the same one`,
					"comma":   `Not ticked: 2 of 3 rows hold ratings written as text, such as “4,5”: a rating column holds plain numbers (write 4.5)`,
					"percent": `such as “80%”: a rating column holds plain numbers (write 80)`,
					"reply":   ""},
				""},
			{"csv without empty lines", "clean.csv",
				"id,reply,quality\na,Happy to help,4\nb,I cannot say,2\n",
				map[string]string{"quality": ""}, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				token := env.uploadToken(tc.file, tc.content)
				body := html.UnescapeString(env.get(env.mapPath() + "?token=" + token).Body.String())
				rows := regexp.MustCompile(`(?s)<tr><td><code>([^<]*)</code></td>(.*?)</tr>`)
				got := map[string]string{}
				for _, m := range rows.FindAllStringSubmatch(body, -1) {
					note := ""
					if n := regexp.MustCompile(`data-testid="rating-note">([^<]*)<`).FindStringSubmatch(m[2]); n != nil {
						note = n[1]
					}
					got[m[1]] = note
				}
				for col, want := range tc.notes {
					note, ok := got[col]
					if !ok {
						t.Fatalf("no row for column %q in the mapping table: %v", col, got)
					}
					if (want == "") != (note == "") || !strings.Contains(note, want) {
						t.Errorf("column %q: note %q, want %q", col, note, want)
					}
				}
				line := regexp.MustCompile(`(?s)<p class="muted">` + regexp.QuoteMeta(tc.file) + `(.*?)</p>`).FindStringSubmatch(body)
				if line == nil {
					t.Fatalf("no file line on the mapping page:\n%s", body)
				}
				text := strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(line[1], "")), " ")
				if tc.skipped != "" && !strings.Contains(text, tc.skipped) {
					t.Errorf("file line %q lacks %q", text, tc.skipped)
				}
				if tc.skipped == "" && strings.Contains(text, "skipped") {
					t.Errorf("file line %q says lines were skipped", text)
				}
			})
		}
	})
}
