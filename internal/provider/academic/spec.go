package academic

import (
	"strings"

	"github.com/sova-ai/sova/internal/provider"
)

// ToolName is the tool this package serves.
const ToolName = "academic_search"

// Provider describes s (nil: not configured) for the tool status.
func Provider(s Searcher) provider.Spec {
	return provider.Spec{Name: "academic", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: s != nil,
			Settings: []string{"EXA_API_KEY", "SOVA_OPENALEX_URL", "OPENALEX_API_KEY", "SOVA_ARXIV_URL"}}
		if s != nil {
			st.Provider = s.Name()
			if !strings.Contains(st.Provider, "exa") {
				st.Note = "EXA_API_KEY switches to Exa's research-paper search"
			}
		}
		return st
	}}
}
