package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDatasetListSeparatesNamesFromMarkers: on a project's page a
// dataset's name was written against what follows it: "mycsv (noisy copy,
// …, seed 3)derived copy" read as one name, and the Make main button
// touched the name. Each marker (main, derived copy, Make main) is set
// apart from the name by a space.
func TestDatasetListSeparatesNamesFromMarkers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		imported := func(name string) int64 {
			token := env.uploadToken(strings.ToLower(name)+".csv", goodCSV)
			rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {name}, "id_column": {"id"},
				"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("import %s = %d: %s", name, rec.Code, rec.Body)
			}
			id, err := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/datasets/"), 10, 64)
			must(t, err)
			return id
		}
		other := imported("Other")
		copied := imported("Copy")
		must(t, env.db.Gorm.Exec(`UPDATE datasets SET parent_dataset_id = ? WHERE id = ?`, d.dataset.ID, copied).Error)
		body := env.get(fmt.Sprintf("/projects/%d", env.project.ID)).Body.String()
		for _, tc := range []struct {
			id     int64
			marker string
		}{
			{d.dataset.ID, `<span class="badge" data-testid="main-dataset">`},
			{other, `<form method="post" action="/datasets/` + strconv.FormatInt(other, 10) + `/main"`},
			{copied, `<span class="small muted" data-testid="derived-dataset">`},
		} {
			re := regexp.MustCompile(`<a href="/datasets/` + strconv.FormatInt(tc.id, 10) + `">[^<]*</a>(\s*)` + regexp.QuoteMeta(tc.marker))
			m := re.FindStringSubmatch(body)
			if m == nil {
				t.Errorf("dataset %d: no %s after its name", tc.id, tc.marker)
			} else if m[1] == "" {
				t.Errorf("dataset %d: %s is written against its name", tc.id, tc.marker)
			}
		}
	})
}
