package doctor

import (
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/mode/group"
	"github.com/sova-ai/sova/internal/tools"
)

// Tools reports each tool of the search groups (the answer of GET
// /api/providers): available, from which provider and in which groups, or
// withdrawn with the setting that enables it. No provider is called: a
// tool's availability is its settings. modelOK and sandbox are the
// results of the model and sandbox checks, which text_translate and
// code_interpreter depend on.
func Tools(cfg *config.Config, modelOK bool, sandbox Check) []Check {
	chain, _ := app.Providers(cfg) // an error: web_search is withdrawn
	var p tools.Providers
	if chain != nil {
		p = app.GroupProviders(cfg, nil, chain, fetch.New(fetch.Config{}), nil, nil)
	} else {
		p = app.GroupProviders(cfg, nil, nil, fetch.New(fetch.Config{}), nil, nil)
		p.Search = nil
	}
	// Memories are built in unless Supermemory is configured; the store
	// is not opened here, only the choice is reported.
	if mem, err := app.Memories(cfg, nil); err == nil {
		p.Memory = mem
	}
	var order []string
	groups := map[string][]string{}
	for _, g := range group.Groups {
		for _, name := range g.Tools {
			if _, ok := p.Status(name); !ok {
				continue
			}
			if len(groups[name]) == 0 {
				order = append(order, name)
			}
			groups[name] = append(groups[name], g.ID)
		}
	}
	var out []Check
	for _, name := range order {
		s, _ := p.Status(name)
		switch name {
		case tools.TextTranslateName: // the fast model, checked above
			s.Available, s.Provider, s.Reason = modelOK, "the fast model", "the model endpoint does not answer (see above)"
		case tools.ConnectorsSearchName: // the document spaces, always there in a server
			s.Available, s.Provider = true, "connected spaces"
		case tools.CodeInterpreterName: // the sandbox, checked above
			s.Available, s.Provider, s.Reason = sandbox.Status == OK, "sandbox (bubblewrap)", "the code sandbox cannot run on this server"
			if sandbox.Detail != "" && sandbox.Status != OK {
				s.Reason += " (" + sandbox.Detail + ")"
			}
		}
		c := Check{Name: "tool " + name, Status: OK}
		in := "in " + strings.Join(groups[name], ", ")
		if s.Available {
			c.Detail = strings.TrimSpace(s.Provider + " · " + in)
			if s.Note != "" {
				c.Detail += "; " + s.Note
			}
		} else {
			c.Status = Fail
			c.Detail = "withdrawn: " + s.Reason + " · " + in
			switch {
			case name == tools.TextTranslateName:
				c.Fix = "make the model checks above pass"
			case name == tools.CodeInterpreterName:
				c.Fix = sandbox.Fix
			case len(s.Settings) > 0:
				c.Fix = fmt.Sprintf("set %s", s.Settings[0])
			}
		}
		out = append(out, c)
	}
	return out
}
