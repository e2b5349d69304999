package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters for new password hashes: OWASP's recommendation of
// 19 MiB, two passes, one lane. A hash carries the parameters it was made
// with, so raising them later keeps older hashes valid.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// MinPasswordLen is the shortest password accepted.
const MinPasswordLen = 8

// ErrWeakPassword reports a password shorter than MinPasswordLen.
var ErrWeakPassword = fmt.Errorf("a password needs at least %d characters", MinPasswordLen)

// HashPassword returns the argon2id hash of password with a fresh random
// salt, in the PHC string format:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (unpadded base64).
func HashPassword(password string) (string, error) {
	if len([]rune(password)) < MinPasswordLen {
		return "", ErrWeakPassword
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches hash (made by
// HashPassword, with any parameters). A malformed hash never matches.
func CheckPassword(hash, password string) bool {
	p, err := parseHash(hash)
	if err != nil {
		return false
	}
	key := argon2.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1
}

type argonHash struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

func parseHash(hash string) (argonHash, error) {
	var p argonHash
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, errors.New("not an argon2id hash")
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return p, errors.New("unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return p, fmt.Errorf("argon2 parameters: %w", err)
	}
	// Bounds, so that a hash from elsewhere cannot make a check take
	// gigabytes or minutes.
	if p.memory < 1024 || p.memory > 1<<20 || p.time < 1 || p.time > 10 || p.threads < 1 {
		return p, errors.New("argon2 parameters out of range")
	}
	var err error
	if p.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(p.salt) < 8 {
		return p, errors.New("argon2 salt")
	}
	if p.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(p.key) < 16 || len(p.key) > 64 {
		return p, errors.New("argon2 key")
	}
	return p, nil
}

// dummyHash is checked against when a sign-in names no account, so that
// the answer takes as long as for a wrong password. It is a hash of a
// password no one has, made once with the parameters above
// (TestDummyHashMatchesParameters): computing it at start-up cost every
// sova process, CLI calls included, 60 ms and 19 MiB.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$OTZOiHnEvGO4BAQih2OfpQ$35vFg+R48U7NZS2cWSQy1tPcOmtQYKpFOrPoF1PpY24"
