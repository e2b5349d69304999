package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/webdav"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/memory/supermemorytest"
	"github.com/sova-ai/sova/internal/spaces"
)

// The memory group end to end: "Remember that …" is saved with
// add_memory, a later question finds it with search_memories, and the
// answer comes from it; with SUPERMEMORY_API_KEY the memories live in
// Supermemory (a local fake speaking its v3 API).
func TestGroupMemory(t *testing.T) {
	for _, backend := range []string{"built-in", "supermemory"} {
		t.Run(backend, func(t *testing.T) {
			extra := map[string]string{}
			var fake *supermemorytest.Server
			if backend == "supermemory" {
				fake = supermemorytest.New(t, "sm_test_key")
				extra["SUPERMEMORY_API_KEY"], extra["SOVA_SUPERMEMORY_URL"] = "sm_test_key", fake.URL
			}
			e := newGroupEnv(t, extra)
			s := e.ask(t, "memory", "Remember that my favourite tea is sencha from Shizuoka")
			in, out, errText := s.tool(t, "add_memory")
			if errText != "" || at(in, "memory") != "my favourite tea is sencha from Shizuoka" || at(out, "success") != true ||
				at(out, "memory", "content") != "my favourite tea is sencha from Shizuoka" {
				t.Fatalf("add_memory: in %v out %v err %q", in, out, errText)
			}
			if s.text != "Saved: my favourite tea is sencha from Shizuoka" {
				t.Errorf("answer %q", s.text)
			}
			list, err := e.app.Memory.List(t.Context(), e.user, 0)
			if err != nil || len(list) != 1 {
				t.Fatalf("stored memories %+v %v", list, err)
			}
			if fake != nil && len(fake.Contents()) != 1 {
				t.Errorf("supermemory holds %v", fake.Contents())
			}

			s = e.ask(t, "memory", "Which tea is my favourite?")
			in, out, errText = s.tool(t, "search_memories")
			if errText != "" || at(in, "query") != "Which tea is my favourite?" || at(out, "provider") != backend ||
				at(out, "memories", 0, "content") != "my favourite tea is sencha from Shizuoka" || at(out, "memories", 0, "id") != list[0].ID {
				t.Fatalf("search_memories: in %v out %v err %q", in, out, errText)
			}
			if s.text != "From your memories: my favourite tea is sencha from Shizuoka" {
				t.Errorf("answer %q", s.text)
			}
			// Another person asks the same: nothing of the first's.
			s = e.askAs(t, "someone-else", "memory", "Which tea is my favourite?")
			if _, out, _ := s.tool(t, "search_memories"); at(out, "memories", 0) != nil || s.text != "I have no memory of that." {
				t.Errorf("another user found %v, answer %q", out, s.text)
			}
		})
	}
}

