package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mcp/mcptest"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// accessEnv is Sova with accounts, anonymous visitors let in, and two MCP
// servers in SOVA_MCP_CONFIG: "office" (the administrator's mailbox, no
// "allow": administrators only) and "team" (granted to the pro role). Its
// assistant model obeys whatever it is asked: it reads the administrator's
// mail whether or not the tool is offered, so a server offered to the
// wrong person shows as its letters in what the model reads.
type accessEnv struct {
	*env
	office, team *mcptest.Office

	mu   sync.Mutex
	seen []offered // the assistant family's model requests
}

// offered is what one model request of an assistant agent was offered,
// and what it had read.
type offered struct {
	tools []string
	read  string
}

func newAccessEnv(t *testing.T, extra map[string]string) *accessEnv {
	t.Helper()
	e := &accessEnv{office: mcptest.NewOffice(t), team: mcptest.NewOffice(t)}
	cfgFile := filepath.Join(t.TempDir(), "mcp.json")
	conf := fmt.Sprintf(`{"mcpServers":{"office":{"url":%q},"team":{"url":%q,"allow":{"roles":["pro"]}}}}`, e.office.URL+"/mcp", e.team.URL+"/mcp")
	if err := os.WriteFile(cfgFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	arts := sovatest.DefaultArticles()
	base := &env{model: sovatest.NewModel(t)}
	base.site = sovatest.NewSite(t, arts)
	base.sx = sovatest.NewSearXNG(t, base.site, arts)
	base.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		sys := r.System()
		if !strings.Contains(sys, "Sova's") && !strings.Contains(sys, "subtask") && !strings.Contains(sys, "complex task") {
			return base.model.Respond(r)
		}
		o := offered{}
		for _, x := range r.Tools {
			o.tools = append(o.tools, x.Name)
		}
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				o.read += m.Content + "\n"
			}
		}
		e.mu.Lock()
		e.seen = append(e.seen, o)
		e.mu.Unlock()
		last := r.Messages[len(r.Messages)-1]
		switch {
		case strings.Contains(sys, "Decompose"):
			return llmtest.Text(`{"subtasks":[{"title":"Прочитать почту","instructions":"read_email m1"}]}`)
		case strings.Contains(sys, "Write the report"):
			return llmtest.Text("# Отчёт\nГотово.")
		case last.Role == llm.RoleTool && r.HasTool("finish_plan"):
			return llmtest.Calls(call("f", "finish_plan", `{"decision":"approve","nextResponse":"Готово.","workflowSteps":["Прочитал письмо"]}`))
		case last.Role == llm.RoleTool:
			return llmtest.Text("Готово.")
		}
		// Told to read the mail, it does, offered the tools or not.
		return llmtest.Calls(call("r1", "office__read_email", `{"id":"m1"}`), call("r2", "team__read_email", `{"id":"m2"}`))
	})
	vars := sovatest.Env(base.model, base.sx, t.TempDir())
	vars["SOVA_AUTH"] = "accounts"
	vars["SOVA_ANONYMOUS"] = "true"
	vars["SOVA_MCP_CONFIG"] = cfgFile
	vars["SOVA_MCP_ALLOW_HOSTS"] = "127.0.0.1"
	vars["SOVA_DISABLE_TITLES"] = "true"
	for k, v := range extra {
		vars[k] = v
	}
	cfg, err := config.FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	base.app = a
	base.srv = httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: a.Auth, Accounts: a.Accounts,
		MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test", Memory: a.Memory, Connectors: a.Connectors,
		Spaces: a.Spaces, MaxUploadBytes: cfg.SpacesMaxUploadBytes, MaxFileBytes: cfg.SpacesMaxFileBytes,
		Assistant: a.Assistant, MCPServers: a.Store, MCPAdmin: a.MCP.Servers(), ProFeatures: cfg.ProFeatures,
		Limits: a.Limits, Settings: a.Store, Models: a.Model, Usage: a.Store}))
	t.Cleanup(func() {
		base.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	e.env = base
	return e
}

// since returns the assistant requests recorded after the n-th.
func (e *accessEnv) since(n int) []offered {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.seen[n:])
}

func (e *accessEnv) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.seen)
}

// servers are the MCP servers whose tools the requests were offered, and
// whose letters the model read (m1 is the office's, m2 the team's).
func servers(reqs []offered) (tools, read []string) {
	for _, o := range reqs {
		for _, n := range o.tools {
			if s, _, ok := strings.Cut(n, "__"); ok && !slices.Contains(tools, s) {
				tools = append(tools, s)
			}
		}
		for s, letter := range map[string]string{"office": "Предлагаю встретиться", "team": "Бюджет проекта Восток утверждён"} {
			if strings.Contains(o.read, letter) && !slices.Contains(read, s) {
				read = append(read, s)
			}
		}
	}
	slices.Sort(tools)
	slices.Sort(read)
	return tools, read
}

