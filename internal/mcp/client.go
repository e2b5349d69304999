package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/egress"
)

// Options tune a Client.
type Options struct {
	// Timeout bounds connecting to a server and listing its tools, and
	// each tool call (SOVA_MCP_TIMEOUT, 30s).
	Timeout time.Duration
	// MaxResultChars bounds the text of a tool result the model reads.
	MaxResultChars int
	// AllowHosts are host names or addresses on private networks that
	// users' own servers may reach (SOVA_MCP_ALLOW_HOSTS); the admin's
	// servers may reach anything.
	AllowHosts []string
	Logger     *slog.Logger
	// Version is reported to servers as the client's version.
	Version string
}

// Client connects to MCP servers. The admin's servers are connected once
// and shared by every run (a stdio server stays one process); users'
// servers are connected for one run and closed with its Toolset.
type Client struct {
	opt       Options
	admin     []Server
	sdk       *sdk.Client
	user      *http.Client  // for users' servers: private addresses refused
	adminHTTP *http.Client  // for the admin's servers: private allowed, metadata refused
	guard     *egress.Guard // the users' servers' policy, also checked when one is added

	mu       sync.Mutex
	sessions map[string]*conn // admin server name → session
}

// NewClient returns a client of the admin's servers.
func NewClient(admin []Server, opt Options) *Client {
	if opt.Timeout <= 0 {
		opt.Timeout = 30 * time.Second
	}
	if opt.MaxResultChars <= 0 {
		opt.MaxResultChars = 20000
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Version == "" {
		opt.Version = "dev"
	}
	// Sessions stream for as long as a run lasts: no overall timeout;
	// each call's context bounds it (SOVA_MCP_TIMEOUT).
	userPolicy := egress.Policy{Allow: opt.AllowHosts, AllowSetting: "SOVA_MCP_ALLOW_HOSTS"}
	return &Client{
		opt: opt, admin: admin,
		sdk:       sdk.NewClient(&sdk.Implementation{Name: "sova", Version: opt.Version}, nil),
		user:      egress.NewClient(egress.Config{Policy: userPolicy, Timeout: -1}),
		adminHTTP: egress.NewClient(egress.Config{Policy: egress.Policy{AllowPrivate: true}, Timeout: -1}),
		guard:     egress.NewGuard(userPolicy),
		sessions:  map[string]*conn{},
	}
}

// Servers returns the admin's servers.
func (c *Client) Servers() []Server { return slices.Clone(c.admin) }

// Close ends the shared sessions (and the processes of stdio servers).
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for name, cn := range c.sessions {
		errs = append(errs, cn.sess.Close())
		delete(c.sessions, name)
	}
	return errors.Join(errs...)
}

// Problem is a server whose tools could not be listed.
type Problem struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// Toolset is the tools of a run's servers. Close it when the run ends.
type Toolset struct {
	Tools    []*Tool
	Problems []Problem
	owned    []*link
}

// Close ends the sessions of users' servers.
func (t *Toolset) Close() {
	for _, l := range t.owned {
		_ = l.current().sess.Close()
	}
	t.owned = nil
}

// AgentTools returns the tools as agent tools.
func (t *Toolset) AgentTools() []agent.Tool {
	out := make([]agent.Tool, 0, len(t.Tools))
	for _, x := range t.Tools {
		out = append(out, x)
	}
	return out
}

// Find returns the tool with the given full name.
func (t *Toolset) Find(name string) *Tool {
	for _, x := range t.Tools {
		if x.FullName == name {
			return x
		}
	}
	return nil
}

// Permitted returns the admin's servers that u may use (Server.Permits).
func (c *Client) Permitted(u sova.User) []Server {
	var out []Server
	for _, s := range c.admin {
		if s.Permits(u) {
			out = append(out, s)
		}
	}
	return out
}

