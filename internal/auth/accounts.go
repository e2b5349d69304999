package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sova-ai/sova"
)

// SessionCookie names the browser's sign-in cookie.
const SessionCookie = "sova_session"

// ErrNoCredentials reports a request that carries no credentials an
// Authenticator looks at; a Chain then asks the next one. It is an
// ErrUnauthenticated.
var ErrNoCredentials = fmt.Errorf("%w: no credentials", ErrUnauthenticated)

// ErrThrottled reports too many sign-in attempts; RetryAfter says when to
// try again.
type ErrThrottled struct{ RetryAfter time.Duration }

func (e *ErrThrottled) Error() string {
	return fmt.Sprintf("too many sign-in attempts; try again in %s", e.RetryAfter.Round(time.Second))
}

// ErrBadCredentials reports a wrong name or password (which of them is
// not said).
var ErrBadCredentials = errors.New("wrong name or password")

// Chain asks its Authenticators in turn: the first that finds credentials
// in the request decides (valid or not); one that finds none
// (ErrNoCredentials) passes to the next. When none finds any, the answer
// is ErrUnauthenticated.
type Chain []Authenticator

// Authenticate asks each Authenticator in turn.
func (c Chain) Authenticate(r *http.Request) (sova.User, error) {
	for _, a := range c {
		u, err := a.Authenticate(r)
		if errors.Is(err, ErrNoCredentials) {
			continue
		}
		return u, err
	}
	return sova.User{}, ErrUnauthenticated
}

// Options configure Accounts.
type Options struct {
	Store sova.AccountStore
	// SessionTTL is how long a sign-in lasts (SOVA_SESSION_TTL; 30 days).
	SessionTTL time.Duration
	// Proxies are the trusted reverse proxies (SOVA_TRUSTED_PROXIES).
	Proxies Proxies
	// Anonymous lets visitors without credentials in, one user per
	// client address (SOVA_ANONYMOUS).
	Anonymous bool
	// Throttle limits sign-in attempts; zero values take the defaults.
	Throttle ThrottleOptions
	Logger   *slog.Logger
	// Now is the clock (tests).
	Now func() time.Time
}

// Accounts authenticates requests against the accounts in the store: API
// keys (Authorization: Bearer sova_…), then the session cookie, then,
// when allowed, anonymous visitors. It also signs people in and out.
type Accounts struct {
	opt      Options
	throttle *throttle
	chain    Chain
}

// NewAccounts returns the Authenticator of an installation with accounts.
func NewAccounts(opt Options) *Accounts {
	if opt.SessionTTL <= 0 {
		opt.SessionTTL = 30 * 24 * time.Hour
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	a := &Accounts{opt: opt, throttle: newThrottle(opt.Throttle, opt.Now)}
	a.chain = Chain{Func(a.apiKey), Func(a.session)}
	if opt.Anonymous {
		a.chain = append(a.chain, Func(a.anonymous))
	}
	return a
}

// Authenticate tells whom the request is for.
func (a *Accounts) Authenticate(r *http.Request) (sova.User, error) { return a.chain.Authenticate(r) }

// Proxies returns the trusted proxies (for Secure cookies and client IPs).
func (a *Accounts) Proxies() Proxies { return a.opt.Proxies }

// AnonymousAllowed reports whether visitors without an account are let in.
func (a *Accounts) AnonymousAllowed() bool { return a.opt.Anonymous }

// touchEvery is how often a session's last-seen time or a key's last-used
// time is written: not on every request.
const touchEvery = time.Minute

func (a *Accounts) apiKey(r *http.Request) (sova.User, error) {
	scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return sova.User{}, ErrNoCredentials
	}
	key = strings.TrimSpace(key)
	if !looksLikeKey(key) {
		return sova.User{}, fmt.Errorf("%w: the bearer token is not a Sova API key (sova_…)", ErrUnauthenticated)
	}
	ctx := r.Context()
	k, err := a.opt.Store.GetAPIKeyByHash(ctx, HashSecret(key))
	if errors.Is(err, sova.ErrNotFound) || err == nil && !k.RevokedAt.IsZero() {
		return sova.User{}, fmt.Errorf("%w: unknown or revoked API key", ErrUnauthenticated)
	}
	if err != nil {
		return sova.User{}, fmt.Errorf("auth: API key: %w", err)
	}
	u, err := a.user(ctx, k.UserID)
	if err != nil {
		return u, err
	}
	if now := a.opt.Now(); now.Sub(k.LastUsedAt) >= touchEvery {
		if err := a.opt.Store.TouchAPIKey(ctx, k.ID, now); err != nil {
			a.opt.Logger.Warn("could not record an API key's use", "key", k.Prefix, "err", err)
		}
	}
	return u, nil
}