// An administrator's MCP server reaches only those SOVA_MCP_CONFIG grants
// it to: on every route that runs the assistant's agents (the chat, the
// OpenAI-compatible endpoint, complex tasks, the planner) and in the list
// of servers, a free account gets neither server, a pro account the team's
// only, and an anonymous visitor none, with tasks, the planner and the
// server list refused. A request with a wrong key is refused everywhere.
func TestMCPServersReachOnlyWhomTheyAreGranted(t *testing.T) {
	e := newAccessEnv(t, map[string]string{"SOVA_LIMIT_FREE_MESSAGES": "5", "SOVA_LIMIT_ANONYMOUS_MESSAGES": "5"})
	e.addUser(t, "root", sova.RoleAdmin, "root's password")
	e.addUser(t, "fay", sova.RoleFree, "fay's password")
	e.addUser(t, "pat", sova.RolePro, "pat's password")
	root, fay, pat, anon := e.browser(t), e.browser(t), e.browser(t), e.browser(t)
	root.signIn("root", "root's password")
	fay.signIn("fay", "fay's password")
	pat.signIn("pat", "pat's password")
	wrong := e.browser(t)
	wrong.key = "sova_" + strings.Repeat("x", 40)

	routes := []struct{ name, method, path, body string }{
		{"chat", "POST", "/api/search", `{"group":"assistant","messages":[{"role":"user","content":"Прочитай письмо m1"}]}`},
		{"v1", "POST", "/v1/chat/completions", `{"model":"assistant","messages":[{"role":"user","content":"Прочитай письмо m1"}]}`},
		{"task", "POST", "/api/tasks/execute?wait=true", `{"task":"Прочитай письмо m1"}`},
		{"planner", "POST", "/api/supervisor", `{"userIntent":"прочитать письмо m1","proposedPlan":"read_email m1"}`},
	}
	for _, who := range []struct {
		name      string
		b         *browser
		want      string // the servers offered and read, comma-separated
		refused   []string
		refusedAs int
	}{
		{"admin", root, "office,team", nil, 0},
		{"pro", pat, "team", nil, 0},
		{"free", fay, "", nil, 0},
		{"anonymous", anon, "", []string{"task", "planner"}, 403},
		{"wrong key", wrong, "", []string{"chat", "v1", "task", "planner"}, 401},
	} {
		for _, rt := range routes {
			t.Run(who.name+"/"+rt.name, func(t *testing.T) {
				n := e.count()
				resp, body := who.b.do(rt.method, rt.path, rt.body)
				if slices.Contains(who.refused, rt.name) {
					if resp.StatusCode != who.refusedAs {
						t.Fatalf("%d %s, want %d", resp.StatusCode, body, who.refusedAs)
					}
					if got := e.since(n); len(got) != 0 {
						t.Fatalf("a refused request reached the model %d times", len(got))
					}
					return
				}
				if resp.StatusCode != 200 {
					t.Fatalf("%d %s", resp.StatusCode, body)
				}
				reqs := e.since(n)
				if len(reqs) == 0 {
					t.Fatal("the assistant's model was not asked")
				}
				tools, read := servers(reqs)
				if strings.Join(tools, ",") != who.want || strings.Join(read, ",") != who.want {
					t.Errorf("servers offered %v, read %v; want %q", tools, read, who.want)
				}
			})
		}
	}
	// The list of servers shows the administrator's servers one may use.
	for _, tt := range []struct {
		b      *browser
		status int
		has    []string
		hasnt  []string
	}{
		{root, 200, []string{`"office"`, `"team"`}, nil},
		{pat, 200, []string{`"team"`}, []string{`"office"`}},
		{fay, 200, nil, []string{`"office"`, `"team"`}},
		{anon, 403, nil, []string{`"office"`, `"team"`}},
		{wrong, 401, nil, []string{`"office"`, `"team"`}},
	} {
		resp, body := tt.b.do("GET", "/api/mcp/servers", "")
		if resp.StatusCode != tt.status {
			t.Errorf("list: %d %s, want %d", resp.StatusCode, body, tt.status)
		}
		for _, s := range tt.has {
			if !strings.Contains(body, s) {
				t.Errorf("list (%d) lacks %s: %s", tt.status, s, body)
			}
		}
		for _, s := range tt.hasnt {
			if strings.Contains(body, s) {
				t.Errorf("list (%d) shows %s: %s", tt.status, s, body)
			}
		}
	}
	// An anonymous visitor keeps no servers of their own either.
	if resp, body := anon.do("POST", "/api/mcp/servers", `{"name":"mine","url":"`+e.office.URL+`/mcp"}`); resp.StatusCode != 403 || errorCode(body) != "sign_in_required" {
		t.Errorf("anonymous adds a server: %d %s", resp.StatusCode, body)
	}
	// The planner counts against the limits: fay has used 4 of her 5
	// messages (chat, v1, task, planner); the fifth is the last.
	if resp, body := fay.do("POST", "/api/supervisor", routes[3].body); resp.StatusCode != 200 {
		t.Fatalf("fifth message: %d %s", resp.StatusCode, body)
	}
	n := e.count()
	if resp, body := fay.do("POST", "/api/supervisor", routes[3].body); resp.StatusCode != 429 || errorCode(body) != "rate_limited" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("sixth message: %d %s", resp.StatusCode, body)
	}
	if got := e.since(n); len(got) != 0 {
		t.Errorf("a refused planner request reached the model %d times", len(got))
	}
	if len(e.office.Sent()) != 0 || len(e.team.Sent()) != 0 {
		t.Errorf("mail sent: %v %v", e.office.Sent(), e.team.Sent())
	}
}

