package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// TestShareAddressAnswersKeepTokenPrivate: every answer whose address
// holds a share link's token says no-referrer, private no-store and
// noindex, the refusals that come before the link is read included
// (regression: the link with a slash a chat app appended, a control
// character in the address, or a host name the server does not answer to
// got the dashboard's Referrer-Policy: same-origin and neither of the
// others, so a page reached from there sent the token on in its Referer
// and a crawler could index it).
func TestShareAddressAnswersKeepTokenPrivate(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		cases := []struct {
			name, path, host string
			want             int
		}{
			{"the report", link, "", http.StatusOK},
			{"the link with a slash added", link + "/", "", http.StatusNotFound},
			{"an address under the link the routes do not know", link + "/samples", "", http.StatusNotFound},
			{"a control character in the address", link + "/samples/1%01", "", http.StatusUnprocessableEntity},
			{"a host name this server does not answer to", link, "eval.attacker.test", http.StatusMisdirectedRequest},
		}
		for _, tc := range cases {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%s: %d, want %d", tc.name, rec.Code, tc.want)
			}
			for name, want := range map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "private, no-store", "X-Robots-Tag": "noindex, nofollow"} {
				if got := rec.Header().Get(name); got != want {
					t.Errorf("%s (%s): %s: %q, want %q", tc.name, tc.path, name, got, want)
				}
			}
		}
	})
}
