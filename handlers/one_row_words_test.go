package handlers

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOneRowIsWrittenInTheSingular: importing a file of one sample said
// "Imported 1 rows", and the launch form offered the dataset as "(1
// samples)". Both count it in the singular; more keep the plural.
func TestOneRowIsWrittenInTheSingular(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range []struct {
			name, csv, flash, option string
		}{
			{"One", "id,question,answer,quality\nq1,What is the capital of France?,Paris.,4\n", `Imported 1 row into “One”.`, "One (1 sample)"},
			{"Two", "id,question,answer,quality\nq1,What is the capital of France?,Paris.,4\nq2,Who wrote Hamlet?,Shakespeare.,3\n", `Imported 2 rows into “Two”.`, "Two (2 samples)"},
		} {
			token := env.uploadToken(strings.ToLower(tc.name)+".csv", tc.csv)
			rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {tc.name}, "id_column": {"id"},
				"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("import %s = %d: %s", tc.name, rec.Code, rec.Body)
			}
			var flash string
			for _, ck := range rec.Result().Cookies() {
				if ck.Name == flashCookie {
					_, enc, _ := strings.Cut(ck.Value, ":")
					b, _ := base64.RawURLEncoding.DecodeString(enc)
					flash = string(b)
				}
			}
			if !strings.HasPrefix(flash, tc.flash) {
				t.Errorf("import of %s says %q, want it to start %q", tc.name, flash, tc.flash)
			}
			form := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String()
			if !strings.Contains(form, ">"+tc.option+"</option>") {
				t.Errorf("the launch form does not offer %q", tc.option)
			}
		}
	})
}
