package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mcp/mcptest"
)

// local is the one user of an installation without accounts: every
// admin's server is theirs.
var local = sova.User{ID: sova.LocalUserID}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // names, or nil with wantErr
		wantErr  string
	}{
		{"both kinds", `{"mcpServers":{"mail":{"url":"https://mail.example/mcp","headers":{"Authorization":"Bearer x"}},"files":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv"]}}}`, []string{"files", "mail"}, ""},
		{"empty", `{"mcpServers":{}}`, []string{}, ""},
		{"neither", `{"mcpServers":{"x":{}}}`, nil, "needs a \"command\""},
		{"both", `{"mcpServers":{"x":{"command":"a","url":"http://b"}}}`, nil, "not both"},
		{"bad url", `{"mcpServers":{"x":{"url":"ftp://b"}}}`, nil, "http or https"},
		{"bad name", `{"mcpServers":{"a b":{"url":"http://b"}}}`, nil, "the name"},
		{"double underscore", `{"mcpServers":{"a__b":{"url":"http://b"}}}`, nil, "the name"},
		{"not json", `{`, nil, "reading MCP servers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.ParseConfig([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, s := range got {
				names = append(names, s.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Errorf("names = %v, want %v", names, tt.want)
			}
		})
	}
}

func TestValidateUser(t *testing.T) {
	tests := []struct {
		s       mcp.Server
		wantErr bool
	}{
		{mcp.Server{Name: "mail", URL: "https://mail.example/mcp"}, false},
		{mcp.Server{Name: "sh", Command: "sh", Args: []string{"-c", "id"}}, true},
		{mcp.Server{Name: "sh", URL: "https://x", Env: map[string]string{"A": "b"}}, true},
		{mcp.Server{Name: "x"}, true},
		{mcp.Server{Name: "x", URL: "file:///etc/passwd"}, true},
	}
	for _, tt := range tests {
		if err := tt.s.ValidateUser(); (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, mcp.ErrInvalid)) {
			t.Errorf("%+v: err = %v", tt.s, err)
		}
	}
}

func call(t *testing.T, ts *mcp.Toolset, name string, args any) (string, error) {
	t.Helper()
	tool := ts.Find(name)
	if tool == nil {
		var names []string
		for _, x := range ts.Tools {
			names = append(names, x.FullName)
		}
		t.Fatalf("no tool %s among %v (problems %v)", name, names, ts.Problems)
	}
	b, _ := json.Marshal(args)
	out, err := tool.Run(context.Background(), b)
	return out.Text, err
}

func TestEverythingOverStdio(t *testing.T) {
	srv := mcptest.NPM(t, "everything", "server-everything", "stdio")
	c := mcp.NewClient([]mcp.Server{srv}, mcp.Options{Timeout: 30 * time.Second})
	defer c.Close()
	ts := c.Tools(context.Background(), local, nil)
	defer ts.Close()
	if len(ts.Problems) > 0 {
		t.Fatalf("problems: %v", ts.Problems)
	}
	text, err := call(t, ts, "everything__echo", map[string]string{"message": "привет"})
	if err != nil || !strings.Contains(text, "привет") {
		t.Fatalf("echo = %q, %v", text, err)
	}
	text, err = call(t, ts, "everything__get-sum", map[string]int{"a": 2, "b": 40})
	if err != nil || !strings.Contains(text, "42") {
		t.Fatalf("get-sum = %q, %v", text, err)
	}
	for _, x := range ts.Tools {
		if x.Schema() == nil || x.Description() == "" || !strings.HasPrefix(x.Name(), "everything__") {
			t.Errorf("tool %s: schema %v, description %q", x.Name(), x.Schema(), x.Description())
		}
	}
	// The second run shares the process: listing is immediate.
	start := time.Now()
	ts2 := c.Tools(context.Background(), local, nil)
	if len(ts2.Tools) != len(ts.Tools) || time.Since(start) > 2*time.Second {
		t.Errorf("second listing: %d tools in %s", len(ts2.Tools), time.Since(start))
	}
}

func TestMemoryServer(t *testing.T) {
	dir := t.TempDir()
	srv := mcptest.NPM(t, "memory", "server-memory")
	srv.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}
	c := mcp.NewClient([]mcp.Server{srv}, mcp.Options{})
	defer c.Close()
	ts := c.Tools(context.Background(), local, nil)
	defer ts.Close()
	create := ts.Find("memory__create_entities")
	read := ts.Find("memory__read_graph")
	if create == nil || read == nil {
		t.Fatalf("tools: %v %v (problems %v)", create, read, ts.Problems)
	}
	if create.ReadOnly {
		t.Error("create_entities is marked read-only")
	}
	if !read.ReadOnly {
		t.Error("read_graph is not marked read-only")
	}
	if _, err := call(t, ts, "memory__create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Анна", "entityType": "person", "observations": []string{"ведёт проект Восток"}},
	}}); err != nil {
		t.Fatal(err)
	}
	text, err := call(t, ts, "memory__read_graph", map[string]any{})
	if err != nil || !strings.Contains(text, "проект Восток") {
		t.Fatalf("read_graph = %q, %v", text, err)
	}
}

func TestFilesystemRestrictedToDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plan.md"), []byte("# План\nВстреча во вторник."), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := mcptest.NPM(t, "files", "server-filesystem", dir)
	c := mcp.NewClient([]mcp.Server{srv}, mcp.Options{})
	defer c.Close()
	ts := c.Tools(context.Background(), local, nil)
	defer ts.Close()
	text, err := call(t, ts, "files__read_text_file", map[string]string{"path": filepath.Join(dir, "plan.md")})
	if err != nil || !strings.Contains(text, "Встреча во вторник") {
		t.Fatalf("read inside = %q, %v", text, err)
	}
	// Outside the directory the server refuses: the call fails, nothing
	// else does.
	_, err = call(t, ts, "files__read_text_file", map[string]string{"path": "/etc/hostname"})
	if err == nil || !strings.Contains(err.Error(), "files") {
		t.Fatalf("read outside: err = %v", err)
	}
	if w := ts.Find("files__write_file"); w == nil || w.ReadOnly {
		t.Errorf("write_file: %+v", w)
	}
}

func TestOfficeOverStreamableHTTP(t *testing.T) {
	office := mcptest.NewOffice(t, mcptest.RequireHeader("X-Api-Key", "k1"))
	// A user's server on loopback is refused unless the host is allowed.
	c := mcp.NewClient(nil, mcp.Options{Timeout: 5 * time.Second})
	ts := c.Tools(context.Background(), local, []mcp.Server{office.Server("office")})
	if len(ts.Tools) != 0 || len(ts.Problems) != 1 || !strings.Contains(ts.Problems[0].Error, "SOVA_MCP_ALLOW_HOSTS") {
		t.Fatalf("loopback user server: tools %d, problems %v", len(ts.Tools), ts.Problems)
	}
	c = mcp.NewClient(nil, mcp.Options{Timeout: 5 * time.Second, AllowHosts: []string{"127.0.0.1"}})
	ts = c.Tools(context.Background(), local, []mcp.Server{office.Server("office")})
	defer ts.Close()
	if len(ts.Problems) > 0 {
		t.Fatal(ts.Problems)
	}
	readOnly := map[string]bool{}
	for _, x := range ts.Tools {
		readOnly[x.Name()] = x.ReadOnly
	}
	want := map[string]bool{"office__list_emails": true, "office__read_email": true, "office__send_email": false, "office__list_events": true, "office__create_event": false}
	for n, ro := range want {
		if got, ok := readOnly[n]; !ok || got != ro {
			t.Errorf("%s: listed %v, read-only %v; want %v", n, ok, got, ro)
		}
	}
	text, err := call(t, ts, "office__list_emails", map[string]string{"from": "anna"})
	if err != nil || strings.Count(text, "anna@") != 3 {
		t.Fatalf("list_emails = %q, %v", text, err)
	}
	// A result the server marks as an error is the call's error.
	if _, err := call(t, ts, "office__read_email", map[string]string{"id": "nope"}); err == nil || !strings.Contains(err.Error(), "no letter nope") {
		t.Errorf("error result: %v", err)
	}
	// Without the header the server refuses: a problem, not a panic.
	bare := office.Server("bare")
	bare.Headers = nil
	ts2 := c.Tools(context.Background(), local, []mcp.Server{bare})
	if len(ts2.Problems) != 1 {
		t.Errorf("no header: problems %v", ts2.Problems)
	}
}

func TestSlowAndGoneServers(t *testing.T) {
	office := mcptest.NewOffice(t)
	c := mcp.NewClient([]mcp.Server{office.Server("office")}, mcp.Options{Timeout: 300 * time.Millisecond})
	defer c.Close()
	ts := c.Tools(context.Background(), local, nil)
	if len(ts.Problems) > 0 {
		t.Fatal(ts.Problems)
	}
	office.SetDelay(2 * time.Second)
	start := time.Now()
	_, err := call(t, ts, "office__list_events", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "SOVA_MCP_TIMEOUT") || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("slow call: %v after %s", err, time.Since(start))
	}
	office.SetDelay(0)
	office.Close()
	if _, err := call(t, ts, "office__list_events", map[string]any{}); err == nil {
		t.Fatal("a call to a stopped server succeeded")
	}
	// The next run reports the server as a problem and goes on.
	ts = c.Tools(context.Background(), local, nil)
	if len(ts.Tools) != 0 || len(ts.Problems) != 1 {
		t.Fatalf("gone server: %d tools, problems %v", len(ts.Tools), ts.Problems)
	}
}

