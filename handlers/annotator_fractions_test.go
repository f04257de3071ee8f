package handlers

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestUploadOneRowPerAnnotatorFractions (llmeval44): a file with one row
// per annotator whose ratings are written out of one maximum ("3/5") in a
// column named "rater_score", the annotators' column named like nothing
// usual. The rating column was guessed as the annotators' (its name holds
// "rater"), so the page called the rows different samples under one id
// and offered nothing. The offer must name the annotators' column, and
// importing with it must store each annotator's score as read ("3/5" is 3)
// and the sample's rating as the annotators' mean, with the scale said in
// the import notes.
func TestUploadOneRowPerAnnotatorFractions(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const src = "id,text,rater_score,who\n" +
			"s1,first answer here,1/5,ann1\n" +
			"s1,first answer here,4 / 5,ann2\n" +
			"s2,second answer here,2/5,ann1\n" +
			"s2,second answer here,5,ann2\n" +
			"s3,third answer here,2/5,ann2\n"
		token := env.uploadToken("fractions.csv", src)
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
		if got := q.Get("annotator_column"); got != "who" {
			t.Fatalf("the offer chooses annotator column %q, want \"who\" (link %s)", got, link)
		}
		page := env.get(link).Body.String()
		if missing := bodyLacks(page, `<option value="who" selected>`); len(missing) > 0 {
			t.Fatalf("after the link, the mapping page lacks %q", missing)
		}
		form := url.Values{"token": {token}, "name": {"Fractions per annotator"}, "id_column": {"id"}, "annotator_column": {"who"},
			"show_1": {"1"}, "label_1": {"Answer"}, "rating_2": {"1"}}
		if rec := env.postForm(env.mapPath(), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d, want 303: %s", rec.Code, rec.Body)
		}
		ctx := context.Background()
		dss, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		if err != nil || len(dss) == 0 || dss[0].Name != "Fractions per annotator" {
			t.Fatalf("datasets %v (%v), want the import first", dss, err)
		}
		ds := dss[0]
		if ds.RowCount != 3 {
			t.Fatalf("dataset rows = %d, want 3 samples", ds.RowCount)
		}
		if notes := strings.Join(ds.ImportNotes, " "); !strings.Contains(notes, "out of 5") {
			t.Errorf("import notes %q do not say the ratings were read out of 5", ds.ImportNotes)
		}
		rows, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []map[string]float64{
			{"rater_score": 2.5, "rater_score@ann1": 1, "rater_score@ann2": 4},
			{"rater_score": 3.5, "rater_score@ann1": 2, "rater_score@ann2": 5},
			{"rater_score": 2, "rater_score@ann2": 2},
		}
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(rows), len(want))
		}
		for i, w := range want {
			if len(rows[i].Ratings) != len(w) {
				t.Errorf("row %d ratings %v, want %v", i, rows[i].Ratings, w)
			}
			for k, v := range w {
				if got := rows[i].Ratings[k]; got == nil || *got != v {
					t.Errorf("row %d (%s) %s = %v, want %v", i, rows[i].ExternalID, k, got, v)
				}
			}
		}
	})
}
