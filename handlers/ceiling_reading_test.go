package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/report"
)

// TestCeilingReadingAgreesWithAlpha: after "Recompute with browser
// ratings" with a reviewer who rated two samples, the human ceiling has a
// Krippendorff's alpha (two samples rated twice are enough for it) but no
// correlation of one human with the others (that needs three). The
// sentence beside the alpha must not say the humans' agreement could not
// be measured.
func TestCeilingReadingAgreesWithAlpha(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		rep, err := report.Build(ctx, env.db, env.ws.ID, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		back := fmt.Sprintf("/runs/%d", run.ID)
		for i, score := range []string{"1", "3"} {
			s := rep.Criteria[1].Samples[i]
			form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(s.RowID)}, "criterion": {"Coherent"},
				"back": {back}, "reviewer": {"Ann Lee"}, "score": {score}}
			if rec := env.postForm(queue, form); rec.Code != http.StatusSeeOther {
				t.Fatalf("rating %d: status %d", i, rec.Code)
			}
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: status %d %s", rec.Code, rec.Body.String())
		}
		body := env.get(back).Body.String()
		blocks := regexp.MustCompile(`(?s)data-testid="ceiling-reading">([^<]*)<.*?data-testid="ceiling-alpha">([^<]*)<`).FindAllStringSubmatch(body, -1)
		if len(blocks) == 0 {
			t.Fatalf("no human ceiling on the run page after recompute:\n%s", body)
		}
		measured := 0
		for _, b := range blocks {
			reading, alpha := b[1], b[2]
			if alpha == "—" {
				continue
			}
			measured++
			if strings.Contains(reading, "agreement with each other could not be measured") || strings.Contains(reading, "agreement among humans could not be measured") {
				t.Errorf("ceiling reading %q says the humans' agreement was not measured, beside Krippendorff's α %s", reading, alpha)
			}
			if !strings.Contains(reading, "α ") && !strings.Contains(reading, " vs ") {
				t.Errorf("ceiling reading %q neither compares the judge nor names α %s", reading, alpha)
			}
		}
		if measured == 0 {
			t.Fatalf("no ceiling with a Krippendorff's α: the case is not exercised: %v", blocks)
		}
	})
}
