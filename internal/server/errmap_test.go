package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// serverStore is the store the server reads.
type serverStore interface {
	sova.ChatStore
	sova.RunStore
	sova.AgentStore
	GetDocument(ctx context.Context, userID, spaceID, docID string) (*sova.Document, error)
	Ping(ctx context.Context) error
}

// errLeaky is a store failure whose text has everything a response must
// not: SQL, an address, a driver's words.
var errLeaky = errors.New(`pq: SELECT id, title FROM chats WHERE user_id = $1: dial tcp 10.20.30.40:5432: connect: connection refused`)

// failingStore fails every read the server makes.
type failingStore struct{ serverStore }

func (failingStore) GetChat(context.Context, string, string) (*sova.Chat, error) {
	return nil, errLeaky
}
func (failingStore) ListChats(context.Context, string, int, int) ([]sova.Chat, error) {
	return nil, errLeaky
}
func (failingStore) ListMessages(context.Context, string, string) ([]sova.Message, error) {
	return nil, errLeaky
}
func (failingStore) GetRun(context.Context, string, string) (*sova.Run, error) { return nil, errLeaky }
func (failingStore) LatestRun(context.Context, string, string) (*sova.Run, error) {
	return nil, errLeaky
}
func (failingStore) ListAgents(context.Context, string, int, int) ([]sova.Agent, error) {
	return nil, errLeaky
}
func (failingStore) GetAgent(context.Context, string, string) (*sova.Agent, error) {
	return nil, errLeaky
}
func (failingStore) RunFiles(context.Context, string) ([]sova.RunFile, error) { return nil, errLeaky }
func (failingStore) Ping(context.Context) error                               { return errLeaky }

// leakRE matches what a response body must never carry: an address with
// its port, SQL, the words of a driver, of Redis or of Go.
var leakRE = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}:\d{1,5}\b|\[[0-9a-fA-F:.]+\]:\d{1,5}\b` +
	`|\b(SELECT|INSERT|UPDATE|DELETE)\b[^"]*\b(FROM|WHERE|INTO|SET)\b` +
	`|dial tcp|\bsql: |\bpq: |\bredis: |sqlite|SQLSTATE|json: cannot|Go struct|Go value|strconv\.|runtime error|goroutine \d` +
	`|context canceled|context deadline exceeded|\bEOF\b|i/o timeout|mime: |multipart: ` +
	`|\b(Get|Post|Put|Propfind|Head|Delete) \\?"https?://|ReadDir /`)

// leaks names what a response body carries that it must not, or "".
func leaks(body string) string {
	for _, bad := range []string{"10.20.30.40", "10.9.8.7", "5432", "6379"} {
		if strings.Contains(body, bad) {
			return bad
		}
	}
	return leakRE.FindString(body)
}

// Store and Redis failures reach every route family the server reads
// the store for: no answer carries SQL, an address or a Go error's text;
// a 500 carries an error id instead.
func TestFailuresLeakNothing(t *testing.T) {
	e := newEnv(t, nil)
	srv := httptest.NewServer(server.New(server.Options{Service: e.app.Service, Store: failingStore{e.app.Store}, Auth: testAuth(e.app),
		Version: "test", Redis: downRedis{}}))
	defer srv.Close()
	for _, path := range []string{"/healthz", "/readyz", "/api/chats", "/api/chats/c1", "/api/chats/c1/export.md", "/api/chats/c1/stream",
		"/api/runs/r1", "/api/runs/r1/stream", "/api/runs/r1/files", "/api/runs/r1/report.md", "/agents", "/agents/a1/state"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if bad := leaks(body); bad != "" {
			t.Errorf("GET %s: %d carries %q: %s", path, resp.StatusCode, bad, body)
		}
		if resp.StatusCode == http.StatusInternalServerError && !strings.Contains(body, "error id") {
			t.Errorf("GET %s: a 500 without an error id: %s", path, body)
		}
		if resp.StatusCode < 400 {
			t.Errorf("GET %s: %d with the store down", path, resp.StatusCode)
		}
	}
}