func (a *Accounts) session(r *http.Request) (sova.User, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return sova.User{}, ErrNoCredentials
	}
	ctx := r.Context()
	s, err := a.opt.Store.GetSession(ctx, HashSecret(c.Value))
	now := a.opt.Now()
	if errors.Is(err, sova.ErrNotFound) || err == nil && !now.Before(s.ExpiresAt) {
		return sova.User{}, fmt.Errorf("%w: the session has ended; sign in again", ErrUnauthenticated)
	}
	if err != nil {
		return sova.User{}, fmt.Errorf("auth: session: %w", err)
	}
	u, err := a.user(ctx, s.UserID)
	if err != nil {
		return u, err
	}
	if now.Sub(s.LastSeenAt) >= touchEvery {
		if err := a.opt.Store.TouchSession(ctx, s.ID, now); err != nil && !errors.Is(err, sova.ErrNotFound) {
			a.opt.Logger.Warn("could not record a session's use", "err", err)
		}
	}
	return u, nil
}

// AnonymousID is the user id of anonymous visitors from an address: a
// hash, so that addresses do not end up in the store's rows.
func AnonymousID(ip string) string {
	sum := sha256.Sum256([]byte("sova-anonymous:" + ip))
	return "anon-" + hex.EncodeToString(sum[:12])
}

func (a *Accounts) anonymous(r *http.Request) (sova.User, error) {
	return sova.User{ID: AnonymousID(a.opt.Proxies.ClientIP(r)), Role: sova.RoleAnonymous}, nil
}

// user is the account with the given id as a request's user; a missing
// or disabled account is ErrUnauthenticated.
func (a *Accounts) user(ctx context.Context, id string) (sova.User, error) {
	acc, err := a.opt.Store.GetAccount(ctx, id)
	if errors.Is(err, sova.ErrNotFound) || err == nil && acc.Disabled {
		return sova.User{}, fmt.Errorf("%w: the account is disabled or removed", ErrUnauthenticated)
	}
	if err != nil {
		return sova.User{}, fmt.Errorf("auth: account: %w", err)
	}
	return sova.User{ID: acc.ID, Name: acc.Name, Role: acc.Role}, nil
}

// SignIn checks a name and password and starts a session. It returns the
// cookie's value (the only copy of the session's secret) and when it
// expires. Attempts are throttled per account and per client address
// (*ErrThrottled); a wrong name or password is ErrBadCredentials, the
// same for both, in about the same time.
func (a *Accounts) SignIn(ctx context.Context, name, password, clientIP string) (secret string, u sova.User, expires time.Time, err error) {
	if wait := a.throttle.allow(name, clientIP); wait > 0 {
		return "", u, expires, &ErrThrottled{RetryAfter: wait}
	}
	acc, err := a.opt.Store.GetAccountByName(ctx, name)
	if errors.Is(err, sova.ErrNotFound) {
		CheckPassword(dummyHash, password)
		return "", u, expires, ErrBadCredentials
	}
	if err != nil {
		return "", u, expires, fmt.Errorf("auth: sign in: %w", err)
	}
	if acc.PasswordHash == "" || !CheckPassword(acc.PasswordHash, password) || acc.Disabled {
		return "", u, expires, ErrBadCredentials
	}
	a.throttle.succeeded(name)
	return a.StartSession(ctx, acc)
}

