package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// agentScript answers the sgr agent's NextStep requests by task and step,
// and leaves every other request to the sovatest model.
type agentScript struct {
	mu     sync.Mutex
	byTask map[string]map[int]string // task substring → step → reply
	asked  map[string][]int          // task substring → steps asked, in order
}

var stepRe = regexp.MustCompile(`Step (\d+) of \d+\.`)

func scriptAgent(m *sovatest.Model) *agentScript {
	s := &agentScript{byTask: map[string]map[int]string{}, asked: map[string][]int{}}
	m.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.SchemaName() != "NextStep" {
			return m.Respond(r)
		}
		return s.reply(r)
	})
	return s
}

func (s *agentScript) set(task string, step int, reply string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byTask[task] == nil {
		s.byTask[task] = map[int]string{}
	}
	s.byTask[task][step] = reply
}

func (s *agentScript) reply(r *llmtest.Request) llmtest.Reply {
	m := stepRe.FindStringSubmatch(r.System())
	if m == nil {
		return llmtest.Fail(400, "no step in the agent's prompt")
	}
	step, _ := strconv.Atoi(m[1])
	var task string
	for _, msg := range r.Messages {
		if msg.Role == "user" {
			task = msg.Content
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, steps := range s.byTask {
		if strings.Contains(task, key) {
			s.asked[key] = append(s.asked[key], step)
			if reply, ok := steps[step]; ok {
				return llmtest.Reply{Content: reply, Usage: llmtest.Tokens(200, 40)}
			}
		}
	}
	return llmtest.Fail(400, fmt.Sprintf("no reply scripted for step %d of %q", step, task))
}

func (s *agentScript) steps(task string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked[task])
}

func nextStep(tool string, args map[string]any) string {
	fn := map[string]any{"tool": tool, "reasoning": "next"}
	for k, v := range args {
		fn[k] = v
	}
	b, _ := json.Marshal(map[string]any{
		"reasoning_steps": []string{"What is known.", "What is missing."}, "current_situation": "doing " + tool,
		"plan_status": "ok", "enough_data": tool == "create_report", "remaining_steps": []string{tool},
		"task_completed": tool == "final_answer", "function": fn,
	})
	return string(b)
}

const (
	agentTask = "How did presidents describe the economy in the 1930s?"
	helloTask = "Say hello to the team"
)

// scriptResearch scripts the agent for agentTask: a question at step 1,
// then plan, search, read, report and final answer.
func scriptResearch(s *agentScript, siteURL string) {
	s.set(agentTask, 1, nextStep("clarification", map[string]any{
		"unclear_terms": []string{"presidents"}, "assumptions": []string{"US presidents", "both Hoover and Roosevelt"},
		"questions": []string{"Which country's presidents?", "Which years exactly?"},
	}))
	s.set(agentTask, 2, nextStep("generate_plan", map[string]any{"research_goal": "Speeches on the economy",
		"planned_steps": []string{"search", "read", "write"}, "search_strategies": []string{"speeches", "chats"}}))
	s.set(agentTask, 3, nextStep("web_search", map[string]any{"query": "Hoover Roosevelt economy speeches", "max_results": 5}))
	s.set(agentTask, 4, nextStep("extract_page_content", map[string]any{"urls": []string{siteURL + "/a/fdr-fireside", siteURL + "/a/hoover-prosperity"}}))
	s.set(agentTask, 5, nextStep("create_report", map[string]any{"title": "Presidents and the economy",
		"user_request_language_reference": agentTask, "confidence": "high",
		"content": "Hoover said prosperity was around the corner [2]. Roosevelt explained the banking crisis by radio [1]. Made up [5]."}))
	s.set(agentTask, 6, nextStep("final_answer", map[string]any{"completed_steps": []string{"read", "wrote"},
		"answer": "See the report.", "status": "completed"}))
	s.set(helloTask, 1, nextStep("final_answer", map[string]any{"completed_steps": []string{"greeted"},
		"answer": "Hello, team!", "status": "completed"}))
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return r.StatusCode
}

type stateView struct {
	ID                 string            `json:"id"`
	AgentID            string            `json:"agent_id"`
	Task               string            `json:"task"`
	State              string            `json:"state"`
	Iteration          int               `json:"iteration"`
	SearchesUsed       int               `json:"searches_used"`
	ClarificationsUsed int               `json:"clarifications_used"`
	SourcesCount       int               `json:"sources_count"`
	Sources            []json.RawMessage `json:"sources"`
	Reasoning          map[string]any    `json:"current_step_reasoning"`
	Result             string            `json:"result"`
	ResultSources      []json.RawMessage `json:"result_sources"`
}

// streamAgent reads a streamed completion with the official Go SDK and
// returns the accumulated message, the models the chunks named and the
// X-Agent-ID header.
func streamAgent(t *testing.T, client openai.Client, model, content string) (openai.ChatCompletion, []string, string) {
	t.Helper()
	var header string
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(content)},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}, option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		resp, err := next(req)
		if resp != nil {
			header = resp.Header.Get("X-Agent-ID")
		}
		return resp, err
	}))
	acc := openai.ChatCompletionAccumulator{}
	var models []string
	for stream.Next() {
		ch := stream.Current()
		if !acc.AddChunk(ch) {
			t.Fatalf("the accumulator refused chunk %s", ch.RawJSON())
		}
		if !slices.Contains(models, ch.Model) {
			models = append(models, ch.Model)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return acc.ChatCompletion, models, header
}

// The seed 002 flow through the official OpenAI Go SDK: the agent asks,
// the stream ends with the questions, the answer posted with the agent's
// id as the model continues it, and the report comes back as one
// completion when stream is false.
func TestAgentOverOpenAIAPI(t *testing.T) {
	e := newEnv(t, nil)
	script := scriptAgent(e.model)
	scriptResearch(script, e.site.URL)
	client := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))

	msg, models, header := streamAgent(t, client, "sgr_agent", agentTask)
	if len(models) != 1 || len(models[0]) < 30 || header != models[0] {
		t.Fatalf("chunk models %v, X-Agent-ID %q: every chunk must carry the agent id", models, header)
	}
	agentID := models[0]
	ch := msg.Choices[0]
	if ch.FinishReason != "stop" || !strings.HasSuffix(ch.Message.Content, "Reply with your answers and the research will continue.") ||
		!strings.Contains(ch.Message.Content, "1. Which country's presidents?\n2. Which years exactly?") {
		t.Errorf("finish %q, content %q", ch.FinishReason, ch.Message.Content)
	}
	var names []string
	for i, tc := range ch.Message.ToolCalls {
		names = append(names, tc.Function.Name)
		if tc.Type != "function" || tc.ID == "" || !json.Valid([]byte(tc.Function.Arguments)) {
			t.Errorf("tool call %d = %+v", i, tc)
		}
	}
	if !slices.Equal(names, []string{"reasoning", "clarification"}) {
		t.Errorf("tool calls %v", names)
	}
	if msg.Usage.TotalTokens == 0 {
		t.Error("no usage")
	}

	// The agent is listed and waits.
	var list struct {
		Agents []struct{ ID, AgentID, Task, State string } `json:"agents"`
		Total  int                                         `json:"total"`
	}
	if code := getJSON(t, e.srv.URL+"/agents", &list); code != 200 || list.Total != 1 || list.Agents[0].ID != agentID ||
		list.Agents[0].Task != agentTask || list.Agents[0].State != "waiting_for_clarification" {
		t.Fatalf("GET /agents = %d %+v", code, list)
	}
	var st stateView
	if code := getJSON(t, e.srv.URL+"/agents/"+agentID+"/state", &st); code != 200 || st.AgentID != agentID || st.Iteration != 1 ||
		st.ClarificationsUsed != 1 || st.Reasoning["current_situation"] != "doing clarification" || !strings.Contains(st.Result, "Which years exactly?") {
		t.Fatalf("state = %d %+v", code, st)
	}

	// Continuing an agent that is not waiting is refused; unknown models list the valid ones.
	resp := e.post(t, "/v1/chat/completions", `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "sgr_agent") || !strings.Contains(string(body), "model_not_found") {
		t.Errorf("unknown model: %d %s", resp.StatusCode, body)
	}

	// The answers, non-streamed, continue the same agent to its report.
	var hdr http.Header
	c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    agentID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(agentTask), openai.UserMessage("The US, 1930 to 1936.")},
	}, option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		r, err := next(req)
		if r != nil {
			hdr = r.Header
		}
		return r, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != agentID || hdr.Get("X-Agent-ID") != agentID || c.Choices[0].FinishReason != "stop" {
		t.Errorf("completion model %q, header %q, finish %q", c.Model, hdr.Get("X-Agent-ID"), c.Choices[0].FinishReason)
	}
	report := c.Choices[0].Message.Content
	if !strings.HasPrefix(report, "# Presidents and the economy") || !strings.Contains(report, "around the corner [1]") ||
		!strings.Contains(report, "by radio [2]") || strings.Contains(report, "[5]") || !strings.Contains(report, "## Sources") {
		t.Errorf("report:\n%s", report)
	}
	if got := script.steps(agentTask); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("steps asked %v", got)
	}

	if code := getJSON(t, e.srv.URL+"/agents/"+agentID+"/state", &st); code != 200 || st.State != "completed" || st.Iteration != 6 ||
		st.SearchesUsed != 1 || st.SourcesCount != len(st.Sources) || st.SourcesCount < 2 || len(st.ResultSources) != 2 || st.Result != report {
		t.Errorf("final state = %d %+v", code, st)
	}
	resp = e.post(t, "/v1/chat/completions", `{"model":"`+agentID+`","messages":[{"role":"user","content":"more"}]}`)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "agent_not_waiting") || !strings.Contains(string(body), "is completed") {
		t.Errorf("continuing a completed agent: %d %s", resp.StatusCode, body)
	}
	if code := getJSON(t, e.srv.URL+"/agents/nope/state", &map[string]any{}); code != 404 {
		t.Errorf("unknown agent: %d", code)
	}
	for _, q := range []string{"?limit=0", "?limit=x", "?offset=-1"} {
		if code := getJSON(t, e.srv.URL+"/agents"+q, &map[string]any{}); code != 400 {
			t.Errorf("GET /agents%s = %d", q, code)
		}
	}
}

// A simple request is answered at once; the streamed answer comes last,
// after the step's tool calls, and the run is an agent all the same.
func TestAgentAnswersDirectly(t *testing.T) {
	e := newEnv(t, nil)
	scriptResearch(scriptAgent(e.model), e.site.URL)
	client := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	msg, models, header := streamAgent(t, client, "sgr_agent", helloTask)
	if header == "" || models[0] != header {
		t.Errorf("models %v header %q", models, header)
	}
	// It needed no source, so it carries no "no sources" note.
	want := "Hello, team!"
	if c := msg.Choices[0].Message.Content; c != want {
		t.Errorf("content %q", c)
	}
	var st stateView
	getJSON(t, e.srv.URL+"/agents/"+header+"/state", &st)
	if st.State != "completed" || st.Result != want {
		t.Errorf("state %+v", st)
	}
	// Plain modes carry no agent id.
	resp := e.post(t, "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`)
	resp.Body.Close()
	if resp.Header.Get("X-Agent-ID") != "" {
		t.Errorf("chat run has X-Agent-ID %q", resp.Header.Get("X-Agent-ID"))
	}
}

