package handlers

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIUploadReportsRepeatedIDs: the API's suggested mapping used to drop
// an id column with repeated values for generated ids (row-1, row-2…)
// without a word; the upload answer now says which ids repeat and on how
// many rows, in the browser mapping step's words, and what to do.
func TestAPIUploadReportsRepeatedIDs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name       string
			csv        string
			notes      int
			repeated   []APIRepeatedID
			annotator  string
			inMessage  []string
			browserSay string // the browser's sentence the message repeats
		}{
			{name: "per annotator", csv: perAnnotatorCSV, notes: 1,
				repeated: []APIRepeatedID{{ID: "s1", Rows: 2}, {ID: "s2", Rows: 2}}, annotator: "rater",
				inMessage:  []string{`Most repeated: "s1" (2 rows), "s2" (2 rows)`, `"quality"`, `id_column "id"`, `annotator_column "rater"`},
				browserSay: "The column id was not taken as the id, so ids will be generated (row-1, row-2…): 2 values appear on more than one row (4 rows in all). Ids must be present and unique."},
			{name: "plain duplicates", csv: "id,text,quality\n7,an answer here,3\n7,an answer here,3\n8,other answer,1\n", notes: 1,
				repeated:   []APIRepeatedID{{ID: "7", Rows: 2}},
				inMessage:  []string{`Most repeated: "7" (2 rows)`, "remove the copies"},
				browserSay: "The column id was not taken as the id, so ids will be generated (row-1, row-2…): 1 value appears on more than one row (2 rows in all). Ids must be present and unique."},
			// Different texts under one id: not per annotator, so no
			// annotator column is offered.
			{name: "duplicate ids with different texts", csv: "id,text,rater,quality\n" +
				"s1,first answer here,ann1,1\ns1,quite another answer,ann2,3\ns2,second answer here,ann1,2\ns3,third answer here,ann2,5\n", notes: 1,
				repeated:   []APIRepeatedID{{ID: "s1", Rows: 2}},
				inMessage:  []string{`Rows sharing an id also differ in "text"`, "give each sample its own id"},
				browserSay: "The column id was not taken as the id, so ids will be generated (row-1, row-2…): 1 value appears on more than one row (2 rows in all). Ids must be present and unique."},
			{name: "unique ids", csv: goodCSV, notes: 0},
		}
		// The browser's mapping step says the same of the same file (asked
		// first: the local user has no session once accounts exist).
		for _, tc := range tests {
			page := env.get(env.mapPath() + "?token=" + env.uploadToken("data.csv", tc.csv)).Body.String()
			if tc.browserSay != "" && !strings.Contains(visibleText(page), tc.browserSay) {
				t.Errorf("%s: the browser's mapping step no longer says %q: the API and the browser should agree", tc.name, tc.browserSay)
			}
		}
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@ids.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		target := fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				up := decode[APIUpload](t, a.upload(target, tok, "data.csv", tc.csv), http.StatusCreated)
				if len(up.IDNotes) != tc.notes {
					t.Fatalf("upload answer has %d id notes, want %d: %+v", len(up.IDNotes), tc.notes, up)
				}
				if tc.notes == 0 {
					return
				}
				n := up.IDNotes[0]
				if n.Column != "id" || up.SuggestedMapping.IDColumn != "" || fmt.Sprint(n.Repeated) != fmt.Sprint(tc.repeated) ||
					n.AnnotatorColumn != tc.annotator {
					t.Errorf("id note = %+v (suggested id column %q), want column id, repeated %v, annotator %q",
						n, up.SuggestedMapping.IDColumn, tc.repeated, tc.annotator)
				}
				for _, w := range append([]string{tc.browserSay}, tc.inMessage...) {
					if !strings.Contains(n.Message, w) {
						t.Errorf("id note message %q lacks %q", n.Message, w)
					}
				}
			})
		}
	})
}

var tagOrSpace = regexp.MustCompile(`<[^>]*>|\s+`)

// visibleText is a page's text with tags dropped and spaces collapsed
// (" ." closed up, as a browser shows "rows in all)." on one line).
func visibleText(page string) string {
	s := html.UnescapeString(tagOrSpace.ReplaceAllStringFunc(page, func(m string) string {
		if strings.HasPrefix(m, "<") {
			return ""
		}
		return " "
	}))
	return strings.ReplaceAll(s, " .", ".")
}

// TestAPIUploadPreviewCutsLongCells: the upload answer's preview cuts each
// value at the browser preview's limit and says which values were cut, so
// a file of long dialogues no longer answers megabytes of preview; the
// import keeps every value whole. Before, the preview held whole cells.
func TestAPIUploadPreviewCutsLongCells(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@preview.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		long := strings.Repeat("a long dialogue turn ", 5000) // 105,000 characters
		exact := strings.Repeat("x", previewCellRunes)
		csv := "id,text,quality\ns1," + long + ",3\ns2," + exact + ",4\n"
		up := decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), tok, "long.csv", csv), http.StatusCreated)
		if up.PreviewCellChars != previewCellRunes {
			t.Errorf("preview_cell_chars = %d, want the browser's %d", up.PreviewCellChars, previewCellRunes)
		}
		if len(up.Preview) != 2 || len(up.PreviewTruncated) != 2 {
			t.Fatalf("preview has %d rows and %d truncation rows, want 2 and 2", len(up.Preview), len(up.PreviewTruncated))
		}
		text := slices.Index(up.Columns, "text")
		for i, tc := range []struct {
			want string
			cut  bool
		}{
			{shortenText(long, previewCellRunes), true},
			{exact, false},
		} {
			got := up.Preview[i][text]
			if got != tc.want || up.PreviewTruncated[i][text] != tc.cut {
				t.Errorf("row %d: preview %d characters (truncated %v), want %q (truncated %v)",
					i+1, len([]rune(got)), up.PreviewTruncated[i][text], tc.want, tc.cut)
			}
			if len([]rune(got)) > previewCellRunes {
				t.Errorf("row %d: a preview value of %d characters, over the limit %d", i+1, len([]rune(got)), previewCellRunes)
			}
			if id := slices.Index(up.Columns, "id"); up.PreviewTruncated[i][id] {
				t.Errorf("row %d: a short id marked as cut", i+1)
			}
		}
	})
}
