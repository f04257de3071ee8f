package models

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gorm.io/gorm"
)

// SecretKeySize is the length of the key that seals judge keys at rest:
// 32 bytes for AES-256-GCM.
const SecretKeySize = 32

// sealedPrefix starts every sealed value: the format version, then the id
// of the key that sealed it ("bek1:<key id>:<base64 nonce+ciphertext>").
// A value without it is a key stored before encryption existed.
const sealedPrefix = "bek1:"

// sealAAD binds a ciphertext to its purpose, so a sealed judge key cannot
// be passed off as another kind of secret should others be added.
var sealAAD = []byte("batcheval judge api key")

// Sealer encrypts and decrypts judge keys with one secret key.
type Sealer struct {
	id   string
	aead cipher.AEAD
}

// NewSealer makes a sealer from a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != SecretKeySize {
		return nil, fmt.Errorf("the secret key is %d bytes long; it must be %d (e.g. openssl rand -base64 32)", len(key), SecretKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	// The id names the key without revealing it: a hash of a fixed label
	// and the key, cut to 8 hex digits (enough to tell keys apart).
	sum := sha256.Sum256(append([]byte("batcheval key id\x00"), key...))
	return &Sealer{id: hex.EncodeToString(sum[:4]), aead: aead}, nil
}

// ParseSecretKey reads a key written as base64 (standard or URL alphabet,
// padded or not), as BATCHEVAL_SECRET_KEY and key files hold it.
func ParseSecretKey(s string) (*Sealer, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil {
			return NewSealer(key)
		}
	}
	return nil, errors.New("the secret key is not base64: write 32 random bytes as base64, e.g. openssl rand -base64 32")
}

// ReadSecretKeyFile reads a key file (base64 text).
func ReadSecretKeyFile(path string) (*Sealer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the secret key file: %w", err)
	}
	s, err := ParseSecretKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ID names the key (a prefix of a hash of it), as written in sealed values.
func (s *Sealer) ID() string { return s.id }

// webhookAAD binds a sealed webhook address to its purpose: it cannot be
// opened as a judge key, nor a judge key as an address.
var webhookAAD = []byte("batcheval webhook url")

// Seal encrypts a judge key.
func (s *Sealer) Seal(plain string) (string, error) { return s.sealFor(plain, sealAAD) }

// Open decrypts a sealed judge key.
func (s *Sealer) Open(sealed string) (string, error) { return s.openFor(sealed, sealAAD) }

func (s *Sealer) sealFor(plain string, aad []byte) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	ct := s.aead.Seal(nonce, nonce, []byte(plain), aad)
	return sealedPrefix + s.id + ":" + base64.RawStdEncoding.EncodeToString(ct), nil
}

func (s *Sealer) openFor(sealed string, aad []byte) (string, error) {
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	id, data, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return "", errors.New("the stored key is not in a known sealed format")
	}
	if id != s.id {
		return "", fmt.Errorf("the stored key was sealed with secret key %s, but this server has secret key %s: configure the key it was sealed with, or enter the judge's key again", id, s.id)
	}
	ct, err := base64.RawStdEncoding.DecodeString(data)
	if err != nil || len(ct) < s.aead.NonceSize() {
		return "", errors.New("the stored key is damaged")
	}
	plain, err := s.aead.Open(nil, ct[:s.aead.NonceSize()], ct[s.aead.NonceSize():], aad)
	if err != nil {
		return "", errors.New("the stored key cannot be decrypted with this server's secret key (wrong key, or damaged)")
	}
	return string(plain), nil
}

// IsSealed reports whether a stored value is sealed (not plaintext).
func IsSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }

// errNoSecretKey is why a key cannot be stored without a secret key.
var errNoSecretKey = Errorf(EInvalid, "judge keys cannot be stored: this server has no secret key to encrypt them with. "+
	"The operator can set BATCHEVAL_SECRET_KEY or BATCHEVAL_SECRET_KEY_FILE; or leave the key field empty and "+
	"have the judge read its key from an environment variable listed in BATCHEVAL_JUDGE_KEY_VARS")

// Secrets holds the secret key judge keys are sealed with: one configured
// by the operator, or, in local mode, one generated into a file on first
// need. A nil *Secrets has no key.
type Secrets struct {
	mu     sync.Mutex
	sealer *Sealer
	file   string
	// OnGenerate is told when a key file is created (to log it).
	OnGenerate func(path string)
}

// NewSecrets uses a configured key (may be nil); generateFile, when not
// empty and no key is configured, is where a key is kept in local mode: read
// if it exists, created (mode 0600) the first time a key must be sealed.
func NewSecrets(s *Sealer, generateFile string) *Secrets {
	return &Secrets{sealer: s, file: generateFile}
}

// Sealer returns the secret key; create says whether a local-mode key file
// may be created for it. Without a key it returns errNoSecretKey.
func (s *Secrets) Sealer(create bool) (*Sealer, error) {
	if s == nil {
		return nil, errNoSecretKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sealer != nil {
		return s.sealer, nil
	}
	if s.file == "" {
		return nil, errNoSecretKey
	}
	sealer, err := ReadSecretKeyFile(s.file)
	switch {
	case err == nil:
		s.sealer = sealer
		return sealer, nil
	case !errors.Is(err, fs.ErrNotExist) || !create:
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errNoSecretKey
		}
		return nil, err
	}
	key := make([]byte, SecretKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(s.file), 0o700); err != nil {
		return nil, fmt.Errorf("create the secret key's folder: %w", err)
	}
	// O_EXCL: never overwrite a key that appeared meanwhile (another process).
	f, err := os.OpenFile(s.file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return ReadSecretKeyFile(s.file)
		}
		return nil, fmt.Errorf("create the secret key file: %w", err)
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("write the secret key file: %w", werr)
	}
	if s.sealer, err = NewSealer(key); err != nil {
		return nil, err
	}
	if s.OnGenerate != nil {
		s.OnGenerate(s.file)
	}
	return s.sealer, nil
}

