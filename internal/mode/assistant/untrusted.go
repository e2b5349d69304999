package assistant

import (
	"context"
	"encoding/json"

	"github.com/sova-ai/sova/internal/agent"
)

// untrustedTool marks what a tool returns (mail, events, files, pages,
// documents) as data for the model (agent.Untrusted), keeping whether the
// tool acts and how it is titled.
type untrustedTool struct {
	agent.Tool
	source string
}

// untrusted wraps tools whose output comes from outside the person's words.
func untrusted(source string, ts []agent.Tool) []agent.Tool {
	out := make([]agent.Tool, 0, len(ts))
	for _, t := range ts {
		out = append(out, untrustedTool{Tool: t, source: source + ": " + t.Name()})
	}
	return out
}

func (u untrustedTool) Acts() bool { return agent.Acts(u.Tool) }

func (u untrustedTool) Title(args json.RawMessage) string {
	if tt, ok := u.Tool.(agent.Titler); ok {
		return tt.Title(args)
	}
	return u.Name()
}

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
			out.Data = json.RawMessage(out.Text) // the stream shows the result as before
		}
		out.Text = agent.Untrusted(u.source, out.Text)
	}
	return out, err
}

func (u untrustedTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	o, err := u.Run(ctx, args)
	return o.Text, err
}
