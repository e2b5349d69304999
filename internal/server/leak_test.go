package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// route is one request of a route family; {chat}, {run}, {space} and
// {memory} stand for what the test made before the failures began.
type route struct {
	family, method, path, body string
	role                       string // the user's role: free unless set
	as                         string // who asks: ann unless set
	multipart                  string // the form field a file is sent in, for an upload
}

// everyRoute holds requests of every route family the server has.
var everyRoute = []route{
	{family: "health", method: "GET", path: "/healthz"},
	{family: "health", method: "GET", path: "/readyz"},
	{family: "chats", method: "GET", path: "/api/chats"},
	{family: "chats", method: "GET", path: "/api/chats?q=capital"},
	{family: "chats", method: "GET", path: "/api/chats/{chat}"},
	{family: "chats", method: "PATCH", path: "/api/chats/{chat}", body: `{"title":"renamed"}`},
	{family: "chats", method: "GET", path: "/api/chats/{chat}/export.md"},
	{family: "chats", method: "GET", path: "/api/chats/{chat}/stream"},
	{family: "chats", method: "POST", path: "/api/search", body: `{"group":"chat","messages":[{"role":"user","content":"And of Canada?"}]}`},
	{family: "chats", method: "DELETE", path: "/api/chats/no-such-chat"},
	{family: "runs", method: "GET", path: "/api/runs/{run}"},
	{family: "runs", method: "GET", path: "/api/runs/{run}/stream"},
	{family: "runs", method: "GET", path: "/api/runs/{run}/files"},
	{family: "runs", method: "GET", path: "/api/runs/{run}/files.zip"},
	{family: "runs", method: "GET", path: "/api/runs/{run}/report.md"},
	{family: "runs", method: "POST", path: "/api/runs/{run}/cancel"},
	{family: "runs", method: "POST", path: "/api/runs/{run}/restart"},
	{family: "runs", method: "GET", path: "/agents"},
	{family: "runs", method: "GET", path: "/agents/{run}/state"},
	{family: "spaces", method: "GET", path: "/api/spaces"},
	{family: "spaces", method: "POST", path: "/api/spaces", body: `{"name":"second"}`},
	{family: "spaces", method: "GET", path: "/api/spaces/{space}"},
	{family: "spaces", method: "PATCH", path: "/api/spaces/{space}", body: `{"description":"notes"}`},
	{family: "spaces", method: "GET", path: "/api/spaces/{space}/documents"},
	{family: "spaces", method: "POST", path: "/api/spaces/{space}/documents", multipart: "file"},
	{family: "spaces", method: "GET", path: "/api/spaces/{space}/search?q=budget"},
	{family: "spaces", method: "GET", path: "/api/passages?url=sova://spaces/{space}/documents/d1%23chunk-1"},
	{family: "memories", method: "GET", path: "/api/memories"},
	{family: "memories", method: "GET", path: "/api/memories?q=code"},
	{family: "memories", method: "POST", path: "/api/memories", body: `{"content":"the safe code is 4711"}`},
	{family: "memories", method: "DELETE", path: "/api/memories/{memory}"},
	{family: "settings", method: "GET", path: "/api/me"},
	{family: "settings", method: "PUT", path: "/api/me", body: `{"time_zone":"Europe/Berlin","model":"other-model"}`},
	{family: "settings", method: "GET", path: "/api/models"},
	{family: "assistant", method: "POST", path: "/api/supervisor", body: `{"query":"plan a trip"}`},
	{family: "assistant", method: "POST", path: "/api/tasks/execute", body: `{"task":"compare two laptops"}`},
	{family: "assistant", method: "GET", path: "/api/tasks/{run}"},
	{family: "mcp", method: "GET", path: "/api/mcp/servers"},
	{family: "mcp", method: "POST", path: "/api/mcp/servers", body: `{"name":"mine","url":"https://mcp.example.com/mcp"}`},
	{family: "mcp", method: "DELETE", path: "/api/mcp/servers/mine"},
	{family: "connectors", method: "GET", path: "/api/connectors"},
	{family: "connectors", method: "GET", path: "/api/spaces/{space}/connector"},
	{family: "connectors", method: "POST", path: "/api/spaces/{space}/connector", body: `{"kind":"webdav","location":"http://{closed}/dav/"}`},
	{family: "connectors", method: "POST", path: "/api/spaces/{space}/connector/sync"},
	{family: "v1", method: "GET", path: "/v1/models"},
	{family: "v1", method: "POST", path: "/v1/chat/completions", body: `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`},
	{family: "v1", method: "POST", path: "/v1/chat/completions", body: `{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	{family: "admin", method: "GET", path: "/api/admin/usage?days=3", role: sova.RoleAdmin},
	{family: "admin", method: "GET", path: "/api/admin/usage?user=bob", role: sova.RoleAdmin},
	{family: "shares", method: "POST", path: "/api/chats/{chat}/shares"},
	{family: "shares", method: "GET", path: "/api/chats/{chat}/shares"},
	{family: "shares", method: "GET", path: "/api/shared/not-a-secret"},
	{family: "voice", method: "POST", path: "/api/audio/speech", body: `{"text":"hello"}`},
	{family: "voice", method: "POST", path: "/api/audio/transcriptions", multipart: "file"},
}

// closedAddr is an address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// Store, Redis and network failures reach every route family: no answer,
// and no event of a stream, carries an address, SQL, a driver's or Go's
// error text; every 500 carries an error id; a cancelled request is
// never a 5xx.
func TestNoRouteFamilyLeaksInternals(t *testing.T) {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	// The model endpoint (and the voice service on it) does not answer.
	vars := sovatest.Env(sovatest.NewModel(t), sx, t.TempDir())
	vars["SOVA_LLM_BASE_URL"] = "http://" + closedAddr(t) + "/v1"
	vars["SOVA_LLM_MAX_RETRIES"] = "0"
	vars["SOVA_CONNECTORS_ALLOW_PRIVATE"] = "true" // the share is on a closed port of this machine
	vars["SOVA_STT_MODEL"], vars["SOVA_TTS_MODEL"], vars["SOVA_SHARE_LINKS"] = "stt", "tts", "true"
	var proxy *tcpProxy
	if redisURL := os.Getenv("SOVA_TEST_REDIS_URL"); redisURL != "" {
		target := strings.TrimPrefix(redisURL, "redis://")
		proxy = newTCPProxy(t, target[:strings.IndexAny(target+"/", "/")])
		vars["SOVA_REDIS_URL"] = "redis://" + proxy.addr() + "/0"
		vars["SOVA_LIMIT_FREE_MESSAGES"] = "1000"
	}
	cfg, err := config.FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	// Whoever asks is ann, with the role the request names: the test
	// reaches the handlers whatever the store does. Her id is this run's
	// own, so that her messages count in no other test's limits on the
	// shared Redis.
	annID := "ann-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	who := auth.Func(func(r *http.Request) (sova.User, error) {
		role := r.Header.Get("X-Test-Role")
		if role == "" {
			role = sova.RoleFree
		}
		if r.Header.Get("X-Test-As") == "bob" {
			return sova.User{ID: annID + "-bob", Name: "bob", Role: role}, nil
		}
		return sova.User{ID: annID, Name: "ann", Role: role}, nil
	})
	h := server.New(server.Options{Service: a.Service, Store: a.Store, Auth: who, Version: "test",
		Spaces: a.Spaces, MaxUploadBytes: cfg.SpacesMaxUploadBytes, MaxFileBytes: cfg.SpacesMaxFileBytes,
		Memory: a.Memory, Connectors: a.Connectors,
		Assistant: a.Assistant, MCPServers: a.Store, MCPAdmin: a.MCP.Servers(), MCPCheckURL: a.MCP.CheckUserURL,
		Voice: a.Voice, Limits: a.Limits, Settings: a.Store, Models: a.Model, Usage: a.Store,
		Redis: a.Redis(), Shares: a.Store})
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Timeout: 2 * time.Minute}

	newRequest := func(ctx context.Context, rt route, ids map[string]string) *http.Request {
		t.Helper()
		path, text := rt.path, rt.body
		for k, v := range ids {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
			text = strings.ReplaceAll(text, "{"+k+"}", v)
		}
		var body io.Reader
		ctype := ""
		switch {
		case rt.multipart != "":
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, _ := mw.CreateFormFile(rt.multipart, "notes.md")
			_, _ = io.WriteString(fw, "# Budget\n\nThe budget for 2025 is 4 million.\n")
			_ = mw.Close()
			body, ctype = &buf, mw.FormDataContentType()
		case rt.body != "":
			body, ctype = strings.NewReader(text), "application/json"
		}
		req, err := http.NewRequestWithContext(ctx, rt.method, srv.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if rt.role != "" {
			req.Header.Set("X-Test-Role", rt.role)
		}
		return req
	}
	do := func(rt route, ids map[string]string) (*http.Response, string) {
		t.Helper()
		req := newRequest(context.Background(), rt, ids)
		if rt.as != "" {
			req.Header.Set("X-Test-As", rt.as)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", rt.method, rt.path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	// What the routes read: a chat with a run (failed: the model is
	// down), a space and a memory.
	ids := map[string]string{"closed": closedAddr(t)}
	resp, body := do(route{method: "POST", path: "/api/search", body: `{"id":"c1","group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`}, ids)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the first question: %d %s", resp.StatusCode, body)
	}
	ids["chat"], ids["run"] = "c1", resp.Header.Get("X-Run-ID")
	resp, body = do(route{method: "POST", path: "/api/spaces", body: `{"name":"notes"}`}, ids)
	var sp sova.Space
	if resp.StatusCode != http.StatusCreated || json.Unmarshal([]byte(body), &sp) != nil {
		t.Fatalf("the space: %d %s", resp.StatusCode, body)
	}
	ids["space"] = sp.ID
	resp, body = do(route{method: "POST", path: "/api/memories", body: `{"content":"ann likes tea"}`}, ids)
	var mem sova.Memory
	if resp.StatusCode != http.StatusCreated || json.Unmarshal([]byte(body), &mem) != nil {
		t.Fatalf("the memory: %d %s", resp.StatusCode, body)
	}
	ids["memory"] = mem.ID
	// The space is connected to a share that stopped answering: its last
	// sync's error, as the sync stored it, names the library's calls and
	// the share's address.
	conn := &sova.Connector{UserID: annID, SpaceID: sp.ID, Kind: sova.ConnectorWebDAV, Location: "http://" + ids["closed"] + "/dav/"}
	if err := a.Store.PutConnector(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	if err := a.Store.SetConnectorSynced(context.Background(), conn.ID, time.Now(), sova.SyncResult{},
		`listing / on the WebDAV share: ReadDir /: Propfind "http://`+ids["closed"]+`/dav/": dial tcp `+ids["closed"]+`: connect: connection refused`); err != nil {
		t.Fatal(err)
	}

	check := func(phase string) {
		t.Helper()
		families := map[string]bool{}
		for _, rt := range everyRoute {
			resp, body := do(rt, ids)
			families[rt.family] = true
			// The share's address is the person's own, shown as given.
			shown := strings.ReplaceAll(body, `"location":"http://`+ids["closed"]+`/dav/"`, `"location":"…"`)
			if bad := leaks(shown); bad != "" {
				t.Errorf("%s: %s %s: %d carries %q: %s", phase, rt.method, rt.path, resp.StatusCode, bad, body)
			}
			if resp.StatusCode == http.StatusInternalServerError && !strings.Contains(body, "error id") {
				t.Errorf("%s: %s %s: a 500 without an error id: %s", phase, rt.method, rt.path, body)
			}
		}
		if len(families) < 13 {
			t.Errorf("%s: only %d route families", phase, len(families))
		}
	}
	// What is ann's is a 404 for bob, on every route that names it, as
	// for an id that does not exist.
	for _, rt := range everyRoute {
		if !strings.Contains(rt.path, "{") {
			continue
		}
		rt.as = "bob"
		resp, body := do(rt, ids)
		if resp.StatusCode != http.StatusNotFound || leaks(body) != "" || strings.Contains(body, "tea") || strings.Contains(body, "Australia") {
			t.Errorf("bob: %s %s of ann's: %d %s", rt.method, rt.path, resp.StatusCode, body)
		}
	}
	if resp, body := do(route{method: "GET", path: "/api/memories"}, ids); !strings.Contains(body, "ann likes tea") {
		t.Errorf("ann's memory after bob's attempts: %d %s", resp.StatusCode, body)
	}

	check("model endpoint down")

	// A request whose client went away is never a server failure.
	for _, rt := range everyRoute {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec := httptest.NewRecorder()
		req := newRequest(ctx, rt, ids)
		req.RequestURI, req.Host = "", "127.0.0.1"
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || leaks(rec.Body.String()) != "" {
			t.Errorf("cancelled %s %s: %d %s", rt.method, rt.path, rec.Code, rec.Body.String())
		}
	}

	if proxy != nil {
		proxy.stop()
		check("Redis down")
	}

	// The store goes away under the server.
	if err := a.Store.Close(); err != nil {
		t.Fatal(err)
	}
	check("store closed")
}
