package handlers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestHeadAnswersAsGet: HEAD of a page (a share link checked by a chat
// app or a link checker) answers as its GET, headers and status, with no
// body; before, every HEAD answered 405 with the dashboard's referrer
// policy instead of the shared page's.
func TestHeadAnswersAsGet(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run := env.storedRun(env.ratedDataset("shared", 4), "shared run", []float64{1, 2, 3, 4}, nil)
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(env.e)
		defer srv.Close()
		for _, tc := range []struct {
			path     string
			status   int
			referrer string
		}{
			{"/s/" + token, http.StatusOK, "no-referrer"},
			{"/s/not-a-token", http.StatusNotFound, ""},
			{"/healthz", http.StatusOK, ""},
		} {
			get, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			get.Body.Close()
			req, _ := http.NewRequest(http.MethodHead, srv.URL+tc.path, nil)
			head, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(head.Body)
			head.Body.Close()
			if head.StatusCode != tc.status || get.StatusCode != tc.status {
				t.Errorf("%s: HEAD %d, GET %d, want %d", tc.path, head.StatusCode, get.StatusCode, tc.status)
			}
			if len(body) != 0 {
				t.Errorf("%s: HEAD answered a body of %d bytes", tc.path, len(body))
			}
			if h, g := head.Header.Get("Content-Type"), get.Header.Get("Content-Type"); h != g {
				t.Errorf("%s: HEAD Content-Type %q, GET %q", tc.path, h, g)
			}
			if tc.referrer != "" && head.Header.Get("Referrer-Policy") != tc.referrer {
				t.Errorf("%s: HEAD Referrer-Policy %q, want %q", tc.path, head.Header.Get("Referrer-Policy"), tc.referrer)
			}
		}
		// HEAD is no way into a POST-only route: it answers what GET does.
		get, err := http.Get(srv.URL + "/runs/estimate")
		if err != nil {
			t.Fatal(err)
		}
		get.Body.Close()
		req, _ := http.NewRequest(http.MethodHead, srv.URL+"/runs/estimate", nil)
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != get.StatusCode || res.StatusCode == http.StatusOK {
			t.Errorf("HEAD of a POST-only route: %v %v, GET %d; want the same refusal", res.StatusCode, err, get.StatusCode)
		}
	})
}
