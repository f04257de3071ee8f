package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestInviteLinksPerHourAreLimited: a workspace makes at most
// models.InvitesPerHour invite links an hour, revoked ones included; the
// next is refused with 429, a Retry-After and words saying when to try
// again, and no link is made. Regression: an owner could make any number
// of links and answer each with another address, reading from how each
// answer ended (a new member, or the invite kept for an account) which
// addresses have accounts, as fast as they liked; revoking the kept
// invites deleted them, leaving no trace to count.
func TestInviteLinksPerHourAreLimited(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		cookie := env.sessionCookie(owner)
		makeLink := func() *httptestRecorder {
			return env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}}, "", cookie)
		}
		countRows := func() int64 {
			var n int64
			if err := env.db.Gorm.Model(&models.Invite{}).Where("workspace_id = ?", env.ws.ID).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		for i := 0; i < models.InvitesPerHour; i++ {
			if rec := makeLink(); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "/invites/") {
				t.Fatalf("invite %d: status %d, want 200 with a link", i+1, rec.Code)
			}
		}
		// Revoking one makes no room: it still counts.
		open, err := env.db.ListOpenInvites(ctx, env.ws.ID)
		if err != nil || len(open) != models.InvitesPerHour {
			t.Fatalf("open invites = %d (%v), want %d", len(open), err, models.InvitesPerHour)
		}
		if rec := env.send(http.MethodPost, "/members/invites/"+strconv.FormatInt(open[0].ID, 10)+"/revoke", nil, "", cookie); rec.Code != http.StatusSeeOther {
			t.Fatalf("revoke: status %d", rec.Code)
		}
		// The oldest link was made 50 minutes ago: room in 10 minutes.
		oldest := open[len(open)-1]
		if err := env.db.Gorm.Model(&models.Invite{}).Where("id = ?", oldest.ID).
			Update("created_at", time.Now().UTC().Add(-50*time.Minute)).Error; err != nil {
			t.Fatal(err)
		}
		rec := makeLink()
		if rec.Code != http.StatusTooManyRequests {
			t.Fatalf("invite over the limit: status %d, want 429", rec.Code)
		}
		body := rec.Body.String()
		for _, want := range []string{"no link was made", "Try again in 10 minutes", "Revoked invites count too"} {
			if !strings.Contains(body, want) {
				t.Errorf("refusal does not say %q:\n%s", want, body)
			}
		}
		if strings.Contains(body, "/invites/") && strings.Contains(body, "Invite link for a new") {
			t.Errorf("refusal shows a new link")
		}
		retry, err := strconv.Atoi(rec.Header().Get("Retry-After"))
		if err != nil || retry < 9*60 || retry > 10*60 {
			t.Errorf("Retry-After = %q, want about 600 seconds", rec.Header().Get("Retry-After"))
		}
		if n := countRows(); n != int64(models.InvitesPerHour) {
			t.Errorf("%d invite rows after the refusal, want %d (nothing written)", n, models.InvitesPerHour)
		}
		// Once the oldest leaves the hour, one more may be made.
		if err := env.db.Gorm.Model(&models.Invite{}).Where("id = ?", oldest.ID).
			Update("created_at", time.Now().UTC().Add(-61*time.Minute)).Error; err != nil {
			t.Fatal(err)
		}
		if rec := makeLink(); rec.Code != http.StatusOK {
			t.Fatalf("invite after the hour passed: status %d, want 200", rec.Code)
		}
		if rec := makeLink(); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("the next one: status %d, want 429", rec.Code)
		}
	})
}

// TestInviteLimitHoldsForInvitesAskedAtOnce: invites asked for at the
// same moment count each other, so a burst gets no more than the limit.
func TestInviteLimitHoldsForInvitesAskedAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		const burst = 12
		for i := 0; i < models.InvitesPerHour-burst/2; i++ {
			if _, _, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleViewer, owner.ID, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		made, limited := 0, 0
		for i := 0; i < burst; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleViewer, owner.ID, time.Hour)
				var le *models.InviteLimitError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					made++
				case errors.As(err, &le):
					limited++
				default:
					t.Errorf("invite: %v", err)
				}
			}()
		}
		wg.Wait()
		if made != burst/2 || limited != burst/2 {
			t.Errorf("of %d invites asked at once, %d made and %d refused; want %d and %d", burst, made, limited, burst/2, burst/2)
		}
	})
}
