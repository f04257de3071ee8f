package handlers

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// TestUploadOneRowPerAnnotator imports a file with a row per annotator and
// sample: rows merge into samples whose rating is the annotators' mean,
// each annotator's own rating is kept, and the group column is stored.
func TestUploadOneRowPerAnnotator(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const src = "id,doc,text,rater,quality\n" +
			"s1,d1,first answer,ann1,1\n" +
			"s1,d1,first answer,ann2,3\n" +
			"s2,d1,second answer,ann1,2\n" +
			"s2,d1,second answer,ann2,2\n" +
			"s3,d2,third answer,ann1,5\n"
		token := env.uploadToken("ratings.csv", src)
		page := env.get(env.mapPath() + "?token=" + token)
		if missing := bodyLacks(page.Body.String(), `name="annotator_column"`, `name="group_column"`); len(missing) > 0 {
			t.Fatalf("mapping page lacks %q", missing)
		}
		form := url.Values{"token": {token}, "name": {"Per annotator"}, "id_column": {"id"}, "annotator_column": {"rater"},
			"group_column": {"doc"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_4": {"1"}}
		rec := env.postForm(env.mapPath(), form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d, want 303: %s", rec.Code, rec.Body)
		}
		ctx := context.Background()
		dss, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		ds := dss[0]
		if ds.RowCount != 3 || ds.GroupColumn != "doc" {
			t.Fatalf("dataset rows = %d, group = %q; want 3 samples grouped by doc", ds.RowCount, ds.GroupColumn)
		}
		rows, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows[0].Ratings["quality"]; got == nil || *got != 2 {
			t.Errorf("s1 quality = %v, want the mean 2", got)
		}
		if got := rows[0].Ratings["quality@ann2"]; got == nil || *got != 3 {
			t.Errorf("s1 quality@ann2 = %v, want 3", got)
		}
		if _, ok := rows[2].Ratings["quality@ann2"]; ok {
			t.Errorf("s3 has a rating from ann2, who did not rate it")
		}
	})
}
