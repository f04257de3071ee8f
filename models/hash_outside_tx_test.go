package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAccountCreationHashesOutsideTheWriteLock: an account's password is
// hashed (argon2id: tens of milliseconds and most of a core, longer under
// load) before the transaction that stores it. It was hashed inside, and
// on SQLite a transaction begins by taking the write lock, so every other
// write (a run's answers, another page's save) waited for the hash.
func TestAccountCreationHashesOutsideTheWriteLock(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := db.CreateFirstOwner(ctx, ws.ID, models.NewUser{Email: "owner@x.test", Name: "Owner", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}

		entered, release := make(chan struct{}), make(chan struct{})
		restore := models.HoldPasswordHashing(func() {
			close(entered)
			<-release
		})
		defer restore()
		made := make(chan error, 1)
		go func() {
			_, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "ed@x.test", Name: "Ed", Password: "another long password"})
			made <- err
		}()
		<-entered

		// While the new account's password is being hashed, another write
		// goes through.
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, werr := db.CreateWorkspace(wctx, "Written meanwhile", owner.ID)
		cancel()
		close(release)
		if werr != nil {
			t.Errorf("a write while an account's password was hashed: %v (it waited for the hash)", werr)
		}
		if err := <-made; err != nil {
			t.Fatal(err)
		}
		var u models.User
		if err := db.Gorm.Where("email = ?", "ed@x.test").First(&u).Error; err != nil {
			t.Fatal(err)
		}
		if !models.CheckPassword(u.PasswordHash, "another long password") {
			t.Error("the stored hash does not match the account's password")
		}
	})
}
