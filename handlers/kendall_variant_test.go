package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestPagesNameTheKendallVariant: the run page and a shared run page say
// which Kendall coefficient they show (τ-b, as computed and as the README
// and the export schema say), where they said only "Kendall τ".
func TestPagesNameTheKendallVariant(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	d := env.demo()
	run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
	for _, page := range []string{fmt.Sprintf("/runs/%d", run.ID), link} {
		rec := env.getAs(page)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", page, rec.Code)
		}
		if body := rec.Body.String(); !strings.Contains(body, "Kendall&#39;s τ-b") && !strings.Contains(body, "Kendall's τ-b") {
			t.Errorf("%s does not say its Kendall coefficient is τ-b", page)
		}
	}
}
