package models_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

func newSealer(t *testing.T) *models.Sealer {
	t.Helper()
	key := make([]byte, models.SecretKeySize)
	_, _ = rand.Read(key)
	s, err := models.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storedKeyColumn reads the judges.api_key column as it is on disk.
func storedKeyColumn(t *testing.T, db *models.DB, id int64) string {
	t.Helper()
	var v string
	if err := db.Gorm.Raw("SELECT api_key FROM judges WHERE id = ?", id).Scan(&v).Error; err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSealer(t *testing.T) {
	a, b := newSealer(t), newSealer(t)
	const key = "sk-proj-very-secret-1234567890"
	s1, err := a.Seal(key)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := a.Seal(key)
	if s1 == s2 || strings.Contains(s1, key) || !strings.HasPrefix(s1, "bek1:"+a.ID()+":") {
		t.Errorf("sealed values %q, %q: want a fresh nonce, no plaintext, a version and key id prefix", s1, s2)
	}
	if got, err := a.Open(s1); err != nil || got != key {
		t.Errorf("Open = %q, %v", got, err)
	}
	if _, err := b.Open(s1); err == nil || !strings.Contains(err.Error(), a.ID()) {
		t.Errorf("another key opened it, or the error does not name the key used: %v", err)
	}
	// One bit of the ciphertext flipped. (Overwriting the last two
	// characters with "AA" left the value unchanged when it already ended
	// so, one run in 4,096, and the fresh-clone CI met it.)
	prefix := "bek1:" + a.ID() + ":"
	ct, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(s1, prefix))
	if err != nil {
		t.Fatalf("sealed value %q: %v", s1, err)
	}
	ct[len(ct)/2] ^= 1
	if _, err := a.Open(prefix + base64.RawStdEncoding.EncodeToString(ct)); err == nil {
		t.Error("a tampered value was opened")
	}
	for _, bad := range []string{"", "c2hvcnQ=", "not base64 !!"} {
		if _, err := models.ParseSecretKey(bad); err == nil {
			t.Errorf("ParseSecretKey(%q) accepted", bad)
		}
	}
	if _, err := models.ParseSecretKey("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"); err != nil {
		t.Errorf("a valid base64 key was refused: %v", err)
	}
}

// TestJudgeKeysEncryptedAtRest: a stored key is sealed in the database
// column and read back in plaintext by FindJudge, on both databases.
func TestJudgeKeysEncryptedAtRest(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		const key = "sk-at-rest-4242"
		j := models.Judge{WorkspaceID: ws.ID, Name: "OpenAI", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o", APIKey: key}
		if err := db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		raw := storedKeyColumn(t, db, j.ID)
		if strings.Contains(raw, key) || !models.IsSealed(raw) {
			t.Fatalf("the column holds %q, want a sealed value", raw)
		}
		got, err := db.FindJudge(ctx, ws.ID, j.ID)
		if err != nil || got.APIKey != key || !got.HasStoredKey() {
			t.Fatalf("FindJudge: key %q, %v", got.APIKey, err)
		}
		// An update without a key keeps the sealed one.
		got.APIKey = ""
		got.Name = "Renamed"
		if err := db.SaveJudge(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if again, _ := db.FindJudge(ctx, ws.ID, j.ID); again.APIKey != key {
			t.Errorf("after an update without a key, the key is %q", again.APIKey)
		}
		// With another secret key the judge still loads, says why the key
		// is unreadable, and has no key.
		db.Secrets = models.NewSecrets(newSealer(t), "")
		other, err := db.FindJudge(ctx, ws.ID, j.ID)
		if err != nil || other.APIKey != "" || !strings.Contains(other.KeyProblem, "cannot be read") {
			t.Errorf("with the wrong secret key: key %q, problem %q, err %v", other.APIKey, other.KeyProblem, err)
		}
	})
}

// TestNoSecretKeyRefusesToStore: without a secret key (outside local mode)
// a key is refused with a message saying what to set, and nothing is stored.
func TestNoSecretKeyRefusesToStore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		db.Secrets = nil
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		j := models.Judge{WorkspaceID: ws.ID, Name: "OpenAI", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o", APIKey: "sk-1"}
		err := db.SaveJudge(ctx, &j)
		if models.ErrorCode(err) != models.EInvalid || !strings.Contains(models.ErrorMessage(err), "BATCHEVAL_SECRET_KEY") {
			t.Fatalf("SaveJudge without a secret key = %v, want an invalid error naming BATCHEVAL_SECRET_KEY", err)
		}
		// The workspace's built-in simulated judge is not one of them.
		if js, _ := db.ListJudges(ctx, ws.ID); len(js) != 1 || !js[0].Simulated {
			t.Errorf("judges stored: %+v, want only the simulated judge", js)
		}
		// Without a key to store, a judge is saved all the same.
		j.APIKey = ""
		if err := db.SaveJudge(ctx, &j); err != nil {
			t.Errorf("a judge without a key: %v", err)
		}
	})
}

