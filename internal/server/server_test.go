package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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

type env struct {
	model *sovatest.Model
	site  *sovatest.Site
	sx    *sovatest.SearXNG
	app   *app.App
	srv   *httptest.Server
	// user is whom the server's requests act for: the app's Authenticator
	// answers for requests that name no other user (auth_test.go).
	user string
}

func newEnv(t *testing.T, extra map[string]string) *env { return newEnvTB(t, extra) }

func newEnvTB(t testing.TB, extra map[string]string) *env {
	t.Helper()
	arts := sovatest.DefaultArticles()
	e := &env{model: sovatest.NewModel(t)}
	e.site = sovatest.NewSite(t, arts)
	e.sx = sovatest.NewSearXNG(t, e.site, arts)
	vars := sovatest.Env(e.model, e.sx, t.TempDir())
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
	e.app, e.user = a, userOf(t, a)
	if a.Images != nil {
		a.Images.Client = sovatest.Offline(a.Images.Client) // favicons of cited sites are not fetched from the internet
	}
	e.srv = httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test", Images: a.Images}))
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return e
}

func (e *env) post(t *testing.T, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(e.srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// frames reads a UI message stream into its JSON chunks.
func frames(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		data := strings.TrimPrefix(line, "data: ")
		if data == "[DONE]" {
			done = true
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("bad frame %q: %v", data, err)
		}
		out = append(out, m)
	}
	if !done {
		t.Fatal("stream did not end with [DONE]")
	}
	return out
}

func TestSearchStreamAndChatStored(t *testing.T) {
	e := newEnv(t, nil)
	resp := e.post(t, "/api/search", `{"id":"chat-1","group":"search","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("x-vercel-ai-ui-message-stream") != "v1" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	chunks := frames(t, resp.Body)
	types := map[string]int{}
	var text strings.Builder
	for _, c := range chunks {
		typ := c["type"].(string)
		types[typ]++
		if typ == "text-delta" {
			text.WriteString(c["delta"].(string))
		}
	}
	if chunks[0]["type"] != "start" || chunks[len(chunks)-1]["type"] != "finish" {
		t.Errorf("stream must open with start and close with finish: first %v last %v", chunks[0], chunks[len(chunks)-1])
	}
	if types["data-query_completion"] < 10 || types["source-url"] != 3 || types["data-page"] == 0 {
		t.Errorf("progress parts missing: %v", types)
	}
	if !strings.Contains(text.String(), "[1]") || strings.Contains(text.String(), "[9]") {
		t.Errorf("streamed answer: %q", text.String())
	}

	// The chat and both messages are stored; the title arrives in the background.
	var got struct {
		Chat     sova.Chat      `json:"chat"`
		Messages []sova.Message `json:"messages"`
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := http.Get(e.srv.URL + "/api/chats/chat-1")
		if err != nil {
			t.Fatal(err)
		}
		got.Chat = sova.Chat{}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if got.Chat.Title != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.Chat.Title != "Economy in the 1930s" {
		t.Errorf("title = %q", got.Chat.Title)
	}
	if len(got.Messages) != 2 {
		t.Fatalf("messages = %d, want 2", len(got.Messages))
	}
	a := got.Messages[1]
	if a.Role != "assistant" || a.Content != text.String() || len(a.Sources) != 3 || a.Model != "main-model" ||
		a.FinishReason != "stop" || a.Usage == nil || a.Usage.TotalTokens == 0 || len(a.ToolCalls) == 0 {
		t.Errorf("assistant message incomplete: %+v", a)
	}

	// Listed, then deleted.
	r, _ := http.Get(e.srv.URL + "/api/chats")
	var list struct{ Chats []sova.Chat }
	_ = json.NewDecoder(r.Body).Decode(&list)
	r.Body.Close()
	if len(list.Chats) != 1 || list.Chats[0].ID != "chat-1" || list.Chats[0].MessageCount != 2 {
		t.Errorf("list = %+v", list.Chats)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.srv.URL+"/api/chats/chat-1", nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %v %v", err, r.Status)
	}
	r, _ = http.Get(e.srv.URL + "/api/chats/chat-1")
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("deleted chat answers %d", r.StatusCode)
	}
}

func TestChatContinuesFromStore(t *testing.T) {
	e := newEnv(t, nil)
	for _, q := range []string{"What is the capital of Australia?", "And its population?"} {
		resp := e.post(t, "/api/search", `{"id":"c2","group":"chat","messages":[{"role":"user","content":"`+q+`"}]}`)
		frames(t, resp.Body)
		resp.Body.Close()
	}
	// The request that answered the second question, not the last one:
	// the first answer's chat title is asked for in the background and may
	// come after it.
	var answer *llmtest.Request
	for _, r := range e.model.Requests() {
		if r.LastUser() == "And its population?" {
			answer = r
		}
	}
	if answer == nil {
		t.Fatal("the model was not asked the second question")
	}
	// The second question carried the first exchange as history.
	if len(answer.Messages) < 4 || !strings.Contains(answer.Messages[1].Content, "capital of Australia") {
		t.Errorf("history not sent: %+v", answer.Messages)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t, map[string]string{"SOVA_MAX_BODY_BYTES": "2048"})
	tests := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"malformed json", "/api/search", `{"group":`, 400, "invalid_json"},
		// An unknown group is no error: it runs as web (seed 000 §6.1,
		// TestUnknownGroupFallsBackToWeb); an unknown model is.
		{"missing group", "/api/search", `{"messages":[{"role":"user","content":"hi"}]}`, 400, "missing_group"},
		{"empty messages", "/api/search", `{"group":"chat","messages":[]}`, 400, "empty_messages"},
		{"blank question", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"  "}]}`, 400, "empty_messages"},
		{"oversized", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"` + strings.Repeat("x", 4000) + `"}]}`, 413, "body_too_large"},
		{"unknown model", "/v1/chat/completions", `{"model":"gpt-4","messages":[{"role":"user","content":"hi"}]}`, 400, "model_not_found"},
		{"unknown path", "/api/nothing", `{}`, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.post(t, tt.path, tt.body)
			defer resp.Body.Close()
			var body struct {
				Error struct{ Message, Type, Code string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || body.Error.Code != tt.code || body.Error.Message == "" || body.Error.Type == "" {
				t.Errorf("got %d %+v, want %d %s", resp.StatusCode, body.Error, tt.status, tt.code)
			}
		})
	}
	// Nothing was stored by the rejected requests.
	chats, _ := e.app.Store.ListChats(context.Background(), e.user, 10, 0)
	if len(chats) != 0 {
		t.Errorf("rejected requests stored %d chats", len(chats))
	}
	// The unknown-model error lists the valid models.
	resp := e.post(t, "/v1/chat/completions", `{"model":"gpt-4","messages":[{"role":"user","content":"hi"}]}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "search") || !strings.Contains(string(b), "chat") {
		t.Errorf("error does not list modes: %s", b)
	}
}

