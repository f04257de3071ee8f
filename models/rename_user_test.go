package models_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRenameUser (rename44): RenameUser checks the name, stores it and
// writes the change to the audit log in one transaction: into every
// workspace of the account, or, for an account in no workspace, into the
// accounts' log that `batcheval admin account-events` lists. A refused
// name writes nothing, and is refused when an account is made too. Renaming an account that rated in a workspace moves
// the human ratings version of that workspace's runs (reports key its
// ratings by name); renaming one that never rated moves none.
func TestRenameUser(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		rater, err := db.CreateUser(ctx, w.ws.ID, models.RoleEditor, models.NewUser{Email: "rae@a.test", Name: "Rae", Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		idle, err := db.CreateUser(ctx, w.ws.ID, models.RoleViewer, models.NewUser{Email: "ned@a.test", Name: "Ned", Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		solo := models.User{Email: "solo@a.test", Name: "Solo", PasswordHash: "x"}
		if err := db.Gorm.Create(&solo).Error; err != nil {
			t.Fatal(err)
		}
		rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		crit := w.rubric.Evaluator().Criteria[0]
		v := 3.0
		if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: w.ws.ID, DatasetID: w.dataset.ID, RowID: rows[0].ID,
			Criterion: crit.Name, Reviewer: rater.Email, UserID: &rater.ID, Score: &v, Lo: crit.Lo, Hi: crit.Hi}); err != nil {
			t.Fatal(err)
		}
		versions := func() map[int64]int {
			t.Helper()
			var runs []models.Run
			if err := db.Gorm.Select("id", "humans_version").Find(&runs).Error; err != nil {
				t.Fatal(err)
			}
			out := map[int64]int{}
			for _, r := range runs {
				out[r.ID] = r.HumansVersion
			}
			return out
		}
		events := func(action string) (ws []models.AuditEvent, acct []models.AccountAuditEvent) {
			t.Helper()
			all, err := db.ListAudit(ctx, w.ws.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range all {
				if e.Action == action {
					ws = append(ws, e)
				}
			}
			log, err := db.AccountAuditLog(ctx, solo.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range log {
				if e.Action == action {
					acct = append(acct, e)
				}
			}
			return ws, acct
		}
		by := models.AuditEvent{Actor: "test", Address: "192.0.2.1"}

		for _, tc := range []struct {
			name, want string
		}{
			{"", "a name is needed"},
			{" \t ", "a name is needed"},
			{"Rae\r\nX", "line break"},
			{"Rae\u2028X", "line break"},
			{"Rae\tX", "control character U+0009"},
			{"Rae\x00X", "control character U+0000"},
			{"Rae\u0085X", "line break"},
			{"Rae\u009bX", "control character U+009B"},
			{strings.Repeat("r", models.MaxNameLength+1), "the name is 201 characters long; the limit is 200"},
		} {
			_, err := db.RenameUser(ctx, rater.ID, tc.name, by)
			if models.ErrorCode(err) != models.EInvalid || !strings.Contains(models.ErrorMessage(err), tc.want) {
				t.Errorf("rename to %q: %v, want invalid saying %q", tc.name, err, tc.want)
			}
		}
		if u, err := db.FindUser(ctx, rater.ID); err != nil || u.Name != "Rae" {
			t.Fatalf("after refused renames: %q (%v), want Rae", u.Name, err)
		}
		if got, _ := events(models.AuditNameChanged); len(got) != 0 {
			t.Fatalf("refused renames were audited: %+v", got)
		}
		// The same rule when an account is made (setup, invites, admin create-user).
		if _, err := db.CreateUser(ctx, w.ws.ID, models.RoleViewer, models.NewUser{Email: "eve@a.test", Name: "Eve\x1b]0;owned\a", Password: "a long enough password"}); models.ErrorCode(err) != models.EInvalid ||
			!strings.Contains(models.ErrorMessage(err), "control character U+001B") {
			t.Errorf("an account made with an escape in its name: %v, want invalid naming the control character", err)
		}
		if _, err := db.RenameUser(ctx, 1<<40, "Nobody", by); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("renaming no account: %v, want not found", err)
		}

		// A rater: every run of the workspace moves on, once.
		before := versions()
		if len(before) == 0 {
			t.Fatal("no runs")
		}
		r, err := db.RenameUser(ctx, rater.ID, "  Rae Renamed ", by)
		if err != nil || r.Old != "Rae" || r.User.Name != "Rae Renamed" {
			t.Fatalf("rename: %+v %v, want Rae → Rae Renamed", r, err)
		}
		after := versions()
		for id, v := range before {
			if after[id] != v+1 {
				t.Errorf("run %d: human ratings version %d → %d, want %d", id, v, after[id], v+1)
			}
		}
		wsEvents, _ := events(models.AuditNameChanged)
		if len(wsEvents) != 1 || wsEvents[0].Target != "rae@a.test" || wsEvents[0].Detail != `"Rae" → "Rae Renamed"` ||
			wsEvents[0].Actor != "test" || wsEvents[0].Address != "192.0.2.1" {
			t.Errorf("workspace audit: %+v, want one change of rae@a.test, \"Rae\" → \"Rae Renamed\"", wsEvents)
		}
		// The same name: nothing written.
		if r, err := db.RenameUser(ctx, rater.ID, "Rae Renamed", by); err != nil || r.Old != r.User.Name {
			t.Errorf("the same name: %+v %v, want nothing changed", r, err)
		}
		if got, _ := events(models.AuditNameChanged); len(got) != 1 {
			t.Errorf("the same name again was audited: %d events", len(got))
		}

		// An account that never rated: no run moves.
		before = versions()
		if _, err := db.RenameUser(ctx, idle.ID, "Ned Renamed", by); err != nil {
			t.Fatal(err)
		}
		for id, v := range versions() {
			if before[id] != v {
				t.Errorf("run %d moved its human ratings version when an account that never rated was renamed", id)
			}
		}

		// An account in no workspace: the accounts' log, as admin
		// account-events lists it.
		if _, err := db.RenameUser(ctx, solo.ID, "Solo Renamed", by); err != nil {
			t.Fatal(err)
		}
		_, acct := events(models.AuditNameChanged)
		if len(acct) != 1 || acct[0].Target != "solo@a.test" || acct[0].Detail != `"Solo" → "Solo Renamed"` {
			t.Errorf("accounts' log: %+v, want the change of solo@a.test", acct)
		}
		listed, err := db.ListAccountEvents(ctx, models.AccountEventsFilter{Email: "solo@a.test", Limit: 10})
		if err != nil || len(listed) != 1 || listed[0].Action != models.AuditNameChanged || listed[0].Email != "solo@a.test" {
			t.Errorf("account-events for solo@a.test: %+v %v, want the name change", listed, err)
		}
	})
}
