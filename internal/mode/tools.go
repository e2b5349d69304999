package mode

import "github.com/sova-ai/sova/internal/provider"

// ToolStatus is one tool a mode offers, or would offer with the right
// settings: whether it is available, which provider serves it, and which
// settings enable it or choose its provider. GET /api/providers lists
// them.
type ToolStatus = provider.Status

// ToolReporter is implemented by modes whose tools depend on providers
// and their keys (the search groups).
type ToolReporter interface {
	Tools() []ToolStatus
}
