package handlers

import (
	"net/http"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestLoginLimitCountsAnIPv6NetworkAsOneClient: failed sign-ins from one
// IPv6 /64 count as one client's. Counted per address, a client rotating
// through the 2^64 addresses its network gives it (one each try) was
// never paused, whatever it guessed across accounts. Another /64 is
// another client; an IPv4-mapped IPv6 address is its IPv4 address.
func TestLoginLimitCountsAnIPv6NetworkAsOneClient(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.createUser(env.ws.ID, "bob@a.test", models.RoleOwner)
		for i := range maxFailsPerAddress {
			addr := "[2001:db8:1:2::" + itoa(int64(i+1)) + "]"
			if rec := env.login("nobody"+itoa(int64(i))+"@a.test", "wrong password!", addr); rec.Code != http.StatusUnauthorized {
				t.Fatalf("failure %d from %s = %d, want 401", i+1, addr, rec.Code)
			}
		}
		for _, tc := range []struct {
			addr string
			want int
		}{
			{"[2001:db8:1:2:ffff:ffff:ffff:ffff]", http.StatusTooManyRequests},
			{"[2001:db8:1:3::1]", http.StatusSeeOther},
		} {
			if rec := env.login("bob@a.test", testPassword, tc.addr); rec.Code != tc.want {
				t.Errorf("sign-in from %s after %d failures from 2001:db8:1:2::/64 = %d, want %d", tc.addr, maxFailsPerAddress, rec.Code, tc.want)
			}
		}
		for i := range maxFailsPerAddress {
			env.login("nobody"+itoa(int64(i))+"@b.test", "wrong password!", "[::ffff:198.51.100.7]")
		}
		if rec := env.login("bob@a.test", testPassword, "198.51.100.7"); rec.Code != http.StatusTooManyRequests {
			t.Errorf("sign-in from 198.51.100.7 after %d failures from ::ffff:198.51.100.7 = %d, want 429", maxFailsPerAddress, rec.Code)
		}
	})
}
