package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIRunConditionalGET: a script polling a run, and one caching its
// results and exports, sends back the ETag it was given. While nothing
// changed it gets 304 with no body; as soon as the run moves (an answer
// counted), is renamed, or its dataset renamed (the JSON export states
// it), the whole answer with a new tag, never a stale 304. Each format
// has its own tag (the CSV for Excel is another file). There were no
// ETags: every poll read and sent the whole report again.
func TestAPIRunConditionalGET(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		_, tok := env.apiToken(env.ws.ID, viewer.ID)
		d := env.ratedDataset("d", 3)
		run := env.storedRun(d, "r", []float64{1, 2, 3}, nil)
		addresses := []struct {
			path string
			weak bool
		}{
			{fmt.Sprintf("/api/v1/runs/%d", run.ID), false},
			{fmt.Sprintf("/api/v1/runs/%d/results", run.ID), true},
			{fmt.Sprintf("/api/v1/runs/%d/export.json", run.ID), true},
			{fmt.Sprintf("/api/v1/runs/%d/export.csv", run.ID), true},
			{fmt.Sprintf("/api/v1/runs/%d/export.csv?excel=1", run.ID), true},
		}
		get := func(path, ifNoneMatch string) (int, string, string) {
			a.header = http.Header{}
			if ifNoneMatch != "" {
				a.header.Set("If-None-Match", ifNoneMatch)
			}
			defer func() { a.header = nil }()
			rec := a.get(path, tok)
			return rec.Code, rec.Header().Get("ETag"), rec.Body.String()
		}
		tags := map[string]string{}
		read := func(step string) {
			t.Helper()
			seen := map[string]string{}
			for _, ad := range addresses {
				code, tag, body := get(ad.path, "")
				if code != http.StatusOK || tag == "" || strings.HasPrefix(tag, "W/") != ad.weak {
					t.Fatalf("%s: GET %s = %d, ETag %q (weak wanted: %v): %.200s", step, ad.path, code, tag, ad.weak, body)
				}
				if other, dup := seen[tag]; dup {
					t.Errorf("%s: %s and %s share the ETag %s", step, other, ad.path, tag)
				}
				seen[tag] = ad.path
				// The same again: 304, no body, the same tag; a list
				// holding it, and its weak form, match too.
				for _, inm := range []string{tag, `"other", ` + tag, "W/" + strings.TrimPrefix(tag, "W/")} {
					code, again, body := get(ad.path, inm)
					if code != http.StatusNotModified || again != tag || body != "" {
						t.Errorf("%s: GET %s with If-None-Match %s = %d, ETag %q, body %.100q; want 304, the same tag, no body", step, ad.path, inm, code, again, body)
					}
				}
				tags[ad.path] = tag
			}
		}
		// stale: each address's tag before the change gets the whole answer.
		stale := func(step string) {
			t.Helper()
			for _, ad := range addresses {
				old := tags[ad.path]
				code, tag, _ := get(ad.path, old)
				if code != http.StatusOK || tag == old {
					t.Errorf("%s: GET %s with the tag from before = %d, ETag %q; want 200 with a new tag", step, ad.path, code, tag)
				}
			}
		}
		read("a finished run")

		// The run moves: a late answer is counted (its calls).
		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).UpdateColumn("calls", run.Calls+1).Error; err != nil {
			t.Fatal(err)
		}
		stale("an answer counted")
		read("after the answer")

		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).UpdateColumn("name", "renamed").Error; err != nil {
			t.Fatal(err)
		}
		stale("the run renamed")
		read("after the run's rename")

		// The dataset renamed: the JSON export and the report state its
		// name (the run's own answer does not).
		if err := env.db.Gorm.Model(&models.Dataset{}).Where("id = ?", d.ds.ID).UpdateColumn("name", "renamed data").Error; err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{addresses[1].path, addresses[2].path} {
			if code, tag, body := get(path, tags[path]); code != http.StatusOK || tag == tags[path] || !strings.Contains(body, "renamed data") {
				t.Errorf("the dataset renamed: GET %s with the tag from before = %d, ETag %q; want 200 with a new tag and the new name", path, code, tag)
			}
		}

		// A run still going (resumed): each answer stored moves its tags.
		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).
			Updates(map[string]any{"status": models.RunRunning, "finished_at": nil, "batches_done": 0}).Error; err != nil {
			t.Fatal(err)
		}
		read("a running run")
		for i := 1; i <= 2; i++ {
			if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).UpdateColumn("batches_done", i).Error; err != nil {
				t.Fatal(err)
			}
			stale(fmt.Sprintf("answer %d of the running run", i))
			read(fmt.Sprintf("after answer %d", i))
		}

		// A tag of another run, or no list of tags, is the whole answer.
		for _, inm := range []string{`"nothing"`, "not quoted"} {
			if code, _, _ := get(addresses[0].path, inm); code != http.StatusOK {
				t.Errorf("If-None-Match %s = %d, want 200", inm, code)
			}
		}
	})
}
