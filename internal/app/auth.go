package app

import (
	"context"
	"fmt"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/store"
)

// wireAuth chooses the Authenticator from SOVA_AUTH and SOVA_ANONYMOUS:
//
//   - SOVA_AUTH=none: every request is the local user's (auth.Local).
//   - SOVA_AUTH=accounts, or SOVA_ANONYMOUS=true: the accounts (API keys,
//     session cookies, anonymous visitors when allowed), from the start.
//   - neither: the local user until the first account exists, then the
//     accounts (auth.Auto): an installation on loopback keeps working as
//     it did, and adding a user turns sign-in on.
func (a *App) wireAuth() error {
	accounts, err := NewAccounts(a.Config, a.Store, a)
	if err != nil {
		return err
	}
	switch {
	case a.Config.Auth == "none":
		a.Auth = auth.Local{}
	case a.Config.Auth == "accounts" || a.Config.Anonymous || a.Config.OIDCIssuer != "":
		// With single sign-on configured, a Sova with no account yet must
		// not serve everyone as the local user.
		a.Accounts, a.Auth = accounts, accounts
	default:
		a.Accounts = accounts
		a.Auth = &auth.Auto{Accounts: accounts, Store: a.Store}
	}
	return nil
}

// NewAccounts builds the accounts Authenticator from the configuration.
func NewAccounts(cfg *config.Config, st store.Store, a *App) (*auth.Accounts, error) {
	proxies, err := auth.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("SOVA_TRUSTED_PROXIES: %w", err)
	}
	opt := auth.Options{Store: st, SessionTTL: cfg.SessionTTL, Proxies: proxies, Anonymous: cfg.Anonymous}
	if a != nil {
		opt.Logger = a.Logger
	}
	return auth.NewAccounts(opt), nil
}

// Authenticated reports whether requests must prove who they are (or are
// explicitly let in: SOVA_AUTH=none, SOVA_ANONYMOUS=true). It is false
// only for an installation that has not chosen and has no account yet:
// `sova serve` then refuses to listen beyond loopback.
func (a *App) Authenticated(ctx context.Context) (bool, error) {
	if a.Config.Auth != "" || a.Config.Anonymous || a.Config.OIDCIssuer != "" {
		return true, nil
	}
	n, err := a.Store.CountAccounts(ctx)
	if err != nil {
		return false, fmt.Errorf("counting accounts: %w", err)
	}
	return n > 0, nil
}

// wireOIDC sets up single sign-on when SOVA_OIDC_ISSUER is set: the
// provider's discovery document is read now, so a wrong issuer stops the
// start with the reason.
func (a *App) wireOIDC(ctx context.Context) error {
	c := a.Config
	if c.OIDCIssuer == "" || a.Accounts == nil {
		return nil
	}
	o, err := auth.NewOIDC(ctx, auth.OIDCConfig{
		Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID, ClientSecret: c.OIDCClientSecret,
		RedirectURL: c.OIDCRedirectURL, DefaultRole: c.OIDCDefaultRole, Name: c.OIDCName, Scopes: c.OIDCScopes,
	}, a.Accounts)
	if err != nil {
		return err
	}
	a.OIDC = o
	return nil
}
