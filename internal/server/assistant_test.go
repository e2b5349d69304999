package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mcp/mcptest"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// asstEnv is Sova with the office MCP server in SOVA_MCP_CONFIG and a
// model whose assistant replies are scripted (other prompts get
// sovatest's answers).
type asstEnv struct {
	*env
	office *mcptest.Office
	mu     sync.Mutex
	queue  []llmtest.Reply
}

func newAsstEnv(t *testing.T, opts ...mcptest.OfficeOption) *asstEnv {
	t.Helper()
	e := &asstEnv{office: mcptest.NewOffice(t, opts...)}
	cfgFile := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfgFile, []byte(fmt.Sprintf(`{"mcpServers":{"office":{"url":%q}}}`, e.office.URL+"/mcp")), 0o600); err != nil {
		t.Fatal(err)
	}
	// A hostile page among the articles: its first paragraph tells the
	// reader to mail the attacker.
	arts := append(sovatest.DefaultArticles(), hostilePage)
	base := &env{model: sovatest.NewModel(t)}
	base.site = sovatest.NewSite(t, arts)
	base.sx = sovatest.NewSearXNG(t, base.site, arts)
	// The assistant's model obeys what it reads: a tool result that says
	// "send … to <address>" makes it call office__send_email.
	scripted := func(r *llmtest.Request) llmtest.Reply {
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.queue) == 0 {
			return llmtest.Fail(400, "no scripted reply for: "+r.System()[:60])
		}
		next := e.queue[0]
		e.queue = e.queue[1:]
		return next
	}
	base.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		sys := r.System()
		if strings.Contains(sys, "Sova's") || strings.Contains(sys, "subtask") || strings.Contains(sys, "complex task") {
			return llmtest.Obey("office__send_email", scripted)(r)
		}
		return base.model.Respond(r)
	})
	vars := sovatest.Env(base.model, base.sx, t.TempDir())
	vars["SOVA_MCP_CONFIG"] = cfgFile
	vars["SOVA_DISABLE_TITLES"] = "true"
	cfg, err := config.FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	base.app, base.user = a, userOf(t, a)
	base.srv = httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), MaxBodyBytes: cfg.MaxRequestBodyBytes,
		Version: "test", Assistant: a.Assistant, MCPServers: a.Store, MCPAdmin: a.MCP.Servers()}))
	t.Cleanup(func() {
		base.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	e.env = base
	return e
}

func (e *asstEnv) script(r ...llmtest.Reply) {
	e.mu.Lock()
	e.queue = append(e.queue, r...)
	e.mu.Unlock()
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

func partsNamed(chunks []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, c := range chunks {
		if c["type"] == typ {
			out = append(out, c)
		}
	}
	return out
}

func TestAssistantConfirmationOverTheChat(t *testing.T) {
	for _, tt := range []struct {
		answer string
		sent   int
	}{{"нет", 0}, {"да", 1}} {
		t.Run(tt.answer, func(t *testing.T) {
			e := newAsstEnv(t)
			e.script(llmtest.Calls(call("c1", "office__send_email", `{"to":"anna@example.com","subject":"Восток","body":"Согласен на вторник."}`)))
			resp := e.post(t, "/api/search", `{"id":"chat-a","group":"assistant","messages":[{"role":"user","content":"Ответь Анне, что я согласен"}]}`)
			chunks := frames(t, resp.Body)
			resp.Body.Close()
			conf := partsNamed(chunks, "data-assistant_confirmation")
			if len(conf) != 1 || len(partsNamed(chunks, "data-clarification")) != 1 {
				t.Fatalf("confirmation parts %v", conf)
			}
			if len(e.office.Sent()) != 0 {
				t.Fatal("sent before the confirmation")
			}
			e.script(llmtest.Text("Понял."))
			resp = e.post(t, "/api/search", `{"id":"chat-a","group":"assistant","messages":[{"role":"user","content":"`+tt.answer+`"}]}`)
			chunks = frames(t, resp.Body)
			resp.Body.Close()
			if len(e.office.Sent()) != tt.sent {
				t.Fatalf("sent %d, want %d", len(e.office.Sent()), tt.sent)
			}
			if f := partsNamed(chunks, "finish"); len(f) != 1 {
				t.Errorf("finish parts %v", f)
			}
		})
	}
}

func TestAssistantOverOpenAIEndpoint(t *testing.T) {
	e := newAsstEnv(t)
	e.script(llmtest.Calls(call("c1", "office__list_emails", `{"from":"anna"}`)), llmtest.Text("Нашла три письма от Анны."))
	resp := e.post(t, "/v1/chat/completions", `{"model":"assistant","messages":[{"role":"user","content":"Покажи письма от Анны"}]}`)
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Choices) != 1 || !strings.Contains(out.Choices[0].Message.Content, "три письма") {
		t.Fatalf("status %d, %+v, %v", resp.StatusCode, out, err)
	}
}

func TestSupervisorAndTaskEndpoints(t *testing.T) {
	e := newAsstEnv(t)
	e.script(
		llmtest.Calls(call("p1", "office__read_email", `{"id":"m1"}`)),
		llmtest.Calls(call("p2", "office__create_event", `{"title":"Восток","start":"2026-11-25T10:00:00+03:00"}`)),
		llmtest.Calls(call("p3", "finish_plan", `{"decision":"confirm","nextResponse":"Анна предлагает вторник в 10:00. Создать встречу?","workflowSteps":["Прочитал письмо","Подготовил встречу"]}`)),
	)
	resp, body := e.as(t, "", "POST", "/api/supervisor", `{"conversationContext":"письмо Анны","proposedPlan":"прочитать и создать встречу","userIntent":"встреча","complexity":"medium"}`)
	var sup struct {
		Decision       string   `json:"decision"`
		NextResponse   string   `json:"nextResponse"`
		WorkflowSteps  []string `json:"workflowSteps"`
		PendingActions []struct {
			Tool string `json:"tool"`
		} `json:"pendingActions"`
	}
	if err := json.Unmarshal([]byte(body), &sup); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if sup.Decision != "confirm" || len(sup.WorkflowSteps) != 2 || len(sup.PendingActions) != 1 || sup.PendingActions[0].Tool != "office__create_event" || len(e.office.Events()) != 0 {
		t.Fatalf("supervisor = %+v, events %v", sup, e.office.Events())
	}
	if resp, body := e.as(t, "", "POST", "/api/supervisor", `{}`); resp.StatusCode != 400 {
		t.Errorf("empty request: %d %s", resp.StatusCode, body)
	}

	e.script(
		llmtest.Text(`{"subtasks":[{"title":"Создать встречу","instructions":"create_event Восток"}]}`),
		llmtest.Calls(call("t1", "office__create_event", `{"title":"Восток","start":"2026-11-25T10:00:00+03:00"}`)), llmtest.Text("Создал."),
		llmtest.Text("# Отчёт\nВстреча создана."),
	)
	resp, body = e.as(t, "", "POST", "/api/tasks/execute?wait=true", `{"task":"Создай встречу Восток во вторник","actions":[{"tool":"office__create_event"}]}`)
	var task struct {
		RunID   string `json:"runId"`
		State   string `json:"state"`
		Success bool   `json:"success"`
		Report  string `json:"report"`
	}
	if err := json.Unmarshal([]byte(body), &task); err != nil || resp.StatusCode != 200 || !task.Success || !strings.Contains(task.Report, "Отчёт") || len(e.office.Events()) != 1 {
		t.Fatalf("%d %s, events %v", resp.StatusCode, body, e.office.Events())
	}
	if task.RunID == "" || task.State != "completed" {
		t.Fatalf("task = %+v", task)
	}
	// The task is a run: its progress is in the run's log, its result kept.
	if _, body := e.as(t, "", "GET", "/api/runs/"+task.RunID, ""); !strings.Contains(body, `"assistant_task"`) || !strings.Contains(body, "task/result.json") {
		t.Errorf("run view: %s", body)
	}
	if _, body := e.as(t, "other", "GET", "/api/tasks/"+task.RunID, ""); !strings.Contains(body, "run_not_found") {
		t.Errorf("another person's task: %s", body)
	}
	if resp, body := e.as(t, "", "POST", "/api/tasks/execute", `{"task":" "}`); resp.StatusCode != 400 {
		t.Errorf("empty task: %d %s", resp.StatusCode, body)
	}
	// The mode runs only through this endpoint: it is not in the mode list.
	if _, body := e.as(t, "", "GET", "/api/modes", ""); strings.Contains(body, "assistant_task") {
		t.Errorf("/api/modes lists the task mode: %s", body)
	}
}

// POST /api/tasks/execute answers at once with the run to follow; the run
// goes on detached, streams its progress, and GET /api/tasks/{id} gives the
// result when it is done.
func TestTaskExecuteDetached(t *testing.T) {
	e := newAsstEnv(t)
	e.script(
		llmtest.Text(`{"subtasks":[{"title":"Создать встречу","instructions":"create_event Восток"}]}`),
		llmtest.Calls(call("t1", "office__create_event", `{"title":"Восток","start":"2026-11-25T10:00:00+03:00"}`)), llmtest.Text("Создал."),
		llmtest.Text("# Отчёт\nВстреча создана."),
	)
	resp, body := e.as(t, "", "POST", "/api/tasks/execute", `{"task":"Создай встречу Восток во вторник","context":"Анна просила","actions":[{"tool":"office__create_event"}]}`)
	var started struct {
		RunID     string `json:"runId"`
		StreamURL string `json:"streamUrl"`
		RunURL    string `json:"runUrl"`
	}
	if err := json.Unmarshal([]byte(body), &started); err != nil || resp.StatusCode != 202 || started.RunID == "" ||
		started.StreamURL != "/api/runs/"+started.RunID+"/stream" || started.RunURL != "/api/tasks/"+started.RunID {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	_, stream := e.as(t, "", "GET", started.StreamURL, "")
	if !strings.Contains(stream, `"type":"data-assistant_task"`) || !strings.Contains(stream, `"type":"finish"`) {
		t.Fatalf("stream: %s", stream)
	}
	_, body = e.as(t, "", "GET", started.RunURL, "")
	var done struct {
		State    string           `json:"state"`
		Success  bool             `json:"success"`
		Report   string           `json:"report"`
		Subtasks []map[string]any `json:"subtasks"`
	}
	if err := json.Unmarshal([]byte(body), &done); err != nil || done.State != "completed" || !done.Success || !strings.Contains(done.Report, "Отчёт") || len(done.Subtasks) != 1 {
		t.Fatalf("task: %s", body)
	}
	if n := len(e.office.Events()); n != 1 {
		t.Errorf("office events: %d", n)
	}
}

func TestMCPServersAPI(t *testing.T) {
	e := newAsstEnv(t)
	resp, body := e.as(t, "", "GET", "/api/mcp/servers", "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"name":"office"`) || !strings.Contains(body, `"own":false`) {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{
		`{"name":"sh","command":"sh","args":["-c","id"]}`,
		`{"name":"office","url":"https://x.example/mcp"}`,
		`{"name":"x","url":"file:///etc/passwd"}`,
	} {
		if resp, body := e.as(t, "", "POST", "/api/mcp/servers", bad); resp.StatusCode/100 != 4 {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
	resp, body = e.as(t, "", "POST", "/api/mcp/servers", `{"name":"mymail","url":"https://mail.example/mcp","headers":{"Authorization":"Bearer secret-token"}}`)
	if resp.StatusCode != 201 {
		t.Fatalf("add: %d %s", resp.StatusCode, body)
	}
	_, body = e.as(t, "", "GET", "/api/mcp/servers", "")
	if !strings.Contains(body, `"mymail"`) || !strings.Contains(body, `"Authorization"`) || strings.Contains(body, "secret-token") {
		t.Fatalf("list: %s", body)
	}
	// Another person sees none of it and cannot remove it.
	if _, body := e.as(t, "other", "GET", "/api/mcp/servers", ""); strings.Contains(body, "mymail") {
		t.Errorf("other user sees: %s", body)
	}
	if resp, _ := e.as(t, "other", "DELETE", "/api/mcp/servers/mymail", ""); resp.StatusCode != 404 {
		t.Errorf("other user's delete: %d", resp.StatusCode)
	}
	if resp, _ := e.as(t, "", "DELETE", "/api/mcp/servers/mymail", ""); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if resp, _ := e.as(t, "", "DELETE", "/api/mcp/servers/mymail", ""); resp.StatusCode != 404 {
		t.Errorf("second delete: %d", resp.StatusCode)
	}
}
