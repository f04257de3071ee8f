package handlers

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewFormNamesTheAccount: the review form of a signed-in person
// said "Rating as editor@example.com" though the account has a display
// name. It says the name, and the email only for an account without one;
// the rating is still stored as the account's (its email and user id).
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
			{named, `Rating as <strong data-testid="reviewer">Edith Tor</strong>`},
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
		if want := "Review of " + crit.Name + " saved as Edith Tor."; flash != want {
			t.Errorf("after saving: %q, want %q", flash, want)
		}
	})
}
