package auth

import "testing"

// The hash a sign-in without an account is checked against costs what a
// new password's hash costs, and matches the password it was made from.
func TestDummyHashMatchesParameters(t *testing.T) {
	p, err := parseHash(dummyHash)
	if err != nil {
		t.Fatal(err)
	}
	if p.memory != argonMemory || p.time != argonTime || p.threads != argonThreads || len(p.key) != argonKeyLen || len(p.salt) != argonSaltLen {
		t.Errorf("dummyHash parameters m=%d t=%d p=%d key=%d salt=%d differ from new hashes'; make it again with HashPassword",
			p.memory, p.time, p.threads, len(p.key), len(p.salt))
	}
	if !CheckPassword(dummyHash, "not-a-password-of-anyone") {
		t.Error("dummyHash is not a hash of its password")
	}
}
