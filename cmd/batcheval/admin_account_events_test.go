package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAdminAccountEvents: the accounts' audit log (what was done to
// accounts in no workspace, migration 00076) is read with `batcheval admin
// account-events`, newest first, filtered by address (the account's now,
// or as the entry named it once the account is gone), --since and
// --limit, its typed texts without control characters. Before, the
// operator had no way to read it but SQL. On SQLite and PostgreSQL.
func TestAdminAccountEvents(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			env := map[string]string{"BATCHEVAL_SEED_DEMO": "false"}
			dsn := dbtest.DSN(t, d)
			if d == models.Postgres {
				env["DATABASE_URL"] = dsn
			} else {
				env["BATCHEVAL_DB"] = dsn
			}
			getenv := func(k string) string { return env[k] }
			cmd := func(args ...string) (string, error) {
				t.Helper()
				var out, errOut bytes.Buffer
				err := admin(ctx, append([]string{"account-events"}, args...), getenv, nil, &out, &errOut)
				return out.String(), err
			}
			out, err := cmd()
			if err != nil || !strings.Contains(out, "No entry in the accounts' audit log matches") {
				t.Fatalf("empty log: %v %q", err, out)
			}

			db := dbtest.OpenDSN(t, dsn)
			ws := mustDefaultWS(t, db)
			// Two accounts taken out of every workspace; the operator
			// resets them, which only the accounts' log can hold.
			var lone []models.User
			for _, email := range []string{"lone@x.test", "solo@x.test"} {
				u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: email, Name: "N", Password: "long enough password"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.RemoveMember(ctx, ws.ID, u.ID, false); err != nil {
					t.Fatal(err)
				}
				if _, _, err := db.OperatorPasswordReset(ctx, email, models.ResetTTL); err != nil {
					t.Fatal(err)
				}
				lone = append(lone, u)
			}
			// An old entry with control characters typed into it, and one
			// of an account since deleted (user_id NULL).
			old := time.Now().UTC().Add(-72 * time.Hour)
			for _, e := range []models.AccountAuditEvent{
				{UserID: &lone[0].ID, Actor: "mallory\x1b[2J\ttab", Action: models.AuditResetIssued, Target: "lone@x.test", Detail: "line one\nline two\x07", CreatedAt: old},
				{Actor: models.OperatorActor, Action: models.AuditResetIssued, Target: "gone@x.test", Detail: "by the operator", CreatedAt: old.Add(time.Hour)},
			} {
				if err := db.Gorm.Create(&e).Error; err != nil {
					t.Fatal(err)
				}
			}

			out, err = cmd()
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if len(lines) != 6 || !strings.HasPrefix(lines[0], "TIME (UTC)") || !strings.Contains(out, "4 entries, newest first.") {
				t.Fatalf("all entries:\n%s", out)
			}
			// Newest first: the two resets just made, then the deleted
			// account's entry, then the oldest.
			for i, want := range []string{`^\S+ \S+\s+solo@x\.test\s+password-reset-issued\s+batcheval admin \(command line\)\s+solo@x\.test\s+by the operator`,
				`lone@x\.test\s+password-reset-issued`, `\(account deleted\)\s+password-reset-issued.*gone@x\.test`, `lone@x\.test\s+password-reset-issued\s+mallory`} {
				if !regexp.MustCompile(want).MatchString(lines[i+1]) {
					t.Errorf("line %d %q does not match %s", i+1, lines[i+1], want)
				}
			}
			if strings.ContainsAny(out, "\x1b\x07\t") || !strings.Contains(out, "line one line two") {
				t.Errorf("control characters reach the terminal:\n%q", out)
			}

			for _, tc := range []struct {
				name  string
				args  []string
				count string // the closing line
				has   []string
				hasnt []string
			}{
				{"by address, any case", []string{"--email", "LONE@x.test"}, "2 entries", []string{"mallory"}, []string{"solo@", "gone@"}},
				{"by the address of a deleted account", []string{"--email", "gone@x.test"}, "1 entry", []string{"(account deleted)"}, []string{"lone@", "solo@"}},
				{"since an age", []string{"--since", "24h"}, "2 entries", []string{"solo@", "lone@"}, []string{"gone@", "mallory"}},
				{"since a date", []string{"--since", old.Add(48 * time.Hour).Format("2006-01-02T15:04:05Z07:00")}, "2 entries", nil, []string{"gone@"}},
				{"since a day", []string{"--since", "2000-01-01"}, "4 entries", []string{"gone@", "mallory"}, nil},
				{"since days, with an address", []string{"--since", "2d", "--email", "solo@x.test"}, "1 entry", []string{"solo@"}, []string{"lone@"}},
				{"limit", []string{"--limit", "1"}, "1 entry, newest first (the newest 1: --limit or --since for more)", []string{"solo@"}, []string{"lone@", "gone@"}},
			} {
				out, err := cmd(tc.args...)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if !strings.Contains(out, tc.count) {
					t.Errorf("%s: want %q:\n%s", tc.name, tc.count, out)
				}
				for _, s := range tc.has {
					if !strings.Contains(out, s) {
						t.Errorf("%s: %q missing:\n%s", tc.name, s, out)
					}
				}
				for _, s := range tc.hasnt {
					if strings.Contains(out, s) {
						t.Errorf("%s: %q listed:\n%s", tc.name, s, out)
					}
				}
			}

			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"--limit", "0"}, "--limit 0: give a number from 1 to 10000"},
				{[]string{"--limit", "10001"}, "--limit 10001"},
				{[]string{"--since", "last week"}, `--since "last week": give a date`},
				{[]string{"--since", "-3h"}, `--since "-3h"`},
				{[]string{"lone@x.test"}, "takes no arguments besides its flags"},
			} {
				if _, err := cmd(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
				}
			}
		})
	}
}
