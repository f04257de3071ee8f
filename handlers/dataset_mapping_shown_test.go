package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDatasetPageSaysHowRowsWereRead: the id column and the group column
// chosen on the mapping page were shown nowhere after it, so whoever
// imported a file whose id column was not unique (ids then generated) or
// chose a group column could not check it on the dataset's page. The page
// says where the ids come from and which column groups the samples.
func TestDatasetPageSaysHowRowsWereRead(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range []struct {
			name, id, group string
			want            []string
			not             []string
		}{
			{"From the file", "id", "", []string{"Ids from column <code>id</code>."}, []string{"Ids generated", "grouped by"}},
			{"Generated", "", "answer", []string{"Ids generated (row-1, row-2, …), not read from the file.", "Samples grouped by column <code>answer</code>"}, []string{"Ids from column"}},
		} {
			token := env.uploadToken("qa.csv", goodCSV)
			rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {tc.name}, "id_column": {tc.id}, "group_column": {tc.group},
				"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("import %s = %d: %s", tc.name, rec.Code, rec.Body)
			}
			page := env.get(rec.Header().Get("Location"))
			if page.Code != http.StatusOK {
				t.Fatalf("%s: dataset page %d", tc.name, page.Code)
			}
			body := page.Body.String()
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s: the dataset page lacks %q", tc.name, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("%s: the dataset page says %q", tc.name, n)
				}
			}
		}
	})
}
