package models

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
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
// Only setArgonCost changes it, so that the dummy hash follows.
var argonCost struct{ memoryKiB, time uint32 }

// dummyHash is the hash an unknown address's sign-in is checked against,
// so that it spends one argon2id computation at the cost of new hashes,
// as a wrong password does. It is made with the cost, when the package is
// loaded (setArgonCost), and never on a request: made the first time it
// was needed, it cost the first unknown address after each start one more
// hash than a known address (a timing tell once per restart).
//
// Its salt and key are random bytes, not the hash of a password: checking
// against it costs the same as against a real hash, no password matches
// it, and making it costs no hashing.
var dummyHash string

func init() { setArgonCost(argonMemoryKiB, argonTime) }

// setArgonCost sets the cost of new hashes and remakes the dummy hash at
// that cost: the one place either changes, so they cannot fall out of step.
func setArgonCost(memoryKiB, time uint32) {
	argonCost.memoryKiB, argonCost.time = memoryKiB, time
	salt := make([]byte, argonSaltLen)
	key := make([]byte, argonKeyLen)
	// crypto/rand.Read never returns an error (it crashes the program
	// if the system's source fails).
	_, _ = rand.Read(salt)
	_, _ = rand.Read(key)
	dummyHash = encodeArgonHash(argonCost.memoryKiB, argonCost.time, argonThreads, salt, key)
}

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
	setArgonCost(64, 1)
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
	key := argon2IDKey([]byte(pw), salt, argonCost.time, argonCost.memoryKiB, argonThreads, argonKeyLen)
	return encodeArgonHash(argonCost.memoryKiB, argonCost.time, argonThreads, salt, key), nil
}

// encodeArgonHash writes an argon2id hash in the PHC string format, its
// parameters stated: "$argon2id$v=19$m=..,t=..,p=..$salt$key".
func encodeArgonHash(memoryKiB, time uint32, threads uint8, salt, key []byte) string {
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, memoryKiB, time, threads,
		enc.EncodeToString(salt), enc.EncodeToString(key))
}

// argon2IDKey is argon2.IDKey, every password hash made or checked; a
// test counts through it how many a sign-in computes.
var argon2IDKey = argon2.IDKey

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
	got := argon2IDKey([]byte(pw), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

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