// The agent survives a restart of the whole server: it waits in the
// store, and the answer posted to the new server continues it.
func TestAgentSurvivesServerRestart(t *testing.T) {
	arts := sovatest.DefaultArticles()
	model := sovatest.NewModel(t)
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	script := scriptAgent(model)
	scriptResearch(script, site.URL)
	dataDir := t.TempDir()
	start := func() (*httptest.Server, func()) {
		cfg, err := config.FromEnv(sovatest.Env(model, sx, dataDir))
		if err != nil {
			t.Fatal(err)
		}
		a, err := app.New(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), MaxBodyBytes: cfg.MaxRequestBodyBytes}))
		return srv, func() {
			srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := a.Close(ctx); err != nil {
				t.Errorf("closing the app: %v", err)
			}
		}
	}

	srv, stop := start()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	_, models, _ := streamAgent(t, client, "sgr_agent", agentTask)
	agentID := models[0]
	stop()

	srv, stop = start()
	defer stop()
	client = openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	msg, models, header := streamAgent(t, client, agentID, "The US, 1930 to 1936.")
	if len(models) != 1 || models[0] != agentID || header != agentID {
		t.Errorf("after the restart: models %v, header %q, want %s", models, header, agentID)
	}
	content := msg.Choices[0].Message.Content
	if !strings.Contains(content, "# Presidents and the economy") {
		t.Errorf("content %q", content)
	}
	var names []string
	for _, tc := range msg.Choices[0].Message.ToolCalls {
		names = append(names, tc.Function.Name)
	}
	want := []string{"reasoning", "generate_plan", "reasoning", "web_search", "reasoning", "extract_page_content", "reasoning", "create_report", "reasoning", "final_answer"}
	if !slices.Equal(names, want) {
		t.Errorf("tool calls %v", names)
	}
	var st stateView
	getJSON(t, srv.URL+"/agents/"+agentID+"/state", &st)
	if st.State != sova.AgentCompleted || st.Iteration != 6 {
		t.Errorf("state %+v", st)
	}
}

