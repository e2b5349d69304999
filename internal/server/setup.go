package server

import (
	"slices"
	"strings"

	"github.com/sova-ai/sova/internal/mode"
)

// SetupProblem is one thing the server's own start-up checks found that
// makes it unusable (the model endpoint unreachable, its key refused, a
// model it does not serve, no web search provider answering), with what an administrator sets to fix it.
// Only the check's name and the fix are shown to the browser: the
// details can carry the endpoint's address and its own words.
type SetupProblem struct {
	Check string `json:"check"`
	Fix   string `json:"fix,omitempty"`
}

// SetupChecker answers the problems the start-up checks found; none while
// they are still running or when they all passed.
type SetupChecker interface {
	SetupProblems() []SetupProblem
}

// setupProblems is what GET /api/modes reports under "setup".
func (s *Server) setupProblems() []SetupProblem {
	if s.opt.Setup == nil {
		return nil
	}
	return s.opt.Setup.SetupProblems()
}

// withdrawnReason says why a search group cannot run here, when none of
// its tools can (x without XAI_API_KEY): its tools' reasons and the
// settings that enable them. "" for every other mode.
func withdrawnReason(m mode.Mode) string {
	r, ok := m.(mode.ToolReporter)
	if !ok {
		return ""
	}
	tools := r.Tools()
	var reasons []string
	for _, t := range tools {
		if t.Available {
			return ""
		}
		why := t.Reason
		var missing []string
		for _, set := range t.Settings {
			if !strings.Contains(why, set) {
				missing = append(missing, set)
			}
		}
		if len(missing) > 0 {
			why += " (" + strings.Join(missing, ", ") + ")"
		}
		if why != "" && !slices.Contains(reasons, why) {
			reasons = append(reasons, why)
		}
	}
	if len(tools) == 0 {
		return ""
	}
	return strings.Join(reasons, "; ")
}
