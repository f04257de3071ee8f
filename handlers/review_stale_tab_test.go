package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewFromAStalePageDoesNotOverwrite (teamtry48): a reviewer with
// the same sample open in two tabs (or two browsers) rated it 3 in one,
// then added a comment in the other, whose form still showed the rating
// 2 it was opened with: the save put 2 back, unseen, and the 3 was lost.
// The form now names the review it was filled in with ("seen"); a save
// whose review has changed since is refused (422) with the page showing
// what was typed and what the review holds now, and saved when sent
// again from that page. A form sent twice with the same content, a form
// without the field (a page from before, the API) and another reviewer's
// review are saved as before.
func TestReviewFromAStalePageDoesNotOverwrite(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("stale", 8)
		run := env.storedRun(d, "1 to 5", d.human, nil)
		ann := env.sessionCookie(env.createUser(env.ws.ID, "ann@stale48.test", models.RoleEditor))
		bob := env.sessionCookie(env.createUser(env.ws.ID, "bob@stale48.test", models.RoleEditor))
		seenRe := regexp.MustCompile(`name="seen" value="([0-9]+)"`)
		action := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		for i, tc := range []struct {
			name string
			// before: the rating the reviewer saved before opening the
			// page ("" none); other: what the other tab saves after.
			before      string
			other       url.Values
			otherIsBob  bool
			sent        url.Values
			noSeen      bool
			refused     string // in the 422 page; "" when saved
			wantCurrent string // the reviewer's rating after the save ("" none)
		}{
			{name: "a rating changed in another tab", before: "2", other: url.Values{"score": {"3"}},
				sent: url.Values{"score": {"2"}, "comment": {"a <note> from tab A"}}, refused: "your rating of it is now 3", wantCurrent: "3"},
			{name: "a rating given in another tab to a sample unrated here", other: url.Values{"score": {"4"}},
				sent: url.Values{"score": {"1"}}, refused: "your rating of it is now 4", wantCurrent: "4"},
			{name: "withdrawn in another tab", before: "2", other: url.Values{"clear_rating": {"on"}, "comment": {"wrong sample"}},
				sent: url.Values{"score": {"2"}}, refused: "you withdrew your rating of it", wantCurrent: ""},
			{name: "the same form sent twice", before: "2", other: url.Values{"score": {"5"}, "comment": {"same"}},
				sent: url.Values{"score": {"5"}, "comment": {"same"}}, wantCurrent: "5"},
			{name: "another reviewer rated meanwhile", before: "2", other: url.Values{"score": {"1"}}, otherIsBob: true,
				sent: url.Values{"score": {"4"}}, wantCurrent: "4"},
			{name: "a page from before the field, as before", before: "2", other: url.Values{"score": {"3"}},
				sent: url.Values{"score": {"1"}}, noSeen: true, wantCurrent: "1"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				row := d.rowIDs[i]
				queue := fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=random&run=%d&seed=1&sample=%d", d.ds.ID, run.ID, row)
				post := func(who *http.Cookie, f url.Values) *httptestRecorder {
					t.Helper()
					form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"}, "back": {queue}}
					for k, v := range f {
						form[k] = v
					}
					return env.send(http.MethodPost, action, form, "", who)
				}
				if tc.before != "" {
					if rec := post(ann, url.Values{"score": {tc.before}}); rec.Code != http.StatusSeeOther {
						t.Fatalf("first rating: %d", rec.Code)
					}
				}
				page := env.send(http.MethodGet, queue, nil, "", ann).Body.String()
				m := seenRe.FindStringSubmatch(page)
				if m == nil {
					t.Fatalf("the form names no review it was filled in with: %.1500s", page)
				}
				otherWho := ann
				if tc.otherIsBob {
					otherWho = bob
				}
				if rec := post(otherWho, tc.other); rec.Code != http.StatusSeeOther {
					t.Fatalf("the other tab's save: %d %.500s", rec.Code, rec.Body)
				}
				stored := func() int {
					all, err := env.db.ListReviewRatings(t.Context(), env.ws.ID, d.ds.ID, "Quality", 0)
					must(t, err)
					return len(all)
				}
				before := stored()
				sent := url.Values{}
				for k, v := range tc.sent {
					sent[k] = v
				}
				if !tc.noSeen {
					sent.Set("seen", m[1])
				}
				rec := post(ann, sent)
				body := rec.Body.String()
				if tc.refused != "" {
					if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.refused) ||
						!strings.Contains(body, "Save again to replace that review") {
						t.Fatalf("status %d, want 422 saying %q: %.2000s", rec.Code, tc.refused, body)
					}
					if n := stored(); n != before {
						t.Errorf("%d reviews stored by the refused save", n-before)
					}
					if c := tc.sent.Get("comment"); c != "" && !strings.Contains(body, htmlText(c)) {
						t.Errorf("the page lost the typed comment %q", c)
					}
					if strings.Contains(body, "<note>") {
						t.Error("the typed comment is shown unescaped")
					}
					// Sent again from the page that said so, it is saved.
					again := seenRe.FindStringSubmatch(body)
					if again == nil || again[1] == m[1] {
						t.Fatalf("the refusal's form names %v, want the review saved meanwhile (not %s)", again, m[1])
					}
					sent.Set("seen", again[1])
					if rec := post(ann, sent); rec.Code != http.StatusSeeOther {
						t.Fatalf("saved again: %d %.800s", rec.Code, rec.Body)
					}
					if got := env.annCurrent(d.ds.ID, row, "ann@stale48.test"); got != tc.sent.Get("score") {
						t.Errorf("after saving again the rating is %q, want %q", got, tc.sent.Get("score"))
					}
					// The refused save came before: what stood then is what the
					// test expects of it.
					return
				}
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("status %d, want 303: %.1500s", rec.Code, body)
				}
				if got := env.annCurrent(d.ds.ID, row, "ann@stale48.test"); got != tc.wantCurrent {
					t.Errorf("the rating is %q, want %q", got, tc.wantCurrent)
				}
			})
		}

		// A seen that is no review id is refused naming the field.
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(d.rowIDs[0])}, "criterion": {"Quality"}, "score": {"2"}, "seen": {"abc"}}
		rec := env.send(http.MethodPost, action, form, "", ann)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "seen") {
			t.Errorf("seen=abc: %d %.500s", rec.Code, rec.Body)
		}
	})
}

// annCurrent is the current rating of a sample by the account email,
// "" when none, written as the form writes it.
func (env *testEnv) annCurrent(datasetID, row int64, email string) string {
	env.t.Helper()
	all, err := env.db.ListReviewRatings(env.t.Context(), env.ws.ID, datasetID, "Quality", 0)
	must(env.t, err)
	var latest *models.ReviewRating
	for i := range all {
		if all[i].RowID == row && all[i].Reviewer == email && (latest == nil || all[i].ID > latest.ID) {
			latest = &all[i]
		}
	}
	if latest == nil || latest.Score == nil {
		return ""
	}
	return fmt.Sprint(*latest.Score)
}
