package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewQueuePlaceSurvivesRecompute: a reviewer had the disagreement
// queue open at its third place when an editor recomputed the report with
// other human ratings, which reorders the queue. Saving the rating brought
// the reviewer back to the third place, now another sample, and "next"
// led to the fourth place of the new order: samples were skipped or
// repeated (reviewer40). Links now name the sample (the one shown, or
// the one next and previous go on from), its place is found in the order
// as it is now, and the page says the order changed; a link that names
// no sample (made before) still opens its place.
func TestReviewQueuePlaceSurvivesRecompute(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		ann := &http.Cookie{Name: reviewerCookie, Value: "Ann"}
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		q := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {"0"}, "order": {"disagreement"}, "seed": {"1"}, "blind": {"off"}}
		open := func(path string) (id string, place int, body string) {
			t.Helper()
			rec := env.send(http.MethodGet, path, nil, "", ann)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			body = rec.Body.String()
			m := regexp.MustCompile(`<h2>Sample ([^ <]+) <a`).FindStringSubmatch(body)
			p := regexp.MustCompile(`data-testid="review-position">(\d+)<`).FindStringSubmatch(body)
			if m == nil || p == nil {
				t.Fatalf("GET %s: no sample or place shown", path)
			}
			place, _ = strconv.Atoi(p[1])
			return m[1], place - 1, body
		}
		at := func(i int) string {
			v := url.Values{}
			for k, vs := range q {
				v[k] = vs
			}
			v.Set("i", strconv.Itoa(i))
			return queue + "?" + v.Encode()
		}
		attr := func(body, re string) string {
			t.Helper()
			m := regexp.MustCompile(re).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no %s on the page", re)
			}
			return html.UnescapeString(m[1])
		}
		moved := func(body string) bool { return strings.Contains(body, `data-testid="review-order-changed"`) }

		// Unchanged, every order's links lead where the index does.
		for _, order := range []string{"disagreement", "uncertain", "random"} {
			q.Set("order", order)
			id5, _, body := open(at(5))
			form := body[strings.Index(body, `data-testid="review-mine"`):]
			for _, l := range []struct {
				href string
				want int
			}{{attr(body, `href="([^"]+)" rel="next"`), 6}, {attr(body, `href="([^"]+)" rel="prev"`), 4}, {attr(form, `name="back" value="([^"]+)"`), 5}} {
				id, place, page := open(l.href)
				if wantID, _, _ := open(at(l.want)); place != l.want || id != wantID || moved(page) {
					t.Errorf("%s order, from place 6 (%s): %s opens %s at place %d (order changed: %v), want %s at %d", order, id5, l.href, id, place+1, moved(page), wantID, l.want+1)
				}
			}
		}
		q.Set("order", "disagreement")

		shown, _, page := open(at(2))
		form := page[strings.Index(page, `data-testid="review-mine"`):] // the rating form, not the header's
		back := attr(form, `name="back" value="([^"]+)"`)
		next := attr(page, `href="([^"]+)" rel="next"`)
		prev := attr(page, `href="([^"]+)" rel="prev"`)
		if moved(page) {
			t.Errorf("the order is said to have changed before any recompute")
		}

		// Bob rates five other samples far from the judge; the report is
		// recomputed with the browser ratings only, so those five come
		// first and the shown sample, with no rating left, moves on.
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		rated := 0
		for _, r := range rows {
			if r.ExternalID == shown || rated == 5 {
				continue
			}
			one := 1.0
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: r.ID,
				Criterion: run.RubricSnapshot.Criteria[0].Name, Reviewer: "Bob", Score: &one, Lo: 1, Hi: 3})
			must(t, err)
			rated++
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		order := map[string]int{} // sample id -> place, as the queue is ordered now
		var byPlace []string
		for i := 0; ; i++ {
			id, place, _ := open(at(i))
			if place != i {
				break
			}
			order[id] = i
			byPlace = append(byPlace, id)
		}
		now := order[shown]
		if now == 2 || now+1 >= len(byPlace) || now < 1 {
			t.Fatalf("the recompute left %s at place %d of %d: the test needs it moved, not first or last", shown, now, len(byPlace))
		}

		for _, tc := range []struct {
			name      string
			path      func() string
			want      string
			wantMoved bool
		}{
			{"back after rating", func() string {
				f := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {run.RubricSnapshot.Criteria[0].Name},
					"row": {attr(form, `name="row" value="(\d+)"`)}, "score": {"2"}, "back": {back}}
				rec := env.send(http.MethodPost, queue, f, "", ann)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("rating: %d", rec.Code)
				}
				return rec.Header().Get("Location")
			}, shown, true},
			{"next", func() string { return next }, byPlace[now+1], true},
			{"previous", func() string { return prev }, byPlace[now-1], true},
			{"a link naming no sample", func() string { return at(2) }, byPlace[2], false},
		} {
			id, place, body := open(tc.path())
			if id != tc.want {
				t.Errorf("%s: sample %s at place %d, want %s (the one rated was %s, at place 3 then, %d now)", tc.name, id, place+1, tc.want, shown, now+1)
			}
			if moved(body) != tc.wantMoved {
				t.Errorf("%s: the page says the order changed: %v, want %v", tc.name, moved(body), tc.wantMoved)
			}
		}
	})
}

