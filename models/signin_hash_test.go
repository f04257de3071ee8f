package models_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// freshProcessEnv marks a test binary started by runInFreshProcess.
const freshProcessEnv = "BATCHEVAL_TEST_FRESH_PROCESS"

// runInFreshProcess runs the test named in a new process of this test
// binary, so that it sees what a server just started sees (nothing made
// by an earlier test), and fails t with its output if it fails. It reports
// whether the caller is that new process and is to do the test's work.
func runInFreshProcess(t *testing.T) (inside bool) {
	t.Helper()
	if os.Getenv(freshProcessEnv) == t.Name() {
		return true
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), freshProcessEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a fresh process: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s did not run in the fresh process:\n%s", t.Name(), out)
	}
	return false
}

// TestFirstUnknownSignInHashesOnce: a failed sign-in computes one argon2id
// hash whether the address has an account or not, the first one after the
// process starts included. The dummy hash an unknown address is checked
// against used to be made on the first unknown address's sign-in, which
// then computed two: a timing tell, once per server start, that the
// address has no account. Run in a fresh process, as after a start.
func TestFirstUnknownSignInHashesOnce(t *testing.T) {
	if !runInFreshProcess(t) {
		return
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const password = "correct horse battery"
		if _, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "ada@a.test", Name: "Ada", Password: password}); err != nil {
			t.Fatal(err)
		}
		count, restore := models.CountPasswordKeys()
		defer restore()
		// The first unknown address comes first: on the first dialect it
		// is the process's first.
		for _, tc := range []struct {
			name, email, password string
			ok                    bool
		}{
			{"first unknown address", "eve@a.test", password, false},
			{"known address, wrong password", "ada@a.test", "wrong password!", false},
			{"second unknown address", "mallory@a.test", password, false},
			{"known address, right password", "ada@a.test", password, true},
		} {
			before := count()
			_, err := db.Authenticate(ctx, tc.email, tc.password)
			if tc.ok != (err == nil) || (!tc.ok && err != models.ErrBadCredentials) {
				t.Fatalf("%s: Authenticate = %v, want ok %v or the bad credentials error", tc.name, err, tc.ok)
			}
			if n := count() - before; n != 1 {
				t.Errorf("%s: %d password hashes computed, want 1 (as for any sign-in)", tc.name, n)
			}
		}
	})
}

// argonParams are the parts of a PHC argon2id hash that set what checking
// a password against it costs.
type argonParams struct {
	alg, version      string
	memoryKiB, passes int
	threads           int
	saltLen, keyLen   int
}

// parseArgonParams reads the cost of a hash "$argon2id$v=19$m=..,t=..,p=..$salt$key".
func parseArgonParams(t *testing.T, hash string) argonParams {
	t.Helper()
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" {
		t.Fatalf("hash %.40q: %d parts, want a PHC string of 6", hash, len(parts))
	}
	p := argonParams{alg: parts[1], version: parts[2]}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memoryKiB, &p.passes, &p.threads); err != nil {
		t.Fatalf("hash %.40q: parameters %q: %v", hash, parts[3], err)
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil {
		t.Fatalf("hash %.40q: salt or key not base64: %v, %v", hash, err1, err2)
	}
	p.saltLen, p.keyLen = len(salt), len(key)
	return p
}

// TestDummyHashCostsAsStoredHash: the dummy hash an unknown address's
// sign-in is checked against states the same algorithm, version, memory,
// passes, threads, salt and key lengths as the hash stored for a new
// account, at the production cost and after a change of cost (lowered, as
// test binaries do, and raised), so that a change of cost cannot make an
// unknown address's sign-in cheaper or dearer than a wrong password's.
// No password matches it.
func TestDummyHashCostsAsStoredHash(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, tc := range []struct {
			name string
			// memoryKiB and passes are the cost set; 0 keeps the
			// package's own.
			memoryKiB, passes uint32
		}{
			{name: "production cost"},
			{name: "lowered cost", memoryKiB: 64, passes: 1},
			{name: "raised cost", memoryKiB: 24 * 1024, passes: 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.memoryKiB != 0 {
					t.Cleanup(models.SetPasswordCost(tc.memoryKiB, tc.passes))
				}
				const password = "correct horse battery"
				email := fmt.Sprintf("user%d@a.test", i)
				if _, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: email, Name: "User", Password: password}); err != nil {
					t.Fatal(err)
				}
				u, err := db.FindUserByEmail(ctx, email)
				if err != nil {
					t.Fatal(err)
				}
				stored, dummy := parseArgonParams(t, u.PasswordHash), parseArgonParams(t, models.DummyPasswordHash())
				if stored != dummy {
					t.Errorf("dummy hash's parameters %+v, a stored hash's %+v", dummy, stored)
				}
				if tc.memoryKiB != 0 && (dummy.memoryKiB != int(tc.memoryKiB) || dummy.passes != int(tc.passes)) {
					t.Errorf("dummy hash's cost m=%d,t=%d, want the cost set m=%d,t=%d", dummy.memoryKiB, dummy.passes, tc.memoryKiB, tc.passes)
				}
				for _, pw := range []string{password, "", "not a real password, only spends time"} {
					if models.CheckPassword(models.DummyPasswordHash(), pw) {
						t.Errorf("the dummy hash matches %q", pw)
					}
				}
			})
		}
	})
}

