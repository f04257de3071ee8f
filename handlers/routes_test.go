package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestHealthAndCrossSiteRefusal(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		if rec := env.get("/healthz"); rec.Code != http.StatusOK || rec.Body.String() != "ok" {
			t.Errorf("healthz = %d %q", rec.Code, rec.Body)
		}
		if rec := env.get("/readyz"); rec.Code != http.StatusOK || rec.Body.String() != "ready" {
			t.Errorf("readyz = %d %q", rec.Code, rec.Body)
		}
		before, err := env.db.ListProjects(t.Context(), env.ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			site string
			want int
		}{{"cross-site", http.StatusForbidden}, {"same-origin", http.StatusSeeOther}} {
			form := url.Values{"name": {"from " + tc.site}}
			req := httptest.NewRequest(http.MethodPost, "/projects", strings.NewReader(form.Encode()))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			req.Header.Set("Sec-Fetch-Site", tc.site)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%s post = %d, want %d", tc.site, rec.Code, tc.want)
			}
		}
		after, _ := env.db.ListProjects(t.Context(), env.ws.ID)
		if len(after) != len(before)+1 {
			t.Errorf("projects %d -> %d, want exactly the same-origin one created", len(before), len(after))
		}
	})
}