// A run outlives its request: the client leaves, the run finishes anyway,
// and the stream resumes from the last event the client saw.
func TestClientGoneRunGoesOnAndStreamResumes(t *testing.T) {
	e := newEnv(t, nil)
	e.site.SetDelay(300 * time.Millisecond) // reading pages takes a while
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/api/search",
		strings.NewReader(`{"id":"gone","group":"search","messages":[{"role":"user","content":"economy in the 1930s"}]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read until pages are being read, remembering the last event id, then hang up.
	var lastID string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			lastID = id
		}
		if strings.Contains(sc.Text(), `"state":"reading"`) {
			break
		}
	}
	cancel()
	resp.Body.Close()
	if lastID == "" {
		t.Fatal("stream frames carry no SSE id")
	}

	// Resume: only later events arrive, ending with finish and [DONE].
	req, _ = http.NewRequest(http.MethodGet, e.srv.URL+"/api/chats/gone/stream", nil)
	req.Header.Set("Last-Event-ID", lastID)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	if !strings.Contains(text, `"type":"finish"`) || !strings.HasSuffix(strings.TrimSpace(text), "data: [DONE]") {
		t.Fatalf("resumed stream did not finish:\n%s", text)
	}
	if strings.Contains(text, `"type":"start"`) {
		t.Errorf("resumed stream repeated events the client had")
	}
	first, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(text, "\n", 2)[0], "id: "))
	last, _ := strconv.Atoi(lastID)
	if first != last+1 {
		t.Errorf("resumed at id %d, want %d", first, last+1)
	}

	// The answer was stored although the first client left.
	msgs, _ := e.app.Store.ListMessages(context.Background(), e.user, "gone")
	if len(msgs) != 2 || msgs[1].FinishReason != "stop" || len(msgs[1].Sources) == 0 {
		t.Fatalf("messages after the client left: %+v", msgs)
	}

	// A finished run replays its whole message; a chat without runs is 204.
	r, _ := http.Get(e.srv.URL + "/api/chats/gone/stream")
	all := frames(t, r.Body)
	r.Body.Close()
	if all[0]["type"] != "start" || all[len(all)-1]["type"] != "finish" {
		t.Errorf("replay: first %v last %v", all[0], all[len(all)-1])
	}
	_ = e.app.Store.CreateChat(context.Background(), &sova.Chat{ID: "empty", UserID: e.user})
	r, _ = http.Get(e.srv.URL + "/api/chats/empty/stream")
	if r.StatusCode != http.StatusNoContent {
		t.Errorf("chat without runs: %d", r.StatusCode)
	}
}

func TestRunEndpoints(t *testing.T) {
	e := newEnv(t, nil)
	e.site.SetDelay(5 * time.Second)
	resp := e.post(t, "/api/search", `{"id":"c","group":"search","messages":[{"role":"user","content":"economy in the 1930s"}]}`)
	runID := resp.Header.Get("X-Run-ID")
	// While it runs, GET /api/runs/{id} answers at once with its state.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"state":"reading"`) {
	}
	r, _ := http.Get(e.srv.URL + "/api/runs/" + runID)
	var view struct {
		Run   sova.Run
		Stage *struct{ Stage string }
	}
	_ = json.NewDecoder(r.Body).Decode(&view)
	r.Body.Close()
	if view.Run.State != sova.RunRunning || view.Stage == nil || view.Stage.Stage != "read" {
		t.Errorf("running view: %+v", view)
	}
	// Cancel: the stream ends, the run is cancelled.
	r, _ = http.Post(e.srv.URL+"/api/runs/"+runID+"/cancel", "", nil)
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d", r.StatusCode)
	}
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(rest), `"type":"abort"`) {
		t.Errorf("cancelled stream: %s", rest)
	}
	got, _ := e.app.Store.GetRun(context.Background(), e.user, runID)
	if got.State != sova.RunCancelled {
		t.Errorf("state after cancel: %s", got.State)
	}
	// No report for a search run; restart a cancelled run.
	r, _ = http.Get(e.srv.URL + "/api/runs/" + runID + "/report.md")
	if r.StatusCode != http.StatusConflict {
		t.Errorf("report of a cancelled run: %d", r.StatusCode)
	}
	e.site.SetDelay(0)
	r, _ = http.Post(e.srv.URL+"/api/runs/"+runID+"/restart", "", nil)
	var restarted struct{ RunID, ChatID, StreamURL string }
	_ = json.NewDecoder(r.Body).Decode(&restarted)
	r.Body.Close()
	if r.StatusCode != http.StatusAccepted || restarted.RunID == runID || restarted.ChatID != "c" {
		t.Fatalf("restart: %d %+v", r.StatusCode, restarted)
	}
	r, _ = http.Get(e.srv.URL + restarted.StreamURL)
	fr := frames(t, r.Body)
	r.Body.Close()
	if fr[len(fr)-1]["finishReason"] != "stop" {
		t.Errorf("restarted run did not finish: %v", fr[len(fr)-1])
	}
	// Unknown runs are 404; a completed run can't be restarted.
	r, _ = http.Get(e.srv.URL + "/api/runs/nope")
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown run: %d", r.StatusCode)
	}
	r, _ = http.Post(e.srv.URL+"/api/runs/"+restarted.RunID+"/restart", "", nil)
	if r.StatusCode != http.StatusConflict {
		t.Errorf("restart of a completed run: %d", r.StatusCode)
	}
}

