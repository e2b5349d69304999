package config

import (
	"strings"
	"testing"
	"time"
)

func TestAccountSettings(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Accounts
	if a.Auth != "" || a.Anonymous || a.SessionTTL != 30*24*time.Hour || a.LimitFreeMessages != 100 ||
		a.LimitProMessages != -1 || a.LimitConcurrentLongRuns != 2 {
		t.Errorf("defaults: %+v", a)
	}
	cfg, err = FromEnv(map[string]string{"SOVA_AUTH": " Accounts ", "SOVA_ANONYMOUS": "true",
		"SOVA_TRUSTED_PROXIES": "10.0.0.0/8, ::1", "SOVA_LIMIT_FREE_MESSAGES": "20"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth != "accounts" || !cfg.Anonymous || len(cfg.TrustedProxies) != 2 || cfg.LimitFreeMessages != 20 {
		t.Errorf("set: %+v", cfg.Accounts)
	}
	for env, want := range map[string]string{
		"SOVA_AUTH=open":                     "SOVA_AUTH",
		"SOVA_TRUSTED_PROXIES=proxy.lan":     "SOVA_TRUSTED_PROXIES",
		"SOVA_SESSION_TTL=1s":                "SOVA_SESSION_TTL",
		"SOVA_LIMIT_FREE_MESSAGES=-5":        "SOVA_LIMIT_FREE_MESSAGES",
		"SOVA_LIMIT_CONCURRENT_LONG_RUNS=-1": "SOVA_LIMIT_CONCURRENT_LONG_RUNS",
	} {
		k, v, _ := strings.Cut(env, "=")
		if _, err := FromEnv(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", env, err)
		}
	}
	if _, err := FromEnv(map[string]string{"SOVA_AUTH": "none", "SOVA_ANONYMOUS": "true"}); err == nil {
		t.Error("SOVA_AUTH=none with SOVA_ANONYMOUS=true accepted")
	}
}

func TestOIDCSettings(t *testing.T) {
	cfg, err := FromEnv(map[string]string{"SOVA_OIDC_ISSUER": "https://id.example/realms/team/", "SOVA_OIDC_CLIENT_ID": "sova",
		"SOVA_OIDC_CLIENT_SECRET": "s3cret", "SOVA_PUBLIC_URL": "https://sova.example"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OIDCIssuer != "https://id.example/realms/team" || cfg.OIDCRedirectURL != "https://sova.example/api/auth/oidc/callback" ||
		cfg.OIDCDefaultRole != "free" || len(cfg.OIDCScopes) != 3 {
		t.Errorf("oidc = %q %q %q %v", cfg.OIDCIssuer, cfg.OIDCRedirectURL, cfg.OIDCDefaultRole, cfg.OIDCScopes)
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"no client":    {map[string]string{"SOVA_OIDC_ISSUER": "https://id.example", "SOVA_PUBLIC_URL": "https://s.example"}, "SOVA_OIDC_CLIENT_ID"},
		"no redirect":  {map[string]string{"SOVA_OIDC_ISSUER": "https://id.example", "SOVA_OIDC_CLIENT_ID": "x"}, "SOVA_PUBLIC_URL"},
		"plain http":   {map[string]string{"SOVA_OIDC_ISSUER": "http://id.example", "SOVA_OIDC_CLIENT_ID": "x", "SOVA_PUBLIC_URL": "https://s.example"}, "https"},
		"bad role":     {map[string]string{"SOVA_OIDC_ISSUER": "https://id.example", "SOVA_OIDC_CLIENT_ID": "x", "SOVA_PUBLIC_URL": "https://s.example", "SOVA_OIDC_DEFAULT_ROLE": "root"}, "SOVA_OIDC_DEFAULT_ROLE"},
		"without auth": {map[string]string{"SOVA_OIDC_ISSUER": "https://id.example", "SOVA_OIDC_CLIENT_ID": "x", "SOVA_PUBLIC_URL": "https://s.example", "SOVA_AUTH": "none"}, "SOVA_AUTH=none"},
	} {
		if _, err := FromEnv(tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want mention of %s", name, err, tc.want)
		}
	}
	if _, err := FromEnv(map[string]string{"SOVA_OIDC_ISSUER": "http://127.0.0.1:9999/oidc", "SOVA_OIDC_CLIENT_ID": "x", "SOVA_OIDC_REDIRECT_URL": "http://127.0.0.1:8080/api/auth/oidc/callback"}); err != nil {
		t.Errorf("loopback http issuer: %v", err)
	}
}
