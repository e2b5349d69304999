package mode

import (
	"context"
	"encoding/json"

	"github.com/sova-ai/sova/internal/agent"
)

// UntrustedTools marks what the tools return (pages, search results,
// documents, code output, posts) as data for the model: each result
// reaches it inside agent.Untrusted's markers, named by the tool. A mode
// that uses them adds agent.UntrustedRule to its system prompt. The
// stream still shows the result as the tool gave it.
func UntrustedTools(ts []agent.Tool) []agent.Tool {
	out := make([]agent.Tool, 0, len(ts))
	for _, t := range ts {
		out = append(out, untrustedTool{Tool: t})
	}
	return out
}

type untrustedTool struct{ agent.Tool }

// Acts keeps whether the wrapped tool changes something (the action
// gate reads it).
func (u untrustedTool) Acts() bool {
	a, ok := u.Tool.(interface{ Acts() bool })
	return ok && a.Acts()
}

// Title implements agent.Titler with the wrapped tool's title.
func (u untrustedTool) Title(args json.RawMessage) string {
	if t, ok := u.Tool.(agent.Titler); ok {
		return t.Title(args)
	}
	return u.Name()
}

// Run implements agent.Runner.
func (u untrustedTool) Run(ctx context.Context, args json.RawMessage) (agent.Output, error) {
	var (
		out agent.Output
		err error
	)
	if r, ok := u.Tool.(agent.Runner); ok {
		out, err = r.Run(ctx, args)
	} else {
		out.Text, err = u.Tool.Call(ctx, args)
	}
	if err == nil && out.Text != "" {
		if out.Data == nil && json.Valid([]byte(out.Text)) {
			out.Data = json.RawMessage(out.Text)
		}
		out.Text = agent.Untrusted(u.Name(), out.Text)
	}
	return out, err
}

// Call implements agent.Tool.
func (u untrustedTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	o, err := u.Run(ctx, args)
	return o.Text, err
}
