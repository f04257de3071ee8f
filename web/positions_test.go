package web

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/report"
)

// TestPositionsSayHowHumansWereScaled: the position table states how the
// human ratings were put on the judge's scale (the criterion's
// HumanScaleNote, the decomposition's too), where it used to claim they
// were "mapped onto the criterion's scale" whatever was done; the note is
// escaped like any text.
func TestPositionsSayHowHumansWereScaled(t *testing.T) {
	note := `The errors compare the human ratings as given with the judge's scores: they lie within the judge's 1 to 3 <b>.`
	c := report.CriterionReport{HumanScaleNote: note, Positions: []stats.PositionStat{{Position: 1, N: 2, MeanScore: 2, MeanAbsErr: 0.5, MeanSignedErr: 0.5}}}
	var buf bytes.Buffer
	if err := runPositions(c).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `data-testid="positions-human-scale">The errors compare the human ratings as given with the judge&#39;s scores: they lie within the judge&#39;s 1 to 3 &lt;b&gt;.</p>`) {
		t.Errorf("position table lacks the escaped human scale note:\n%s", page)
	}
	if strings.Contains(page, "mapped onto the criterion") {
		t.Errorf("position table still claims the ratings were mapped:\n%s", page)
	}
}
