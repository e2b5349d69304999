package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// KeyPrefix starts every Sova API key.
const KeyPrefix = "sova_"

// keyPrefixLen is how much of a key is kept in clear for listing: "sova_"
// and 8 characters of the secret.
const keyPrefixLen = len(KeyPrefix) + 8

// NewAPIKey returns a new API key (sova_ and 43 characters of 32 random
// bytes), the prefix kept for listing, and the hash kept in the store.
func NewAPIKey() (key, prefix, hash string, err error) {
	secret, err := randomToken()
	if err != nil {
		return "", "", "", err
	}
	key = KeyPrefix + secret
	return key, key[:keyPrefixLen], HashSecret(key), nil
}

// newSessionSecret returns a session cookie's value (32 random bytes) and
// the hash that is the session's id in the store.
func newSessionSecret() (secret, id string, err error) {
	secret, err = randomToken()
	if err != nil {
		return "", "", err
	}
	return secret, HashSecret(secret), nil
}

// randomToken is 32 random bytes, base64url without padding.
func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// HashSecret is how the store keys a secret: SHA-256, in hex. The secrets
// are 256 random bits, so a fast hash is enough.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// looksLikeKey reports whether s has the shape of a Sova API key.
func looksLikeKey(s string) bool {
	return strings.HasPrefix(s, KeyPrefix) && len(s) == len(KeyPrefix)+43
}