// Tools connects to the admin's servers that u may use and to u's own
// servers (own, read from u's list), and lists their tools, in parallel.
// A server that cannot be reached or listed in time is a Problem, never
// an error: the run goes on with the others. A user's server named like
// an admin's is skipped. An anonymous visitor (or a context without a
// user) gets no server at all.
func (c *Client) Tools(ctx context.Context, u sova.User, own []Server) *Toolset {
	type listed struct {
		tools   []*Tool
		owned   *link
		problem *Problem
	}
	if u.ID == "" || u.Role == sova.RoleAnonymous {
		return &Toolset{}
	}
	servers := c.Permitted(u)
	nAdmin := len(servers)
	for _, o := range own {
		if slices.ContainsFunc(c.admin, func(a Server) bool { return a.Name == o.Name }) {
			continue
		}
		servers = append(servers, o)
	}
	res := make([]listed, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		isAdmin := i < nAdmin
		wg.Go(func() {
			lctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
			defer cancel()
			l := &link{c: c, s: s, hc: c.user, shared: isAdmin}
			var err error
			if isAdmin {
				l.cn, err = c.shared(lctx, s)
			} else {
				l.cn, err = c.connect(lctx, s, c.user)
			}
			if err == nil {
				res[i].tools, err = c.list(lctx, l)
				if err != nil && l.cn.forgotten(err) {
					// A shared session the server forgot (it restarted
					// since the last run): a new one, listed once more.
					if _, rerr := l.reopen(lctx, l.cn); rerr == nil {
						res[i].tools, err = c.list(lctx, l)
					}
				}
				if !isAdmin {
					res[i].owned = l
				}
			}
			if err != nil {
				if isAdmin && l.cn != nil {
					c.drop(s.Name, l.current())
				}
				c.opt.Logger.Warn("MCP server unavailable", "server", s.Name, "err", err)
				res[i].problem = &Problem{Server: s.Name, Error: describe(lctx, s, err, c.opt.Timeout)}
			}
		})
	}
	wg.Wait()
	ts := &Toolset{}
	seen := map[string]bool{}
	for _, r := range res {
		if r.owned != nil {
			ts.owned = append(ts.owned, r.owned)
		}
		if r.problem != nil {
			ts.Problems = append(ts.Problems, *r.problem)
		}
		for _, t := range r.tools {
			if !seen[t.FullName] {
				seen[t.FullName] = true
				ts.Tools = append(ts.Tools, t)
			}
		}
	}
	return ts
}

func describe(ctx context.Context, s Server, err error, timeout time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("the server %s did not answer within %s (SOVA_MCP_TIMEOUT)", s.Name, timeout)
	}
	return fmt.Sprintf("the server %s could not be used: %v", s.Name, err)
}

// shared returns the session of an admin's server, connecting it first
// when there is none.
func (c *Client) shared(ctx context.Context, s Server) (*conn, error) {
	c.mu.Lock()
	cn := c.sessions[s.Name]
	c.mu.Unlock()
	if cn != nil {
		return cn, nil
	}
	cn, err := c.connect(ctx, s, c.adminHTTP)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.sessions[s.Name]; old != nil { // connected meanwhile by another run
		_ = cn.sess.Close()
		return old, nil
	}
	c.sessions[s.Name] = cn
	return cn, nil
}

// drop forgets a shared session that failed, so the next run reconnects.
func (c *Client) drop(name string, cn *conn) {
	if cn == nil {
		return
	}
	c.mu.Lock()
	if c.sessions[name] == cn {
		delete(c.sessions, name)
	}
	c.mu.Unlock()
	_ = cn.sess.Close()
}

// conn is one session with a server, and whether the server answered 404
// to a request naming it: it forgot the session (it restarted, or ended
// it), and the MCP specification (Streamable HTTP, session management)
// asks the client to open a new one.
type conn struct {
	sess   *sdk.ClientSession
	forgot atomic.Bool
}

// forgotten reports whether err, from a request on cn, means the server
// no longer knows the session. The SDK says so (ErrSessionMissing) only
// for a 404 whose body is no JSON-RPC response; servers that answer 404
// with one (the Python SDK's) are seen by the transport (sessionWatch).
func (cn *conn) forgotten(err error) bool {
	return err != nil && (errors.Is(err, sdk.ErrSessionMissing) || cn.forgot.Load())
}

