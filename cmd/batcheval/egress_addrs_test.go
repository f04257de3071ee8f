package main

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestJudgeRefusalNamesAddressInLocalModeOnly: the judge network policy
// the commands apply names a refused address only in local mode (a
// loopback server) while no account exists, when the operator is the
// only reader; a server reachable from the network, or a loopback one
// serving accounts (behind a proxy), names the kind of address and the
// setting instead. Before, every refusal named the address, and it
// reached the people who edit judges: where the server's internal names
// lead.
func TestJudgeRefusalNamesAddressInLocalModeOnly(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		refused := netip.MustParseAddrPort("10.1.2.3:8000")
		check := func(addr string) string {
			t.Helper()
			c := &Config{Addr: addr}
			p, err := c.Egress("")
			if err != nil {
				t.Fatal(err)
			}
			p.ShowAddrs = addrsShownTo(c.LocalMode(), db)
			err = p.CheckContext(ctx, refused)
			if err == nil {
				t.Fatalf("%s: 10.1.2.3 allowed with private judges off", addr)
			}
			return err.Error()
		}
		const setting = "private-network addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private)"
		for _, tc := range []struct {
			addr  string
			named bool
		}{
			{"127.0.0.1:8080", true},
			{"localhost:8080", true},
			{"0.0.0.0:8080", false},
			{":8080", false},
		} {
			msg := check(tc.addr)
			if named := strings.Contains(msg, "10.1.2.3"); named != tc.named || !strings.Contains(msg, setting) {
				t.Errorf("%s, no account: %q, want the address named=%v and the setting", tc.addr, msg, tc.named)
			}
			if !tc.named && !strings.Contains(msg, "a private-network address (not shown)") {
				t.Errorf("%s: %q does not name the kind of address", tc.addr, msg)
			}
		}
		// The first account made: local mode is over, on this policy too.
		shown := addrsShownTo(true, db)
		if !shown(ctx) {
			t.Fatal("local mode without accounts: the address is not shown")
		}
		if _, err := db.CreateUser(ctx, mustDefaultWS(t, db).ID, models.RoleOwner, models.NewUser{Email: "ada@company.com", Name: "Ada", Password: "correct horse battery"}); err != nil {
			t.Fatal(err)
		}
		if shown(ctx) {
			t.Error("an account exists: the address is still shown")
		}
		if msg := check("127.0.0.1:8080"); strings.Contains(msg, "10.1.2.3") || !strings.Contains(msg, setting) {
			t.Errorf("loopback server with an account: %q, want the address withheld and the setting named", msg)
		}
	})
}
