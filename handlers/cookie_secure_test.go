package handlers

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/web"
)

// TestEveryCookieFollowsTheSecureRule: every cookie the product sets or
// clears (flash set and cleared, theme, start guide, reviewer's name) is
// Secure exactly when the session cookie is (secureRequest): over TLS,
// behind a trusted proxy saying HTTPS, or with BATCHEVAL_SECURE_COOKIES.
// The flash cookie used to be cleared without Secure, and the others
// looked only at the request's scheme, so BATCHEVAL_SECURE_COOKIES left
// them off.
func TestEveryCookieFollowsTheSecureRule(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	proxies, err := ParseTrustedProxies("10.9.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	env.h.Network.TrustedProxies = proxies
	env.h.Network.Apply(env.e)
	d := env.demo()
	runID := env.launch(d.launchForm("1", "10"))
	env.waitRun(runID, time.Minute)
	flash := &http.Cookie{Name: flashCookie, Value: "ok:" + "aGk"}
	var rows []int64
	must(t, env.db.Gorm.Model(&models.DatasetRow{}).Where("dataset_id = ?", d.dataset.ID).Order("id").Limit(1).Pluck("id", &rows).Error)
	if len(rows) == 0 {
		t.Fatal("the demo dataset has no rows")
	}

	type request struct {
		name, method, path string
		form               url.Values
		cookie             *http.Cookie
		want               string // the cookie it must set or clear
	}
	requests := []request{
		{"theme chosen", http.MethodPost, "/theme", url.Values{"theme": {"dark"}, "back": {"/"}}, nil, web.ThemeCookie},
		{"theme cleared", http.MethodPost, "/theme", url.Values{"theme": {""}, "back": {"/"}}, nil, web.ThemeCookie},
		{"guide hidden", http.MethodPost, "/guide", url.Values{"guide": {"hide"}}, nil, guideCookie},
		{"guide shown", http.MethodPost, "/guide", url.Values{"guide": {"show"}}, nil, guideCookie},
		{"flash set", http.MethodPost, "/account/workspace", url.Values{"workspace_id": {fmt.Sprint(env.ws.ID)}}, nil, flashCookie},
		{"flash cleared", http.MethodGet, "/", nil, flash, flashCookie},
		{"reviewer's name", http.MethodPost, fmt.Sprintf("/datasets/%d/review", d.dataset.ID),
			url.Values{"run": {fmt.Sprint(runID)}, "criterion": {"Coherent"}, "reviewer": {"Ann Lee"}, "score": {"3"}, "row": {fmt.Sprint(rows[0])}}, nil, reviewerCookie},
	}
	for _, cond := range []struct {
		name          string
		secureSetting bool
		tls           bool
		peer, proto   string
		wantSecure    bool
	}{
		{"TLS", false, true, "127.0.0.1:4000", "", true},
		{"BATCHEVAL_SECURE_COOKIES over plain HTTP", true, false, "127.0.0.1:4000", "", true},
		{"trusted TLS proxy", false, false, "10.9.0.1:4000", "https", true},
		{"plain HTTP", false, false, "127.0.0.1:4000", "", false},
	} {
		env.h.SecureCookies = cond.secureSetting
		for _, r := range requests {
			var req *http.Request
			if r.method == http.MethodPost {
				req = httptest.NewRequest(r.method, r.path, strings.NewReader(r.form.Encode()))
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			} else {
				req = httptest.NewRequest(r.method, r.path, nil)
				req.Header.Set("Accept", "text/html")
			}
			req.RemoteAddr = cond.peer
			if cond.tls {
				req.TLS = &tls.ConnectionState{}
			}
			if cond.proto != "" {
				req.Header.Set(echo.HeaderXForwardedProto, cond.proto)
			}
			if r.cookie != nil {
				req.AddCookie(r.cookie)
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			var found bool
			for _, ck := range rec.Result().Cookies() {
				if ck.Name != r.want {
					continue
				}
				found = true
				if ck.Secure != cond.wantSecure {
					t.Errorf("%s, %s: cookie %s Secure = %v, want %v", cond.name, r.name, ck.Name, ck.Secure, cond.wantSecure)
				}
			}
			if !found {
				t.Errorf("%s, %s: status %d, no %s cookie set (Set-Cookie %q)", cond.name, r.name, rec.Code, r.want, rec.Header().Values("Set-Cookie"))
			}
		}
	}
}
