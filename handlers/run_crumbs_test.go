package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
)

var crumbCurrentRe = regexp.MustCompile(`<li aria-current="page">([^<]*)</li>`)

// TestRunPagesCrumbsStartAtProject walks the pages under a run (the run
// itself, a sample, the units list, a unit, the variants and align pages,
// the comparison and one of its samples) and the dataset's review queue:
// each trail runs Home, then the project (its name escaped, linking to the
// project's page), as the run page's does, and ends with the page's own
// label. The project's name holds markup and an ampersand, so a label
// written raw shows. The share links' pages of the same run and comparison
// stay as they were: no trail, no link into the project.
func TestRunPagesCrumbsStartAtProject(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const projectName = `Q&A <b>support</b>`
		must(t, env.db.Gorm.Table("projects").Where("id = ?", env.project.ID).Update("name", projectName).Error)
		d := env.demo()
		a := env.launch(d.launchForm("1", "10"))
		b := env.launch(d.launchForm("1", "5"))
		runA := env.waitRun(a, 30*time.Second)
		env.waitRun(b, 30*time.Second)
		bs, err := env.db.ListBatches(ctx, a)
		if err != nil || len(bs) == 0 || len(bs[0].RowIDs) == 0 {
			t.Fatalf("batches: %v (%d)", err, len(bs))
		}
		rowID := bs[0].RowIDs[0]
		rows, err := env.db.FindDatasetRows(ctx, d.dataset.ID, []int64{rowID})
		must(t, err)
		sample := "Sample " + rows[rowID].ExternalID
		words := methods.For(runA.Method).Words()
		capital := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
		projectLink := fmt.Sprintf(`<a href="/projects/%d">%s</a>`, env.project.ID, html.EscapeString(projectName))

		tests := []struct {
			name, path string
			last       string // the page's own label, the trail's last step
		}{
			{"run", fmt.Sprintf("/runs/%d", a), runA.Name},
			{"sample", fmt.Sprintf("/runs/%d/samples/%d", a, rowID), sample},
			{"units", fmt.Sprintf("/runs/%d/batches", a), capital(words.Units)},
			{"unit", fmt.Sprintf("/runs/%d/batches/%d", a, bs[0].ID), capital(words.Unit)},
			{"variants", fmt.Sprintf("/runs/%d/variants", a), "Variants"},
			{"align", fmt.Sprintf("/runs/%d/align", a), "Align the judge"},
			{"compare", fmt.Sprintf("/compare?a=%d&b=%d", a, b), "Compare with " + runA.Name},
			{"compare sample", fmt.Sprintf("/compare/sample?a=%d&b=%d&row=%d", a, b, rowID), sample},
			{"review queue", fmt.Sprintf("/datasets/%d/review?run=%d", d.dataset.ID, a), "Review"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.get(tt.path)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: status %d", tt.path, rec.Code)
				}
				navs := crumbNavRe.FindAllStringSubmatch(rec.Body.String(), -1)
				if len(navs) != 1 {
					t.Fatalf("%s: %d breadcrumb navs, want 1", tt.path, len(navs))
				}
				trail := navs[0][1]
				links := crumbLinkRe.FindAllString(trail, -1)
				if len(links) < 2 || links[0] != `<a href="/">Home</a>` || links[1] != projectLink {
					t.Errorf("%s: trail starts %q, want Home then %s:\n%s", tt.path, links, projectLink, trail)
				}
				cur := crumbCurrentRe.FindAllStringSubmatch(trail, -1)
				if len(cur) != 1 || html.UnescapeString(cur[0][1]) != tt.last {
					t.Errorf("%s: the trail ends with %q, want %q:\n%s", tt.path, cur, tt.last, trail)
				}
				if !strings.HasSuffix(strings.TrimSpace(trail), "</li></ol>") || !strings.Contains(trail[strings.LastIndex(trail, "<li"):], `aria-current="page"`) {
					t.Errorf("%s: the page's own label is not the trail's last step:\n%s", tt.path, trail)
				}
			})
		}

		// Share links show the same run and comparison to people outside
		// the workspace: no trail and no link into the project.
		_, runToken, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: a})
		must(t, err)
		_, cmpToken, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareCompare, RunID: a, OtherRunID: b})
		must(t, err)
		for _, p := range []string{
			"/s/" + runToken, fmt.Sprintf("/s/%s/samples/%d", runToken, rowID),
			"/s/" + cmpToken, fmt.Sprintf("/s/%s/samples/%d", cmpToken, rowID),
		} {
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
			if rec.Code != http.StatusOK {
				t.Errorf("%s: status %d", p, rec.Code)
				continue
			}
			body := rec.Body.String()
			for _, leak := range []string{`data-testid="breadcrumbs"`, fmt.Sprintf(`href="/projects/%d`, env.project.ID)} {
				if i := strings.Index(body, leak); i >= 0 {
					t.Errorf("%s: the shared page holds %s: %.300q", p, leak, body[max(0, i-150):])
				}
			}
		}
	})
}

