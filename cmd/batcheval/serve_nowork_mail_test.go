package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestServeNoWorkerSendsMail: `serve --no-worker` with the SMTP settings
// sends the mail queued (here an operator's reset link, queued before it
// started) with no worker running at all, and still leaves the runs to
// the workers: the demo's first run stays queued. Before, such a process
// only logged that it sent none, and invites, resets and confirmations
// waited for ever unless a worker had the same settings. On SQLite and
// PostgreSQL.
func TestServeNoWorkerSendsMail(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			smtpd := mailtest.Start(t)
			dsn := dbtest.DSN(t, d)
			env := map[string]string{"BATCHEVAL_SMTP_URL": smtpd.URL(), "BATCHEVAL_MAIL_FROM": "BatchEval <batcheval@company.com>"}
			if d == models.Postgres {
				env["DATABASE_URL"] = dsn
			} else {
				env["BATCHEVAL_DB"] = dsn
			}
			getenv := func(k string) string { return env[k] }
			ctx, cancel := context.WithCancel(context.Background())
			var out, errOut bytes.Buffer
			if err := admin(ctx, []string{"create-user", "--email", "ada@company.com", "--name", "Ada", "--role", "owner"}, getenv,
				strings.NewReader("correct horse battery\n"), &out, &errOut); err != nil {
				t.Fatal(err)
			}
			if err := admin(ctx, []string{"reset-link", "--email", "ada@company.com", "--mail", "--base-url", "https://be.company.com"}, getenv, nil, &out, &errOut); err != nil {
				t.Fatal(err)
			}

			pr, pw := io.Pipe()
			logs := &lockedBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, []string{"serve", "--no-worker", "--addr", "127.0.0.1:0", "--seed-demo"}, getenv, pw, logs)
				pw.Close()
			}()
			defer func() {
				cancel()
				select {
				case err := <-done:
					if err != nil {
						t.Errorf("serve stopped with an error: %v", err)
					}
				case <-time.After(30 * time.Second):
					t.Error("serve did not stop within 30s")
				}
			}()
			started := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					if strings.Contains(sc.Text(), "running at ") {
						close(started)
					}
				}
			}()
			select {
			case <-started:
			case err := <-done:
				t.Fatalf("serve exited: %v\n%s", err, logs.String())
			case <-time.After(30 * time.Second):
				t.Fatal("serve did not start within 30s")
			}

			msgs := smtpd.Wait(t, 1)
			if msgs[0].To[0] != "ada@company.com" || !strings.HasPrefix(msgs[0].Link("/reset/"), "https://be.company.com/reset/") {
				t.Fatalf("mail: %+v", msgs[0])
			}
			// Mail queued while it runs (by another process) goes too.
			if err := admin(ctx, []string{"reset-link", "--email", "ada@company.com", "--mail", "--base-url", "https://be.company.com"}, getenv, nil, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			smtpd.Wait(t, 2)
			if !strings.Contains(logs.String(), "works the mail queue") {
				t.Errorf("the log does not say this process sends mail:\n%s", logs.String())
			}
			// Runs are still the workers': the demo's first run waits.
			db := dbtest.OpenDSN(t, dsn)
			var runs []models.Run
			if err := db.Gorm.Find(&runs).Error; err != nil {
				t.Fatal(err)
			}
			if len(runs) == 0 {
				t.Fatal("the demo's run was not queued")
			}
			for _, r := range runs {
				if r.Status != models.RunQueued || r.LeaseOwner != "" {
					t.Errorf("run %d is %s (lease %q) under serve --no-worker, want it queued for a worker", r.ID, r.Status, r.LeaseOwner)
				}
			}
		})
	}
}
