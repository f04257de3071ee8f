package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
)

// TestLiveSearchReadsTheSharedFigures: a search on a running run's page
// built the whole report at each view (every sample's text, every
// figure), and the figures it showed lost their "Provisional" note. It now
// filters the shared figures' samples by the rows whose text matches,
// read a chunk at a time: each search shows exactly the rows, count and
// order of the whole report's table, with the note.
func TestLiveSearchReadsTheSharedFigures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		env := newTestEnv(t, db)
		d := env.demo()
		id := env.launch(d.launchForm("2", "5"))
		env.waitRun(id, 60*time.Second)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
		// Some samples unscored, so the missing filter and the score
		// order have something to tell apart.
		must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE run_id = ? AND (round = 1 AND row_id % 3 = 0 OR row_id % 7 = 0)`, id).Error)
		run, err := env.db.GetRun(context.Background(), id)
		must(t, err)
		whole, err := report.BuildWith(env.localCtx(), env.db, run.WorkspaceID, id, report.Options{})
		must(t, err)
		if len(whole.Criteria) == 0 || len(whole.Criteria[0].Samples) < 20 {
			t.Fatalf("the demo run has too few samples to search: %+v", whole.Criteria)
		}
		// Needles from the data: a word of a sample's text in capitals
		// (the search ignores case), part of an id, a common letter
		// pair (many matches), nothing.
		first := whole.Criteria[0].Samples[3]
		var word string
		for _, f := range first.Fields {
			for _, w := range strings.Fields(f.Value) {
				if len(w) > len(word) && strings.Trim(w, ".,;:!?'\"()") == w {
					word = w
				}
			}
		}
		if word == "" {
			t.Fatalf("sample %s has no word to search", first.ExternalID)
		}
		idPart := first.ExternalID[len(first.ExternalID)/2:]
		rowLink := regexp.MustCompile(fmt.Sprintf(`<tr data-testid="sample-row"><td><a href="/runs/%d/samples/(\d+)"`, id))
		for _, q := range []url.Values{
			{"q": {strings.ToUpper(word)}},
			{"q": {idPart}},
			{"q": {"e"}},
			{"q": {"e"}, "page": {"2"}},
			{"q": {"e"}, "sort": {"score"}, "dir": {"desc"}},
			{"q": {"e"}, "only": {"missing"}, "sort": {"diff"}},
			{"q": {"e"}, "criterion": {"1"}, "sort": {"human"}},
			{"q": {"no sample says this 9f3k"}},
		} {
			want := sampleTable(whole, q)
			if q.Get("q") != "no sample says this 9f3k" && q.Get("only") == "" && want.Matching == 0 {
				t.Fatalf("%v: nothing matches in the whole report", q)
			}
			rec := env.get(fmt.Sprintf("/runs/%d?%s", id, q.Encode()))
			if rec.Code != http.StatusOK {
				t.Fatalf("%v: %d", q, rec.Code)
			}
			body := rec.Body.String()
			if !strings.Contains(body, `data-testid="provisional"`) {
				t.Errorf("%v: a search on a running run shows its figures without saying they are provisional", q)
			}
			var got []int64
			for _, m := range rowLink.FindAllStringSubmatch(body, -1) {
				n, err := strconv.ParseInt(m[1], 10, 64)
				must(t, err)
				got = append(got, n)
			}
			var wantIDs []int64
			for _, s := range want.Rows {
				wantIDs = append(wantIDs, s.RowID)
			}
			if !slices.Equal(got, wantIDs) {
				t.Errorf("%v: rows %v, the whole report's table shows %v", q, got, wantIDs)
			}
			count := fmt.Sprintf("%s of %s", strconv.Itoa(want.Matching), strconv.Itoa(want.Total))
			if !strings.Contains(body, count) {
				t.Errorf("%v: the page does not say %q", q, count)
			}
		}
	})
}
