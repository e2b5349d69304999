package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/server"
)

// A person's MCP server is checked when it is added: an address the
// egress guard refuses is a 400 naming the rule and the setting, and a
// name that resolves to one is refused without saying what it resolved to.
func TestMCPServerAddressCheckedWhenAdded(t *testing.T) {
	e := newEnv(t, nil)
	mcpClient := e.app.MCP
	if mcpClient == nil || e.app.Assistant == nil {
		t.Fatal("the app has no MCP client or assistant")
	}
	srv := httptest.NewServer(server.New(server.Options{Service: e.app.Service, Store: e.app.Store, Auth: testAuth(e.app), Version: "test", Assistant: e.app.Assistant,
		MCPServers: e.app.Store, MCPAdmin: mcpClient.Servers(), MCPCheckURL: mcpClient.CheckUserURL}))
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/api/mcp/servers", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String()
	}
	for _, u := range []string{"http://169.254.169.254/mcp", "http://100.64.0.1/mcp", "http://[64:ff9b::a00:1]/mcp", "http://0x7f.1/mcp", "http://localhost:9/mcp"} {
		code, body := post(`{"name":"probe","url":"` + u + `"}`)
		if code != http.StatusBadRequest || !strings.Contains(body, "mcp_server_address_refused") {
			t.Errorf("%s: %d %s", u, code, body)
		}
		if strings.HasPrefix(u, "http://localhost") && (strings.Contains(body, "127.0.0.1") || strings.Contains(body, "::1")) {
			t.Errorf("%s: the refusal names the resolved address: %s", u, body)
		}
	}
	if code, body := post(`{"name":"mail","url":"https://mail.example/mcp"}`); code != http.StatusCreated {
		t.Errorf("a public server: %d %s", code, body)
	}
}
