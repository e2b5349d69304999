package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mcp/mcptest"
)

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
	ts := c.Tools(context.Background(), nil)
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
	ts2 := c.Tools(context.Background(), nil)
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
	ts := c.Tools(context.Background(), nil)
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
	ts := c.Tools(context.Background(), nil)
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
	ts := c.Tools(context.Background(), []mcp.Server{office.Server("office")})
	if len(ts.Tools) != 0 || len(ts.Problems) != 1 || !strings.Contains(ts.Problems[0].Error, "SOVA_MCP_ALLOW_HOSTS") {
		t.Fatalf("loopback user server: tools %d, problems %v", len(ts.Tools), ts.Problems)
	}
	c = mcp.NewClient(nil, mcp.Options{Timeout: 5 * time.Second, AllowHosts: []string{"127.0.0.1"}})
	ts = c.Tools(context.Background(), []mcp.Server{office.Server("office")})
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
	ts2 := c.Tools(context.Background(), []mcp.Server{bare})
	if len(ts2.Problems) != 1 {
		t.Errorf("no header: problems %v", ts2.Problems)
	}
}

func TestSlowAndGoneServers(t *testing.T) {
	office := mcptest.NewOffice(t)
	c := mcp.NewClient([]mcp.Server{office.Server("office")}, mcp.Options{Timeout: 300 * time.Millisecond})
	defer c.Close()
	ts := c.Tools(context.Background(), nil)
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
	ts = c.Tools(context.Background(), nil)
	if len(ts.Tools) != 0 || len(ts.Problems) != 1 {
		t.Fatalf("gone server: %d tools, problems %v", len(ts.Tools), ts.Problems)
	}
}
