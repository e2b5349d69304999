package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/egress"
)

// OIDCFlowCookie holds a sign-in's state, nonce and PKCE verifier between
// the redirect to the identity provider and its return.
const OIDCFlowCookie = "sova_oidc"

// oidcFlowTTL is how long a person has to sign in at the provider.
const oidcFlowTTL = 10 * time.Minute

// OIDCConfig configures single sign-on (SOVA_OIDC_*).
type OIDCConfig struct {
	Issuer, ClientID, ClientSecret string
	// RedirectURL is where the provider sends people back:
	// <public URL>/api/auth/oidc/callback.
	RedirectURL string
	// DefaultRole is the role of an account made at its first sign-in.
	DefaultRole string
	// Name labels the button on the sign-in page.
	Name   string
	Scopes []string
	// HTTPClient talks to the provider (nil: an egress client on which
	// the issuer's host is allowed, wherever it is, and every other host
	// the discovery document names must be public; see oidcClient).
	HTTPClient *http.Client
}

// OIDC signs people in through an OpenID Connect provider with the
// authorization code flow, checking state, nonce and PKCE, and makes an
// account at a person's first sign-in.
type OIDC struct {
	cfg      OIDCConfig
	verifier *oidc.IDTokenVerifier
	oauth    oauth2.Config
	accounts *Accounts
}

// ErrOIDC is a sign-in the provider or the checks refused.
var ErrOIDC = errors.New("single sign-on failed")

// NewOIDC reads the provider's discovery document and returns the sign-in.
func NewOIDC(ctx context.Context, cfg OIDCConfig, accounts *Accounts) (*OIDC, error) {
	var guard *egress.Guard
	if cfg.HTTPClient == nil {
		var err error
		if cfg.HTTPClient, guard, err = oidcClient(cfg.Issuer); err != nil {
			return nil, err
		}
	}
	ctx = oidc.ClientContext(ctx, cfg.HTTPClient)
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("SOVA_OIDC_ISSUER: reading the provider's discovery document: %w", err)
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{oidc.ScopeOpenID, "profile", "email"}
	}
	if cfg.Name == "" {
		cfg.Name = "Single sign-on"
	}
	// The provider's keys are fetched later, in a request's context, with
	// the client given here.
	keyCtx := oidc.ClientContext(context.Background(), cfg.HTTPClient)
	var claims struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.Claims(&claims); err != nil || claims.JWKSURI == "" {
		return nil, fmt.Errorf("SOVA_OIDC_ISSUER: the discovery document names no jwks_uri")
	}
	// The token endpoint receives the client secret: a document that
	// points it (or the keys) at a private address is refused now, not
	// at a visitor's sign-in; the client refuses it again when dialling.
	if guard != nil {
		for _, e := range []struct{ name, url string }{{"token_endpoint", p.Endpoint().TokenURL}, {"jwks_uri", claims.JWKSURI}} {
			if err := checkEndpoint(ctx, guard, e.url); err != nil {
				return nil, fmt.Errorf("SOVA_OIDC_ISSUER: the discovery document's %s: %w", e.name, err)
			}
		}
	}
	keys := oidc.NewRemoteKeySet(keyCtx, claims.JWKSURI)
	return &OIDC{
		cfg:      cfg,
		verifier: oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{ClientID: cfg.ClientID}),
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			Endpoint: p.Endpoint(), Scopes: cfg.Scopes,
		},
		accounts: accounts,
	}, nil
}

// Name is the label of the sign-in button.
func (o *OIDC) Name() string { return o.cfg.Name }

// Begin starts a sign-in: it sets the flow cookie and returns the
// provider's URL to send the browser to.
func (o *OIDC) Begin(w http.ResponseWriter, r *http.Request) (string, error) {
	state, err := randomToken()
	if err != nil {
		return "", err
	}
	nonce, err := randomToken()
	if err != nil {
		return "", err
	}
	verifier := oauth2.GenerateVerifier()
	http.SetCookie(w, &http.Cookie{
		Name: OIDCFlowCookie, Value: state + "." + nonce + "." + verifier, Path: "/api/auth/oidc",
		MaxAge: int(oidcFlowTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: o.accounts.Proxies().Secure(r),
	})
	return o.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// ClearFlow removes the flow cookie.
func (o *OIDC) ClearFlow(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: OIDCFlowCookie, Path: "/api/auth/oidc", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: o.accounts.Proxies().Secure(r)})
}