// StartSession signs an account in whose identity was checked (a password,
// single sign-on): a new session, whose cookie value is secret.
func (a *Accounts) StartSession(ctx context.Context, acc *sova.Account) (secret string, u sova.User, expires time.Time, err error) {
	if acc.Disabled {
		return "", u, expires, ErrBadCredentials
	}
	secret, id, err := newSessionSecret()
	if err != nil {
		return "", u, expires, err
	}
	now := a.opt.Now()
	s := &sova.Session{ID: id, UserID: acc.ID, CreatedAt: now, ExpiresAt: now.Add(a.opt.SessionTTL), LastSeenAt: now}
	if err := a.opt.Store.CreateSession(ctx, s); err != nil {
		return "", u, expires, fmt.Errorf("auth: sign in: %w", err)
	}
	if _, err := a.opt.Store.DeleteExpiredSessions(ctx, now); err != nil {
		a.opt.Logger.Warn("could not remove expired sessions", "err", err)
	}
	return secret, sova.User{ID: acc.ID, Name: acc.Name, Role: acc.Role}, s.ExpiresAt, nil
}

// Store is the account store Accounts was made with.
func (a *Accounts) Store() sova.AccountStore { return a.opt.Store }

// SignOut ends the session whose cookie value is secret, if it exists.
func (a *Accounts) SignOut(ctx context.Context, secret string) error {
	if secret == "" {
		return nil
	}
	err := a.opt.Store.DeleteSession(ctx, HashSecret(secret))
	if errors.Is(err, sova.ErrNotFound) {
		return nil
	}
	return err
}

// Auto is the Authenticator of an installation that has not chosen: the
// local user while no account exists, Accounts from the moment one does
// (a `sova users add` takes effect without a restart).
type Auto struct {
	Accounts *Accounts
	Store    interface {
		CountAccounts(ctx context.Context) (int, error)
	}

	mu       sync.Mutex
	checked  time.Time
	checking bool // a recheck is under way
	has      atomic.Bool
}

// autoRecheck is how long Auto trusts that no account exists.
const autoRecheck = 2 * time.Second

// Authenticate answers as Local until an account exists.
func (a *Auto) Authenticate(r *http.Request) (sova.User, error) {
	has, err := a.HasAccounts(r.Context())
	if err != nil {
		return sova.User{}, err
	}
	if has {
		return a.Accounts.Authenticate(r)
	}
	return Local{}.Authenticate(r)
}

// HasAccounts reports whether an account exists (once one does, always).
// Only the first check makes every caller wait for the store; a recheck is
// made by one caller while the others take the answer of the last one: a
// recheck under the lock held every request of the server (every 2 s)
// behind one read that, with hundreds of runs in flight, waited seconds
// for a pooled connection.
func (a *Auto) HasAccounts(ctx context.Context) (bool, error) {
	if a.has.Load() {
		return true, nil
	}
	a.mu.Lock()
	if a.has.Load() || !a.checked.IsZero() && (a.checking || time.Since(a.checked) < autoRecheck) {
		a.mu.Unlock()
		return a.has.Load(), nil
	}
	first := a.checked.IsZero()
	if first {
		defer a.mu.Unlock() // no answer yet to give the others
	} else {
		a.checking = true
		a.mu.Unlock()
	}
	n, err := a.Store.CountAccounts(ctx)
	if !first {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.checking = false
	}
	if err != nil {
		return false, fmt.Errorf("auth: counting accounts: %w", err)
	}
	a.checked = time.Now()
	a.has.Store(n > 0)
	return n > 0, nil
}
