package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/sova-ai/sova/internal/egress"
)

// oidcClient is the egress client of single sign-on: the issuer an
// administrator configured is reachable wherever it is (an identity
// provider on the local network is common); any other host the discovery
// document names (token endpoint, keys) must pass the address guard, so a
// document cannot send the client secret into the server's network.
func oidcClient(issuer string) (*http.Client, *egress.Guard, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Hostname() == "" {
		return nil, nil, fmt.Errorf("SOVA_OIDC_ISSUER %q is not an http(s) URL", issuer)
	}
	p := egress.Policy{Allow: []string{u.Hostname()}}
	return egress.NewClient(egress.Config{Policy: p, Timeout: 15 * time.Second}), egress.NewGuard(p), nil
}

// checkEndpoint checks an endpoint a discovery document names.
func checkEndpoint(ctx context.Context, g *egress.Guard, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	return g.CheckGiven(ctx, nil, u)
}
