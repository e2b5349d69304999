package store

import (
	"context"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

var _ sova.AccountStore = (*DB)(nil)

// nullTime scans a nullable timestamp column: SQL NULL is the zero time.
type nullTime struct{ t *time.Time }

func (s nullTime) Scan(src any) error {
	if src == nil {
		*s.t = time.Time{}
		return nil
	}
	return timeScanner(s).Scan(src)
}

const accountColumns = `id, name, role, password_hash, created_at, disabled`

func scanAccount(row interface{ Scan(...any) error }) (*sova.Account, error) {
	var a sova.Account
	if err := row.Scan(&a.ID, &a.Name, &a.Role, &a.PasswordHash, scanTime(&a.CreatedAt), &a.Disabled); err != nil {
		return nil, err
	}
	return &a, nil
}

// CreateAccount stores a new account.
func (s *DB) CreateAccount(ctx context.Context, a *sova.Account) error {
	if a == nil || a.Name == "" {
		return fmt.Errorf("%w: an account needs a name", sova.ErrInvalid)
	}
	if !sova.ValidRole(a.Role) {
		return fmt.Errorf("%w: role %q (admin, pro or free)", sova.ErrInvalid, a.Role)
	}
	if a.ID == "" {
		id, err := newID()
		if err != nil {
			return err
		}
		a.ID = id
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	a.CreatedAt = storedTime(a.CreatedAt)
	_, err := s.exec(ctx, `INSERT INTO accounts (`+accountColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		a.ID, a.Name, a.Role, a.PasswordHash, s.d.time(a.CreatedAt), a.Disabled)
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return nil
}

// GetAccount returns the account with the given id.
func (s *DB) GetAccount(ctx context.Context, id string) (*sova.Account, error) {
	a, err := scanAccount(s.queryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if isNoRows(err) {
		return nil, fmt.Errorf("account %w", sova.ErrNotFound)
	}
	return a, err
}

// GetAccountByName returns the account with the given name.
func (s *DB) GetAccountByName(ctx context.Context, name string) (*sova.Account, error) {
	a, err := scanAccount(s.queryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE name = ?`, name))
	if isNoRows(err) {
		return nil, fmt.Errorf("account %w", sova.ErrNotFound)
	}
	return a, err
}

// ListAccounts returns every account, by name.
func (s *DB) ListAccounts(ctx context.Context) ([]sova.Account, error) {
	rows, err := s.query(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY name`+s.d.bytewise)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sova.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// CountAccounts tells how many accounts exist.
func (s *DB) CountAccounts(ctx context.Context) (int, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM accounts`).Scan(&n)
	return n, err
}

// SetPassword replaces an account's password hash.
func (s *DB) SetPassword(ctx context.Context, id, hash string) error {
	return s.execOne(ctx, "account", `UPDATE accounts SET password_hash = ? WHERE id = ?`, hash, id)
}

// SetRole changes an account's role.
func (s *DB) SetRole(ctx context.Context, id, role string) error {
	if !sova.ValidRole(role) {
		return fmt.Errorf("%w: role %q (admin, pro or free)", sova.ErrInvalid, role)
	}
	return s.execOne(ctx, "account", `UPDATE accounts SET role = ? WHERE id = ?`, role, id)
}

// SetDisabled disables or enables an account.
func (s *DB) SetDisabled(ctx context.Context, id string, disabled bool) error {
	return s.execOne(ctx, "account", `UPDATE accounts SET disabled = ? WHERE id = ?`, disabled, id)
}

// DeleteAccount removes an account; its sessions and keys go with it.
func (s *DB) DeleteAccount(ctx context.Context, id string) error {
	if err := s.execOne(ctx, "account", `DELETE FROM accounts WHERE id = ?`, id); err != nil {
		return err
	}
	_, err := s.exec(ctx, `DELETE FROM user_settings WHERE user_id = ?`, id)
	return err
}

// CreateSession stores a sign-in session.
func (s *DB) CreateSession(ctx context.Context, ss *sova.Session) error {
	if ss == nil || ss.ID == "" || ss.UserID == "" || ss.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: a session needs an id, a user and an expiry", sova.ErrInvalid)
	}
	if ss.CreatedAt.IsZero() {
		ss.CreatedAt = time.Now()
	}
	ss.CreatedAt, ss.ExpiresAt = storedTime(ss.CreatedAt), storedTime(ss.ExpiresAt)
	if ss.LastSeenAt.IsZero() {
		ss.LastSeenAt = ss.CreatedAt
	}
	ss.LastSeenAt = storedTime(ss.LastSeenAt)
	_, err := s.exec(ctx, `INSERT INTO sessions (id, user_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)`,
		ss.ID, ss.UserID, s.d.time(ss.CreatedAt), s.d.time(ss.ExpiresAt), s.d.time(ss.LastSeenAt))
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// GetSession returns a session by its hashed id.
func (s *DB) GetSession(ctx context.Context, id string) (*sova.Session, error) {
	var ss sova.Session
	err := s.queryRow(ctx, `SELECT id, user_id, created_at, expires_at, last_seen_at FROM sessions WHERE id = ?`, id).
		Scan(&ss.ID, &ss.UserID, scanTime(&ss.CreatedAt), scanTime(&ss.ExpiresAt), scanTime(&ss.LastSeenAt))
	if isNoRows(err) {
		return nil, fmt.Errorf("session %w", sova.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return &ss, nil
}

// TouchSession records that a session was used at t.
func (s *DB) TouchSession(ctx context.Context, id string, t time.Time) error {
	return s.execOne(ctx, "session", `UPDATE sessions SET last_seen_at = ? WHERE id = ?`, s.d.time(storedTime(t)), id)
}

// DeleteSession ends a session.
func (s *DB) DeleteSession(ctx context.Context, id string) error {
	return s.execOne(ctx, "session", `DELETE FROM sessions WHERE id = ?`, id)
}

// DeleteSessions ends every session of a user.
func (s *DB) DeleteSessions(ctx context.Context, userID string) (int64, error) {
	return rowsChanged(s.exec(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID))
}

// DeleteExpiredSessions removes sessions that expired before t.
func (s *DB) DeleteExpiredSessions(ctx context.Context, t time.Time) (int64, error) {
	return rowsChanged(s.exec(ctx, `DELETE FROM sessions WHERE expires_at < ?`, s.d.time(t)))
}

const apiKeyColumns = `id, user_id, prefix, hash, created_at, last_used_at, revoked_at`

func scanAPIKey(row interface{ Scan(...any) error }) (*sova.APIKey, error) {
	var k sova.APIKey
	if err := row.Scan(&k.ID, &k.UserID, &k.Prefix, &k.Hash, scanTime(&k.CreatedAt),
		nullTime{&k.LastUsedAt}, nullTime{&k.RevokedAt}); err != nil {
		return nil, err
	}
	return &k, nil
}

// CreateAPIKey stores a key.
func (s *DB) CreateAPIKey(ctx context.Context, k *sova.APIKey) error {
	if k == nil || k.UserID == "" || k.Hash == "" || k.Prefix == "" {
		return fmt.Errorf("%w: a key needs a user, a hash and a prefix", sova.ErrInvalid)
	}
	if k.ID == "" {
		id, err := newID()
		if err != nil {
			return err
		}
		k.ID = id
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now()
	}
	k.CreatedAt = storedTime(k.CreatedAt)
	_, err := s.exec(ctx, `INSERT INTO api_keys (id, user_id, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)`,
		k.ID, k.UserID, k.Prefix, k.Hash, s.d.time(k.CreatedAt))
	if err != nil {
		return fmt.Errorf("create api key: %w", err)
	}
	return nil
}

// GetAPIKeyByHash returns the key with the given hash.
func (s *DB) GetAPIKeyByHash(ctx context.Context, hash string) (*sova.APIKey, error) {
	k, err := scanAPIKey(s.queryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = ?`, hash))
	if isNoRows(err) {
		return nil, fmt.Errorf("api key %w", sova.ErrNotFound)
	}
	return k, err
}

// ListAPIKeys returns a user's keys, or everyone's for "", oldest first.
func (s *DB) ListAPIKeys(ctx context.Context, userID string) ([]sova.APIKey, error) {
	q, args := `SELECT `+apiKeyColumns+` FROM api_keys`, []any{}
	if userID != "" {
		q += ` WHERE user_id = ?`
		args = append(args, userID)
	}
	rows, err := s.query(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sova.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *k)
	}
	return out, rows.Err()
}

// TouchAPIKey records that a key was used at t.
func (s *DB) TouchAPIKey(ctx context.Context, id string, t time.Time) error {
	return s.execOne(ctx, "api key", `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, s.d.time(storedTime(t)), id)
}

// RevokeAPIKey revokes a key; revoking it again keeps the first time.
func (s *DB) RevokeAPIKey(ctx context.Context, id string) error {
	return s.execOne(ctx, "api key", `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`,
		s.d.time(storedTime(time.Now())), id)
}

// AddUsage adds n to a counter unless that takes it over limit. The check
// and the addition are one statement, so concurrent requests cannot both
// take the last unit.
func (s *DB) AddUsage(ctx context.Context, subject, counter, period string, n, limit int64) (int64, bool, error) {
	if limit < 0 {
		limit = noLimit
	}
	if n > limit {
		c, err := s.Usage(ctx, subject, counter, period)
		return c, false, err
	}
	var count int64
	// In a transaction, so that on SQLite the write takes its turn with the
	// others (writeGate): a row read back holds the write lock until it is
	// scanned, which the gate cannot see from outside.
	err := s.inTx(ctx, func(tx conn) error {
		return tx.queryRow(ctx, `INSERT INTO usage_counters (subject, counter, period, count) VALUES (?, ?, ?, ?)
		ON CONFLICT (subject, counter, period) DO UPDATE SET count = usage_counters.count + excluded.count
		WHERE usage_counters.count + excluded.count <= ?
		RETURNING count`, subject, counter, period, n, limit).Scan(&count)
	})
	if isNoRows(err) { // the update's condition failed: over the limit
		c, err := s.Usage(ctx, subject, counter, period)
		return c, false, err
	}
	if err != nil {
		return 0, false, fmt.Errorf("add usage: %w", s.d.mapErr(err))
	}
	return count, true, nil
}

// Usage returns a counter's value.
func (s *DB) Usage(ctx context.Context, subject, counter, period string) (int64, error) {
	var n int64
	err := s.queryRow(ctx, `SELECT count FROM usage_counters WHERE subject = ? AND counter = ? AND period = ?`,
		subject, counter, period).Scan(&n)
	if isNoRows(err) {
		return 0, nil
	}
	return n, err
}

// DeleteUsageBefore removes counters of earlier periods.
func (s *DB) DeleteUsageBefore(ctx context.Context, period string) (int64, error) {
	return rowsChanged(s.exec(ctx, `DELETE FROM usage_counters WHERE period < ?`, period))
}

// ListUsage returns counters of periods from since on.
func (s *DB) ListUsage(ctx context.Context, subject, since string) ([]sova.UsageCount, error) {
	q := `SELECT subject, counter, period, count FROM usage_counters WHERE period >= ?`
	args := []any{since}
	if subject != "" {
		q += ` AND subject = ?`
		args = append(args, subject)
	}
	rows, err := s.query(ctx, q+` ORDER BY period, subject, counter`, args...)
	if err != nil {
		return nil, fmt.Errorf("list usage: %w", s.d.mapErr(err))
	}
	defer rows.Close()
	out := []sova.UsageCount{}
	for rows.Next() {
		var u sova.UsageCount
		if err := rows.Scan(&u.Subject, &u.Counter, &u.Period, &u.Count); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// GetAccountByIdentity returns the account signed in with an identity
// provider's subject.
func (s *DB) GetAccountByIdentity(ctx context.Context, issuer, subject string) (*sova.Account, error) {
	a, err := scanAccount(s.queryRow(ctx, `SELECT `+prefixed("a.", accountColumns)+` FROM accounts a
		JOIN account_identities i ON i.user_id = a.id WHERE i.issuer = ? AND i.subject = ?`, issuer, subject))
	if isNoRows(err) {
		return nil, fmt.Errorf("account %w", sova.ErrNotFound)
	}
	return a, err
}

// CreateAccountWithIdentity creates an account and links an identity to it
// at once: a name already taken is ErrConflict, and so is an identity
// already linked.
func (s *DB) CreateAccountWithIdentity(ctx context.Context, a *sova.Account, issuer, subject string) error {
	if issuer == "" || subject == "" {
		return fmt.Errorf("%w: an identity needs an issuer and a subject", sova.ErrInvalid)
	}
	if a == nil || a.Name == "" || !sova.ValidRole(a.Role) {
		return fmt.Errorf("%w: an account needs a name and a role (admin, pro or free)", sova.ErrInvalid)
	}
	id, err := newID()
	if err != nil {
		return err
	}
	created := storedTime(time.Now())
	err = s.inTx(ctx, func(tx conn) error {
		if _, err := tx.exec(ctx, `INSERT INTO accounts (`+accountColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			id, a.Name, a.Role, a.PasswordHash, s.d.time(created), a.Disabled); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO account_identities (issuer, subject, user_id, created_at) VALUES (?, ?, ?, ?)`,
			issuer, subject, id, s.d.time(created))
		return err
	})
	if err != nil {
		return fmt.Errorf("create account: %w", s.d.mapErr(err))
	}
	a.ID, a.CreatedAt = id, created
	return nil
}