// Who may use an administrator's server: administrators and the local
// user always; accounts only where "allow" names them or their role;
// anonymous visitors never, whatever "allow" says.
func TestPermits(t *testing.T) {
	granted := mcp.Server{Name: "mail", URL: "https://mail.example/mcp", Allow: &mcp.Allow{Users: []string{"anna"}, Roles: []string{sova.RolePro}}}
	closed := mcp.Server{Name: "mail", URL: "https://mail.example/mcp"}
	tests := []struct {
		name        string
		u           sova.User
		closed, grd bool
	}{
		{"admin", sova.User{ID: "a1", Name: "root", Role: sova.RoleAdmin}, true, true},
		{"local user", sova.User{ID: sova.LocalUserID}, true, true},
		{"free account", sova.User{ID: "f1", Name: "boris", Role: sova.RoleFree}, false, false},
		{"named free account", sova.User{ID: "f2", Name: "anna", Role: sova.RoleFree}, false, true},
		{"named by id", sova.User{ID: "anna", Name: "other", Role: sova.RoleFree}, false, true},
		{"pro account", sova.User{ID: "p1", Name: "vera", Role: sova.RolePro}, false, true},
		{"anonymous named like a granted user", sova.User{ID: "anna", Name: "anna", Role: sova.RoleAnonymous}, false, false},
		{"no user", sova.User{}, false, false},
		{"an account named local", sova.User{ID: sova.LocalUserID, Role: sova.RoleFree}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := closed.Permits(tt.u); got != tt.closed {
				t.Errorf("without allow: %v, want %v", got, tt.closed)
			}
			if got := granted.Permits(tt.u); got != tt.grd {
				t.Errorf("with allow: %v, want %v", got, tt.grd)
			}
		})
	}
}

