package handlers

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
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
