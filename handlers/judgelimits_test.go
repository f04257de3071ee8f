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

// TestJudgeLimitsForm: the judge form stores the limits every worker
// shares, shows them again on the edit page, and refuses bad ones.
func TestJudgeLimitsForm(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		limited := func(name, conc, rpm, tpm, slow string) url.Values {
			f := judgeFormValues(name, "https://api.example.com/v1", "", "")
			f.Set("shared_concurrency", conc)
			f.Set("requests_per_minute", rpm)
			f.Set("tokens_per_minute", tpm)
			f.Set("slow_seconds", slow)
			return f
		}
		tests := []struct {
			name       string
			form       url.Values
			wantStatus int
			want       models.JudgeLimits // stored, when saved
			wantText   string             // on the refused form
		}{
			{"all limits", limited("Shared", "6", "500", "90000", "2.5"), http.StatusSeeOther,
				models.JudgeLimits{MaxConcurrency: 6, AdaptiveLimit: 6, RequestsPerMinute: 500, TokensPerMinute: 90000, SlowMS: 2500}, ""},
			{"none", limited("Free", "", "", "", ""), http.StatusSeeOther, models.JudgeLimits{}, ""},
			{"negative", limited("Bad", "-1", "", "", ""), http.StatusUnprocessableEntity, models.JudgeLimits{}, "must be a whole number"},
			{"not a number", limited("Bad2", "", "lots", "", ""), http.StatusUnprocessableEntity, models.JudgeLimits{}, "requests per minute"},
			{"too many at once", limited("Bad3", "5000", "", "", ""), http.StatusUnprocessableEntity, models.JudgeLimits{}, "the most is 1024"},
			{"slow not a number", limited("Bad4", "", "", "", "soon"), http.StatusUnprocessableEntity, models.JudgeLimits{}, "slow threshold"},
			// A slow threshold halves the shared limit: alone it was
			// stored as no limits at all, dropped without a word.
			{"slow threshold alone", limited("Bad5", "", "", "", "2"), http.StatusUnprocessableEntity, models.JudgeLimits{}, "set “Calls at once, all runs together” too"},
			{"slow threshold with a rate only", limited("Bad6", "", "500", "", "2"), http.StatusUnprocessableEntity, models.JudgeLimits{}, "leave the slow threshold empty"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.postForm("/judges", tt.form)
				if rec.Code != tt.wantStatus {
					t.Fatalf("POST /judges = %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
				}
				if rec.Code != http.StatusSeeOther {
					if !strings.Contains(rec.Body.String(), tt.wantText) {
						t.Errorf("refused form lacks %q", tt.wantText)
					}
					if _, ok := env.judgeNamed(tt.form.Get("name")); ok {
						t.Errorf("a judge with bad limits was stored")
					}
					return
				}
				j, ok := env.judgeNamed(tt.form.Get("name"))
				if !ok {
					t.Fatal("judge not stored")
				}
				got, err := env.db.FindJudgeLimits(context.Background(), j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.MaxConcurrency != tt.want.MaxConcurrency || got.AdaptiveLimit != tt.want.AdaptiveLimit || got.RequestsPerMinute != tt.want.RequestsPerMinute ||
					got.TokensPerMinute != tt.want.TokensPerMinute || got.SlowMS != tt.want.SlowMS {
					t.Errorf("stored limits %s slow=%dms, want %s slow=%dms", got, got.SlowMS, tt.want, tt.want.SlowMS)
				}
				page := env.get(fmt.Sprintf("/judges/%d/edit", j.ID)).Body.String()
				for field, v := range map[string]string{"shared_concurrency": tt.form.Get("shared_concurrency"),
					"requests_per_minute": tt.form.Get("requests_per_minute"), "tokens_per_minute": tt.form.Get("tokens_per_minute"),
					"slow_seconds": tt.form.Get("slow_seconds")} {
					if want := fmt.Sprintf(`name="%s" value="%s"`, field, v); !strings.Contains(page, want) {
						t.Errorf("edit page lacks %s", want)
					}
				}
			})
		}
		// Saving the form again unchanged keeps the adaptive state; a
		// change starts it again from the new maximum.
		j, _ := env.judgeNamed("Shared")
		if err := env.db.CutJudgeConcurrency(context.Background(), j.ID); err != nil {
			t.Fatal(err)
		}
		same := limited("Shared", "6", "500", "90000", "2.5")
		if rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), same); rec.Code != http.StatusSeeOther {
			t.Fatalf("update = %d: %s", rec.Code, rec.Body)
		}
		if l, _ := env.db.FindJudgeLimits(context.Background(), j.ID); l.AdaptiveLimit != 3 {
			t.Errorf("unchanged limits saved: adaptive limit %d, want it kept at 3", l.AdaptiveLimit)
		}
		if rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), limited("Shared", "10", "500", "90000", "2.5")); rec.Code != http.StatusSeeOther {
			t.Fatalf("update = %d: %s", rec.Code, rec.Body)
		}
		if l, _ := env.db.FindJudgeLimits(context.Background(), j.ID); l.AdaptiveLimit != 10 || l.MaxConcurrency != 10 {
			t.Errorf("new limit: %s, want 10 at once", l)
		}
	})
}