// idClaims are the ID token's claims Sova reads.
type idClaims struct {
	Subject           string `json:"sub"`
	PreferredUsername string `json:"preferred_username"`
	Email             string `json:"email"`
	Name              string `json:"name"`
}

// Finish completes a sign-in on the provider's return: the state must be
// the flow cookie's, the code is exchanged with the PKCE verifier, the ID
// token's signature, issuer, audience, expiry and nonce are checked. The
// account of the identity is found, or made with the default role. It
// returns the new session's cookie value.
func (o *OIDC) Finish(ctx context.Context, r *http.Request) (secret string, u sova.User, expires time.Time, err error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return "", u, expires, fmt.Errorf("%w: the provider answered %s: %s", ErrOIDC, clipText(e, 100), clipText(q.Get("error_description"), 200))
	}
	c, err := r.Cookie(OIDCFlowCookie)
	if err != nil {
		return "", u, expires, fmt.Errorf("%w: the sign-in took too long or started in another browser", ErrOIDC)
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 3 || q.Get("state") == "" || subtle.ConstantTimeCompare([]byte(parts[0]), []byte(q.Get("state"))) != 1 {
		return "", u, expires, fmt.Errorf("%w: the state does not match this browser's sign-in", ErrOIDC)
	}
	nonce, verifier := parts[1], parts[2]
	ctx = context.WithValue(ctx, oauth2.HTTPClient, o.cfg.HTTPClient)
	tok, err := o.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		return "", u, expires, fmt.Errorf("%w: exchanging the code: %w", ErrOIDC, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", u, expires, fmt.Errorf("%w: the provider returned no ID token", ErrOIDC)
	}
	idt, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return "", u, expires, fmt.Errorf("%w: the ID token: %w", ErrOIDC, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return "", u, expires, fmt.Errorf("%w: the ID token's nonce is not this sign-in's", ErrOIDC)
	}
	var cl idClaims
	if err := idt.Claims(&cl); err != nil || cl.Subject == "" {
		return "", u, expires, fmt.Errorf("%w: the ID token names no subject", ErrOIDC)
	}
	acc, err := o.account(ctx, idt.Issuer, cl)
	if err != nil {
		return "", u, expires, err
	}
	return o.accounts.StartSession(ctx, acc)
}

// account finds the identity's account or makes one, named after the
// person's user name or e-mail; a taken name gets a number (an existing
// account is never taken over by a name).
func (o *OIDC) account(ctx context.Context, issuer string, cl idClaims) (*sova.Account, error) {
	st := o.accounts.Store()
	acc, err := st.GetAccountByIdentity(ctx, issuer, cl.Subject)
	if err == nil {
		if acc.Disabled {
			return nil, fmt.Errorf("%w: the account %s is disabled", ErrOIDC, acc.Name)
		}
		return acc, nil
	}
	if !errors.Is(err, sova.ErrNotFound) {
		return nil, fmt.Errorf("auth: finding the account: %w", err)
	}
	base := accountName(cl)
	for i := 1; i <= 20; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		acc = &sova.Account{Name: name, Role: o.cfg.DefaultRole}
		err = st.CreateAccountWithIdentity(ctx, acc, issuer, cl.Subject)
		if err == nil {
			o.accounts.opt.Logger.Info("account created at its first sign-in", "user", name, "role", acc.Role)
			return acc, nil
		}
		if !errors.Is(err, sova.ErrConflict) {
			return nil, fmt.Errorf("auth: creating the account: %w", err)
		}
		// The identity itself may have been linked meanwhile (two tabs).
		if acc, gerr := st.GetAccountByIdentity(ctx, issuer, cl.Subject); gerr == nil {
			return acc, nil
		}
	}
	return nil, fmt.Errorf("%w: no free account name for %q", ErrOIDC, base)
}

// accountName makes a user name (letters, digits and . _ - @, at most 64)
// from the claims.
func accountName(cl idClaims) string {
	for _, cand := range []string{cl.PreferredUsername, cl.Email, cl.Name} {
		var b strings.Builder
		for _, r := range cand {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@", r) {
				b.WriteRune(r)
			}
		}
		if s := b.String(); s != "" {
			return clipText(s, 56)
		}
	}
	// A subject is opaque: its hash names the account.
	return "user-" + HashSecret(cl.Subject)[:12]
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
