package connectors

import (
	"context"
	"net/url"

	"github.com/sova-ai/sova/internal/egress"
)

// checkGiven checks a share's address when a person gives it: the
// refusal names the rule, never the address the name resolved to. A
// Service whose transport was replaced (tests) still checks.
func (s *Service) checkGiven(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return egress.NewGuard(policy(s.cfg.AllowPrivate)).CheckGiven(ctx, nil, u)
}
