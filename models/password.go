package models

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters for password hashes: OWASP's "m=19 MiB, t=2, p=1"
// profile. It costs a few tens of milliseconds per sign-in on one core,
// which keeps a 2-core server responsive under a burst of sign-ins while a
// stolen hash still costs an attacker 19 MiB and two passes per guess.
// The parameters are stored in each hash, so raising them later only
// affects new hashes.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonSaltLen   = 16
	argonKeyLen    = 32
)

// argonCost is the memory (KiB) and passes of new hashes: the parameters
// above, unless a test binary lowered them (CheapPasswordHashesInTests).
var argonCost = struct{ memoryKiB, time uint32 }{argonMemoryKiB, argonTime}

// CheapPasswordHashesInTests makes new password hashes, and the dummy hash
// an unknown account's sign-in is checked against, cost 64 KiB and one
// pass instead of 19 MiB and two: for a test binary that signs hundreds of
// accounts up and in, where the production cost only spends minutes. Call
// it from TestMain before anything hashes. It panics outside a test binary
// (testing.Testing), so a server never hashes at this cost; the models
// package's own tests keep the production parameters (TestPasswordHash).
func CheapPasswordHashesInTests() {
	if !testing.Testing() {
		panic("models.CheapPasswordHashesInTests called outside a test binary")
	}
	argonCost.memoryKiB, argonCost.time = 64, 1
}

// Password length bounds: 10 characters is the shortest we accept for an
// account that may be reachable from a network; 256 keeps a hostile form
// from making the server hash megabytes.
const (
	MinPasswordLen = 10
	MaxPasswordLen = 256
)

// CheckPasswordStrength refuses passwords that are too short or too long.
func CheckPasswordStrength(pw string) error {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen {
		return Errorf(EInvalid, "the password needs at least %d characters", MinPasswordLen)
	}
	if len(pw) > MaxPasswordLen {
		return Errorf(EInvalid, "the password is too long (at most %d bytes)", MaxPasswordLen)
	}
	return nil
}

// HashPassword returns an argon2id hash in the PHC string format.
func HashPassword(pw string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, argonCost.time, argonCost.memoryKiB, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonCost.memoryKiB, argonCost.time, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches the PHC-encoded argon2id hash.
// A malformed hash never matches.
func CheckPassword(hash, pw string) bool {
	parts := strings.Split(hash, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	var mem, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil || mem == 0 || t == 0 || p == 0 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHash is checked against when an account does not exist, so a
// sign-in takes as long for an unknown address as for a wrong password.
var dummyHash = sync.OnceValue(func() string {
	h, _ := HashPassword("not a real password, only spends time")
	return h
})

// NewLinkToken returns a fresh secret for a one-time link (256 random
// bits, URL-safe) and the hash stored in its place.
func NewLinkToken() (token, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashLinkToken(token), nil
}

// HashLinkToken is the stored form of a link token. A fast hash is enough:
// the token has 256 bits of entropy, so there is nothing to brute-force.
func HashLinkToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
