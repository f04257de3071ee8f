package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestUploadQuotaRefused: past the workspace's quota of pending uploads an
// upload is refused, on the upload page and by the API (page cases
// first: once an account exists the page needs signing in), with 409 when
// uploads already waiting leave no room (finish or wait for them) and 413
// when the file alone is larger than the quota, the message naming the
// quota and what to do; nothing more is kept. Both were 422 before, the
// status of a file that is wrong.
func TestUploadQuotaRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		tok := "" // made before the first API case: with an account, the page needs signing in
		apiPath := fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID)
		for _, tc := range []struct {
			name    string
			quota   int64
			waiting bool // a first upload waits for its mapping
			api     bool
			status  int
			code    string // the API's error code
			want    []string
		}{
			{"page, uploads waiting", int64(len(goodCSV)) + 10, true, false, http.StatusConflict, "",
				[]string{"quota of 0.0 MiB", "Finish importing those uploads", "expire"}},
			{"page, file alone over the quota", 10, false, false, http.StatusRequestEntityTooLarge, "",
				[]string{"more than this workspace&#39;s quota", "split it", "BATCHEVAL_UPLOAD_QUOTA_MB"}},
			{"api, uploads waiting", int64(len(goodCSV)) + 10, true, true, http.StatusConflict, "conflict",
				[]string{"quota of 0.0 MiB", "Finish importing those uploads"}},
			{"api, file alone over the quota", 10, false, true, http.StatusRequestEntityTooLarge, "too_large",
				[]string{"more than this workspace's quota", "BATCHEVAL_UPLOAD_QUOTA_MB"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				env.db.Gorm.Exec("DELETE FROM pending_uploads")
				env.h.UploadQuotaBytes = 0
				if tc.api && tok == "" {
					owner := env.createUser(env.ws.ID, "owner@quota.test", models.RoleOwner)
					_, tok = env.apiToken(env.ws.ID, owner.ID)
				}
				if tc.waiting && tc.api {
					decode[APIUpload](t, a.upload(apiPath, tok, "a.csv", goodCSV), http.StatusCreated)
				} else if tc.waiting {
					env.uploadToken("a.csv", goodCSV)
				}
				env.h.UploadQuotaBytes = tc.quota
				defer func() { env.h.UploadQuotaBytes = 0 }()
				var rec *httptest.ResponseRecorder
				if tc.api {
					rec = a.upload(apiPath, tok, "b.csv", goodCSV)
				} else {
					rec = env.upload("b.csv", goodCSV, "second")
				}
				if rec.Code != tc.status || rec.Header().Get("Location") != "" {
					t.Fatalf("status %d, Location %q; want %d and none: %.400s", rec.Code, rec.Header().Get("Location"), tc.status, rec.Body)
				}
				if missing := bodyLacks(rec.Body.String(), tc.want...); len(missing) > 0 {
					t.Errorf("the refusal lacks %q: %.1500s", missing, rec.Body)
				}
				if tc.api {
					var body APIError
					if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != tc.code {
						t.Errorf("API error code %q (%v), want %q", body.Error.Code, err, tc.code)
					}
				} else if !strings.Contains(rec.Body.String(), `name="file"`) {
					t.Errorf("the refusal is not the upload form: %.400s", rec.Body)
				}
				var n int64
				env.db.Gorm.Raw("SELECT COUNT(*) FROM pending_uploads").Scan(&n)
				if want := map[bool]int64{true: 1, false: 0}[tc.waiting]; n != want {
					t.Errorf("%d pending uploads kept, want %d", n, want)
				}
			})
		}
	})
}