// TestLocalSecretKeyFile: in local mode the secret key is created, mode
// 0600, the first time a key is stored, and read back by the next start.
func TestLocalSecretKeyFile(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		file := filepath.Join(t.TempDir(), "data", "secret.key")
		var told string
		db.Secrets = models.NewSecrets(nil, file)
		db.Secrets.OnGenerate = func(p string) { told = p }
		if _, err := db.Secrets.Sealer(false); err == nil {
			t.Fatal("a key was found before any was made")
		}
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Fatalf("the key file exists before it is needed: %v", err)
		}
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		j := models.Judge{WorkspaceID: ws.ID, Name: "Local", BaseURL: "http://localhost:8000/v1", Model: "m", APIKey: "vllm-key"}
		if err := db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(file)
		if err != nil || st.Mode().Perm() != 0o600 || told != file {
			t.Fatalf("key file: %v, mode %v, told %q", err, st.Mode().Perm(), told)
		}
		db.Secrets = models.NewSecrets(nil, file) // the next start
		if got, _ := db.FindJudge(ctx, ws.ID, j.ID); got.APIKey != "vllm-key" {
			t.Errorf("after a restart the key is %q (%s)", got.APIKey, got.KeyProblem)
		}
	})
}

// TestSealAndRotateStoredKeys: plaintext keys from before encryption are
// sealed at start-up; rotation re-encrypts every key under the new secret
// key in one transaction, and changes nothing when the old key is wrong.
func TestSealAndRotateStoredKeys(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		var ids []int64
		for i, key := range []string{"sk-old-plain-1", "sk-old-plain-2"} {
			j := models.Judge{WorkspaceID: ws.ID, Name: "J" + string(rune('A'+i)), BaseURL: "https://x.example/v1", Model: "m"}
			if err := db.SaveJudge(ctx, &j); err != nil {
				t.Fatal(err)
			}
			// As an older version stored it.
			if err := db.Gorm.Exec("UPDATE judges SET api_key = ? WHERE id = ?", key, j.ID).Error; err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.ID)
		}
		keep := db.Secrets
		db.Secrets = nil
		if _, err := db.SealStoredKeys(ctx); err == nil {
			t.Error("plaintext keys and no secret key: SealStoredKeys succeeded")
		}
		db.Secrets = keep
		n, err := db.SealStoredKeys(ctx)
		if err != nil || n != 2 {
			t.Fatalf("SealStoredKeys = %d, %v; want 2", n, err)
		}
		for _, id := range ids {
			if raw := storedKeyColumn(t, db, id); !models.IsSealed(raw) || strings.Contains(raw, "sk-old") {
				t.Errorf("judge %d still stores %q", id, raw)
			}
		}
		if n, _ := db.SealStoredKeys(ctx); n != 0 {
			t.Errorf("a second pass sealed %d keys again", n)
		}

		old, _ := keep.Sealer(false)
		newKey, wrong := newSealer(t), newSealer(t)
		before := storedKeyColumn(t, db, ids[0])
		if _, err := db.RotateSecretKey(ctx, wrong, newKey); err == nil {
			t.Error("rotation with the wrong old key succeeded")
		}
		if storedKeyColumn(t, db, ids[0]) != before {
			t.Error("a failed rotation changed a stored key")
		}
		if n, err := db.RotateSecretKey(ctx, old, newKey); err != nil || n != 2 {
			t.Fatalf("RotateSecretKey = %d, %v", n, err)
		}
		db.Secrets = models.NewSecrets(newKey, "")
		for i, id := range ids {
			got, _ := db.FindJudge(ctx, ws.ID, id)
			if want := []string{"sk-old-plain-1", "sk-old-plain-2"}[i]; got.APIKey != want {
				t.Errorf("judge %d after rotation: %q (%s), want %q", id, got.APIKey, got.KeyProblem, want)
			}
		}
	})
}
