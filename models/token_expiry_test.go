package models_test

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/batcheval/batcheval/migrations"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPITokenExpiry: a token made to last 30 days stores that expiry and
// works until then; moved past it (expires_at set in the past in the
// database, no sleeping) it is refused with EUnauthorized saying the day
// it expired and where to make a new one; a token made to never expire
// has no expiry and keeps working.
func TestAPITokenExpiry(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "e@a.test", Name: "e", Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now().UTC()
		tok, secret, err := db.CreateExpiringAPIToken(ctx, ws.ID, u.ID, "ci", 30*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if tok.ExpiresAt == nil || tok.ExpiresAt.Before(before.Add(30*24*time.Hour)) || tok.ExpiresAt.After(time.Now().Add(30*24*time.Hour)) {
			t.Fatalf("a 30-day token expires at %v, want 30 days after %v", tok.ExpiresAt, before)
		}
		got, _, _, _, err := db.AuthenticateAPIToken(ctx, secret)
		if err != nil {
			t.Fatalf("a token before its expiry is refused: %v", err)
		}
		if got.ExpiresAt == nil || got.ExpiresAt.Sub(*tok.ExpiresAt).Abs() > time.Millisecond {
			t.Errorf("stored expiry %v, made with %v", got.ExpiresAt, tok.ExpiresAt)
		}

		past := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
		if err := db.Gorm.WithContext(ctx).Model(&models.APIToken{}).Where("id = ?", tok.ID).Update("expires_at", past).Error; err != nil {
			t.Fatal(err)
		}
		_, _, _, _, err = db.AuthenticateAPIToken(ctx, secret)
		if models.ErrorCode(err) != models.EUnauthorized {
			t.Fatalf("an expired token: %v, want EUnauthorized", err)
		}
		if msg := models.ErrorMessage(err); !strings.Contains(msg, "expired on 2026-11-01") || !strings.Contains(msg, "/tokens") {
			t.Errorf("an expired token's message %q does not say when it expired and where to make a new one", msg)
		}
		// A minute ahead of the server's clock it still works.
		soon := time.Now().UTC().Add(time.Minute)
		if err := db.Gorm.WithContext(ctx).Model(&models.APIToken{}).Where("id = ?", tok.ID).Update("expires_at", soon).Error; err != nil {
			t.Fatal(err)
		}
		if _, _, _, _, err := db.AuthenticateAPIToken(ctx, secret); err != nil {
			t.Errorf("a token a minute before its expiry is refused: %v", err)
		}

		never, neverSecret, err := db.CreateExpiringAPIToken(ctx, ws.ID, u.ID, "automation", 0)
		if err != nil {
			t.Fatal(err)
		}
		if never.ExpiresAt != nil {
			t.Errorf("a never-expiring token expires at %v", never.ExpiresAt)
		}
		if got, _, _, _, err := db.AuthenticateAPIToken(ctx, neverSecret); err != nil || got.ExpiresAt != nil {
			t.Errorf("a never-expiring token: %+v, %v", got, err)
		}
		if _, _, err := db.CreateExpiringAPIToken(ctx, ws.ID, u.ID, "x", -time.Hour); models.ErrorCode(err) != models.EInvalid {
			t.Errorf("a token expiring in the past: %v, want EInvalid", err)
		}
	})
}

// TestTokenExpiryMigrationKeepsOldTokens: on a database made before
// migration 00034, a stored token still works after it, and never expires.
func TestTokenExpiryMigrationKeepsOldTokens(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := t.Context()
			raw, err := models.Open(ctx, dbtest.DSN(t, d))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			dialect, dir, fsRoot := goose.DialectSQLite3, "sqlite", migrations.SQLite
			if d == models.Postgres {
				dialect, dir, fsRoot = goose.DialectPostgres, "postgres", migrations.Postgres
			}
			fsys, err := fs.Sub(fsRoot, dir)
			if err != nil {
				t.Fatal(err)
			}
			prov, err := goose.NewProvider(dialect, raw.SQL, fsys, goose.WithTableName("batcheval_schema_version"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := prov.UpTo(ctx, 33); err != nil {
				t.Fatal(err)
			}
			ws, err := raw.EnsureDefaultWorkspace(ctx)
			if err != nil {
				t.Fatal(err)
			}
			u, err := raw.CreateUser(ctx, ws.ID, models.RoleViewer, models.NewUser{Email: "old@a.test", Name: "old", Password: "correct horse battery"})
			if err != nil {
				t.Fatal(err)
			}
			// A token as 00008's table stored it (no expires_at column yet).
			secret := models.TokenPrefix + "an-old-token-made-before-expiries-existed"
			if err := raw.Gorm.WithContext(ctx).Exec(`INSERT INTO api_tokens (workspace_id, user_id, name, prefix, token_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
				ws.ID, u.ID, "old script", secret[:8], models.HashLinkToken(secret), time.Now().UTC().Add(-400*24*time.Hour)).Error; err != nil {
				t.Fatal(err)
			}
			if err := raw.MigrateSchema(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if v, err := prov.GetDBVersion(ctx); err != nil || v < 34 {
				t.Fatalf("schema version %d after migrating, %v", v, err)
			}
			got, gotUser, _, role, err := raw.AuthenticateAPIToken(ctx, secret)
			if err != nil {
				t.Fatalf("a token made before 00034 is refused after it: %v", err)
			}
			if got.ExpiresAt != nil || gotUser.ID != u.ID || role != models.RoleViewer {
				t.Errorf("old token after 00034: expires %v, user %d, role %s; want never, %d, viewer", got.ExpiresAt, gotUser.ID, role, u.ID)
			}
			// And 00085 gives it full access: what its person's role allows,
			// as before scopes existed.
			if got.Scope != models.TokenScopeFull || got.ReadOnly() {
				t.Errorf("old token after 00085: scope %q, want %q", got.Scope, models.TokenScopeFull)
			}
			list, err := raw.ListAPITokens(ctx, ws.ID, u.ID)
			if err != nil || len(list) != 1 || list[0].ExpiresAt != nil {
				t.Errorf("old token listed as %+v, %v; want one that never expires", list, err)
			}
		})
	}
}