// A question posted with another person's chat id is a 404, as for an
// id that does not exist: not a 500 with SQL text that tells it exists.
func TestForeignChatIDIsNotFound(t *testing.T) {
	engines := map[string]map[string]string{"sqlite": nil}
	if os.Getenv("SOVA_TEST_DATABASE_URL") != "" {
		engines["postgres"] = map[string]string{"SOVA_DATABASE_URL": storetest.PostgresDSN(t)}
	}
	for name, extra := range engines {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, extra)
			ask := `{"id":"annchat","group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`
			if resp, body := e.as(t, "ann", "POST", "/api/search", ask); resp.StatusCode != 200 {
				t.Fatalf("ann's question: %d %s", resp.StatusCode, body)
			}
			resp, body := e.as(t, "bob", "POST", "/api/search", ask)
			if resp.StatusCode != http.StatusNotFound || leaks(body) != "" || strings.Contains(body, "annchat\"") && strings.Contains(body, "exists") {
				t.Errorf("bob posts to ann's chat: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// NUL characters and invalid UTF-8 are refused at the edge, with a 400,
// before anything is stored: no empty chat is left behind.
func TestBadTextRefusedAtTheEdge(t *testing.T) {
	engines := map[string]map[string]string{"sqlite": nil}
	if os.Getenv("SOVA_TEST_DATABASE_URL") != "" {
		engines["postgres"] = map[string]string{"SOVA_DATABASE_URL": storetest.PostgresDSN(t)}
	}
	for name, extra := range engines {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, extra)
			for _, tc := range []struct{ method, path, body string }{
				{"POST", "/api/search", `{"id":"c-nul","group":"chat","messages":[{"role":"user","content":"a\u0000b"}]}`},
				{"POST", "/api/search", "{\"id\":\"c-raw\",\"group\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"a\x00b\"}]}"},
				{"POST", "/api/search", "{\"id\":\"c-utf\",\"group\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xff\xfeb\"}]}"},
				{"PATCH", "/api/chats/c1", `{"title":"x\u0000"}`},
				{"POST", "/api/memories", `{"content":"remember \u0000 this"}`},
				{"PUT", "/api/me", `{"custom_instructions":"be brief\u0000"}`},
				{"POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"\u0000"}]}`},
				{"GET", "/api/chats?q=%00", ""},
				{"GET", "/api/chats/%00", ""},
				{"GET", "/api/chats?q=%ff", ""},
				// One of every other route family: runs, spaces, the
				// assistant, MCP and connectors, admin, share links, voice.
				{"GET", "/api/runs/%00", ""},
				{"GET", "/agents/%ff/state", ""},
				{"POST", "/api/spaces", `{"name":"notes\u0000"}`},
				{"GET", "/api/spaces/s1/search?q=%00", ""},
				{"POST", "/api/tasks/execute", `{"task":"compare \u0000"}`},
				{"POST", "/api/mcp/servers", "{\"name\":\"m\xc3\",\"url\":\"https://mcp.example.com/\"}"},
				{"POST", "/api/spaces/s1/connector", `{"kind":"webdav","location":"https://cloud.example.com/\u0000"}`},
				{"GET", "/api/admin/usage?user=%ff", ""},
				{"POST", "/api/chats/%00/shares", ""},
				{"GET", "/api/shared/%ff", ""},
				{"POST", "/api/audio/speech", `{"text":"hello\u0000"}`},
				{"PUT", "/api/me", "{\"language\":\"\xff\"}"},
			} {
				resp, body := e.as(t, "", tc.method, tc.path, tc.body)
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "invalid_text") {
					t.Errorf("%s %s %q: %d %s", tc.method, tc.path, tc.body, resp.StatusCode, body)
				}
			}
			// An escaped backslash before u0000 is text, not a NUL.
			resp, body := e.as(t, "", "POST", "/api/search", `{"id":"c-ok","group":"chat","messages":[{"role":"user","content":"a path C:\\u0000dir"}]}`)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("escaped backslash: %d %s", resp.StatusCode, body)
			}
			chats, err := e.app.Store.ListChats(context.Background(), e.user, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chats {
				if c.ID != "c-ok" {
					t.Errorf("a refused request left chat %q behind", c.ID)
				}
			}
		})
	}
}