// TestAnswerInviteHashesOnceTakenOrFree: answering an invite computes one
// password hash whether the address typed has an account (which is left
// unchanged) or not (which gets one), so the time of the answer does not
// tell the link's holder which addresses are registered by skipping the
// hash for a taken address.
func TestAnswerInviteHashesOnceTakenOrFree(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "owner@a.test", Name: "Owner", Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		count, restore := models.CountPasswordKeys()
		defer restore()
		for _, tc := range []struct {
			name, email string
			makes       bool
		}{
			{"address with an account", "owner@a.test", false},
			{"address without one", "new@a.test", true},
		} {
			_, token, err := db.CreateInvite(ctx, ws.ID, models.RoleEditor, owner.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			before := count()
			made, _, err := db.AnswerInvite(ctx, token, models.NewUser{Email: tc.email, Name: "Someone", Password: "another long password"})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if n := count() - before; n != 1 {
				t.Errorf("%s: %d password hashes computed, want 1", tc.name, n)
			}
			if (made.ID != 0) != tc.makes {
				t.Errorf("%s: account made %+v, want one made %v", tc.name, made, tc.makes)
			}
		}
	})
}

// BenchmarkAnswerInviteTakenVsFree times models.AnswerInvite for an address
// that has an account and for one that has none, interleaved (the order
// alternating), at the production hash cost, and reports their mean times
// and the ratio taken/free: near 1 means the time of an invite's answer
// does not tell its holder whether the address is registered. The two
// paths run different statements (a new account: insert, take the invite,
// membership, audit; a taken address: a failed insert, then claim the
// invite), so the ratio says how much of a tell that is.
//
// With the cost "cheap" (64 KiB, one pass, as test binaries hash), the
// database work is most of what is timed and its difference shows.
func BenchmarkAnswerInviteTakenVsFree(b *testing.B) {
	for _, bc := range []struct {
		cost              string
		memoryKiB, passes uint32
	}{{cost: "production"}, {cost: "cheap", memoryKiB: 64, passes: 1}} {
		for _, d := range dbtest.Dialects {
			b.Run(bc.cost+"/"+string(d), func(b *testing.B) {
				if bc.memoryKiB != 0 {
					b.Cleanup(models.SetPasswordCost(bc.memoryKiB, bc.passes))
				}
				ctx := b.Context()
				db := dbtest.Open(b, d)
				ws, err := db.EnsureDefaultWorkspace(ctx)
				if err != nil {
					b.Fatal(err)
				}
				owner, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "owner@a.test", Name: "Owner", Password: "correct horse battery"})
				if err != nil {
					b.Fatal(err)
				}
				answer := func(email string) time.Duration {
					b.StopTimer()
					// Made an hour ago, as far as the workspace's limit of
					// invites an hour can see.
					if err := db.Gorm.Exec("UPDATE invites SET created_at = ?", time.Now().UTC().Add(-2*models.InviteWindow)).Error; err != nil {
						b.Fatal(err)
					}
					_, token, err := db.CreateInvite(ctx, ws.ID, models.RoleEditor, owner.ID, time.Hour)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					start := time.Now()
					if _, _, err := db.AnswerInvite(ctx, token, models.NewUser{Email: email, Name: "Someone", Password: "another long password"}); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				answer("warm@a.test")
				var taken, free time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					newEmail := fmt.Sprintf("new%d@a.test", i)
					if i%2 == 0 {
						taken += answer("owner@a.test")
						free += answer(newEmail)
					} else {
						free += answer(newEmail)
						taken += answer("owner@a.test")
					}
				}
				b.ReportMetric(float64(taken.Nanoseconds())/float64(b.N), "taken-ns/op")
				b.ReportMetric(float64(free.Nanoseconds())/float64(b.N), "free-ns/op")
				b.ReportMetric(float64(taken)/float64(free), "taken/free")
			})
		}
	}
}