// TestReviewQueueNoteWhenTheQueueChangesAroundThePlace: a reviewer is at
// a sample of the disagreement queue whose own place does not change when
// the report is recomputed, while the samples before it are reordered
// (another reviewer changed their ratings). The page now says the queue
// changed, on saving the rating and on next and previous, and keeps the
// reviewer at that sample; once the reviewer walks the new queue (the
// links of the page that said so), the note is gone; a link made before
// queue versions says nothing. Before, the note showed only when the
// sample's own place moved: the places before it silently held other
// samples.
func TestReviewQueueNoteWhenTheQueueChangesAroundThePlace(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		ann := &http.Cookie{Name: reviewerCookie, Value: "Ann"}
		crit := run.RubricSnapshot.Criteria[0].Name
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		q := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {"0"}, "order": {"disagreement"}, "seed": {"1"}, "blind": {"off"}}
		open := func(path string) (id string, place int, body string) {
			t.Helper()
			rec := env.send(http.MethodGet, path, nil, "", ann)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			body = rec.Body.String()
			m := regexp.MustCompile(`<h2>Sample ([^ <]+) <a`).FindStringSubmatch(body)
			p := regexp.MustCompile(`data-testid="review-position">(\d+)<`).FindStringSubmatch(body)
			if m == nil || p == nil {
				t.Fatalf("GET %s: no sample or place shown", path)
			}
			place, _ = strconv.Atoi(p[1])
			return m[1], place - 1, body
		}
		at := func(i int) string {
			v := url.Values{}
			for k, vs := range q {
				v[k] = vs
			}
			v.Set("i", strconv.Itoa(i))
			return queue + "?" + v.Encode()
		}
		attr := func(body, re string) string {
			t.Helper()
			m := regexp.MustCompile(re).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no %s on the page", re)
			}
			return html.UnescapeString(m[1])
		}
		note := func(body string) bool { return strings.Contains(body, `data-testid="review-order-changed"`) }
		order := func() []string {
			var byPlace []string
			for i := 0; ; i++ {
				id, place, _ := open(at(i))
				if place != i {
					return byPlace
				}
				byPlace = append(byPlace, id)
			}
		}
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		if len(rows) < 8 {
			t.Fatalf("%d samples: the test needs 8", len(rows))
		}
		// Bob rates the first five samples; with his ratings alone they
		// come first by disagreement, the others after in dataset order.
		bob := func(score float64) {
			for _, r := range rows[:5] {
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: r.ID,
					Criterion: crit, Reviewer: "Bob", Score: &score, Lo: 1, Hi: 3})
				must(t, err)
			}
			if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("recompute: %d", rec.Code)
			}
		}
		bob(1)
		before := order()
		shown, place, page := open(at(6))
		if note(page) || shown != rows[6].ExternalID {
			t.Fatalf("place 7 holds %s (want %s, the test needs it), order changed said: %v", shown, rows[6].ExternalID, note(page))
		}
		form := page[strings.Index(page, `data-testid="review-mine"`):]
		back := attr(form, `name="back" value="([^"]+)"`)
		next := attr(page, `href="([^"]+)" rel="next"`)
		prev := attr(page, `href="([^"]+)" rel="prev"`)

		bob(3) // the first five reorder; the shown sample stays at place 7
		after := order()
		if after[place] != shown || slices.Equal(before[:5], after[:5]) {
			t.Fatalf("the recompute should reorder the places before %s and leave it at place %d: %v, then %v", shown, place+1, before, after)
		}
		var walked string // a link of a page that said the queue changed
		for _, tc := range []struct {
			name string
			path func() string
			want int
		}{
			{"back after rating", func() string {
				f := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {crit},
					"row": {attr(form, `name="row" value="(\d+)"`)}, "score": {"2"}, "back": {back}}
				rec := env.send(http.MethodPost, queue, f, "", ann)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("rating: %d", rec.Code)
				}
				return rec.Header().Get("Location")
			}, place},
			{"next", func() string { return next }, place + 1},
			{"previous", func() string { return prev }, place - 1},
		} {
			id, at, body := open(tc.path())
			if id != after[tc.want] || at != tc.want {
				t.Errorf("%s: sample %s at place %d, want %s at %d", tc.name, id, at+1, after[tc.want], tc.want+1)
			}
			if !note(body) {
				t.Errorf("%s: the page does not say the queue changed", tc.name)
			} else if !strings.Contains(body, "This queue changed since you opened it") {
				t.Errorf("%s: the note does not say the queue changed around the place:\n%s", tc.name, body[strings.Index(body, `data-testid="review-order-changed"`):][:600])
			}
			walked = attr(body, `href="([^"]+)" rel="next"`)
		}
		if _, _, body := open(walked); note(body) {
			t.Errorf("walking the new queue, the page still says it changed")
		}
		if _, _, body := open(at(place)); note(body) {
			t.Errorf("a link without a queue version says the queue changed")
		}
	})
}
