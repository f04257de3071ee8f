package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

func writeKeyFile(t *testing.T, path string) {
	t.Helper()
	key := make([]byte, models.SecretKeySize)
	_, _ = rand.Read(key)
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// storeJudgeKey opens the database as c says and stores a judge with key
// (plaintext: written as an older version did, bypassing encryption).
func storeJudgeKey(t *testing.T, c *Config, key string, plaintext bool) int64 {
	t.Helper()
	ctx := context.Background()
	db, err := openDB(ctx, c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, _ := db.EnsureDefaultWorkspace(ctx)
	j := models.Judge{WorkspaceID: ws.ID, Name: "J", BaseURL: "https://api.example/v1", Model: "m"}
	if !plaintext {
		j.APIKey = key
	}
	if err := db.SaveJudge(ctx, &j); err != nil {
		t.Fatal(err)
	}
	if plaintext {
		if err := db.Gorm.Exec("UPDATE judges SET api_key = ? WHERE id = ?", key, j.ID).Error; err != nil {
			t.Fatal(err)
		}
	}
	return j.ID
}

func readJudgeKey(t *testing.T, c *Config, id int64) (models.Judge, string) {
	t.Helper()
	ctx := context.Background()
	db, err := openDB(ctx, c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, _ := db.EnsureDefaultWorkspace(ctx)
	j, err := db.FindJudge(ctx, ws.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	db.Gorm.Raw("SELECT api_key FROM judges WHERE id = ?", id).Scan(&raw)
	return j, raw
}

// TestRotateKeyCommand: batcheval admin rotate-key re-encrypts the stored
// keys, which the new key then opens.
func TestRotateKeyCommand(t *testing.T) {
	dir := t.TempDir()
	dbPath, oldKey, newKey := filepath.Join(dir, "b.db"), filepath.Join(dir, "old.key"), filepath.Join(dir, "new.key")
	writeKeyFile(t, oldKey)
	writeKeyFile(t, newKey)
	id := storeJudgeKey(t, &Config{Addr: "0.0.0.0:8080", SQLitePath: dbPath, SecretKeyFile: oldKey}, "sk-rotate-me", false)

	var out, errOut bytes.Buffer
	getenv := func(string) string { return "" }
	err := run(context.Background(), []string{"admin", "rotate-key", "--db", dbPath, "--old-key-file", oldKey, "--new-key-file", newKey}, getenv, &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "re-encrypted 1 stored secret(s)") {
		t.Fatalf("rotate-key: %v\n%s%s", err, out.String(), errOut.String())
	}
	j, raw := readJudgeKey(t, &Config{Addr: "0.0.0.0:8080", SQLitePath: dbPath, SecretKeyFile: newKey}, id)
	if j.APIKey != "sk-rotate-me" || strings.Contains(raw, "sk-rotate-me") {
		t.Errorf("after rotation: key %q (%s), column %q", j.APIKey, j.KeyProblem, raw)
	}
	if err := run(context.Background(), []string{"admin", "rotate-key", "--db", dbPath, "--old-key-file", oldKey, "--new-key-file", newKey}, getenv, &out, &errOut); err == nil {
		t.Error("rotating again from the key no longer in use succeeded")
	}
}

// TestPlaintextKeysAtStartUp: keys an older version stored in plaintext
// are encrypted when the server opens the database; outside local mode
// without a secret key the server refuses to start, saying what to set;
// in local mode a key file is generated in the data folder.
func TestPlaintextKeysAtStartUp(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "data", "b.db")
	networked := &Config{Addr: "0.0.0.0:8080", SQLitePath: dbPath}
	id := storeJudgeKey(t, &Config{Addr: "0.0.0.0:8080", SQLitePath: dbPath, SecretKey: base64.StdEncoding.EncodeToString(make([]byte, 32))}, "sk-plain-old", true)

	_, err := openDB(context.Background(), networked, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "BATCHEVAL_SECRET_KEY") {
		t.Fatalf("networked start with plaintext keys and no secret key: %v", err)
	}
	local := &Config{Addr: "127.0.0.1:8080", SQLitePath: dbPath}
	j, raw := readJudgeKey(t, local, id)
	if j.APIKey != "sk-plain-old" || !models.IsSealed(raw) {
		t.Errorf("local start: key %q, column %q; want the key sealed", j.APIKey, raw)
	}
	st, err := os.Stat(filepath.Join(dir, "data", "secret.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("generated key file: %v %v", err, st)
	}
}
