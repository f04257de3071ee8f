package handlers

import (
	"html"
	"net/url"
	"strings"
	"testing"
)

// TestUploadAnnotatorGuessSkipsRatings (llmeval44): the mapping page's
// one-row-per-annotator offer names the annotators' column, not a column
// of ratings whose name holds "worker" or "rater" (worker_rating of 3.5
// and 4 was offered, and importing with it made each rating an
// annotator); an annotator id column (worker_id of codes) is still the
// one offered.
func TestUploadAnnotatorGuessSkipsRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name, src, want string
		}{
			{"ratings named worker_rating", "id,text,worker_rating,who\n" +
				"s1,first answer here,3.5,ann1\ns1,first answer here,4,ann2\n" +
				"s2,second answer here,3.5,ann1\ns2,second answer here,2,ann2\n", "who"},
			{"ratings named rater_score, 1 to 5", "id,text,rater_score,who\n" +
				"s1,first answer here,3,ann1\ns1,first answer here,4,ann2\n" +
				"s2,second answer here,3,ann1\ns2,second answer here,5,ann2\n", "who"},
			{"worker ids written as codes", "id,text,score,worker_id\n" +
				"s1,first answer here,3,A1B2\ns1,first answer here,4,C3D4\n" +
				"s2,second answer here,3,A1B2\ns2,second answer here,5,C3D4\n", "worker_id"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				token := env.uploadToken("per-annotator.csv", tt.src)
				body := env.get(env.mapPath() + "?token=" + token).Body.String()
				i := strings.Index(body, `data-testid="use-annotator"`)
				if i < 0 {
					t.Fatalf("the mapping page offers no one-row-per-annotator layout:\n%s", body)
				}
				j := strings.LastIndex(body[:i], `href="`)
				link := html.UnescapeString(body[j+len(`href="`) : j+strings.Index(body[j+6:], `"`)+6])
				link, _, _ = strings.Cut(link, "#")
				q, err := url.ParseQuery(link[strings.Index(link, "?")+1:])
				if err != nil {
					t.Fatal(err)
				}
				if got := q.Get("annotator_column"); got != tt.want {
					t.Errorf("the offer chooses annotator column %q, want %q (link %s)", got, tt.want, link)
				}
			})
		}
	})
}
