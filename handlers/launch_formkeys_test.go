package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
)

// launchKeyIn is the one-time key of the launch form in a page ("" when
// the page has none).
func launchKeyIn(body string) string {
	m := regexp.MustCompile(`name="launch_key" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestLaunchFormSentTwiceLaunchesOnce: the launch form carries a one-time
// key, so a second post of it (a double click, a browser sending the page
// again after a timeout) answers 303 to the run or experiment the first
// one launched instead of starting another paid one, and two posts racing
// start one; the same key with changed fields launches nothing and shows
// the form again with a link to what it launched and a new key, which
// launches; a form shown again after a refusal has a new key that
// launches. (QA: a double-submitted launch form started two runs.)
func TestLaunchFormSentTwiceLaunchesOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		runs := func() int {
			t.Helper()
			rs, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}
		newForm := func(t *testing.T) (url.Values, string) {
			t.Helper()
			rec := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID))
			key := launchKeyIn(rec.Body.String())
			if rec.Code != http.StatusOK || key == "" {
				t.Fatalf("launch form = %d, launch_key %q: want a one-time key in a hidden field", rec.Code, key)
			}
			f := d.launchForm("1", "10")
			f.Set("launch_key", key)
			return f, key
		}
		experiments := func() int {
			t.Helper()
			es, err := env.db.ListExperiments(ctx, env.ws.ID, env.project.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(es)
		}
		for _, tc := range []struct {
			name, target, prefix string
			count                func() int // what the target launches
		}{
			{"run", fmt.Sprintf("/projects/%d/runs", env.project.ID), "/runs/", runs},
			{"experiment", fmt.Sprintf("/projects/%d/experiments", env.project.ID), "/experiments/", experiments},
		} {
			t.Run(tc.name, func(t *testing.T) {
				form, key := newForm(t)
				first := env.postForm(tc.target, form)
				made := first.Header().Get("Location")
				if first.Code != http.StatusSeeOther || !strings.HasPrefix(made, tc.prefix) {
					t.Fatalf("first post = %d to %q: %.300s", first.Code, made, first.Body)
				}
				before := runs()

				// The same post again: sent to what the first launched.
				again := env.postForm(tc.target, form)
				if again.Code != http.StatusSeeOther || again.Header().Get("Location") != made {
					t.Errorf("second post = %d to %q, want 303 to %q", again.Code, again.Header().Get("Location"), made)
				}
				if n := runs(); n != before {
					t.Errorf("second post of one form launched %d more runs", n-before)
				}

				// The same key with changed fields (and on the other button's
				// path): nothing launched, the form back with a link and a
				// new key, which launches.
				changed := url.Values{}
				for k, v := range form {
					changed[k] = v
				}
				changed.Set("seed", "2")
				other := fmt.Sprintf("/projects/%d/experiments", env.project.ID)
				if tc.name == "experiment" {
					other = fmt.Sprintf("/projects/%d/runs", env.project.ID)
				}
				var fresh string
				for _, target := range []string{tc.target, other} {
					rec := env.postForm(target, changed)
					body := rec.Body.String()
					fresh = launchKeyIn(body)
					if rec.Code != http.StatusConflict || !strings.Contains(body, `data-testid="launched-before"`) ||
						!strings.Contains(body, `href="`+made+`"`) || fresh == "" || fresh == key {
						t.Fatalf("changed form with a used key to %s = %d (key %q, was %q), want 409 with a link to %s and a new key: %.2000s",
							target, rec.Code, fresh, key, made, body)
					}
					if !strings.Contains(body, `value="2"`) {
						t.Errorf("changed form shown again without its change (seed 2)")
					}
					if n := runs(); n != before {
						t.Errorf("changed form with a used key launched %d runs", n-before)
					}
				}
				changed.Set("launch_key", fresh)
				if rec := env.postForm(tc.target, changed); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") == made {
					t.Errorf("changed form with its new key = %d to %q, want 303 to a new launch", rec.Code, rec.Header().Get("Location"))
				}

				// A refused post: the form comes back with a new key, and
				// the corrected form launches.
				bad, key := newForm(t)
				bad.Set("rounds", "many")
				rec := env.postForm(tc.target, bad)
				fresh = launchKeyIn(rec.Body.String())
				if rec.Code != http.StatusUnprocessableEntity || fresh == "" || fresh == key {
					t.Fatalf("refused post = %d, key %q (was %q): want 422 with a new key", rec.Code, fresh, key)
				}
				bad.Set("rounds", "1")
				bad.Set("launch_key", fresh)
				before = runs()
				if rec := env.postForm(tc.target, bad); rec.Code != http.StatusSeeOther || runs() == before {
					t.Errorf("corrected form = %d %.300s, want 303 and a launch", rec.Code, rec.Body)
				}

				// Two posts of one form at once: one launch, both sent to it.
				form, _ = newForm(t)
				racedFrom := tc.count()
				var wg sync.WaitGroup
				recs := make([]*httptest.ResponseRecorder, 2)
				for i := range recs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						req := httptest.NewRequest(http.MethodPost, tc.target, strings.NewReader(form.Encode()))
						req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
						recs[i] = httptest.NewRecorder()
						env.e.ServeHTTP(recs[i], req)
					}()
				}
				wg.Wait()
				for _, rec := range recs {
					if rec.Code != http.StatusSeeOther {
						t.Fatalf("racing post = %d %.300s", rec.Code, rec.Body)
					}
				}
				if a, b := recs[0].Header().Get("Location"), recs[1].Header().Get("Location"); a != b || !strings.HasPrefix(a, tc.prefix) {
					t.Errorf("racing posts sent to %q and %q, want one launch", a, b)
				}
				if n := tc.count(); n != racedFrom+1 {
					t.Errorf("two posts of one form at once made %d %ss, want 1", n-racedFrom, tc.name)
				}
			})
		}
	})
}
