package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// TestPreviewFragmentsAreMarked: the live previews' answers carry
// X-Batcheval-Fragment, which static/app.js requires before it pastes an
// answer; an error answer (here an unknown rubric) and a whole page do
// not, so the script shows its plain message instead of pasting a page
// inside the page (QA: after a session expired, the error page appeared
// inside the prompt preview).
func TestPreviewFragmentsAreMarked(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		ds := env.demoDataset()
		rubric := rubricFormValues("", "1", "5")
		rubric.Set("preview_dataset", fmt.Sprint(ds.ID))
		unknown := rubricFormValues("", "1", "5")
		unknown.Set("rubric_id", "999999")
		launch := d.launchForm("5", "10")
		launch.Set("project_id", strconv.FormatInt(env.project.ID, 10))
		page := rubricFormValues("preview", "1", "5")
		page.Set("preview_dataset", fmt.Sprint(ds.ID))
		tests := []struct {
			name   string
			path   string
			form   url.Values
			status int
			marked bool
		}{
			{"rubric preview", "/rubrics/preview", rubric, http.StatusOK, true},
			{"run estimate", "/runs/estimate", launch, http.StatusOK, true},
			{"rubric preview of an unknown rubric", "/rubrics/preview", unknown, http.StatusNotFound, false},
			{"no-JS preview button (a whole page)", fmt.Sprintf("/projects/%d/rubrics", env.project.ID), page, http.StatusOK, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.postForm(tt.path, tt.form)
				if rec.Code != tt.status {
					t.Fatalf("POST %s = %d, want %d: %s", tt.path, rec.Code, tt.status, rec.Body)
				}
				if got := rec.Header().Get(fragmentHeader) == "1"; got != tt.marked {
					t.Errorf("POST %s: %s header %q, want marked=%v", tt.path, fragmentHeader, rec.Header().Get(fragmentHeader), tt.marked)
				}
			})
		}
	})
}
