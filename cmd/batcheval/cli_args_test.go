package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsRefuseArgumentsTheyDoNotRead: words and flags a command
// would not read are refused before it opens anything, saying which, and
// missing flags are named all at once. Before: `migrate x --db y` and
// `admin rotate-key ... x` ignored the word and the flags after it in
// silence; `resume 5 --queue-only` said "give the id of the run to
// resume" with the id given; `admin create-user` with no flags named only
// --role, then --email and --name on the next try; `admin network grant
// team --db x` said it "needs one workspace".
func TestCommandsRefuseArgumentsTheyDoNotRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"migrate, a stray word", []string{"migrate", "now", "--log-level", "debug"},
			`migrate takes no arguments besides its flags: "now" was not understood, and the flags after it (--log-level) were not read`},
		{"rotate-key, a stray word", []string{"admin", "rotate-key", "--old-key-file", "a", "--new-key-file", "b", "please"},
			`admin rotate-key takes no arguments besides its flags: "please" was not understood`},
		{"create-user, no flags", []string{"admin", "create-user"},
			`admin create-user needs --email, --name and --role: e.g. batcheval admin create-user --email ada@example.com --name "Ada Lovelace" --role owner`},
		{"create-user, role only", []string{"admin", "create-user", "--role", "owner"}, "admin create-user needs --email and --name: e.g."},
		{"create-user, name blank", []string{"admin", "create-user", "--email", "a@b.test", "--name", " ", "--role", "owner"}, "admin create-user needs --name: e.g."},
		{"resume, flags after the id", []string{"resume", "5", "--queue-only"},
			"put the flags before the run id: batcheval resume --queue-only 5 (the flags after it, --queue-only, were not read)"},
		{"resume, a cap after the id", []string{"resume", "5", "--spend-cap-usd", "3"},
			"put the flags before the run id: batcheval resume --spend-cap-usd 3 5"},
		{"network grant, flags after the workspace", []string{"admin", "network", "grant", "team", "--judge-allow-private"},
			"put the flags before the workspace: batcheval admin network grant [flags] WORKSPACE (--judge-allow-private came after it and was not read)"},
		{"admin, no subcommand", []string{"admin"}, "admin needs a subcommand: one of those listed above, e.g. batcheval admin list-users"},
		// Flags before the command made it `serve` with a stray word,
		// which started the dashboard; and serve took stray words.
		{"flags before the command", []string{"--db", "x.db", "admin", "list-users"}, "the command goes first: batcheval admin ..., with --db x.db after it"},
		{"serve, a stray word", []string{"serve", "now", "--addr", "127.0.0.1:0"}, `serve takes no arguments besides its flags: "now" was not understood, and the flags after it (--addr) were not read`},
		{"worker, a stray word", []string{"worker", "now"}, `worker takes no arguments besides its flags: "now" was not understood`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "t.db")
			args := append([]string(nil), tc.args...)
			// --db right after the command's words, before any stray one.
			at := 1
			switch {
			case len(args) == 1 || strings.HasPrefix(args[0], "-"):
				at = -1 // admin alone takes no flags; flags first are refused before any
			case args[0] == "admin" && args[1] == "network":
				at = 3
			case args[0] == "admin":
				at = 2
			}
			if at >= 0 {
				args = append(append(append([]string(nil), args[:at]...), "--db", dbPath), args[at:]...)
			}
			err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v\nwant %q", tc.args, err, tc.want)
			}
			if _, serr := os.Stat(dbPath); serr == nil {
				t.Errorf("%v: the database was opened before the refusal", tc.args)
			}
		})
	}
}
