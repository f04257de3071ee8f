package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/runner"
)

// noMail is a mail server that takes everything (the benchmark's jobs are
// never worked).
type noMail struct{}

func (noMail) Send(context.Context, string, mail.Message) error { return nil }

// BenchmarkForgotAnswer times "Forgot password?" answers for an account's
// confirmed address and for an address with no account, interleaved in
// one process, and reports their ratio (known/unknown): near 1 means the
// answer's time does not tell whether the address has an account.
func BenchmarkForgotAnswer(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			db := dbtest.Open(b, d)
			if err := runner.Migrate(ctx, db, nil); err != nil {
				b.Fatal(err)
			}
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				b.Fatal(err)
			}
			r, err := runner.New(runner.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			h, err := New(db, r, slog.New(slog.DiscardHandler), ws)
			if err != nil {
				b.Fatal(err)
			}
			h.Mail = noMail{}
			h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
			e := echo.New()
			h.Register(e)
			u, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "ada@company.com", Name: "Ada", Password: testPassword})
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Gorm.Model(&models.User{}).Where("id = ?", u.ID).Update("email_confirmed_at", time.Now().UTC()).Error; err != nil {
				b.Fatal(err)
			}
			ask := func(email string, i int) time.Duration {
				req := httptest.NewRequest(http.MethodPost, "/forgot", strings.NewReader(url.Values{"email": {email}}.Encode()))
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
				req.RemoteAddr = "10.1." + strconv.Itoa(i/250%250) + "." + strconv.Itoa(i%250) + ":4000"
				rec := httptest.NewRecorder()
				start := time.Now()
				e.ServeHTTP(rec, req)
				took := time.Since(start)
				if rec.Code != http.StatusSeeOther {
					b.Fatalf("forgot %s = %d: %.300s", email, rec.Code, rec.Body)
				}
				return took
			}
			var known, unknown time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				known += ask("ada@company.com", 2*i)
				unknown += ask("nobody"+strconv.Itoa(i)+"@company.com", 2*i+1)
				b.StopTimer()
				// The per-address limit would refuse Ada's fourth request.
				db.Gorm.Exec("DELETE FROM login_attempts")
				b.StartTimer()
			}
			b.ReportMetric(float64(known.Nanoseconds())/float64(b.N), "known-ns/op")
			b.ReportMetric(float64(unknown.Nanoseconds())/float64(b.N), "unknown-ns/op")
			b.ReportMetric(float64(known)/float64(unknown), "known/unknown")
		})
	}
}