// sessionWatch marks a conn forgotten when a request naming its session
// is answered 404.
type sessionWatch struct {
	base   http.RoundTripper
	forgot *atomic.Bool
}

func (w sessionWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusNotFound && r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
		w.forgot.Store(true)
	}
	return resp, err
}

// link is a run's way to one server's session: the server's tools share
// it, and the first call that finds the session forgotten opens a new one
// for all of them.
type link struct {
	c      *Client
	s      Server
	hc     *http.Client // for users' servers
	shared bool

	mu sync.Mutex
	cn *conn
}

func (l *link) current() *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cn
}

// reopen replaces the forgotten session old with a new one; a call that
// finds it replaced already uses the new one.
func (l *link) reopen(ctx context.Context, old *conn) (*conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cn != old {
		return l.cn, nil
	}
	var (
		cn  *conn
		err error
	)
	if l.shared {
		l.c.drop(l.s.Name, old) // unless another run replaced it already
		cn, err = l.c.shared(ctx, l.s)
	} else {
		cn, err = l.c.connect(ctx, l.s, l.hc)
		if err == nil {
			_ = old.sess.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	l.cn = cn
	return cn, nil
}

// call calls a tool; when the server forgot the session, it opens a new
// one and calls once more (the server did not run the call it answered
// 404: the request named a session it did not know).
func (l *link) call(ctx context.Context, p *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	cn := l.current()
	res, err := cn.sess.CallTool(ctx, p)
	if cn.forgotten(err) && ctx.Err() == nil {
		l.c.opt.Logger.Info("MCP server forgot the session; opening a new one", "server", l.s.Name)
		var rerr error
		if cn, rerr = l.reopen(ctx, cn); rerr != nil {
			return nil, fmt.Errorf("the server forgot the session and a new one could not be opened: %w", rerr)
		}
		res, err = cn.sess.CallTool(ctx, p)
	}
	if err != nil && l.shared && errors.Is(err, sdk.ErrConnectionClosed) {
		l.c.drop(l.s.Name, cn)
	}
	return res, err
}

func (c *Client) connect(ctx context.Context, s Server, hc *http.Client) (*conn, error) {
	cn := &conn{}
	var t sdk.Transport
	if s.Stdio() {
		// The process outlives this call's context: it is ended by
		// Close (the transport closes stdin, then signals it).
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = os.Environ()
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	} else {
		base := transportOf(hc)
		if len(s.Headers) > 0 {
			base = headerTransport{base: base, headers: maps.Clone(s.Headers)}
		}
		client := *hc
		client.Transport = sessionWatch{base: base, forgot: &cn.forgot}
		t = &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &client, MaxRetries: 1, DisableStandaloneSSE: true}
	}
	sess, err := c.sdk.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	cn.sess = sess
	return cn, nil
}

func transportOf(hc *http.Client) http.RoundTripper {
	if hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}

// headerTransport adds a server's configured headers (an API key) to
// every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func (c *Client) list(ctx context.Context, l *link) ([]*Tool, error) {
	var out []*Tool
	for t, err := range l.current().sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		if len(out) >= 200 {
			break
		}
		out = append(out, c.newTool(l.s, t, l))
	}
	return out, nil
}

// Tool is one tool of an MCP server as an agent.Tool. Its name is the
// server's name, "__" and the tool's name, cut to the 64 characters
// OpenAI-compatible endpoints accept.
type Tool struct {
	Server   string
	Remote   string // the server's name for it
	FullName string
	Label    string // the server's title for it
	Desc     string
	// ReadOnly is the server's readOnlyHint: a tool without it changes
	// something, and the assistant asks the person before calling it.
	ReadOnly bool
	schema   *jsonschema.Schema

	c    *Client
	link *link
}

