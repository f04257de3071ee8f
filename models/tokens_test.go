package models_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPITokens: a token is long and random, stored only as its SHA-256,
// authenticates with the member's current role, and stops working when
// revoked or when its owner leaves the workspace.
func TestAPITokens(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "tok@a.test", Name: "Tok", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateAPIToken(ctx, ws.ID, u.ID, "  "); models.ErrorCode(err) != models.EInvalid {
			t.Errorf("unnamed token: err %v, want invalid", err)
		}
		other, err := db.CreateWorkspace(ctx, "other", u.ID)
		if err != nil {
			t.Fatal(err)
		}
		tok, secret, err := db.CreateAPIToken(ctx, ws.ID, u.ID, "CI")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, models.TokenPrefix))
		if !strings.HasPrefix(secret, models.TokenPrefix) || err != nil || len(raw) < 16 {
			t.Fatalf("token %q: want %q and at least 128 random bits (%v, %d bytes)", secret, models.TokenPrefix, err, len(raw))
		}
		sum := sha256.Sum256([]byte(secret))
		var stored models.APIToken
		if err := db.Gorm.First(&stored, tok.ID).Error; err != nil {
			t.Fatal(err)
		}
		if stored.TokenHash != hex.EncodeToString(sum[:]) || strings.Contains(stored.TokenHash, secret) {
			t.Errorf("stored hash %q is not the SHA-256 of the token", stored.TokenHash)
		}
		if !strings.HasPrefix(secret, stored.Prefix) || len(stored.Prefix) > 8 {
			t.Errorf("prefix %q is not a short start of the token", stored.Prefix)
		}

		got, gotUser, gotWS, role, err := db.AuthenticateAPIToken(ctx, secret)
		if err != nil || got.ID != tok.ID || gotUser.ID != u.ID || gotWS.ID != ws.ID || role != models.RoleEditor {
			t.Fatalf("authenticate = %d %d %d %q %v", got.ID, gotUser.ID, gotWS.ID, role, err)
		}
		if got.LastUsedAt == nil {
			t.Errorf("last-used time not recorded")
		}
		// The role is read at each request, not frozen in the token.
		if err := db.SetMemberRole(ctx, ws.ID, u.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		if _, _, _, role, _ := db.AuthenticateAPIToken(ctx, secret); role != models.RoleViewer {
			t.Errorf("role after change = %q, want viewer", role)
		}

		tests := []struct{ name, token string }{
			{"unknown", models.TokenPrefix + strings.Repeat("A", 43)},
			{"no prefix", strings.TrimPrefix(secret, models.TokenPrefix)},
			{"empty", ""},
		}
		for _, tc := range tests {
			if _, _, _, _, err := db.AuthenticateAPIToken(ctx, tc.token); models.ErrorCode(err) != models.EUnauthorized {
				t.Errorf("%s token: err %v, want unauthorized", tc.name, err)
			}
		}
		// Someone else (or another workspace) cannot revoke it.
		if _, err := db.RevokeAPIToken(ctx, other.ID, u.ID, tok.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("revoke from another workspace: %v, want not found", err)
		}
		if _, err := db.RevokeAPIToken(ctx, ws.ID, u.ID+1000, tok.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("revoke by someone else: %v, want not found", err)
		}
		if _, err := db.RevokeAPIToken(ctx, ws.ID, u.ID, tok.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, _, _, err := db.AuthenticateAPIToken(ctx, secret); models.ErrorCode(err) != models.EUnauthorized {
			t.Errorf("revoked token: err %v, want unauthorized", err)
		}
		list, err := db.ListAPITokens(ctx, ws.ID, u.ID)
		if err != nil || len(list) != 1 || list[0].RevokedAt == nil {
			t.Errorf("list after revoke = %+v %v", list, err)
		}

		// A member who leaves takes their tokens' access with them.
		_, secret2, err := db.CreateAPIToken(ctx, ws.ID, u.ID, "second")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.RemoveMember(ctx, ws.ID, u.ID, false); err != nil {
			t.Fatal(err)
		}
		if _, _, _, _, err := db.AuthenticateAPIToken(ctx, secret2); models.ErrorCode(err) != models.EUnauthorized {
			t.Errorf("token of a removed member: err %v, want unauthorized", err)
		}
		if _, _, err := db.CreateAPIToken(ctx, ws.ID, u.ID, "third"); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("token for a non-member: %v, want not found", err)
		}
	})
}