func TestParseConfigAllow(t *testing.T) {
	got, err := mcp.ParseConfig([]byte(`{"mcpServers":{"mail":{"url":"https://m/mcp","allow":{"users":["anna"],"roles":["pro"]}}}}`))
	if err != nil || len(got) != 1 || got[0].Allow == nil || got[0].Allow.Users[0] != "anna" || got[0].Allow.Roles[0] != "pro" {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, bad := range []string{
		`{"mcpServers":{"mail":{"url":"https://m/mcp","allow":{"roles":["anonymous"]}}}}`,
		`{"mcpServers":{"mail":{"url":"https://m/mcp","allow":{"roles":["everyone"]}}}}`,
		`{"mcpServers":{"mail":{"url":"https://m/mcp","allow":{"users":[" "]}}}}`,
	} {
		if _, err := mcp.ParseConfig([]byte(bad)); !errors.Is(err, mcp.ErrInvalid) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	// A person's own server cannot be granted to others.
	own := mcp.Server{Name: "mine", URL: "https://m/mcp", Allow: &mcp.Allow{Roles: []string{"free"}}}
	if err := own.ValidateUser(); !errors.Is(err, mcp.ErrInvalid) {
		t.Errorf("own server with allow: %v", err)
	}
}

// A run gets the administrator's servers its user may use, and its own;
// an anonymous visitor gets none, not even servers passed as its own.
func TestToolsOfferedByAccount(t *testing.T) {
	office := mcptest.NewOffice(t)
	open := office.Server("team")
	open.Allow = &mcp.Allow{Roles: []string{sova.RolePro}}
	c := mcp.NewClient([]mcp.Server{office.Server("office"), open}, mcp.Options{Timeout: 5 * time.Second, AllowHosts: []string{"127.0.0.1"}})
	defer c.Close()
	servers := func(u sova.User, own ...mcp.Server) []string {
		ts := c.Tools(context.Background(), u, own)
		defer ts.Close()
		if len(ts.Problems) > 0 {
			t.Fatalf("%+v: problems %v", u, ts.Problems)
		}
		seen := map[string]bool{}
		var out []string
		for _, x := range ts.Tools {
			if !seen[x.Server] {
				seen[x.Server] = true
				out = append(out, x.Server)
			}
		}
		return out
	}
	for _, tt := range []struct {
		u    sova.User
		own  []mcp.Server
		want string
	}{
		{sova.User{ID: "a", Role: sova.RoleAdmin}, nil, "office,team"},
		{local, nil, "office,team"},
		{sova.User{ID: "p", Role: sova.RolePro}, nil, "team"},
		{sova.User{ID: "f", Role: sova.RoleFree}, nil, ""},
		{sova.User{ID: "f", Role: sova.RoleFree}, []mcp.Server{office.Server("mine")}, "mine"},
		{sova.User{ID: "anon-1", Role: sova.RoleAnonymous}, []mcp.Server{office.Server("mine")}, ""},
	} {
		if got := strings.Join(servers(tt.u, tt.own...), ","); got != tt.want {
			t.Errorf("%+v: servers %q, want %q", tt.u, got, tt.want)
		}
	}
	if got := c.Permitted(sova.User{ID: "f", Role: sova.RoleFree}); len(got) != 0 {
		t.Errorf("permitted to a free account: %v", got)
	}
}

// A server that forgets its sessions mid-run (it restarted) answers 404;
// the client opens a new session and calls once more, for the admin's
// shared sessions and a user's own alike, whether the 404 is plain text
// (the Go SDK) or carries a JSON-RPC error (the Python SDK). The
// server's other tools go on with the new session, and the next run's
// listing reopens a forgotten shared session too.
func TestForgottenSessionIsReopened(t *testing.T) {
	for _, jsonBody := range []bool{false, true} {
		for _, own := range []bool{false, true} {
			t.Run(fmt.Sprintf("json=%v/own=%v", jsonBody, own), func(t *testing.T) {
				office := mcptest.NewOffice(t)
				var c *mcp.Client
				var ts *mcp.Toolset
				if own {
					c = mcp.NewClient(nil, mcp.Options{Timeout: 5 * time.Second, AllowHosts: []string{"127.0.0.1"}})
					ts = c.Tools(context.Background(), local, []mcp.Server{office.Server("office")})
				} else {
					c = mcp.NewClient([]mcp.Server{office.Server("office")}, mcp.Options{Timeout: 5 * time.Second})
					ts = c.Tools(context.Background(), local, nil)
				}
				defer c.Close()
				defer ts.Close()
				if len(ts.Problems) > 0 {
					t.Fatal(ts.Problems)
				}
				if _, err := call(t, ts, "office__list_emails", map[string]string{}); err != nil {
					t.Fatal(err)
				}
				sessions := office.Sessions()
				office.Forget(jsonBody)
				text, err := call(t, ts, "office__send_email", map[string]string{"to": "anna@example.com", "subject": "Восток", "body": "Да"})
				if err != nil {
					t.Fatalf("the call after the server forgot: %v", err)
				}
				if len(office.Sent()) != 1 || office.Sessions() != sessions+1 {
					t.Fatalf("sent %d (%q), sessions %d → %d", len(office.Sent()), text, sessions, office.Sessions())
				}
				// The server's other tools use the new session.
				if _, err := call(t, ts, "office__list_events", map[string]string{}); err != nil || office.Sessions() != sessions+1 {
					t.Fatalf("another tool: %v, sessions %d", err, office.Sessions())
				}
				if own {
					return
				}
				// The next run lists with a new session after another restart.
				office.Forget(jsonBody)
				ts2 := c.Tools(context.Background(), local, nil)
				defer ts2.Close()
				if len(ts2.Problems) > 0 || ts2.Find("office__list_emails") == nil {
					t.Fatalf("next run: problems %v", ts2.Problems)
				}
				if _, err := call(t, ts2, "office__list_emails", map[string]string{}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// A server that forgets the new session as well gets no third try: the
// call fails with an error the model reads, and nothing ran twice.
func TestForgottenSessionRetriedOnce(t *testing.T) {
	office := mcptest.NewOffice(t)
	c := mcp.NewClient([]mcp.Server{office.Server("office")}, mcp.Options{Timeout: 5 * time.Second})
	defer c.Close()
	ts := c.Tools(context.Background(), local, nil)
	defer ts.Close()
	if _, err := call(t, ts, "office__list_emails", map[string]string{}); err != nil {
		t.Fatal(err)
	}
	calls := office.Calls()
	office.Amnesia()
	_, err := call(t, ts, "office__send_email", map[string]string{"to": "anna@example.com", "subject": "x", "body": "y"})
	if err == nil || !strings.Contains(err.Error(), "office") {
		t.Fatalf("err = %v", err)
	}
	if office.Calls() != calls || len(office.Sent()) != 0 {
		t.Fatalf("the tool ran %d times", office.Calls()-calls)
	}
	t.Log(err)
}