func TestModelsAndHealth(t *testing.T) {
	e := newEnv(t, nil)
	r, err := http.Get(e.srv.URL + "/healthz")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, r.Status)
	}
	client := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"))
	page, err := client.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	// Every listed mode is a model, in registration order; internal ones
	// (assistant_task) are not.
	if got, want := strings.Join(ids, ","), strings.Join(e.app.Service.Modes().Listed(), ","); got != want || !strings.HasPrefix(got, "chat,search,deep_search,") || !strings.Contains(got, ",sgr_agent") || strings.Contains(got, "assistant_task") {
		t.Errorf("models = %v, want %s", ids, want)
	}
}

// The official OpenAI Go SDK reads Sova's endpoint unchanged.
func TestOpenAISDK(t *testing.T) {
	e := newEnv(t, nil)
	client := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	ctx := context.Background()
	for _, model := range []string{"chat", "search"} {
		t.Run(model+"/non-stream", func(t *testing.T) {
			c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("How did presidents describe the economy in the 1930s?")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Choices) != 1 || c.Choices[0].Message.Content == "" || c.Choices[0].FinishReason != "stop" || c.Usage.TotalTokens == 0 {
				t.Errorf("completion = %+v", c)
			}
		})
		t.Run(model+"/stream", func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model:         model,
				Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("How did presidents describe the economy in the 1930s?")},
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			acc := openai.ChatCompletionAccumulator{}
			var runID string
			for stream.Next() {
				ch := stream.Current()
				acc.AddChunk(ch)
				if runID == "" {
					runID = ch.Model
				} else if ch.Model != runID {
					t.Errorf("chunk model %q differs from %q", ch.Model, runID)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(acc.Choices) != 1 || acc.Choices[0].Message.Content == "" || acc.Usage.TotalTokens == 0 {
				t.Errorf("accumulated = %+v", acc.ChatCompletion)
			}
			if model == "search" && (!strings.Contains(acc.Choices[0].Message.Content, "[1]") || strings.Contains(acc.Choices[0].Message.Content, "[9]")) {
				t.Errorf("citations not verified: %q", acc.Choices[0].Message.Content)
			}
			if len(runID) < 30 {
				t.Errorf("model %q should carry the run id", runID)
			}
		})
	}
}

// The real AI SDK client (npm package "ai") consumes the stream without a
// validation error.
func TestAISDKParsesStream(t *testing.T) {
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
	for _, group := range []string{"search", "chat"} {
		body := `{"id":"sdk-` + group + `","group":"` + group + `","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(node, filepath.Join(dir, "validate.mjs"), "--url", e.srv.URL+"/api/search", "--body", body)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: AI SDK rejected the stream: %v\n%s", group, err, stderr.String())
		}
		var summary map[string]any
		if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &summary); err != nil {
			t.Fatalf("validator output %q: %v", stdout.String(), err)
		}
		t.Logf("%s: %s", group, strings.TrimSpace(stdout.String()))
	}
}
