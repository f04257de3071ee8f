package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

var (
	scriptTagRE     = regexp.MustCompile(`(?i)<script\b[^>]*>`)
	inlineHandlerRE = regexp.MustCompile(`(?i)<[a-z][^>]*\son[a-z]+\s*=`)
	styleAttrRE     = regexp.MustCompile(`(?i)<[a-z][^>]*\sstyle\s*=`)
)

// TestSecurityHeaders: every kind of answer (pages, the sign-in redirect,
// an error page, the JSON API) forbids framing by any site in the CSP
// itself (frame-ancestors; X-Frame-Options alone is the older header),
// keeps forms posting to this site and rules out <base> and plugins, with
// nosniff and a same-origin Referrer-Policy; and the pages keep to their
// CSP: no inline script, event handler or style attribute, which the
// browser would refuse.
func TestSecurityHeaders(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	paths := []string{"/", "/judges", "/runs", fmt.Sprintf("/projects/%d", env.project.ID),
		fmt.Sprintf("/projects/%d/runs/new", env.project.ID), "/login", "/no/such/page", "/api/v1/projects"}
	for _, path := range paths {
		rec := env.get(path)
		h := rec.Header()
		csp := h.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'",
			"frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("%s (%d): Content-Security-Policy %q lacks %q", path, rec.Code, csp, d)
			}
		}
		for name, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
			if got := h.Get(name); got != want {
				t.Errorf("%s (%d): %s = %q, want %q", path, rec.Code, name, got, want)
			}
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			continue
		}
		body := rec.Body.String()
		for _, tag := range scriptTagRE.FindAllString(body, -1) {
			if !strings.Contains(tag, " src=") {
				t.Errorf("%s: inline script %q, which the CSP refuses", path, tag)
			}
		}
		if m := inlineHandlerRE.FindString(body); m != "" {
			t.Errorf("%s: inline event handler in %q, which the CSP refuses", path, m)
		}
		if m := styleAttrRE.FindString(body); m != "" {
			t.Errorf("%s: style attribute in %q, which the CSP refuses", path, m)
		}
		if strings.Contains(strings.ToLower(body), "<style") {
			t.Errorf("%s: inline <style>, which the CSP refuses", path)
		}
	}
	if rec := env.get("/"); rec.Code != http.StatusOK {
		t.Fatalf("home page = %d", rec.Code)
	}
}
