// Package mcp connects Sova to Model Context Protocol servers with the
// official Go SDK and offers their tools to the agent loop. Servers come
// from the admin's file (SOVA_MCP_CONFIG, the "mcpServers" JSON shape that
// other MCP clients read: a command with args and env for stdio, or a url
// with headers for Streamable HTTP) and from each user's own list, which
// may hold Streamable HTTP servers only, never commands.
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/sova-ai/sova"
)

// Server is one MCP server: a command run over stdio, or a URL spoken to
// over Streamable HTTP.
type Server struct {
	// Name is how the server's tools are named (name__tool); letters,
	// digits, "_" and "-", at most 32.
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Allow names who may use an administrator's server besides the
	// administrators; nil: administrators only (and the local user of
	// an installation without accounts). Users' own servers have none:
	// they are their owner's alone.
	Allow *Allow `json:"allow,omitempty"`
}

// Allow grants an administrator's server to accounts, by name (or id)
// and by role ("pro", "free"). Anonymous visitors are never granted one:
// they share an address, so a server's mailbox would be everyone's.
type Allow struct {
	Users []string `json:"users,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

// Permits reports whether u may use the server. Administrators and the
// local user of an installation without accounts may use every server;
// anonymous visitors none; other accounts those whose Allow names them
// or their role.
func (s Server) Permits(u sova.User) bool {
	switch {
	case u.ID == "" || u.Role == sova.RoleAnonymous:
		return false
	case u.Role == sova.RoleAdmin, u.ID == sova.LocalUserID && u.Role == "":
		return true
	case s.Allow == nil:
		return false
	}
	if u.Role != "" && slices.Contains(s.Allow.Roles, u.Role) {
		return true
	}
	return slices.ContainsFunc(s.Allow.Users, func(n string) bool { return n == u.ID || u.Name != "" && n == u.Name })
}

// Stdio reports whether the server is a command.
func (s Server) Stdio() bool { return s.Command != "" }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// ErrInvalid reports a server description that cannot be used.
var ErrInvalid = errors.New("invalid MCP server")

// Validate checks a server as the admin may describe it.
func (s Server) Validate() error {
	if !nameRE.MatchString(s.Name) || strings.Contains(s.Name, "__") {
		return fmt.Errorf("%w: the name %q must be 1 to 32 letters, digits, \"_\" or \"-\" without \"__\"", ErrInvalid, s.Name)
	}
	if s.Allow != nil {
		for _, r := range s.Allow.Roles {
			if !sova.ValidRole(r) {
				return fmt.Errorf("%w %s: \"allow\" names the role %q; roles are admin, pro and free (anonymous visitors are never granted a server)", ErrInvalid, s.Name, r)
			}
		}
		for _, u := range s.Allow.Users {
			if strings.TrimSpace(u) == "" {
				return fmt.Errorf("%w %s: \"allow\" names an empty user", ErrInvalid, s.Name)
			}
		}
	}
	switch {
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("%w %s: give either \"command\" or \"url\", not both", ErrInvalid, s.Name)
	case s.Command != "":
		return nil
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w %s: \"url\" must be an http or https address", ErrInvalid, s.Name)
		}
		for k := range s.Headers {
			if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " :\r\n") {
				return fmt.Errorf("%w %s: header name %q", ErrInvalid, s.Name, k)
			}
		}
		return nil
	default:
		return fmt.Errorf("%w %s: it needs a \"command\" (stdio) or a \"url\" (Streamable HTTP)", ErrInvalid, s.Name)
	}
}

// ValidateUser checks a server a user adds for themselves: Streamable
// HTTP only, since a command would run on the server's machine.
func (s Server) ValidateUser() error {
	if s.Allow != nil {
		return fmt.Errorf("%w %s: \"allow\" is for the administrator's servers; your own are yours alone", ErrInvalid, s.Name)
	}
	if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
		return fmt.Errorf("%w %s: only Streamable HTTP servers (\"url\") may be added; commands are for the administrator's SOVA_MCP_CONFIG", ErrInvalid, s.Name)
	}
	if s.URL == "" {
		return fmt.Errorf("%w %s: \"url\" is required", ErrInvalid, s.Name)
	}
	if len(s.Headers) > 20 {
		return fmt.Errorf("%w %s: at most 20 headers", ErrInvalid, s.Name)
	}
	return s.Validate()
}

// ParseConfig reads the "mcpServers" JSON shape:
//
//	{"mcpServers": {"files": {"command": "npx", "args": [...], "env": {...}},
//	                "mail": {"url": "https://…/mcp", "headers": {...},
//	                         "allow": {"users": ["anna"], "roles": ["pro"]}}}}
//
// Servers are returned sorted by name.
func ParseConfig(b []byte) ([]Server, error) {
	var f struct {
		MCPServers map[string]Server `json:"mcpServers"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("reading MCP servers: %w", err)
	}
	out := make([]Server, 0, len(f.MCPServers))
	for name, s := range f.MCPServers {
		s.Name = name
		if err := s.Validate(); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// LoadConfig reads ParseConfig's shape from a file; an empty path is no
// servers.
func LoadConfig(path string) ([]Server, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("SOVA_MCP_CONFIG: %w", err)
	}
	s, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("SOVA_MCP_CONFIG %s: %w", path, err)
	}
	return s, nil
}