// TestRenameDeleteCrumbsStartAtProject: the rename page (a refused
// rename) and the delete page of each object that lives under a project
// (dataset, rubric, run, experiment) start their trail with the project,
// escaped and linking to its page, then the project's list that holds the
// object, the object, and the page's own label, as the object's page
// starts; they started with the object. A project's pages start with the
// project itself, and a judge's with the judges' list.
func TestRenameDeleteCrumbsStartAtProject(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const projectName = `Q&A <b>support</b>`
		must(t, env.db.Gorm.Table("projects").Where("id = ?", env.project.ID).Update("name", projectName).Error)
		d := env.demo()
		runID := env.launch(d.launchForm("1", "10"))
		run := env.waitRun(runID, 30*time.Second)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, RubricID: &d.rubric.ID, Name: "Methods <on> & the demo"}
		must(t, env.db.CreateExperiment(ctx, &e))
		p := env.project.ID
		projectLink := fmt.Sprintf(`<a href="/projects/%d">%s</a>`, p, html.EscapeString(projectName))
		link := func(href, label string) string {
			return fmt.Sprintf(`<a href="%s">%s</a>`, href, html.EscapeString(label))
		}
		tests := []struct {
			kind, base, name string
			// trail are the trail's links after Home, before the page's
			// own label.
			trail []string
		}{
			{"dataset", fmt.Sprintf("/datasets/%d", d.dataset.ID), d.dataset.Name,
				[]string{projectLink, link(fmt.Sprintf("/projects/%d#datasets", p), "Datasets"), link(fmt.Sprintf("/datasets/%d", d.dataset.ID), d.dataset.Name)}},
			{"rubric", fmt.Sprintf("/rubrics/%d", d.rubric.ID), d.rubric.Name,
				[]string{projectLink, link(fmt.Sprintf("/projects/%d#rubrics", p), "Rubrics"), link(fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID), d.rubric.Name)}},
			{"run", fmt.Sprintf("/runs/%d", runID), run.Name,
				[]string{projectLink, link("/runs", "Runs"), link(fmt.Sprintf("/runs/%d", runID), run.Name)}},
			{"experiment", fmt.Sprintf("/experiments/%d", e.ID), e.Name,
				[]string{projectLink, link(fmt.Sprintf("/projects/%d/experiments", p), "Experiments"), link(fmt.Sprintf("/experiments/%d", e.ID), e.Name)}},
			{"project", fmt.Sprintf("/projects/%d", p), projectName, []string{projectLink}},
			{"judge", fmt.Sprintf("/judges/%d", d.judge.ID), d.judge.Name,
				[]string{link("/judges", "Judges"), link(fmt.Sprintf("/judges/%d/edit", d.judge.ID), d.judge.Name)}},
		}
		for _, tt := range tests {
			for _, pg := range []struct {
				label string
				open  func() *httptest.ResponseRecorder
				code  int
			}{
				// A rename page is shown when a rename is refused (an
				// empty name here).
				{"Rename", func() *httptest.ResponseRecorder {
					return env.postForm(tt.base+"/rename", url.Values{"name": {" "}, "was": {tt.name}})
				}, http.StatusUnprocessableEntity},
				{"Delete", func() *httptest.ResponseRecorder { return env.get(tt.base + "/delete") }, http.StatusOK},
			} {
				t.Run(tt.kind+" "+pg.label, func(t *testing.T) {
					rec := pg.open()
					if rec.Code != pg.code {
						t.Fatalf("status %d, want %d: %.300s", rec.Code, pg.code, rec.Body)
					}
					navs := crumbNavRe.FindAllStringSubmatch(rec.Body.String(), -1)
					if len(navs) != 1 {
						t.Fatalf("%d breadcrumb navs, want 1", len(navs))
					}
					trail := navs[0][1]
					links := crumbLinkRe.FindAllString(trail, -1)
					want := append([]string{`<a href="/">Home</a>`}, tt.trail...)
					if strings.Join(links, "\n") != strings.Join(want, "\n") {
						t.Errorf("trail links:\n%s\nwant:\n%s", strings.Join(links, "\n"), strings.Join(want, "\n"))
					}
					cur := crumbCurrentRe.FindAllStringSubmatch(trail, -1)
					if len(cur) != 1 || cur[0][1] != pg.label || !strings.HasSuffix(strings.TrimSpace(trail), `<li aria-current="page">`+pg.label+`</li></ol>`) {
						t.Errorf("the trail does not end with %q: %s", pg.label, trail)
					}
				})
			}
		}
	})
}
