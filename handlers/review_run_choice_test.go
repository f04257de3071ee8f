package handlers

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewQueueRunChoiceBounded: a dataset judged by more runs than the
// queue's run choice lists (queueRunChoice). The choice lists the newest
// judged runs and the run shown, and links to every run; ?runs=all lists
// every one (and keeps listing them when the form is sent). The run shown
// by default and the run an address names are those the whole list gave
// (queue45: the queue read every judged run of the dataset on each view):
// the default is the newest completed run even when it is older than every
// listed run, and a named run older than those listed opens and is added.
func TestReviewQueueRunChoiceBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		real := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		if !real.Completed() {
			t.Fatalf("run %s", real.Status)
		}
		// Newer runs that judged part of the dataset and stopped: listed,
		// never opened by default.
		var later []models.Run
		for i := range queueRunChoice + 5 {
			r := real
			r.ID, r.Name, r.Status, r.BatchesDone = 0, fmt.Sprintf("stopped %02d", i), models.RunFailed, 1
			must(t, env.db.Gorm.Create(&r).Error)
			later = append(later, r)
		}
		// A newer run with no criterion is never listed.
		empty := real
		empty.ID, empty.Name, empty.RubricSnapshot.Criteria = 0, "no criteria", nil
		must(t, env.db.Gorm.Create(&empty).Error)

		every, err := env.h.datasetRuns(ctx, d.dataset)
		must(t, err)
		if len(every) != len(later)+1 || defaultQueueRun(every).ID != real.ID {
			t.Fatalf("the dataset's judged runs: %d, default %d; want %d and run %d", len(every), defaultQueueRun(every).ID, len(later)+1, real.ID)
		}
		option := regexp.MustCompile(`<option value="(\d+)"( selected)?>`)
		choice := func(path string) (ids []int64, selected int64, body string) {
			t.Helper()
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			body = rec.Body.String()
			sel := body[strings.Index(body, `<select name="run">`):]
			sel = sel[:strings.Index(sel, "</select>")]
			for _, m := range option.FindAllStringSubmatch(sel, -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				ids = append(ids, id)
				if m[2] != "" {
					selected = id
				}
			}
			return ids, selected, body
		}
		idsOf := func(rs []models.Run) []int64 {
			var out []int64
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		newest := append(idsOf(every[:queueRunChoice]), real.ID)
		for _, c := range []struct {
			name, path string
			ids        []int64
			selected   int64
			link       bool
		}{
			{"default", queue, newest, real.ID, true},
			{"every run", queue + "?runs=all", idsOf(every), real.ID, false},
			{"a listed run", queue + "?run=" + strconv.FormatInt(every[3].ID, 10), newest, every[3].ID, true},
			{"an older run", queue + "?run=" + strconv.FormatInt(later[0].ID, 10), append(slices.Clone(newest), later[0].ID), later[0].ID, true},
		} {
			ids, selected, body := choice(c.path)
			if !slices.Equal(ids, c.ids) || selected != c.selected {
				t.Errorf("%s: the run choice lists %v with %d selected, want %v with %d", c.name, ids, selected, c.ids, c.selected)
			}
			if got := strings.Contains(body, `data-testid="review-all-runs"`); got != c.link {
				t.Errorf("%s: a link to every run: %v, want %v", c.name, got, c.link)
			}
			if got := strings.Contains(body, `name="runs" value="all"`); got == c.link {
				t.Errorf("%s: the form keeps listing every run: %v, want %v", c.name, got, !c.link)
			}
			if strings.Contains(body, `data-testid="review-run-note"`) {
				t.Errorf("%s: the page says it shows another run than asked:\n%s", c.name, pageText(body))
			}
		}
	})
}
