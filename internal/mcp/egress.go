package mcp

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// CheckUserURL checks the address of a server a user adds, when it is
// added: the refusal names the rule (a private address, the setting that
// allows it) but never the address the host name resolved to. The same
// rule is applied again each time the server is dialled.
func (c *Client) CheckUserURL(ctx context.Context, raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("%w: \"url\" must be an http or https address", ErrInvalid)
	}
	if err := c.guard.CheckGiven(ctx, nil, u); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}
