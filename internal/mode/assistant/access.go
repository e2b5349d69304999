package assistant

import (
	"slices"

	"github.com/sova-ai/sova/internal/agent"
)

// accountTools are the router's tools that need an account: the planner
// and complex tasks act with the person's servers and run for minutes.
var accountTools = []string{"delegateToSupervisor", "executeComplexTask"}

// forAccount leaves out, for an anonymous visitor, the tools that need an
// account.
func (t *turn) forAccount(ts []agent.Tool) []agent.Tool {
	if !t.anonymous {
		return ts
	}
	return slices.DeleteFunc(ts, func(x agent.Tool) bool { return slices.Contains(accountTools, x.Name()) })
}
