package doctor

import (
	"context"
	"errors"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/sandbox"
)

// CheckSandbox is the name of the sandbox check.
const CheckSandbox = "code sandbox"

// Sandbox reports whether the code sandbox runs here, by starting it as
// Sova would (sandbox.New: bubblewrap runs true in its namespaces, then
// the Python inside imports numpy, pandas and matplotlib), so the reason
// it gives is the real one. The check is optional: without a sandbox the
// code tools are withdrawn and the rest of Sova works.
func Sandbox(ctx context.Context, cfg *config.Config, opts Options) Check {
	c := Check{Name: CheckSandbox}
	ctx, cancel := context.WithTimeout(ctx, max(opts.timeout(), sandbox.ProbeTimeout))
	defer cancel()
	start := opts.Sandbox
	if start == nil {
		start = startSandbox
	}
	version, err := start(ctx, cfg)
	if errors.Is(err, app.ErrSandboxDisabled) {
		c.Status, c.Detail = Skip, "turned off (SOVA_SANDBOX_ENABLED=false)"
		return c
	}
	if err != nil {
		c.Status, c.Detail = Fail, "unavailable: "+err.Error()
		var u *sandbox.UnavailableError
		if errors.As(err, &u) {
			c.Detail, c.Fix = "unavailable: "+u.Reason, u.Fix
		}
		return c
	}
	c.Status, c.Detail = OK, "available ("+version+")"
	return c
}

func startSandbox(ctx context.Context, cfg *config.Config) (string, error) {
	sb, err := app.Sandbox(ctx, cfg)
	if err != nil {
		return "", err
	}
	return sb.Version(), nil
}
