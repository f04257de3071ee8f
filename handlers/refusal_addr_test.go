package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// TestRefusalAddressFollowsTheModeWhenShown: a judge call refused while
// the server was in local mode (loopback, no account) is stored naming the
// address refused, for the operator. Once the first account exists, the
// run's page and its batch page, read by a member, withhold that address
// (and an IPv4 address it led to), keeping the rest of the reason; read by
// the local user, as long as local mode lasts, they name it. Before, the
// stored text was shown as it was, address included, to every member
// after local mode had ended.
func TestRefusalAddressFollowsTheModeWhenShown(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		// The refusals as the judge client words them in local mode.
		local := judge.Egress{AllowLoopback: true, ShowAddrs: func(context.Context) bool { return true }}
		refusal := func(addr string) *judge.Error {
			t.Helper()
			var ee *judge.EgressError
			if err := local.CheckContext(ctx, netip.MustParseAddrPort(addr)); !asEgress(err, &ee) || !ee.Shown {
				t.Fatalf("%s: %v, want a refusal naming the address", addr, err)
			}
			return &judge.Error{Kind: judge.KindRefused, Message: ee.Error(), Err: ee}
		}
		runErr := refusal("10.20.30.40:8000")
		batchErr := refusal("[2002:a0b:c0d::1]:8000") // 6to4, leading to 10.11.12.13
		d := env.ratedDataset("refused", 10)
		run := env.storedRun(d, "refused run", d.human, nil)
		reason := models.JudgeSettingsStop + ": " + runErr.InRun()
		if err := env.db.Gorm.Exec(`UPDATE runs SET status = ?, error = ? WHERE id = ?`, models.RunFailed, reason, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		var batchID int64
		if err := env.db.Gorm.Raw(`SELECT MIN(id) FROM run_batches WHERE run_id = ?`, run.ID).Scan(&batchID).Error; err != nil {
			t.Fatal(err)
		}
		if err := env.db.Gorm.Exec(`UPDATE run_batches SET status = ?, error = ? WHERE id = ?`, models.BatchFailed, batchErr.Error(), batchID).Error; err != nil {
			t.Fatal(err)
		}
		pages := []string{fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/runs/%d/batches/%d", run.ID, batchID)}
		addrs := map[string][]string{pages[0]: {"10.20.30.40"}, pages[1]: {"2002:a0b:c0d::1", "10.11.12.13"}}
		for _, c := range []struct {
			reader string
			member bool
			named  bool
		}{
			{"the local user, no account yet", false, true},
			{"a member, once accounts exist", true, false},
		} {
			var cookies []*http.Cookie
			if c.member {
				u := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
				cookies = append(cookies, env.sessionCookie(u))
			}
			for _, path := range pages {
				rec := env.send(http.MethodGet, path, nil, "", cookies...)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s, %s = %d", c.reader, path, rec.Code)
				}
				body := rec.Body.String()
				for _, a := range addrs[path] {
					if strings.Contains(body, a) != c.named {
						t.Errorf("%s, %s: address %s named = %v, want %v", c.reader, path, a, !c.named, c.named)
					}
				}
				if !strings.Contains(body, "private-network addresses are off on this server") {
					t.Errorf("%s, %s: the reason's setting is gone", c.reader, path)
				}
				if !c.named && !strings.Contains(body, "(not shown)") {
					t.Errorf("%s, %s: does not say the address is withheld", c.reader, path)
				}
			}
		}
	})
}

// asEgress is errors.As for the egress policy's refusal.
func asEgress(err error, ee **judge.EgressError) bool {
	e, ok := err.(*judge.EgressError)
	if ok {
		*ee = e
	}
	return ok
}
