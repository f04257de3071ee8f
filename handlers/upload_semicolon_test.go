package handlers

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// TestUploadSemicolonCSV: a file as European-locale Excel saves "CSV"
// (semicolons between fields, decimal commas, a BOM and CRLF line ends)
// was refused at upload ("the header contains ';'"). It uploads, maps and
// imports, its decimal-comma ratings stored as numbers.
func TestUploadSemicolonCSV(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const file = "\xEF\xBB\xBFid;question;answer;quality\r\n" +
			"q1;Quelle est la capitale de la France ?;\"Paris; bien sûr\";3,5\r\n" +
			"q2;Combien de pattes a une araignée ?;\"Huit, je crois\";\r\n" +
			"q3;Qui a écrit Hamlet ?;Shakespeare.;-0,5\r\n"
		token := env.uploadToken("avis.csv", file)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Avis"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d, want 303: %s", rec.Code, rec.Body)
		}
		ds := env.lastDataset()
		rows, err := env.db.ListDatasetRows(context.Background(), ds.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("%d rows imported, want 3", len(rows))
		}
		want := map[string]*float64{"q1": &[]float64{3.5}[0], "q2": nil, "q3": &[]float64{-0.5}[0]}
		for _, r := range rows {
			got, w := r.Ratings["quality"], want[r.ExternalID]
			if (got == nil) != (w == nil) || (got != nil && *got != *w) {
				t.Errorf("row %s quality = %v, want %v", r.ExternalID, got, w)
			}
		}
		if a := rows[0].Data["answer"]; a != "Paris; bien sûr" {
			t.Errorf("row q1 answer = %q, want the quoted text with its semicolon", a)
		}
	})
}
