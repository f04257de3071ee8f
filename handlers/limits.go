package handlers

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// maxFormBody bounds the body of every request but dataset uploads: the
// largest real form (a rubric with many criteria) is a few tens of KiB, and
// without a bound a single field of 40 MiB was read into memory, stored,
// and even copied into a Location header.
const maxFormBody = 1 << 20

// uploadRoute reports the routes (as registered in routes()) that take a
// file and bound their bodies themselves (by BATCHEVAL_MAX_UPLOAD_MB). A new
// upload route must be listed here, or its uploads are cut at maxFormBody.
// It matches the route's pattern, not the address: the API's dataset upload
// (POST /api/v1/projects/:id/uploads) was missed when this matched address
// suffixes, and a CI script's 1.5 MiB CSV got 413.
func uploadRoute(route string) bool {
	switch route {
	case "/projects/:id/datasets/upload", // the browser's upload step
		"/api/v1/projects/:id/uploads": // the API's
		return true
	}
	return false
}

// limitBodies reads a request body up to maxFormBody and refuses a larger
// one with 413, naming the field that went over when the form says it.
func (h *Handlers) limitBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody || uploadRoute(c.Path()) {
			return next(c)
		}
		data, err := io.ReadAll(io.LimitReader(req.Body, maxFormBody+1))
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, "The request could not be read; try again.")
		}
		if len(data) > maxFormBody {
			msg := fmt.Sprintf("The form is larger than %s, the most a form may send: nothing was saved.", sizeText(maxFormBody))
			if isAPIPath(req.URL.Path) {
				// A script sends JSON, not a form: name the body and where files go.
				msg = fmt.Sprintf("The request body is larger than %s, the most this endpoint takes: nothing was saved. "+
					"A dataset file goes to POST /api/v1/projects/{id}/uploads.", sizeText(maxFormBody))
			} else if field := overflowingField(data, req.Header.Get(echo.HeaderContentType)); field != "" {
				msg = fmt.Sprintf("The field %s is too long: the form is larger than %s, the most a form may send, and nothing was saved. "+
					"Names may be up to %d characters, descriptions up to %d.", web.Quoted(field), sizeText(maxFormBody), models.MaxNameLength, models.MaxDescriptionLength)
			}
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, msg)
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
		return next(c)
	}
}

// multipartName finds the field names of multipart parts.
var multipartName = regexp.MustCompile(`(?i)content-disposition:\s*form-data;\s*name="([^"\r\n]{1,100})"`)

// maxFieldNameLength bounds a field name quoted back in a message.
const maxFieldNameLength = 100

// overflowingField names the field being read when the body reached the
// limit: the last field that started, which is the one holding the bulk.
func overflowingField(data []byte, contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/x-www-form-urlencoded":
		last := data[bytes.LastIndexByte(data, '&')+1:]
		key, _, _ := bytes.Cut(last, []byte("="))
		if len(key) > 3*maxFieldNameLength {
			return ""
		}
		name, err := url.QueryUnescape(string(key))
		if err != nil || name == "" || len([]rune(name)) > maxFieldNameLength {
			return ""
		}
		return name
	case "multipart/form-data":
		if m := multipartName.FindAllSubmatch(data, -1); len(m) > 0 {
			return string(m[len(m)-1][1])
		}
	}
	return ""
}
