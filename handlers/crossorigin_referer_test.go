package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestCrossSiteRefererRefused: a form post that says nothing of its
// origin but its Referer, naming a page of another site, is refused as a
// cross-site post is. QA: `curl -H 'Referer: http://evil.com/x'` with an
// owner's cookie made an invite (200), while the same post with Origin or
// Sec-Fetch-Site was refused.
func TestCrossSiteRefererRefused(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		env := newTestEnv(t, db)
		projects := func() int64 {
			var n int64
			must(t, env.db.Gorm.Model(&models.Project{}).Count(&n).Error)
			return n
		}
		for _, tc := range []struct {
			name    string
			headers map[string]string
			want    int // 403, or 0 for "let through"
		}{
			{"referer of another site", map[string]string{"Referer": "http://evil.example/x"}, http.StatusForbidden},
			{"referer of another port", map[string]string{"Referer": "http://example.com:8081/projects"}, http.StatusForbidden},
			{"referer that is no address", map[string]string{"Referer": "not a page"}, http.StatusForbidden},
			{"referer of this site", map[string]string{"Referer": "http://example.com/projects"}, 0},
			{"no origin at all (a script)", nil, 0},
			{"same-origin browser with a foreign referer", map[string]string{"Sec-Fetch-Site": "same-origin", "Referer": "http://evil.example/x"}, 0},
			{"cross-site browser", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		} {
			before := projects()
			form := url.Values{"name": {"From " + tc.name}}
			req := httptest.NewRequest(http.MethodPost, "/projects", strings.NewReader(form.Encode()))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			created := projects() - before
			if tc.want == http.StatusForbidden {
				if rec.Code != http.StatusForbidden || created != 0 {
					t.Errorf("%s: status %d, %d projects made; want 403 and none", tc.name, rec.Code, created)
				}
				continue
			}
			if rec.Code == http.StatusForbidden || created != 1 {
				t.Errorf("%s: status %d, %d projects made; want it let through (one project): %s", tc.name, rec.Code, created, rec.Body)
			}
		}
	})
}
