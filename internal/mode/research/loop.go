package research

import (
	"context"

	agentloop "github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/tools"
)

// loop runs an agent or supervisor conversation on the tool loop the way
// deep_research runs them: with the main model, tools offered at every
// step (cfg.PrepareStep may add to the conversation, not withdraw them),
// the calls of a reply run one after another in the model's order, so
// that workspace writes keep it, and arguments that do not fit a tool's
// schema (and cannot be mended locally) told to the model rather than
// repaired by another model call. A tool's Fatal error (a
// workspace that cannot be written) ends the run.
func (s *session) loop(ctx context.Context, cfg agentloop.Config, msgs []llm.Message) (*agentloop.Outcome, error) {
	cfg.Model = s.r.model
	cfg.Temperature = s.temperature()
	cfg.MaxTokens = s.cfg.MaxTokens
	cfg.ToolChoice = "auto"
	cfg.NoRepair = true
	cfg.Concurrency = 1
	if cfg.PrepareStep == nil {
		cfg.PrepareStep = agentloop.Policies()
	}
	return agentloop.Run(ctx, cfg, msgs)
}

// markerRE matches a citation marker [n].
var markerRE = tools.MarkerRE
