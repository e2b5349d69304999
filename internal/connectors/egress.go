package connectors

import (
	"context"
	"net/url"

	"github.com/sova-ai/sova/internal/egress"
)

// CheckShare checks a share's address when a person gives it: the
// refusal names the rule, never the address the name resolved to. The
// transport checks again when dialling.
func CheckShare(ctx context.Context, raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return egress.NewGuard(policy(allowPrivate)).CheckGiven(ctx, nil, u)
}

// checkGiven is CheckShare under the Service's setting; a Service whose
// transport was replaced (tests) still checks.
func (s *Service) checkGiven(ctx context.Context, raw string) error {
	return CheckShare(ctx, raw, s.cfg.AllowPrivate)
}
