package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Accounts are the settings of sign-in, API keys and limits (see
// docs/configuration.md, "Accounts and limits").
type Accounts struct {
	// Auth: "" (accounts once one exists; the local user until then, on
	// loopback only), "accounts" (always; 401 until a user is added), or
	// "none" (everyone who reaches the port is the one local user: for
	// trusted networks).
	Auth           string        `env:"SOVA_AUTH"`
	Anonymous      bool          `env:"SOVA_ANONYMOUS"`
	TrustedProxies []string      `env:"SOVA_TRUSTED_PROXIES" envSeparator:","`
	SessionTTL     time.Duration `env:"SOVA_SESSION_TTL" envDefault:"720h"`
	// ProFeatures keeps connecting a space to a source (connectors) and
	// custom instructions for pro accounts and administrators (000 §6.2);
	// false gives them to free accounts too. Without accounts it changes
	// nothing: the local user has them.
	ProFeatures bool `env:"SOVA_PRO_FEATURES" envDefault:"true"`
	// ShareLinks lets people share a chat as a read-only link that anyone
	// holding it can open, without signing in; off by default.
	ShareLinks bool `env:"SOVA_SHARE_LINKS" envDefault:"false"`
	// ShareLinksMax caps one person's live share links over all their
	// chats (0: no cap), so that links are revoked rather than piled up.
	ShareLinksMax int `env:"SOVA_SHARE_LINKS_MAX" envDefault:"50"`

	// Daily limits (000 §6.2); -1 is unlimited. Days are UTC days.
	LimitFreeMessages      int `env:"SOVA_LIMIT_FREE_MESSAGES" envDefault:"100"`
	LimitProMessages       int `env:"SOVA_LIMIT_PRO_MESSAGES" envDefault:"-1"`
	LimitFreeExtreme       int `env:"SOVA_LIMIT_FREE_EXTREME" envDefault:"5"`
	LimitProExtreme        int `env:"SOVA_LIMIT_PRO_EXTREME" envDefault:"-1"`
	LimitAnonymousMessages int `env:"SOVA_LIMIT_ANONYMOUS_MESSAGES" envDefault:"10"`
	LimitAnonymousExtreme  int `env:"SOVA_LIMIT_ANONYMOUS_EXTREME" envDefault:"0"`
	// LimitConcurrentLongRuns caps one user's deep_research and extreme
	// runs going at once (0: no cap). Admins have no limits.
	LimitConcurrentLongRuns int `env:"SOVA_LIMIT_CONCURRENT_LONG_RUNS" envDefault:"2"`
	// LimitLongModes are the modes counted by the *_EXTREME limits and
	// capped by SOVA_LIMIT_CONCURRENT_LONG_RUNS.
	LimitLongModes []string `env:"SOVA_LIMIT_LONG_MODES" envSeparator:"," envDefault:"extreme,deep_research"`

	// Single sign-on through an OpenID Connect provider (docs/team.md).
	// The redirect URL defaults to SOVA_PUBLIC_URL/api/auth/oidc/callback.
	OIDCIssuer       string   `env:"SOVA_OIDC_ISSUER"`
	OIDCClientID     string   `env:"SOVA_OIDC_CLIENT_ID"`
	OIDCClientSecret string   `env:"SOVA_OIDC_CLIENT_SECRET"`
	OIDCRedirectURL  string   `env:"SOVA_OIDC_REDIRECT_URL"`
	OIDCDefaultRole  string   `env:"SOVA_OIDC_DEFAULT_ROLE" envDefault:"free"`
	OIDCName         string   `env:"SOVA_OIDC_NAME" envDefault:"Single sign-on"`
	OIDCScopes       []string `env:"SOVA_OIDC_SCOPES" envSeparator:"," envDefault:"openid,profile,email"`
}

func (a *Accounts) normalize() {
	a.Auth = strings.ToLower(strings.TrimSpace(a.Auth))
	a.TrustedProxies = trimAll(a.TrustedProxies)
	a.LimitLongModes = trimAll(a.LimitLongModes)
	a.OIDCIssuer = strings.TrimRight(strings.TrimSpace(a.OIDCIssuer), "/")
	a.OIDCScopes = trimAll(a.OIDCScopes)
	a.OIDCDefaultRole = strings.ToLower(strings.TrimSpace(a.OIDCDefaultRole))
}

// oidcRedirect fills in the redirect URL from the public URL.
func (a *Accounts) oidcRedirect(publicURL string) {
	if a.OIDCIssuer != "" && a.OIDCRedirectURL == "" && publicURL != "" {
		a.OIDCRedirectURL = strings.TrimRight(publicURL, "/") + "/api/auth/oidc/callback"
	}
}

func (a *Accounts) validateOIDC() []error {
	if a.OIDCIssuer == "" {
		return nil
	}
	var errs []error
	if u, err := url.Parse(a.OIDCIssuer); err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
		errs = append(errs, fmt.Errorf("SOVA_OIDC_ISSUER=%q: give the provider's https URL (http only on loopback)", a.OIDCIssuer))
	}
	if a.OIDCClientID == "" {
		errs = append(errs, errors.New("SOVA_OIDC_ISSUER is set but SOVA_OIDC_CLIENT_ID is not: register Sova with the provider and set both"))
	}
	if a.OIDCRedirectURL == "" {
		errs = append(errs, errors.New("SOVA_OIDC_ISSUER needs SOVA_PUBLIC_URL (or SOVA_OIDC_REDIRECT_URL): the provider sends people back there"))
	} else if u, err := url.Parse(a.OIDCRedirectURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		errs = append(errs, fmt.Errorf("SOVA_OIDC_REDIRECT_URL=%q is not an http(s) URL", a.OIDCRedirectURL))
	}
	if a.OIDCDefaultRole != "admin" && a.OIDCDefaultRole != "pro" && a.OIDCDefaultRole != "free" {
		errs = append(errs, fmt.Errorf("SOVA_OIDC_DEFAULT_ROLE=%q: use free, pro or admin", a.OIDCDefaultRole))
	}
	if a.Auth == "none" {
		errs = append(errs, errors.New("SOVA_OIDC_ISSUER and SOVA_AUTH=none contradict each other: single sign-on needs accounts"))
	}
	return errs
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

func (a *Accounts) validate() []error {
	var errs []error
	switch a.Auth {
	case "", "accounts", "none":
	default:
		errs = append(errs, fmt.Errorf("SOVA_AUTH=%q: use accounts, none, or leave it empty", a.Auth))
	}
	if a.Auth == "none" && a.Anonymous {
		errs = append(errs, fmt.Errorf("SOVA_AUTH=none and SOVA_ANONYMOUS=true contradict each other: anonymous visitors need accounts mode"))
	}
	for _, s := range a.TrustedProxies {
		_, perr := netip.ParsePrefix(s)
		_, aerr := netip.ParseAddr(s)
		if perr != nil && aerr != nil {
			errs = append(errs, fmt.Errorf("SOVA_TRUSTED_PROXIES: %q is neither an IP address nor a CIDR range (10.0.0.0/8)", s))
		}
	}
	if a.SessionTTL < time.Minute {
		errs = append(errs, fmt.Errorf("SOVA_SESSION_TTL must be at least 1m, got %s", a.SessionTTL))
	}
	for name, v := range map[string]int{
		"SOVA_LIMIT_FREE_MESSAGES": a.LimitFreeMessages, "SOVA_LIMIT_PRO_MESSAGES": a.LimitProMessages,
		"SOVA_LIMIT_FREE_EXTREME": a.LimitFreeExtreme, "SOVA_LIMIT_PRO_EXTREME": a.LimitProExtreme,
		"SOVA_LIMIT_ANONYMOUS_MESSAGES": a.LimitAnonymousMessages, "SOVA_LIMIT_ANONYMOUS_EXTREME": a.LimitAnonymousExtreme,
	} {
		if v < -1 {
			errs = append(errs, fmt.Errorf("%s must be -1 (unlimited) or more, got %d", name, v))
		}
	}
	errs = append(errs, a.validateOIDC()...)
	if a.LimitConcurrentLongRuns < 0 {
		errs = append(errs, fmt.Errorf("SOVA_LIMIT_CONCURRENT_LONG_RUNS must not be negative, got %d", a.LimitConcurrentLongRuns))
	}
	return errs
}
