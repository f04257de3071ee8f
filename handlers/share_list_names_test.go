package handlers

import (
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
		if _, _, err := env.db.Trash(ctx, env.ws.ID, models.KindRun, binned.ID, models.Actor{Label: "test"}); err != nil {
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
	})
}
