package handlers

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// tablesHolding names the tables (and columns) of db where some value
// contains needle, reading every row of every table: the product's, River's
// and the migrations' own.
func tablesHolding(t *testing.T, db *models.DB, needle string) []string {
	t.Helper()
	ctx := context.Background()
	list := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if db.Dialect == models.Postgres {
		list = "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables " +
			"WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')"
	}
	var tables []string
	rows, err := db.SQL.QueryContext(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("found %d tables (%v): the listing reads the wrong schema", len(tables), tables)
	}
	var found []string
	for _, table := range tables {
		found = append(found, columnsHolding(t, db.SQL, table, needle)...)
	}
	return found
}

// columnsHolding names table.column for each value of the table that
// contains needle.
func columnsHolding(t *testing.T, q *sql.DB, table, needle string) []string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), "SELECT * FROM "+table)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		for i, v := range vals {
			s := fmt.Sprint(v)
			if b, ok := v.([]byte); ok {
				s = string(b)
			}
			if strings.Contains(s, needle) {
				found = append(found, table+"."+cols[i])
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return found
}

// TestDatabaseHoldsNoSessionCookie: after a sign-in, a wrong current
// password (stored per session) and "sign out my other sessions" (a new
// session id), no table holds a session cookie's value: a copy of the
// database or a backup gives no live session. The session store is keyed
// by the SHA-256 of the cookie, and the sessions keep working.
// (Reported in session 26 as cookies stored in clear: the library's
// HashTokenInStore did hash them; the store now hashes itself, and this
// fails if either stores a cookie, or hashes twice.)
func TestDatabaseHoldsNoSessionCookie(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		env.createUser(env.ws.ID, "ada@a.test", models.RoleEditor)
		rec := env.login("ada@a.test", testPassword, "198.51.100.7")
		signedIn := env.sessionFrom(rec)
		if rec.Code != http.StatusSeeOther || signedIn == nil || len(signedIn.Value) < 20 {
			t.Fatalf("sign-in = %d, cookie %v", rec.Code, signedIn)
		}
		if rec := env.send(http.MethodGet, "/account", nil, "", signedIn); rec.Code != http.StatusOK {
			t.Fatalf("the signed-in session = %d, want 200", rec.Code)
		}
		if rec := env.send(http.MethodPost, "/account/password", url.Values{"current_password": {"not the password"},
			"new_password": {"a brand new passphrase"}, "new_password_again": {"a brand new passphrase"}}, "", signedIn); rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("a wrong current password = %d, want 422", rec.Code)
		}
		rec = env.send(http.MethodPost, "/account/sessions", nil, "", signedIn)
		renewed := env.sessionFrom(rec)
		if rec.Code != http.StatusSeeOther || renewed == nil || renewed.Value == signedIn.Value {
			t.Fatalf("sign out the other sessions = %d, cookie %v", rec.Code, renewed)
		}
		if rec := env.send(http.MethodGet, "/account", nil, "", renewed); rec.Code != http.StatusOK {
			t.Fatalf("the renewed session = %d, want 200", rec.Code)
		}

		for name, cookie := range map[string]string{"the sign-in's cookie": signedIn.Value, "the renewed cookie": renewed.Value} {
			if where := tablesHolding(t, env.db, cookie); len(where) > 0 {
				t.Errorf("%s is stored in %v", name, where)
			}
		}
		// What is stored instead: its hash (the control that the scan
		// read the tables where the sessions are).
		sum := sha256.Sum256([]byte(renewed.Value))
		var n int64
		if err := env.db.Gorm.WithContext(ctx).Table("sessions").Where("token = ?", base64.RawURLEncoding.EncodeToString(sum[:])).Count(&n).Error; err != nil || n != 1 {
			t.Errorf("sessions keyed by the renewed cookie's hash: %d (%v), want 1", n, err)
		}
		if err := env.db.Gorm.WithContext(ctx).Model(&models.CurrentPasswordTry{}).
			Where("session_key = ?", models.HashLinkToken(signedIn.Value)).Count(&n).Error; err != nil || n != 1 {
			t.Errorf("wrong current passwords kept for the sign-in's session: %d (%v), want 1", n, err)
		}
	})
}
