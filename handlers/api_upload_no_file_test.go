package handlers

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIUploadWithoutAFileNamesThePart: an API upload with no file part
// (the file sent under another name, or a name alone) was
// refused with the browser form's "Choose a file to upload.", which does
// not say what a program must send. It names the part now; the browser's
// form keeps its wording.
func TestAPIUploadWithoutAFileNamesThePart(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		target := fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID)
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, err := mw.CreateFormFile("dataset", "r.csv")
		must(t, err)
		_, _ = fw.Write([]byte(ratedCSV(4)))
		must(t, mw.Close())
		var nameOnly bytes.Buffer
		nw := multipart.NewWriter(&nameOnly)
		must(t, nw.WriteField("name", "Ratings"))
		must(t, nw.Close())
		for _, tc := range []struct {
			name        string
			body        []byte
			contentType string
		}{
			{"the file under another part's name", buf.Bytes(), mw.FormDataContentType()},
			{"a name and no file", nameOnly.Bytes(), nw.FormDataContentType()},
		} {
			rec := a.call(http.MethodPost, target, tok, tc.body, tc.contentType)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `a part named \"file\"`) {
				t.Errorf("%s: %d %s, want 422 naming the part \"file\"", tc.name, rec.Code, rec.Body.String())
			}
		}
	})
}