func (c *Client) newTool(s Server, t *sdk.Tool, l *link) *Tool {
	full := s.Name + "__" + sanitize(t.Name)
	if len(full) > 64 {
		full = full[:64]
	}
	title := t.Title
	if t.Annotations != nil {
		if title == "" {
			title = t.Annotations.Title
		}
	}
	if title == "" {
		title = t.Name
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = title
	}
	return &Tool{
		Server: s.Name, Remote: t.Name, FullName: full, Label: title,
		Desc:     fmt.Sprintf("[%s] %s", s.Name, mcpClip(desc, 1000)),
		ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
		schema:   schemaOf(t.InputSchema), c: c, link: l,
	}
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// schemaOf turns a server's input schema into one the loop can check
// arguments against; a schema it cannot resolve (another draft's
// keywords) is replaced by "any object", and the server checks.
func schemaOf(in any) *jsonschema.Schema {
	fallback := &jsonschema.Schema{Type: "object"}
	b, err := json.Marshal(in)
	if err != nil {
		return fallback
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return fallback
	}
	s.Schema = "" // drafts named by servers (draft-07) are read as 2020-12
	if s.Type == "" {
		s.Type = "object"
	}
	if _, err := s.Resolve(nil); err != nil {
		return fallback
	}
	return &s
}

// Name implements agent.Tool.
func (t *Tool) Name() string { return t.FullName }

// Description implements agent.Tool.
func (t *Tool) Description() string { return t.Desc }

// Schema implements agent.Tool.
func (t *Tool) Schema() *jsonschema.Schema { return t.schema }

// Call implements agent.Tool.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	out, err := t.Run(ctx, args)
	return out.Text, err
}

// Title implements agent.Titler.
func (t *Tool) Title(json.RawMessage) string { return t.Server + ": " + t.Label }

// Result is how a call's result shows in the stream.
type Result struct {
	Server     string          `json:"server"`
	Tool       string          `json:"tool"`
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`
}

// Run implements agent.Runner: it calls the tool within the timeout. A
// server that fails, is too slow or answers with an error ends this call
// with an error the model reads, never the run.
func (t *Tool) Run(ctx context.Context, args json.RawMessage) (agent.Output, error) {
	ctx, cancel := context.WithTimeout(ctx, t.c.opt.Timeout)
	defer cancel()
	var a map[string]any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return agent.Output{}, fmt.Errorf("arguments of %s: %w", t.FullName, err)
		}
	}
	res, err := t.link.call(ctx, &sdk.CallToolParams{Name: t.Remote, Arguments: a})
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return agent.Output{}, fmt.Errorf("the MCP server %s did not answer %s within %s (SOVA_MCP_TIMEOUT)", t.Server, t.Remote, t.c.opt.Timeout)
		}
		t.c.opt.Logger.Warn("MCP tool call failed", "server", t.Server, "tool", t.Remote, "err", err)
		return agent.Output{}, fmt.Errorf("the MCP server %s failed on %s: %v", t.Server, t.Remote, err)
	}
	if res == nil {
		return agent.Output{}, fmt.Errorf("the MCP server %s returned no result for %s", t.Server, t.Remote)
	}
	text := contentText(res.Content)
	r := Result{Server: t.Server, Tool: t.Remote}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			r.Structured = b
			if text == "" {
				text = string(b)
			}
		}
	}
	if res.IsError {
		if text == "" {
			text = "the tool reported an error"
		}
		return agent.Output{}, fmt.Errorf("%s on %s: %s", t.Remote, t.Server, mcpClip(text, 2000))
	}
	if r := []rune(text); len(r) > t.c.opt.MaxResultChars {
		text = string(r[:t.c.opt.MaxResultChars]) + "\n[truncated]"
	}
	r.Text = text
	r.Truncated = strings.HasSuffix(text, "[truncated]")
	data, _ := json.Marshal(r)
	return agent.Output{Text: text, Summary: mcpClip(firstLine(text), 200), Data: data}, nil
}

func contentText(cs []sdk.Content) string {
	var parts []string
	for _, c := range cs {
		switch v := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, v.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", v.Name, v.URI))
		case *sdk.EmbeddedResource:
			if v.Resource != nil {
				if v.Resource.Text != "" {
					parts = append(parts, v.Resource.Text)
				} else {
					parts = append(parts, fmt.Sprintf("[resource %s, %d bytes]", v.Resource.URI, len(v.Resource.Blob)))
				}
			}
		}
	}
	return strings.Join(parts, "\n")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func mcpClip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
