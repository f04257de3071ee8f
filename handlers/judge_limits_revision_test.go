package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeFormKeepsALaterLimitsChange: a judge's shared limits are part
// of its revision. A change of only the limits, made after the judge form
// was opened, refuses the form's save (409) with the person's values kept
// and the limits the other save stored shown; saving again with the new
// revision then applies the form. Editing only the limits moves the
// revision, and a save without a change of limits leaves the adaptive
// state alone. (QA: the revision named updated_at alone and the limits
// were stored after the judge in a second step, so a form filled before a
// limits-only change put the old limits back silently.)
func TestJudgeFormKeepsALaterLimitsChange(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Real", BaseURL: "http://127.0.0.1:9/v1", Model: "m",
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, TimeoutSeconds: 30}
		if err := env.db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		if err := env.db.SetJudgeLimits(ctx, models.JudgeLimits{JudgeID: j.ID, RequestsPerMinute: 60}); err != nil {
			t.Fatal(err)
		}
		edit, save := fmt.Sprintf("/judges/%d/edit", j.ID), fmt.Sprintf("/judges/%d", j.ID)
		form := func(model, rpm, revision string) url.Values {
			return url.Values{"name": {"Real"}, "base_url": {"http://127.0.0.1:9/v1"}, "model": {model},
				"temperature": {"0.2"}, "top_p": {"0.9"}, "max_concurrency": {"2"}, "timeout_seconds": {"30"},
				"requests_per_minute": {rpm}, "revision": {revision}}
		}
		rpmNow := func() int {
			l, err := env.db.FindJudgeLimits(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			return l.RequestsPerMinute
		}
		revisionNow := func() string {
			s, err := env.db.FindJudge(ctx, env.ws.ID, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			return s.Revision()
		}

		for _, tc := range []struct {
			name string
			// elsewhere changes only the limits, to 30 requests a minute.
			elsewhere func(t *testing.T)
		}{
			{"another tab's form", func(t *testing.T) {
				other := revisionIn(env.get(edit).Body.String())
				if rec := env.postForm(save, form("m", "30", other)); rec.Code != http.StatusSeeOther {
					t.Fatalf("other tab's save = %d %.500s", rec.Code, rec.Body)
				}
			}},
			{"limits stored alone", func(t *testing.T) {
				if err := env.db.SetJudgeLimits(ctx, models.JudgeLimits{JudgeID: j.ID, RequestsPerMinute: 30}); err != nil {
					t.Fatal(err)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := env.db.SetJudgeLimits(ctx, models.JudgeLimits{JudgeID: j.ID, RequestsPerMinute: 60}); err != nil {
					t.Fatal(err)
				}
				page := env.get(edit).Body.String()
				opened := revisionIn(page)
				if !strings.Contains(page, `value="60"`) {
					t.Fatalf("the form does not show the stored limit 60")
				}
				tc.elsewhere(t)
				if rpmNow() != 30 {
					t.Fatalf("the other change stored %d requests a minute, want 30", rpmNow())
				}
				if revisionNow() == opened {
					t.Errorf("a limits-only change kept the judge's revision %q", opened)
				}
				// This tab changes the model and sends the limits it was shown.
				rec := env.postForm(save, form("mine", "60", opened))
				body := rec.Body.String()
				if rec.Code != http.StatusConflict {
					t.Fatalf("save over a later limits change = %d, want 409", rec.Code)
				}
				if rpmNow() != 30 {
					t.Errorf("the later limits change was overwritten: %d requests a minute", rpmNow())
				}
				i := strings.Index(body, `data-testid="saved-meanwhile-limits"`)
				if i < 0 || !strings.Contains(body[i:i+200], "30") {
					t.Errorf("the conflict page does not show the limits the other save stored (30)")
				}
				if !strings.Contains(body, `value="mine"`) || !strings.Contains(body, `value="60"`) {
					t.Errorf("the conflict page lost the person's values")
				}
				if rec := env.postForm(save, form("mine", "60", revisionIn(body))); rec.Code != http.StatusSeeOther || rpmNow() != 60 {
					t.Errorf("save again = %d with %d requests a minute, want 303 and 60", rec.Code, rpmNow())
				}
			})
		}

		// A save that leaves the limits as stored leaves the adaptive state.
		env.db.Gorm.Model(&models.JudgeLimits{}).Where("judge_id = ?", j.ID).Update("successes", 7)
		if rec := env.postForm(save, form("again", "60", revisionNow())); rec.Code != http.StatusSeeOther {
			t.Fatalf("save = %d", rec.Code)
		}
		if l, _ := env.db.FindJudgeLimits(ctx, j.ID); l.Successes != 7 {
			t.Errorf("a save without a change of limits restarted the adaptive state (successes %d, want 7)", l.Successes)
		}
	})
}
