package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewPagesTellAViewerWhyTheyCannotRate: a viewer opening the review
// queue or a sample page saw the sample, the judge and "you rated 0 of 30",
// but no rating form and no word why. Both pages now say that rating takes
// the reviewer, editor or owner role and who can change it; a reviewer and
// an editor get the form and not that note.
func TestReviewPagesTellAViewerWhyTheyCannotRate(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		viewer, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleViewer, models.NewUser{Email: "viewer@example.com", Name: "Vi", Password: testPassword})
		must(t, err)
		editor, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "editor@example.com", Name: "Ed", Password: testPassword})
		must(t, err)
		reviewer, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleReviewer, models.NewUser{Email: "reviewer@example.com", Name: "Rev", Password: testPassword})
		must(t, err)
		var rowID int64
		must(t, env.db.Gorm.Raw(`SELECT MIN(id) FROM dataset_rows WHERE dataset_id = ?`, d.dataset.ID).Scan(&rowID).Error)
		pages := map[string]string{
			"review queue": fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=disagreement&run=%d&seed=1", d.dataset.ID, run.ID),
			"sample page":  fmt.Sprintf("/runs/%d/samples/%d", run.ID, rowID),
		}
		for name, path := range pages {
			for _, tc := range []struct {
				who      models.User
				wantNote bool
			}{{viewer, true}, {reviewer, false}, {editor, false}} {
				rec := env.send(http.MethodGet, path, nil, "", env.sessionCookie(tc.who))
				if rec.Code != http.StatusOK {
					t.Fatalf("%s as %s: %d", name, tc.who.Email, rec.Code)
				}
				body := rec.Body.String()
				note := strings.Contains(body, `data-testid="review-cannot-rate"`)
				form := strings.Contains(body, `data-testid="review-form"`)
				switch {
				case tc.wantNote && (!note || form):
					t.Errorf("%s as a viewer: note %v, form %v; want the note and no form", name, note, form)
				case tc.wantNote && !strings.Contains(body, "takes the reviewer, editor or owner role"):
					t.Errorf("%s as a viewer: the note does not name the role that rates", name)
				case !tc.wantNote && (note || !form):
					t.Errorf("%s as %s: note %v, form %v; want the form and no note", name, tc.who.Email, note, form)
				}
			}
		}
	})
}
