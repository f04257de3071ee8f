package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeWithMailNeedsBaseURL: a server reachable from the network that
// mails links must be told its address (BATCHEVAL_BASE_URL): the links
// would otherwise start with whatever Host the request that asked for
// them named (TestMailedLinksIgnoreTheRequestHost). It is refused before
// the database is opened, as is a base URL that is no dashboard address.
func TestServeWithMailNeedsBaseURL(t *testing.T) {
	mailEnv := map[string]string{"BATCHEVAL_SMTP_URL": "smtp://mail.company.com:587", "BATCHEVAL_MAIL_FROM": "be@company.com"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range mailEnv {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for i, tc := range []struct {
		env  map[string]string
		want string
	}{
		{with(), "BATCHEVAL_BASE_URL is not"},
		{with("BATCHEVAL_BASE_URL", "https://evil.test/x?y"), "is not the dashboard's address"},
	} {
		db := filepath.Join(t.TempDir(), string(rune('a'+i)), "t.db")
		var out bytes.Buffer
		err := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0", "--db", db}, func(k string) string { return tc.env[k] }, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.env, err, tc.want)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: the database was created", tc.env)
		}
	}
}
