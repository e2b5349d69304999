package tools

import (
	"errors"

	"github.com/sova-ai/sova/internal/provider"
	"github.com/sova-ai/sova/internal/sandbox"
)

// Status says whether a tool can be offered, which provider serves it,
// and which settings enable it or choose its provider (GET /api/providers,
// and the note a run gives when a tool is withdrawn).
type Status = provider.Status

// Status reports a tool's availability with these providers; ok is false
// for a name no provider serves.
func (p Providers) Status(name string) (s Status, ok bool) {
	return provider.Lookup(p.Specs(), name)
}

// core describes the tools that Sova's own parts serve: the web search
// chain, the page reader, the clock, the fast model, the memories, the
// document spaces and the sandbox.
func (p Providers) core() []provider.Spec {
	one := func(name string, st func() Status) provider.Spec {
		return provider.Spec{Name: name, Tools: []string{name}, Status: func(string) Status { return st() }}
	}
	return []provider.Spec{
		one(WebSearchName, func() Status {
			return Status{Available: p.Search != nil, Provider: nameOf(p.Search, "web search"),
				Settings: []string{"SOVA_SEARCH_PROVIDER", "SOVA_SEARXNG_URL", "TAVILY_API_KEY", "EXA_API_KEY", "BRAVE_API_KEY"}}
		}),
		one(RetrieveName, func() Status {
			return Status{Available: p.Reader != nil, Provider: "page fetcher", Settings: []string{"SOVA_FETCH_ALLOW_HOSTS", "SOVA_READER_FALLBACK"}}
		}),
		one(DatetimeName, func() Status { return Status{Available: true, Provider: "clock"} }),
		one(TextTranslateName, func() Status {
			return Status{Available: p.Model != nil, Provider: "the fast model", Settings: []string{"SOVA_FAST_MODEL"}}
		}),
		one(CodeContextName, func() Status {
			s := Status{Available: true, Settings: []string{"TAVILY_API_KEY"}}
			switch {
			case p.Code != nil:
				s.Provider = "tavily"
			case p.Search != nil:
				s.Provider = nameOf(p.Search, "web search") + ", documentation sites first"
				s.Note = "TAVILY_API_KEY switches to Tavily's advanced search with the pages' Markdown"
			default:
				s.Available = false
			}
			return s
		}),
		{Name: "memory", Tools: []string{SearchMemoriesName, AddMemoryName}, Status: func(string) Status {
			s := Status{Available: p.Memory != nil, Settings: []string{"SUPERMEMORY_API_KEY", "SOVA_SUPERMEMORY_URL"}}
			if p.Memory != nil {
				s.Provider = p.Memory.Name()
				if s.Provider != "supermemory" {
					s.Note = "SUPERMEMORY_API_KEY keeps the memories in Supermemory instead"
				}
			}
			return s
		}},
		one(ConnectorsSearchName, func() Status {
			s := Status{Available: p.Connectors != nil && p.Documents != nil, Provider: "connected spaces",
				Settings: []string{"SOVA_CONNECTORS_SYNC_INTERVAL"}}
			if !s.Available {
				s.Provider, s.Reason = "", "document spaces are not available"
			}
			return s
		}),
		one(CodeInterpreterName, p.sandboxStatus),
	}
}

// sandboxStatus is code_interpreter's status: the sandbox, or why it
// cannot run here.
func (p Providers) sandboxStatus() Status {
	s := Status{Available: p.Sandbox != nil, Settings: []string{"SOVA_SANDBOX_ENABLED", "SOVA_SANDBOX_BWRAP", "SOVA_SANDBOX_PYTHON"}}
	if p.Sandbox != nil {
		s.Provider = "sandbox (bubblewrap)"
		return s
	}
	s.Reason = "the code sandbox cannot run on this server"
	var u *sandbox.UnavailableError
	switch {
	case errors.As(p.SandboxErr, &u):
		s.Reason += " (" + u.Reason + ")"
	case p.SandboxErr != nil:
		s.Reason += " (" + p.SandboxErr.Error() + ")"
	}
	return s
}

// nameOf is a provider's name when it has one.
func nameOf(v any, def string) string {
	if n, ok := v.(interface{ Name() string }); ok && v != nil {
		return n.Name()
	}
	return def
}
