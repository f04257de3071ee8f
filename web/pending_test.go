package web

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestPendingTestsSayALastFailure: the compare page's and the experiment
// page's "being computed" notes say when the previous attempt failed, and
// only then.
func TestPendingTestsSayALastFailure(t *testing.T) {
	render := func(c templ.Component) string {
		t.Helper()
		var buf bytes.Buffer
		if err := c.Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, failed := range []bool{false, true} {
		cmp := CompareView{HasHuman: true, SameDataset: true, AgreementPending: &ResultsPreparing{Samples: 5000, RefreshSeconds: 5, LastFailed: failed}}
		page := render(ComparePage(cmp))
		if !strings.Contains(page, `data-testid="agreement-pending"`) || strings.Contains(page, `data-testid="agreement-failed"`) != failed {
			t.Errorf("compare page, last failed %v: pending note %v, failure note %v", failed,
				strings.Contains(page, `data-testid="agreement-pending"`), strings.Contains(page, `data-testid="agreement-failed"`))
		}
		exp := ExperimentView{Verdict: ExperimentVerdict{TestsPending: true, TestsRetried: failed, RefreshSeconds: 5}}
		page = render(ExperimentPage(exp))
		if !strings.Contains(page, `data-testid="tests-pending"`) || strings.Contains(page, `data-testid="tests-failed"`) != failed {
			t.Errorf("experiment page, last failed %v: pending note %v, failure note %v", failed,
				strings.Contains(page, `data-testid="tests-pending"`), strings.Contains(page, `data-testid="tests-failed"`))
		}
	}
}
