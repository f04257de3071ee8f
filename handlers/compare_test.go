package handlers

import (
	"context"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator/perturb"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web/webtest"
)

var diffAttr = regexp.MustCompile(`data-testid="compare-row" data-diff="([^"]*)"`)

func TestCompareRuns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		a, b := x.batchEval, x.gEval
		comparePath := fmt.Sprintf("/compare?a=%d&b=%d&criterion=1", a.ID, b.ID)
		rec := env.get(comparePath)
		if rec.Code != http.StatusOK {
			t.Fatalf("compare: status %d: %s", rec.Code, rec.Body.String())
		}
		body := rec.Body.String()
		for _, w := range []string{"rescaled onto 0 to 1", `data-testid="runs-pearson">`, "BatchEval &lt;default&gt;", `<option value="1" selected>`, `data-testid="simulated-badge"`} {
			if !strings.Contains(body, w) {
				t.Errorf("compare page lacks %q", w)
			}
		}
		diffs := diffAttr.FindAllStringSubmatch(body, -1)
		if len(diffs) != env.demo().dataset.RowCount {
			t.Fatalf("compare page has %d samples, want %d", len(diffs), env.demo().dataset.RowCount)
		}
		prev := math.Inf(1)
		for i, m := range diffs {
			d, err := webtest.ParseNumber(m[1])
			if err != nil {
				t.Fatalf("row %d: difference %q: %v", i, m[1], err)
			}
			if math.Abs(d) > prev+1e-9 {
				t.Errorf("row %d: |difference| %.4f after %.4f, want largest first", i, math.Abs(d), prev)
			}
			prev = math.Abs(d)
		}

		// The sample page of the largest difference shows both runs' analyses.
		link := regexp.MustCompile(`href="(/compare/sample\?[^"]+)"`).FindStringSubmatch(body)
		if link == nil {
			t.Fatal("compare page has no link to a sample")
		}
		samplePath := strings.ReplaceAll(link[1], "&amp;", "&")
		u, _ := url.Parse(samplePath)
		rowID, _ := strconv.ParseInt(u.Query().Get("row"), 10, 64)
		page := env.get(samplePath).Body.String()
		if strings.Count(page, `data-testid="simulated-badge"`) < 2 {
			t.Errorf("sample comparison does not label both simulated runs")
		}
		for _, run := range []models.Run{a, b} {
			scores, err := env.db.ListRowScores(ctx, run.ID, rowID)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, s := range scores {
				if s.CriterionIndex == 1 && s.Analysis != "" {
					found++
					if !strings.Contains(page, templ.EscapeString(s.Analysis)) {
						t.Errorf("sample page lacks run %d's round %d analysis", run.ID, s.Round+1)
					}
				}
			}
			if found == 0 {
				t.Errorf("run %d has no analysis of row %d to show", run.ID, rowID)
			}
		}
		for _, w := range []string{`data-testid="side-A"`, `data-testid="side-B"`, fmt.Sprintf(`href="/runs/%d/samples/%d"`, b.ID, rowID)} {
			if !strings.Contains(page, w) {
				t.Errorf("sample page lacks %q", w)
			}
		}
		// Each side in its method's words: BatchEval's rounds, G-Eval's one score.
		side := func(name string) string {
			i := strings.Index(page, `data-testid="side-`+name+`"`)
			j := strings.Index(page[i:], "</section>")
			return page[i : i+j]
		}
		if sa, sb := side("A"), side("B"); !strings.Contains(sa, "Round 1:") || strings.Contains(sb, "Round 1:") || !strings.Contains(sb, "Score: ") {
			t.Errorf("sample comparison: BatchEval side should show rounds and G-Eval's one score, got\n%s\n%s", sa, sb)
		}

		// A noisy copy is matched by sample id.
		noisy, _, err := env.runner.LaunchNoise(ctx, env.ws.ID, a.ID, 3, perturb.Options{DeleteRate: 0.05, ReplaceRate: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		env.waitRun(noisy.ID, 60*time.Second)
		body = env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, noisy.ID)).Body.String()
		if got := len(diffAttr.FindAllString(body, -1)); got != env.demo().dataset.RowCount || !strings.Contains(body, `data-testid="noisy-note"`) {
			t.Errorf("noisy copy: %d matched samples (want %d) or no note", got, env.demo().dataset.RowCount)
		}
		// A sample of the noisy comparison: the copy's row of the same id.
		if m := regexp.MustCompile(`href="(/compare/sample\?[^"]+)"`).FindStringSubmatch(body); m == nil {
			t.Error("noisy copy: no sample link")
		} else if rec := env.get(html.UnescapeString(m[1])); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="fields-b"`) {
			t.Errorf("noisy copy's sample page: %d %.300s", rec.Code, rec.Body.String())
		}

		// A run on another dataset cannot be compared.
		other := env.topicDataset()
		elsewhere := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: other.ID, Name: "elsewhere",
			Method: models.MethodBatchEval, Status: models.RunQueued, Settings: a.Settings, RubricSnapshot: a.RubricSnapshot}
		if err := env.db.Gorm.Create(&elsewhere).Error; err != nil {
			t.Fatal(err)
		}
		bad := []struct {
			name, path string
			status     int
			want       string
		}{
			{"second run missing", fmt.Sprintf("/compare?a=%d", a.ID), http.StatusUnprocessableEntity, "Choose two runs"},
			{"other dataset", fmt.Sprintf("/compare?a=%d&b=%d", a.ID, elsewhere.ID), http.StatusUnprocessableEntity, "judged different datasets"},
			{"criterion out of range", fmt.Sprintf("/compare?a=%d&b=%d&criterion=7", a.ID, b.ID), http.StatusUnprocessableEntity, "Criterion number 7 does not exist in both runs"},
			{"unknown run", fmt.Sprintf("/compare?a=%d&b=999999", a.ID), http.StatusNotFound, ""},
			{"sample of no run", fmt.Sprintf("/compare/sample?a=%d&b=%d&row=999999", a.ID, b.ID), http.StatusNotFound, ""},
		}
		for _, tc := range bad {
			rec := env.get(tc.path)
			if rec.Code != tc.status {
				t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.status)
			}
			if !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%s: page does not say %q", tc.name, tc.want)
			}
		}
	})
}