// The official openai npm package reads the agent's streams and
// completions unchanged (test/openai-node/check.mjs).
func TestOpenAINodeSDK(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test", "openai-node")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; install Node.js and run `npm ci --prefix test/openai-node` to check the stream with the openai npm package")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		t.Skip("test/openai-node/node_modules is missing; run `npm ci --prefix test/openai-node` to check the stream with the openai npm package")
	}
	e := newEnv(t, nil)
	scriptResearch(scriptAgent(e.model), e.site.URL)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(node, filepath.Join(dir, "check.mjs"), "--base-url", e.srv.URL+"/v1",
		"--task", agentTask, "--answer", "The US, 1930 to 1936.", "--simple", helloTask)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the openai npm package rejected Sova's answers: %v\n%s", err, stderr.String())
	}
	var out struct {
		OpenAI  string `json:"openai"`
		AgentID string `json:"agentId"`
		Ask     struct {
			Tools   []string `json:"tools"`
			Content string   `json:"content"`
			Finish  string   `json:"finish"`
		} `json:"ask"`
		Continue struct {
			Model         string   `json:"model"`
			Tools         []string `json:"tools"`
			Content       string   `json:"content"`
			Finish        string   `json:"finish"`
			ContentDeltas int      `json:"contentDeltas"`
		} `json:"continue"`
		Simple struct {
			Content     string `json:"content"`
			Finish      string `json:"finish"`
			TotalTokens int    `json:"totalTokens"`
		} `json:"simple"`
		UnknownModel struct {
			Status  int    `json:"status"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"unknownModel"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
		t.Fatalf("check.mjs printed %q: %v", stdout.String(), err)
	}
	t.Logf("openai@%s: agent %s", out.OpenAI, out.AgentID)
	if !slices.Equal(out.Ask.Tools, []string{"reasoning", "clarification"}) || !strings.Contains(out.Ask.Content, "Which years exactly?") || out.Ask.Finish != "stop" {
		t.Errorf("first request: %+v", out.Ask)
	}
	wantTools := []string{"reasoning", "generate_plan", "reasoning", "web_search", "reasoning", "extract_page_content", "reasoning", "create_report", "reasoning", "final_answer"}
	if out.Continue.Model != out.AgentID || !slices.Equal(out.Continue.Tools, wantTools) || out.Continue.Finish != "stop" ||
		!strings.Contains(out.Continue.Content, "# Presidents and the economy") || out.Continue.ContentDeltas < 2 {
		t.Errorf("continuation: %+v", out.Continue)
	}
	// A greeting answered at once carries no "no sources" note.
	if out.Simple.Content != "Hello, team!" ||
		out.Simple.Finish != "stop" || out.Simple.TotalTokens == 0 {
		t.Errorf("non-streamed: %+v", out.Simple)
	}
	if out.UnknownModel.Status != 400 || out.UnknownModel.Code != "model_not_found" || !strings.Contains(out.UnknownModel.Message, "sgr_agent") {
		t.Errorf("unknown model: %+v", out.UnknownModel)
	}
}

// Through /api/search the agent streams tool parts the AI SDK accepts, and
// the person's next message in the same chat answers its questions.
func TestAgentInChatWithAISDK(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test", "aisdk")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed; the AI SDK check needs Node.js")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai")); err != nil {
		t.Skip("AI SDK not installed: run npm ci --prefix test/aisdk")
	}
	e := newEnv(t, nil)
	script := scriptAgent(e.model)
	scriptResearch(script, e.site.URL)
	type summary struct {
		Text  string `json:"text"`
		Tools []struct {
			Type, State string
		} `json:"tools"`
		SourceURLs   int    `json:"sourceUrls"`
		FinishReason string `json:"finishReason"`
	}
	validate := func(text string) summary {
		t.Helper()
		body := `{"id":"agent-chat","group":"sgr_agent","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":` + strconv.Quote(text) + `}]}]}`
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(node, filepath.Join(dir, "validate.mjs"), "--url", e.srv.URL+"/api/search", "--body", body)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("AI SDK rejected the stream: %v\n%s", err, stderr.String())
		}
		var s summary
		if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &s); err != nil {
			t.Fatalf("validator output %q: %v", stdout.String(), err)
		}
		return s
	}
	s := validate(agentTask)
	if len(s.Tools) != 2 || s.Tools[1].Type != "tool-clarification" || s.Tools[1].State != "output-available" || s.FinishReason != "stop" {
		t.Errorf("question turn: %+v", s)
	}
	s = validate("The US, 1930 to 1936.")
	if len(s.Tools) != 10 || s.Tools[9].Type != "tool-final_answer" || s.SourceURLs != 2 {
		t.Errorf("answer turn: %+v", s)
	}
	for _, tool := range s.Tools {
		if tool.State != "output-available" {
			t.Errorf("tool part %s left in state %s", tool.Type, tool.State)
		}
	}
	if got := script.steps(agentTask); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("steps asked %v: the second message must continue the same agent", got)
	}
	// One agent, completed, tied to the chat.
	list, err := e.app.Store.ListAgents(context.Background(), e.user, 0, 0)
	if err != nil || len(list) != 1 || list[0].State != sova.AgentCompleted || list[0].ChatID != "agent-chat" {
		t.Errorf("agents %+v (%v)", list, err)
	}
}