// A person's own MCP server is theirs alone: another account never gets
// its tools or sees it listed.
func TestOwnMCPServerStaysTheirs(t *testing.T) {
	e := newAccessEnv(t, nil)
	e.addUser(t, "fay", sova.RoleFree, "fay's password")
	e.addUser(t, "pat", sova.RolePro, "pat's password")
	fay, pat := e.browser(t), e.browser(t)
	fay.signIn("fay", "fay's password")
	pat.signIn("pat", "pat's password")
	own := mcptest.NewOffice(t)
	if resp, body := fay.do("POST", "/api/mcp/servers", `{"name":"faymail","url":"`+own.URL+`/mcp"}`); resp.StatusCode != 201 {
		t.Fatalf("add: %d %s", resp.StatusCode, body)
	}
	if _, body := fay.do("GET", "/api/mcp/servers", ""); !strings.Contains(body, `"faymail"`) {
		t.Errorf("fay's list: %s", body)
	}
	if _, body := pat.do("GET", "/api/mcp/servers", ""); strings.Contains(body, "faymail") {
		t.Errorf("pat's list shows fay's server: %s", body)
	}
	n := e.count()
	if resp, body := pat.do("POST", "/api/search", `{"group":"assistant","messages":[{"role":"user","content":"Прочитай письмо m1"}]}`); resp.StatusCode != 200 {
		t.Fatalf("pat: %d %s", resp.StatusCode, body)
	}
	for _, o := range e.since(n) {
		for _, x := range o.tools {
			if strings.HasPrefix(x, "faymail__") {
				t.Fatalf("pat was offered %s", x)
			}
		}
	}
	n = e.count()
	if resp, body := fay.do("POST", "/api/search", `{"group":"assistant","messages":[{"role":"user","content":"Прочитай письмо m1"}]}`); resp.StatusCode != 200 {
		t.Fatalf("fay: %d %s", resp.StatusCode, body)
	}
	if reqs := e.since(n); len(reqs) == 0 || !slices.ContainsFunc(reqs[0].tools, func(x string) bool { return strings.HasPrefix(x, "faymail__") }) {
		t.Errorf("fay was not offered her own server: %+v", reqs)
	}
}

