package server

import (
	"net/http"

	"github.com/sova-ai/sova/internal/mode"
)

// providerTool is one tool of GET /api/providers: its status and the
// groups that offer it.
type providerTool struct {
	mode.ToolStatus
	Groups []string `json:"groups"`
}

// listProviders answers GET /api/providers: every tool of the modes that
// depend on providers (the search groups), available or withdrawn, with
// the provider that serves it, why it is withdrawn and the settings that
// enable it or choose its provider.
func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) {
	out := []*providerTool{}
	byName := map[string]*providerTool{}
	for _, m := range s.opt.Service.Modes().All() {
		tr, ok := m.(mode.ToolReporter)
		if !ok {
			continue
		}
		for _, st := range tr.Tools() {
			if p, ok := byName[st.Name]; ok {
				p.Groups = append(p.Groups, m.ID())
				continue
			}
			p := &providerTool{ToolStatus: st, Groups: []string{m.ID()}}
			byName[st.Name] = p
			out = append(out, p)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": out})
}
