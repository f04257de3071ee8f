package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/labstack/echo/v4"
)

// BenchmarkMappingPage times the mapping page shown after an upload, on
// SQLite: with the count kept by the upload's pass (the first rows read),
// and with it cleared before each view, which reads the whole file as every
// view did before. The CSV is BenchmarkUploadImport1M's shape, 100,000 rows
// unless BATCHEVAL_BENCH_MAPPING_ROWS says otherwise (1000000 for the
// issue's size).
func BenchmarkMappingPage(b *testing.B) {
	n := 100000
	if v := os.Getenv("BATCHEVAL_BENCH_MAPPING_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("BATCHEVAL_BENCH_MAPPING_ROWS=%q is not a size", v)
		}
	}
	path, size := writeBenchCSV(b, b.TempDir(), n)
	e, h, p := benchServer(b, models.SQLite)
	body, ctype := multipartFileBody(b, path)
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/projects/%d/datasets/upload", p.ID), body)
	req.Header.Set(echo.HeaderContentType, ctype)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		b.Fatalf("upload = %d: %.300s", rec.Code, rec.Body)
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil {
		b.Fatal(err)
	}
	token := loc.Query().Get("token")
	var scan string
	mustB(b, h.DB.Gorm.Raw("SELECT scan FROM pending_uploads WHERE token = ?", token).Scan(&scan).Error)
	want := fmt.Sprintf("%d rows", n)
	for _, kept := range []bool{false, true} {
		b.Run(fmt.Sprintf("rows=%d/MB=%.1f/count-kept=%v", n, float64(size)/1e6, kept), func(b *testing.B) {
			if kept {
				mustB(b, h.DB.Gorm.Exec("UPDATE pending_uploads SET scan = ? WHERE token = ?", scan, token).Error)
			} else {
				mustB(b, h.DB.Gorm.Exec("UPDATE pending_uploads SET scan = NULL WHERE token = ?", token).Error)
			}
			for b.Loop() {
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, loc.String(), nil))
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
					b.Fatalf("GET %s = %d, want 200 saying %q: %.300s", loc, rec.Code, want, rec.Body)
				}
			}
		})
	}
}
