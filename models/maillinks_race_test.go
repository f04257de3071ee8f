package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRemintLosesToShownLink: an invite's mail is being retried
// (RemintLink reads the invite, then writes its new token) while the owner
// is shown the link to hand over (ShowInviteLink), which commits between
// the retry's read and its write. The retry must send nothing and leave
// the owner's token the one that works. Before, its write replaced that
// token (its UPDATE matched on the id alone), so the link handed over
// answered "not valid" (TestShownInviteLinkNotReplacedByRetry failed now
// and then on PostgreSQL), and the token kept for the earlier mail came
// back. PostgreSQL only: SQLite's single writer refuses the retry's stale
// write instead. The interleaving is made, not waited for: the test holds
// the invite's row lock until the retry's write waits on it.
func TestRemintLosesToShownLink(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		if db.Dialect != models.Postgres {
			t.Skip("SQLite serializes the two writes; the retry's stale one is refused")
		}
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "ada@company.com", Name: "Ada", Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		inv, _, err := db.CreateInviteFor(ctx, ws.ID, models.RoleEditor, owner.ID, models.InviteTTL, "cleo@company.com", models.Audit[models.Invite]{})
		if err != nil {
			t.Fatal(err)
		}
		// The owner's "show the link", held open on the invite's row.
		shown, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer shown.Rollback()
		if _, err := shown.ExecContext(ctx, `UPDATE invites SET mail_problem = mail_problem WHERE id = $1`, inv.ID); err != nil {
			t.Fatal(err)
		}
		type result struct {
			ok  bool
			err error
		}
		retried := make(chan result, 1)
		go func() {
			_, ok, err := db.RemintLink(ctx, models.LinkInvite, inv.ID, true)
			retried <- result{ok, err}
		}()
		// Wait until the retry's write waits on the row lock: it has read
		// the invite as it was.
		deadline := time.Now().Add(30 * time.Second)
		for {
			var waiting int
			if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE "invites"%'`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if waiting > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the retry's write never waited on the invite's row")
			}
			time.Sleep(5 * time.Millisecond)
		}
		_, ownerHash, err := models.NewLinkToken()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := shown.ExecContext(ctx, `DELETE FROM mailed_tokens WHERE kind = $1 AND link_id = $2`, models.LinkInvite, inv.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := shown.ExecContext(ctx, `UPDATE invites SET token_hash = $1, mail_problem = '', mail_stopped = true WHERE id = $2`, ownerHash, inv.ID); err != nil {
			t.Fatal(err)
		}
		if err := shown.Commit(); err != nil {
			t.Fatal(err)
		}
		r := <-retried
		if r.err != nil || r.ok {
			t.Errorf("the retry after the owner was shown the link: ok %v, err %v; want nothing to send", r.ok, r.err)
		}
		var hash string
		if err := db.SQL.QueryRowContext(ctx, `SELECT token_hash FROM invites WHERE id = $1`, inv.ID).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if hash != ownerHash {
			t.Errorf("the invite's token was replaced by the retry's: the link the owner handed over no longer works")
		}
		var kept int
		if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM mailed_tokens WHERE kind = $1 AND link_id = $2`, models.LinkInvite, inv.ID).Scan(&kept); err != nil {
			t.Fatal(err)
		}
		if kept != 0 {
			t.Errorf("%d tokens of earlier mails work again after the owner was shown the link, want 0", kept)
		}
	})
}