// openJudgeKey fills j.APIKey from the sealed value; a key that cannot be
// opened leaves APIKey empty and says why in KeyProblem.
func (db *DB) openJudgeKey(j *Judge) {
	switch {
	case j.SealedKey == "":
		return
	case !IsSealed(j.SealedKey):
		// Stored before encryption; sealed by SealStoredKeys at start-up.
		j.APIKey = j.SealedKey
		return
	}
	sealer, err := db.Secrets.Sealer(false)
	if err == nil {
		j.APIKey, err = sealer.Open(j.SealedKey)
	}
	if err != nil {
		j.KeyProblem = "the stored key cannot be read: " + ErrorMessage(err)
	}
}

// sealJudgeKey seals j.APIKey into j.SealedKey.
func (db *DB) sealJudgeKey(j *Judge) error {
	sealer, err := db.Secrets.Sealer(true)
	if err != nil {
		return err
	}
	j.SealedKey, err = sealer.Seal(j.APIKey)
	return err
}

// storedKey is a judge's id and stored key column.
type storedKey struct {
	ID     int64
	APIKey string
}

// SealStoredKeys encrypts, in one transaction, every judge key still stored
// in plaintext (from before keys were encrypted). It returns how many it
// sealed; with plaintext keys present and no secret key, it fails.
func (db *DB) SealStoredKeys(ctx context.Context) (int, error) {
	n := 0
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var keys []storedKey
		if err := tx.Table("judges").Select("id, api_key").Where("api_key <> ''").Find(&keys).Error; err != nil {
			return err
		}
		for _, k := range keys {
			if IsSealed(k.APIKey) {
				continue
			}
			sealer, err := db.Secrets.Sealer(true)
			if err != nil {
				return fmt.Errorf("judge keys are stored unencrypted and cannot be encrypted: %s", ErrorMessage(err))
			}
			sealed, err := sealer.Seal(k.APIKey)
			if err != nil {
				return err
			}
			if err := tx.Table("judges").Where("id = ?", k.ID).Update("api_key", sealed).Error; err != nil {
				return err
			}
			n++
		}
		// Webhook addresses stored in plaintext (before they were sealed,
		// or saved while the server had no secret key) are sealed once a
		// key exists; without one they stay readable, as they were.
		sealer, err := db.Secrets.Sealer(false)
		if err != nil {
			return nil
		}
		m, err := resealWebhooks(tx, func(stored string) (string, error) {
			if IsSealed(stored) {
				return stored, nil
			}
			return sealer.sealFor(stored, webhookAAD)
		})
		_ = m
		return err
	})
	return n, err
}

// RotateSecretKey re-encrypts every stored judge key from the old secret
// key to the new one, in one transaction: if any key cannot be opened with
// the old secret key, nothing changes. Plaintext keys are sealed too.
func (db *DB) RotateSecretKey(ctx context.Context, old, new *Sealer) (int, error) {
	n := 0
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var keys []storedKey
		if err := tx.Table("judges").Select("id, api_key").Where("api_key <> ''").Order("id").Find(&keys).Error; err != nil {
			return err
		}
		for _, k := range keys {
			plain := k.APIKey
			if IsSealed(plain) {
				var err error
				if plain, err = old.Open(k.APIKey); err != nil {
					return fmt.Errorf("judge %d: %w; nothing was changed", k.ID, err)
				}
			}
			sealed, err := new.Seal(plain)
			if err != nil {
				return err
			}
			if err := tx.Table("judges").Where("id = ?", k.ID).Update("api_key", sealed).Error; err != nil {
				return err
			}
			n++
		}
		m, err := resealWebhooks(tx, func(stored string) (string, error) {
			plain := stored
			if IsSealed(stored) {
				var err error
				if plain, err = old.openFor(stored, webhookAAD); err != nil {
					return "", err
				}
			}
			return new.sealFor(plain, webhookAAD)
		})
		n += m
		return err
	})
	return n, err
}

// resealWebhooks rewrites every stored webhook address through reseal,
// in tx; it returns how many it rewrote.
func resealWebhooks(tx *gorm.DB, reseal func(stored string) (string, error)) (int, error) {
	var hooks []struct {
		WorkspaceID int64
		URL         string
	}
	if err := tx.Table("webhooks").Select("workspace_id, url").Order("workspace_id").Find(&hooks).Error; err != nil {
		return 0, err
	}
	for i, h := range hooks {
		v, err := reseal(h.URL)
		if err != nil {
			return i, fmt.Errorf("the webhook of workspace %d: %w; nothing was changed", h.WorkspaceID, err)
		}
		if v == h.URL {
			continue
		}
		// A column update: the webhook's settings, and so its revision
		// (updated_at), are unchanged.
		if err := tx.Table("webhooks").Where("workspace_id = ?", h.WorkspaceID).UpdateColumn("url", v).Error; err != nil {
			return i, err
		}
	}
	return len(hooks), nil
}
