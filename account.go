package sova

import (
	"context"
	"time"
)

// Roles of an account. RoleAnonymous is never stored: it is the role of a
// visitor without an account when anonymous use is allowed.
const (
	RoleAdmin     = "admin"
	RolePro       = "pro"
	RoleFree      = "free"
	RoleAnonymous = "anonymous"
)

// ValidRole reports whether r is a role an account may have.
func ValidRole(r string) bool {
	return r == RoleAdmin || r == RolePro || r == RoleFree
}

// Account is a person who signs in. PasswordHash is an argon2id hash in
// the PHC string format (internal/auth), empty for an account that signs
// in only with API keys.
type Account struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Role         string    `json:"role"`
	PasswordHash string    `json:"-"`
	CreatedAt    time.Time `json:"created"`
	Disabled     bool      `json:"disabled"`
}

// Session is a browser sign-in. Its ID is the SHA-256 of the cookie's
// secret, in hex: the secret itself is never stored.
type Session struct {
	ID         string
	UserID     string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastSeenAt time.Time
}

// APIKey is a key for API clients. Only the SHA-256 of the key is kept
// (Hash, hex); Prefix is its first characters, for listing and revoking.
// LastUsedAt and RevokedAt are zero when the key was never used or is
// not revoked.
type APIKey struct {
	ID         string    `json:"id"`
	UserID     string    `json:"user_id"`
	Prefix     string    `json:"prefix"`
	Hash       string    `json:"-"`
	CreatedAt  time.Time `json:"created"`
	LastUsedAt time.Time `json:"last_used,omitzero"`
	RevokedAt  time.Time `json:"revoked,omitzero"`
}

// AccountStore keeps accounts, their sign-in sessions and API keys, and
// the usage counters of the limits. Names are unique as written.
type AccountStore interface {
	// CreateAccount stores a new account, filling in its ID and creation
	// time; a name already taken is ErrConflict, an unknown role ErrInvalid.
	CreateAccount(ctx context.Context, a *Account) error
	GetAccount(ctx context.Context, id string) (*Account, error)
	GetAccountByName(ctx context.Context, name string) (*Account, error)
	// ListAccounts returns every account, by name.
	ListAccounts(ctx context.Context) ([]Account, error)
	// CountAccounts tells how many accounts exist.
	CountAccounts(ctx context.Context) (int, error)
	// SetPassword replaces an account's password hash.
	SetPassword(ctx context.Context, id, hash string) error
	// SetRole changes an account's role; SetDisabled disables or enables it.
	SetRole(ctx context.Context, id, role string) error
	SetDisabled(ctx context.Context, id string, disabled bool) error
	// DeleteAccount removes an account with its sessions and keys.
	DeleteAccount(ctx context.Context, id string) error
	// GetAccountByIdentity finds the account of a single sign-on identity
	// (the issuer's URL and its subject).
	GetAccountByIdentity(ctx context.Context, issuer, subject string) (*Account, error)
	// CreateAccountWithIdentity creates an account linked to an identity,
	// both or neither; a taken name or a linked identity is ErrConflict.
	CreateAccountWithIdentity(ctx context.Context, a *Account, issuer, subject string) error

	CreateSession(ctx context.Context, s *Session) error
	// GetSession returns the session with the given (hashed) id, expired
	// or not.
	GetSession(ctx context.Context, id string) (*Session, error)
	// TouchSession records that a session was used at t.
	TouchSession(ctx context.Context, id string, t time.Time) error
	DeleteSession(ctx context.Context, id string) error
	// DeleteSessions signs a user out everywhere; it returns how many
	// sessions ended.
	DeleteSessions(ctx context.Context, userID string) (int64, error)
	// DeleteExpiredSessions removes sessions that expired before t.
	DeleteExpiredSessions(ctx context.Context, t time.Time) (int64, error)

	// CreateAPIKey stores a key, filling in its ID and creation time.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// GetAPIKeyByHash returns the key with the given hash, revoked or not.
	GetAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// ListAPIKeys returns a user's keys, or everyone's for "", oldest first.
	ListAPIKeys(ctx context.Context, userID string) ([]APIKey, error)
	// TouchAPIKey records that a key was used at t.
	TouchAPIKey(ctx context.Context, id string, t time.Time) error
	// RevokeAPIKey revokes a key from now on.
	RevokeAPIKey(ctx context.Context, id string) error

	// AddUsage adds n to a subject's counter for a period (a user or an
	// address; "messages" on "2025-01-31") unless that would take it over
	// limit (limit < 0: no limit). It returns the count after the call
	// and whether n was added.
	AddUsage(ctx context.Context, subject, counter, period string, n, limit int64) (int64, bool, error)
	// Usage returns a subject's counter for a period (0 when none).
	Usage(ctx context.Context, subject, counter, period string) (int64, error)
	// DeleteUsageBefore removes counters of periods before period
	// (periods sort as text: dates as YYYY-MM-DD).
	DeleteUsageBefore(ctx context.Context, period string) (int64, error)
	// ListUsage returns the counters of periods from since on, of one
	// subject or of everyone for "", by period, subject and counter.
	ListUsage(ctx context.Context, subject, since string) ([]UsageCount, error)
}

// UsageCount is one counter of a subject for a period: what the limits
// count ("messages", "extreme") and what runs used ("tokens", "searches",
// "runs"), per user and UTC day.
type UsageCount struct {
	Subject string `json:"user_id"`
	Counter string `json:"counter"`
	Period  string `json:"day"`
	Count   int64  `json:"count"`
}
