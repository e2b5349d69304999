package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// normalizeAccess tidies SOVA_PUBLIC_URL and SOVA_ALLOWED_HOSTS: spaces
// trimmed, host names lower-cased, a trailing slash of the URL dropped.
func (c *Config) normalizeAccess() {
	c.PublicURL = strings.TrimRight(strings.TrimSpace(c.PublicURL), "/")
	hosts := trimAll(c.AllowedHosts)
	for i, h := range hosts {
		hosts[i] = strings.ToLower(h)
	}
	c.AllowedHosts = hosts
}

// validateAccess reports access settings a person has to fix. The server
// (internal/server/guard.go) relies on them being well formed.
func (c *Config) validateAccess() []error {
	var errs []error
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("SOVA_PUBLIC_URL=%q is not a URL: %w", c.PublicURL, err))
		case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.User != nil:
			errs = append(errs, fmt.Errorf("SOVA_PUBLIC_URL=%q: give the address people open, such as https://sova.example.com", c.PublicURL))
		}
	}
	for _, h := range c.AllowedHosts {
		if err := checkAllowedHost(h); err != nil {
			errs = append(errs, fmt.Errorf("SOVA_ALLOWED_HOSTS: %q %w", h, err))
		}
	}
	return errs
}

// checkAllowedHost accepts "*", a host name ("sova.lan"), a pattern for
// its subdomains ("*.example.com"), an IP address ("192.168.1.5",
// "[fd00::5]"), each with an optional port.
func checkAllowedHost(h string) error {
	if h == "*" {
		return nil
	}
	if strings.Contains(h, "://") || strings.ContainsAny(h, "/?#@ ") {
		return fmt.Errorf("is not a host name: give names only, such as sova.example.com (SOVA_PUBLIC_URL takes a URL)")
	}
	host := h
	if hp, _, err := net.SplitHostPort(h); err == nil {
		host = hp
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if net.ParseIP(host) != nil {
		return nil
	}
	host = strings.TrimPrefix(host, "*.")
	if host == "" || strings.Contains(host, "*") || strings.Contains(host, ":") {
		return fmt.Errorf("is not a host name: use a name (sova.lan), a pattern for subdomains (*.example.com), an address, or * for any")
	}
	return nil
}