// An anonymous visitor's router offers no planner and no complex task,
// and memories are refused to them: visitors are told apart only by their
// address, so what is kept for one would be everyone's behind it.
func TestAnonymousGetsNoMemoryTasksOrPlanner(t *testing.T) {
	e := newAccessEnv(t, nil)
	e.addUser(t, "fay", sova.RoleFree, "fay's password")
	fay, anon := e.browser(t), e.browser(t)
	fay.signIn("fay", "fay's password")
	for _, tt := range []struct {
		b    *browser
		want bool
	}{{fay, true}, {anon, false}} {
		n := e.count()
		if resp, body := tt.b.do("POST", "/api/search", `{"group":"assistant","messages":[{"role":"user","content":"Прочитай письмо m1"}]}`); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		reqs := e.since(n)
		if len(reqs) == 0 {
			t.Fatal("the model was not asked")
		}
		for _, name := range []string{"delegateToSupervisor", "executeComplexTask"} {
			if got := slices.Contains(reqs[0].tools, name); got != tt.want {
				t.Errorf("offered %s: %v, want %v (tools %v)", name, got, tt.want, reqs[0].tools)
			}
		}
	}
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/memories", ""},
		{"POST", "/api/memories", `{"content":"the door code is 4512"}`},
		{"DELETE", "/api/memories/x", ""},
	} {
		if resp, body := anon.do(r.method, r.path, r.body); resp.StatusCode != 403 || errorCode(body) != "sign_in_required" {
			t.Errorf("anonymous %s %s: %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
	if resp, body := fay.do("POST", "/api/memories", `{"content":"the door code is 4512"}`); resp.StatusCode != 201 {
		t.Errorf("fay remembers: %d %s", resp.StatusCode, body)
	}
}

// Custom instructions and connectors are pro features (000 §6.2) while
// SOVA_PRO_FEATURES is on, the default; off, free accounts have them too.
func TestProFeatures(t *testing.T) {
	for _, tt := range []struct {
		setting string
		free    int
	}{{"", 403}, {"false", 200}} {
		t.Run("SOVA_PRO_FEATURES="+tt.setting, func(t *testing.T) {
			extra := map[string]string{}
			if tt.setting != "" {
				extra["SOVA_PRO_FEATURES"] = tt.setting
			}
			e := newAccessEnv(t, extra)
			e.addUser(t, "fay", sova.RoleFree, "fay's password")
			e.addUser(t, "pat", sova.RolePro, "pat's password")
			fay, pat := e.browser(t), e.browser(t)
			fay.signIn("fay", "fay's password")
			pat.signIn("pat", "pat's password")
			if resp, body := pat.do("PUT", "/api/me", `{"custom_instructions":"Answer briefly."}`); resp.StatusCode != 200 {
				t.Errorf("pro instructions: %d %s", resp.StatusCode, body)
			}
			resp, body := fay.do("PUT", "/api/me", `{"custom_instructions":"Answer briefly."}`)
			if resp.StatusCode != tt.free || tt.free == 403 && errorCode(body) != "pro_required" {
				t.Errorf("free instructions: %d %s, want %d", resp.StatusCode, body, tt.free)
			}
			// Other settings, and clearing the instructions, stay free.
			if resp, body := fay.do("PUT", "/api/me", `{"custom_instructions":"","time_zone":"Europe/Moscow"}`); resp.StatusCode != 200 {
				t.Errorf("free time zone: %d %s", resp.StatusCode, body)
			}
			resp, body = fay.do("POST", "/api/spaces", `{"name":"share"}`)
			var sp sova.Space
			if resp.StatusCode != 201 || json.Unmarshal([]byte(body), &sp) != nil {
				t.Fatalf("spaces: %d %s", resp.StatusCode, body)
			}
			resp, body = fay.do("POST", "/api/spaces/"+sp.ID+"/connector", `{"kind":"webdav","location":"http://127.0.0.1:1/dav/"}`)
			if tt.free == 403 && (resp.StatusCode != 403 || errorCode(body) != "pro_required") || tt.free != 403 && errorCode(body) == "pro_required" {
				t.Errorf("free connector: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// Custom instructions saved while an account was pro are not used once it
// is free (SOVA_PRO_FEATURES on), and are used for a pro account.
func TestFreeAccountsInstructionsNotUsed(t *testing.T) {
	e := newAccessEnv(t, nil)
	fay := e.addUser(t, "fay", sova.RoleFree, "fay's password")
	pat := e.addUser(t, "pat", sova.RolePro, "pat's password")
	for _, id := range []string{fay.ID, pat.ID} {
		if err := e.app.Store.PutUserSettings(t.Context(), id, sova.UserSettings{CustomInstructions: "Always end with the word Kazan-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		acc  *sova.Account
		pass string
		used bool
	}{{fay, "fay's password", false}, {pat, "pat's password", true}} {
		b := e.browser(t)
		b.signIn(tt.acc.Name, tt.pass)
		n := e.model.Count()
		if resp, body := b.do("POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tt.acc.Name, resp.StatusCode, body)
		}
		reqs := e.model.Requests()[n:]
		if len(reqs) == 0 {
			t.Fatal("the model was not asked")
		}
		used := false
		for _, r := range reqs {
			if strings.Contains(r.System(), "Kazan-"+tt.acc.ID) {
				used = true
			}
		}
		if used != tt.used {
			t.Errorf("%s's instructions used: %v, want %v", tt.acc.Name, used, tt.used)
		}
	}
}
