package handlers

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewFormNamesTheAccount: the review form of a signed-in person
// said "Rating as editor@example.com" though the account has a display
// name. It says the name with the email beside it (as the review lists
// and the export name the reviewer: TestReviewerNamedAlikeOnEveryPage),
// and the email only for an account without one; the rating is still
// stored as the account's (its email and user id).
func TestReviewFormNamesTheAccount(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		place := fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=disagreement&run=%d&seed=1", d.dataset.ID, run.ID)
		named, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "editor@example.com", Name: "Edith Tor", Password: testPassword})
		must(t, err)
		unnamed, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "plain@example.com", Name: "x", Password: testPassword})
		must(t, err)
		// A name left blank (an account made before names were asked for).
		must(t, env.db.Gorm.Exec(`UPDATE users SET name = '' WHERE id = ?`, unnamed.ID).Error)
		for _, tc := range []struct {
			who  models.User
			want string
		}{
			{named, `Rating as <strong data-testid="reviewer">Edith Tor (editor@example.com)</strong>`},
			{unnamed, `Rating as <strong data-testid="reviewer">plain@example.com</strong>`},
		} {
			rec := env.send(http.MethodGet, place, nil, "", env.sessionCookie(tc.who))
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: review queue %d", tc.who.Email, rec.Code)
			}
			if body := rec.Body.String(); !strings.Contains(body, tc.want) {
				i := strings.Index(body, "Rating as")
				t.Errorf("%s: want %s, the form says %.120s", tc.who.Email, tc.want, body[max(i, 0):])
			}
		}
		// The message after saving names the account as the form did; it
		// said "saved as editor@example.com".
		crit := run.RubricSnapshot.Criteria[0]
		var rowID int64
		must(t, env.db.Gorm.Raw(`SELECT MIN(id) FROM dataset_rows WHERE dataset_id = ?`, d.dataset.ID).Scan(&rowID).Error)
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(rowID)}, "criterion": {crit.Name},
			"score": {"2"}, "back": {place}}
		rec := env.send(http.MethodPost, fmt.Sprintf("/datasets/%d/review", d.dataset.ID), form, "", env.sessionCookie(named))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("saving a review: %d %s", rec.Code, rec.Body)
		}
		var flash string
		for _, ck := range rec.Result().Cookies() {
			if ck.Name == flashCookie {
				_, enc, _ := strings.Cut(ck.Value, ":")
				b, err := base64.RawURLEncoding.DecodeString(enc)
				must(t, err)
				flash = string(b)
			}
		}
		if want := "Review of " + crit.Name + " saved as Edith Tor (editor@example.com)."; flash != want {
			t.Errorf("after saving: %q, want %q", flash, want)
		}
	})
}

// TestReviewerNamedAlikeOnEveryPage: a reviewer with an account was named
// by their display name in the form's "Rating as" and the message after
// saving, but by their email in the sample page's and the queue's review
// lists and in the dataset export, so a colleague could not tell that
// "Edith Tor" and "editor@example.com" were one person (reviewer40).
// Every list names them "Edith Tor" with the email beside it; the
// export keeps its column by email (it keys the reviewer when imported
// again) and adds a column saying who rated each sample by name and email.
func TestReviewerNamedAlikeOnEveryPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		edith, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "editor@example.com", Name: "Edith Tor", Password: testPassword})
		must(t, err)
		bob, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "bob@example.com", Name: "Bob <b>Ray</b>", Password: testPassword})
		must(t, err)
		crit := run.RubricSnapshot.Criteria[0]
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 1)
		must(t, err)
		row := rows[0].ID
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		for _, who := range []models.User{edith, bob} {
			form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {crit.Name}, "score": {"2"}, "back": {queue}}
			if rec := env.send(http.MethodPost, queue, form, "", env.sessionCookie(who)); rec.Code != http.StatusSeeOther {
				t.Fatalf("%s rating: %d", who.Email, rec.Code)
			}
		}
		edithShown := `<strong>Edith Tor</strong> <span class="small muted" data-testid="review-reviewer-email">editor@example.com</span>`
		for _, tc := range []struct{ page, path string }{
			{"sample page", fmt.Sprintf("/runs/%d/samples/%d", run.ID, row)},
			{"queue", fmt.Sprintf("%s?run=%d&criterion=0&i=0&blind=off&sample=%d", queue, run.ID, row)},
		} {
			body := env.send(http.MethodGet, tc.path, nil, "", env.sessionCookie(bob)).Body.String()
			if !strings.Contains(body, edithShown) {
				i := strings.Index(body, `data-testid="reviews"`)
				t.Errorf("%s: Edith's review is not named %s:\n%.400s", tc.page, edithShown, body[max(i, 0):])
			}
			if tc.page == "sample page" && !strings.Contains(body, "<strong>Bob &lt;b&gt;Ray&lt;/b&gt;</strong>") {
				t.Errorf("%s: Bob's name is not shown escaped", tc.page)
			}
		}
		rec := env.send(http.MethodGet, fmt.Sprintf("/datasets/%d/export.csv", d.dataset.ID), nil, "", env.sessionCookie(bob))
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d", rec.Code)
		}
		recs, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		must(t, err)
		head := recs[0]
		col := slices.Index(head, crit.HumanColumn+"@browser:Edith Tor")
		names := slices.Index(head, "browser reviewers")
		if col < 0 || names < 0 {
			t.Fatalf("export header %q: want Edith's column by her display name and a column of names", head)
		}
		found := false
		for _, r := range recs[1:] {
			if r[0] != rows[0].Data[head[0]] {
				continue
			}
			found = true
			if r[col] != "2" || r[names] != "Bob <b>Ray</b> (bob@example.com); Edith Tor (editor@example.com)" {
				t.Errorf("export row of the rated sample: rating %q, names %q", r[col], r[names])
			}
		}
		if !found {
			t.Errorf("no export row has the rated sample's %s %q", head[0], rows[0].Data[head[0]])
		}
	})
}