// The connectors group end to end: a space kept in sync with a folder
// is searched by connectors_search, and the answer cites its passages;
// a space that is not connected is not searched.
func TestGroupConnectors(t *testing.T) {
	e := newGroupEnv(t, nil)
	ctx := t.Context()
	dir := t.TempDir()
	writeFile(t, dir, "orion/budget.md", "# Orion\n\n## Budget\n\nThe Orion budget is two million euros, approved in May.\n")
	writeFile(t, dir, "orion/team.md", "# Team\n\nThe Orion budget is managed by Lena.\n")
	connected, err := e.app.Spaces.CreateSpace(ctx, e.user, "Cloud", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Connectors.Connect(ctx, sova.User{ID: e.user, Role: sova.RoleAdmin}, connected.ID,
		connectors.Request{Kind: sova.ConnectorFolder, Location: dir}); err != nil {
		t.Fatal(err)
	}
	c, err := e.app.Connectors.SyncNow(ctx, e.user, connected.ID)
	if err != nil || c.LastResult.Added != 2 {
		t.Fatalf("sync: %+v %v", c, err)
	}
	other, _ := e.app.Spaces.CreateSpace(ctx, e.user, "Uploads", "")
	if _, err := e.app.Spaces.Add(ctx, e.user, other.ID, []spaces.File{spaces.BytesFile("secret.md", []byte("The Orion budget is secretly ten million."))}, spaces.AddOptions{}); err != nil {
		t.Fatal(err)
	}

	s := e.ask(t, "connectors", "Orion budget")
	in, out, errText := s.tool(t, "connectors_search")
	results, _ := at(out, "results").([]any)
	if errText != "" || at(in, "query") != "Orion budget" || len(results) != 2 {
		t.Fatalf("connectors_search: in %v out %v err %q", in, out, errText)
	}
	docs := []string{at(results, 0, "document").(string), at(results, 1, "document").(string)}
	slices.Sort(docs)
	if !slices.Equal(docs, []string{"orion/budget.md", "orion/team.md"}) || at(results, 0, "space") != "Cloud" {
		t.Errorf("results from %v", results)
	}
	if strings.Contains(s.text, "ten million") {
		t.Errorf("an unconnected space was searched: %v", out)
	}
	checkAnswer(t, s, at(results, 0, "source").(string))
}

// /api/memories and a space's connector over HTTP: add, list, search,
// delete, errors; connect a WebDAV share, sync it, read it back without
// its password, disconnect.
func TestMemoriesAndConnectorAPI(t *testing.T) {
	e := newAccountsEnv(t, "sqlite", map[string]string{"SOVA_CONNECTORS_ALLOW_PRIVATE": "true"})
	e.addUser(t, "ann", sova.RolePro, "ann's password")
	ann := e.browser(t)
	ann.signIn("ann", "ann's password")

	for _, c := range []struct {
		body string
		want int
		code string
	}{
		{`{"content":"I live in Kazan"}`, 201, ""},
		{`{"content":"Я люблю чай с чабрецом"}`, 201, ""},
		{`{"content":"   "}`, 400, "invalid_memory"},
		{`{"content":"` + strings.Repeat("x", sova.MaxMemoryChars+1) + `"}`, 400, "invalid_memory"},
	} {
		resp, body := ann.do("POST", "/api/memories", c.body)
		if resp.StatusCode != c.want || (c.code != "" && errorCode(body) != c.code) {
			t.Errorf("POST %.40s: %d %s", c.body, resp.StatusCode, body)
		}
	}
	resp, body := ann.do("GET", "/api/memories", "")
	if resp.StatusCode != 200 || !strings.Contains(body, "Kazan") || strings.Index(body, "чабрецом") > strings.Index(body, "Kazan") {
		t.Errorf("list: %d %s", resp.StatusCode, body)
	}
	resp, body = ann.do("GET", "/api/memories?q="+"%D1%87%D0%B0%D0%B9", "") // чай
	if resp.StatusCode != 200 || !strings.Contains(body, "чабрецом") || strings.Contains(body, "Kazan") || !strings.Contains(body, `"score"`) {
		t.Errorf("search: %d %s", resp.StatusCode, body)
	}
	list, _ := e.app.Memory.List(t.Context(), accountID(t, e, "ann"), 0)
	if resp, _ := ann.do("DELETE", "/api/memories/"+list[0].ID, ""); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if resp, body := ann.do("DELETE", "/api/memories/"+list[0].ID, ""); resp.StatusCode != 404 || errorCode(body) != "memory_not_found" {
		t.Errorf("delete again: %d %s", resp.StatusCode, body)
	}

	// A WebDAV share (golang.org/x/net/webdav) with basic authentication.
	dir := t.TempDir()
	writeFile(t, dir, "notes/plan.md", "# Plan\n\nThe Orion launch is in May.\n")
	dav := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ann" || p != "app-password-123" {
			w.Header().Set("WWW-Authenticate", `Basic realm="Nextcloud"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		(&webdav.Handler{Prefix: "/dav", FileSystem: webdav.Dir(dir), LockSystem: webdav.NewMemLS()}).ServeHTTP(w, r)
	}))
	t.Cleanup(dav.Close)
	resp, body = ann.do("POST", "/api/spaces", `{"name":"Cloud"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("space: %d %s", resp.StatusCode, body)
	}
	if resp, body := ann.do("POST", "/api/spaces/Cloud/connector", `{"kind":"webdav","location":"`+dav.URL+`/dav/","username":"ann","password":"wrong"}`); resp.StatusCode != 400 ||
		errorCode(body) != "invalid_connector" || strings.Contains(body, "wrong") {
		t.Errorf("wrong password: %d %s", resp.StatusCode, body)
	}
	if resp, body := ann.do("POST", "/api/spaces/Cloud/connector", `{"kind":"folder","location":"`+dir+`"}`); resp.StatusCode != 403 {
		t.Errorf("a pro user connects a server folder: %d %s", resp.StatusCode, body)
	}
	resp, body = ann.do("POST", "/api/spaces/Cloud/connector", `{"kind":"webdav","location":"`+dav.URL+`/dav/","username":"ann","password":"app-password-123"}`)
	if resp.StatusCode != 201 || strings.Contains(body, "app-password-123") || !strings.Contains(body, `"hasPassword":true`) {
		t.Fatalf("connect: %d %s", resp.StatusCode, body)
	}
	resp, body = ann.do("POST", "/api/spaces/Cloud/connector/sync", "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"added":1`) || strings.Contains(body, "app-password-123") {
		t.Errorf("sync: %d %s", resp.StatusCode, body)
	}
	if resp, body := ann.do("GET", "/api/spaces/Cloud/documents", ""); !strings.Contains(body, "notes/plan.md") {
		t.Errorf("documents after sync: %d %s", resp.StatusCode, body)
	}
	if resp, _ := ann.do("DELETE", "/api/spaces/Cloud/connector", ""); resp.StatusCode != 204 {
		t.Errorf("disconnect: %d", resp.StatusCode)
	}
	if resp, body := ann.do("GET", "/api/spaces/Cloud/connector", ""); resp.StatusCode != 404 || errorCode(body) != "connector_not_found" {
		t.Errorf("after disconnect: %d %s", resp.StatusCode, body)
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func accountID(t *testing.T, e *env, name string) string {
	t.Helper()
	acc, err := e.app.Store.GetAccountByName(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return acc.ID
}

// askAs is ask acting for another user.
func (e *groupEnv) askAs(t *testing.T, user, group, question string) uiStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"group": group, "messages": []any{map[string]any{
		"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": question}}}}})
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/search", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(testUserHeader, user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /api/search as %s: %d %s", user, resp.StatusCode, b)
	}
	s := uiStream{chunks: frames(t, resp.Body), header: resp.Header}
	var text strings.Builder
	for _, c := range s.chunks {
		if c["type"] == "text-delta" {
			text.WriteString(c["delta"].(string))
		}
	}
	s.text = text.String()
	return s
}
