package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestShareListNamesEachReport: the Share links list named runs by name
// only, so two links to runs of the same name (and a comparison of two of
// them) could not be told apart; a link to an archived run, which still
// opens, was listed as "Run run N"; and a link to a run in the trash,
// which opens nothing, was listed as "active". Each report is now named
// with its id, archived ones by name, and a deleted one's link says it
// opens nothing.
func TestShareListNamesEachReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.ratedDataset("Shared", 10)
		a := env.storedRun(d, "Same name", noisy(d.human, 0.5, 1), nil)
		b := env.storedRun(d, "Same name", noisy(d.human, 0.5, 2), nil)
		archived := env.storedRun(d, "Put away", noisy(d.human, 0.5, 3), nil)
		binned := env.storedRun(d, "Thrown away", noisy(d.human, 0.5, 4), nil)
		tokens := map[string]string{}
		for name, n := range map[string]models.NewShareLink{
			"a":        {Kind: models.ShareRun, RunID: a.ID},
			"b":        {Kind: models.ShareRun, RunID: b.ID},
			"compare":  {Kind: models.ShareCompare, RunID: a.ID, OtherRunID: b.ID},
			"archived": {Kind: models.ShareRun, RunID: archived.ID},
			"binned":   {Kind: models.ShareRun, RunID: binned.ID},
		} {
			n.WorkspaceID = env.ws.ID
			_, tok, err := env.db.CreateShareLink(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			tokens[name] = tok
		}
		if _, err := env.db.SetArchived(ctx, env.ws.ID, models.KindRun, archived.ID, true); err != nil {
			t.Fatal(err)
		}
		entry, _, err := env.db.Trash(ctx, env.ws.ID, models.KindRun, binned.ID, models.Actor{Label: "test"})
		if err != nil {
			t.Fatal(err)
		}
		// What the links open, as the list must say.
		for name, want := range map[string]int{"archived": http.StatusOK, "binned": http.StatusNotFound, "a": http.StatusOK} {
			if rec := env.get("/s/" + tokens[name]); rec.Code != want {
				t.Fatalf("link %s opens with %d, want %d", name, rec.Code, want)
			}
		}

		body := env.get("/shares").Body.String()
		row := regexp.MustCompile(`(?s)<tr[^>]*>.*?</tr>`)
		find := func(what string) string {
			for _, r := range row.FindAllString(body, -1) {
				if strings.Contains(r, what) {
					return r
				}
			}
			return ""
		}
		for _, tc := range []struct{ what, status string }{
			{fmt.Sprintf("Run Same name (run %d)", a.ID), "active"},
			{fmt.Sprintf("Run Same name (run %d)", b.ID), "active"},
			{fmt.Sprintf("Comparison of Same name (run %d) and Same name (run %d)", a.ID, b.ID), "active"},
			{fmt.Sprintf("Run Put away (run %d)", archived.ID), "active"},
			{fmt.Sprintf("Run run %d", binned.ID), fmt.Sprintf("opens nothing: run %d was deleted", binned.ID)},
		} {
			r := find(tc.what)
			if r == "" {
				t.Errorf("share list has no row %q", tc.what)
				continue
			}
			m := regexp.MustCompile(`data-testid="share-status">([^<]*)<`).FindStringSubmatch(r)
			if m == nil || !strings.HasPrefix(m[1], tc.status) {
				t.Errorf("row %q: status %v, want it to start %q", tc.what, m, tc.status)
			}
		}
		// The form offers only active runs for a new link.
		if strings.Contains(body, fmt.Sprintf(`<option value="%d"`, archived.ID)) {
			t.Errorf("the new-link form offers the archived run")
		}

		// The API says the same: a link to a run in the trash is not
		// active, and says why, until the run is restored. QA: the API
		// listed it "active": true while the link answered 404.
		apiState := func() map[int64][2]bool {
			rec := env.get("/api/v1/shares")
			var page struct {
				Items []APIShareLink `json:"items"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil || len(page.Items) == 0 {
				t.Fatalf("GET /api/v1/shares = %d: %s", rec.Code, rec.Body)
			}
			out := map[int64][2]bool{}
			for _, l := range page.Items {
				if l.RunID != nil && l.Kind == string(models.ShareRun) {
					out[*l.RunID] = [2]bool{l.Active, l.ReportDeleted}
				}
			}
			return out
		}
		st := apiState()
		if got := st[binned.ID]; got != [2]bool{false, true} {
			t.Errorf("API: link to a run in the trash is active=%v report_deleted=%v, want false and true", got[0], got[1])
		}
		for _, id := range []int64{a.ID, archived.ID} {
			if got := st[id]; got != [2]bool{true, false} {
				t.Errorf("API: link to run %d is active=%v report_deleted=%v, want true and false", id, got[0], got[1])
			}
		}
		if _, err := env.db.Restore(ctx, env.ws.ID, entry.ID); err != nil {
			t.Fatal(err)
		}
		if got := apiState()[binned.ID]; got != [2]bool{true, false} {
			t.Errorf("API: link to a restored run is active=%v report_deleted=%v, want true and false", got[0], got[1])
		}
		if rec := env.get("/s/" + tokens["binned"]); rec.Code != http.StatusOK {
			t.Errorf("the link to the restored run opens with %d", rec.Code)
		}
	})
}
