package handlers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

var (
	crumbNavRe   = regexp.MustCompile(`(?s)<nav[^>]*aria-label="Breadcrumb"[^>]*>(.*?)</nav>`)
	crumbLinkRe  = regexp.MustCompile(`<a href="([^"]*)">([^<]*)</a>`)
	crumbItemRe  = regexp.MustCompile(`<li[^>]*>`)
	oldCrumbsRe  = regexp.MustCompile(`<nav class="crumbs">`)
	crumbCurrent = `aria-current="page"`
)

// TestEveryPageHasOneBreadcrumbTrail: the pages of a project, its data,
// rubrics, runs and settings each carry exactly one breadcrumb nav, the
// shared component's, starting at Home, with the page itself last and no
// hand-written trail ("Projects / …") left.
func TestEveryPageHasOneBreadcrumbTrail(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		runID := env.launch(d.launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		bs, err := env.db.ListBatches(ctx, runID)
		if err != nil || len(bs) == 0 || len(bs[0].RowIDs) == 0 {
			t.Fatalf("batches: %v (%d)", err, len(bs))
		}
		p := env.project.ID
		tests := []struct {
			path string
			// want are the labels of the trail's links after Home, and
			// last the current page.
			want []string
		}{
			{fmt.Sprintf("/projects/%d", p), []string{env.project.Name}},
			{fmt.Sprintf("/projects/%d/datasets/new", p), []string{env.project.Name, "Datasets", "Upload a dataset"}},
			{fmt.Sprintf("/datasets/%d", d.dataset.ID), []string{env.project.Name, "Datasets", "Dataset " + d.dataset.Name}},
			{fmt.Sprintf("/datasets/%d/review", d.dataset.ID), []string{env.project.Name, "Dataset " + d.dataset.Name, "Review"}},
			{fmt.Sprintf("/projects/%d/rubrics/new", p), []string{env.project.Name, "Rubrics", "New rubric"}},
			{fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID), []string{env.project.Name, "Rubrics", "Edit rubric"}},
			{fmt.Sprintf("/rubrics/%d/versions", d.rubric.ID), []string{"Rubric " + d.rubric.Name, "Versions"}},
			{fmt.Sprintf("/projects/%d/runs/new", p), []string{env.project.Name, "New run"}},
			{fmt.Sprintf("/projects/%d/experiments", p), []string{env.project.Name, "Experiments"}},
			{"/runs", []string{"Runs"}},
			{fmt.Sprintf("/runs/%d", runID), []string{env.project.Name, "Runs", ""}},
			{fmt.Sprintf("/runs/%d/samples/%d", runID, bs[0].RowIDs[0]), []string{env.project.Name, "Runs", "", ""}},
			{fmt.Sprintf("/runs/%d/batches", runID), []string{env.project.Name, "Runs", "", ""}},
			{fmt.Sprintf("/runs/%d/batches/%d", runID, bs[0].ID), []string{env.project.Name, "Runs", "", ""}},
			{fmt.Sprintf("/runs/%d/variants", runID), []string{env.project.Name, "Runs", "", "Variants"}},
			{fmt.Sprintf("/runs/%d/align", runID), []string{env.project.Name, "Runs", "", "Align the judge"}},
			{"/judges", []string{"Judges"}},
			{"/judges/new", []string{"Judges", "New judge"}},
			{"/shares", []string{"Share links"}},
			{"/tokens", []string{"API access tokens"}},
			{"/trash", []string{"Trash"}},
			{"/settings/webhook", []string{"Webhook"}},
		}
		for _, tt := range tests {
			rec := env.get(tt.path)
			if rec.Code != 200 {
				t.Errorf("%s: status %d", tt.path, rec.Code)
				continue
			}
			body := rec.Body.String()
			if n := len(oldCrumbsRe.FindAllString(body, -1)); n > 0 {
				t.Errorf("%s: %d hand-written crumb navs left", tt.path, n)
			}
			navs := crumbNavRe.FindAllStringSubmatch(body, -1)
			if len(navs) != 1 {
				t.Errorf("%s: %d breadcrumb navs, want exactly 1", tt.path, len(navs))
				continue
			}
			trail := navs[0][1]
			links := crumbLinkRe.FindAllStringSubmatch(trail, -1)
			if len(links) == 0 || links[0][1] != "/" || links[0][2] != "Home" {
				t.Errorf("%s: first crumb is %v, want a link Home to /", tt.path, links)
				continue
			}
			items := crumbItemRe.FindAllString(trail, -1)
			if len(items) != len(tt.want)+1 {
				t.Errorf("%s: %d crumbs, want Home and %d more:\n%s", tt.path, len(items), len(tt.want), trail)
				continue
			}
			if !strings.Contains(items[len(items)-1], crumbCurrent) {
				t.Errorf("%s: the last crumb is not marked as the current page:\n%s", tt.path, trail)
			}
			for _, w := range tt.want {
				if w != "" && !strings.Contains(trail, ">"+escapeHTML(w)+"<") {
					t.Errorf("%s: trail lacks %q:\n%s", tt.path, w, trail)
				}
			}
		}
	})
}

// escapeHTML is how templ writes a label into the page.
func escapeHTML(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
