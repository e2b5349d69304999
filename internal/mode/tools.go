package mode

// ToolStatus is one tool a mode offers, or would offer with the right
// settings: whether it is available, which provider serves it, and which
// settings enable it or choose its provider. GET /api/providers lists
// them.
type ToolStatus struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Provider  string `json:"provider,omitempty"`
	// Reason says why a tool is withdrawn.
	Reason string `json:"reason,omitempty"`
	// Note says what a setting would change for an available tool.
	Note string `json:"note,omitempty"`
	// Settings enable the tool (the first, for a withdrawn one) or choose
	// its provider.
	Settings []string `json:"settings,omitempty"`
}

// ToolReporter is implemented by modes whose tools depend on providers
// and their keys (the search groups).
type ToolReporter interface {
	Tools() []ToolStatus
}
