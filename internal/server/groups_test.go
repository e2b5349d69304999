package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/sovatest"
)

// The search groups end to end: the real server, the scripted model (the
// group's tool, then an answer citing [1], [2] and a made-up [9]) and
// local fakes of the providers speaking their wire formats.

type groupEnv struct {
	*env
	prov *sovatest.Providers
}

func newGroupEnv(t *testing.T, extra map[string]string) *groupEnv {
	t.Helper()
	prov := sovatest.NewProviders(t)
	vars := sovatest.ProviderEnv(prov)
	for k, v := range extra {
		vars[k] = v
	}
	return &groupEnv{env: newEnv(t, vars), prov: prov}
}

// uiStream is a parsed UI message stream.
type uiStream struct {
	chunks []map[string]any
	text   string
	header http.Header
}

func (e *groupEnv) ask(t *testing.T, group, question string) uiStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"group": group, "messages": []any{map[string]any{
		"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": question}}}}})
	resp := e.post(t, "/api/search", string(body))
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /api/search %s: %d %s", group, resp.StatusCode, b)
	}
	s := uiStream{chunks: frames(t, resp.Body), header: resp.Header}
	var text strings.Builder
	for _, c := range s.chunks {
		if c["type"] == "text-delta" {
			text.WriteString(c["delta"].(string))
		}
	}
	s.text = text.String()
	if last := s.chunks[len(s.chunks)-1]; last["type"] != "finish" {
		t.Fatalf("stream ends with %v", last)
	}
	return s
}

// of returns the chunks of a type.
func (s uiStream) of(typ string) []map[string]any {
	var out []map[string]any
	for _, c := range s.chunks {
		if c["type"] == typ {
			out = append(out, c)
		}
	}
	return out
}

// tool returns the input of the call of a tool, and its output (decoded)
// or error text.
func (s uiStream) tool(t *testing.T, name string) (input map[string]any, output map[string]any, errText string) {
	t.Helper()
	id := ""
	for _, c := range s.of("tool-input-available") {
		if c["toolName"] == name {
			id, _ = c["toolCallId"].(string)
			input, _ = c["input"].(map[string]any)
		}
	}
	if id == "" {
		t.Fatalf("no call of %s in the stream: %v", name, s.types())
	}
	for _, c := range s.chunks {
		if c["toolCallId"] != id {
			continue
		}
		switch c["type"] {
		case "tool-output-available":
			output, _ = c["output"].(map[string]any)
		case "tool-output-error":
			errText, _ = c["errorText"].(string)
		}
	}
	return input, output, errText
}

func (s uiStream) types() map[string]int {
	out := map[string]int{}
	for _, c := range s.chunks {
		out[c["type"].(string)]++
	}
	return out
}

// cited returns the URLs of the source-url parts (the cited sources).
func (s uiStream) cited() []string {
	var out []string
	for _, c := range s.of("source-url") {
		out = append(out, c["url"].(string))
	}
	return out
}

// queries returns the data-query_completion parts' data.
func (s uiStream) queries() []map[string]any {
	var out []map[string]any
	for _, c := range s.of("data-query_completion") {
		out = append(out, c["data"].(map[string]any))
	}
	return out
}

// at walks a decoded JSON value: keys of objects, indexes of arrays.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// checkAnswer checks the answer cites the tool's results: [1] and [2]
// kept, the made-up [9] dropped, and the cited sources include want.
func checkAnswer(t *testing.T, s uiStream, want string) {
	t.Helper()
	if !strings.Contains(s.text, "[1]") || !strings.Contains(s.text, "[2]") || strings.Contains(s.text, "[9]") {
		t.Errorf("answer = %q", s.text)
	}
	if !slices.Contains(s.cited(), want) {
		t.Errorf("cited sources %v lack %s", s.cited(), want)
	}
}

// checkQueries checks the tool's queries showed as data-query_completion,
// each started and completed with a result count.
func checkQueries(t *testing.T, s uiStream, total int) {
	t.Helper()
	started, completed := 0, 0
	for _, q := range s.queries() {
		if q["total"] != float64(total) {
			t.Errorf("query part %v: total is not %d", q, total)
		}
		switch q["status"] {
		case "started":
			started++
		case "completed":
			completed++
			if n, ok := q["resultsCount"].(float64); !ok || n < 1 {
				t.Errorf("completed query without results: %v", q)
			}
		}
	}
	if started != total || completed != total {
		t.Errorf("data-query_completion: %d started, %d completed, want %d each: %v", started, completed, total, s.queries())
	}
}

func TestGroupAcademic(t *testing.T) {
	// Provider addresses are trusted: with the page fetcher's guard shut
	// for local addresses, the local fakes still answer.
	e := newGroupEnv(t, map[string]string{"SOVA_FETCH_ALLOW_HOSTS": ""})
	const q = "attention in transformer models"
	s := e.ask(t, "academic", q)
	in, out, errText := s.tool(t, "academic_search")
	if errText != "" || at(in, "queries", 0) != q {
		t.Fatalf("academic_search input %v, error %q", in, errText)
	}
	// Both keyless providers were asked for the query.
	oa, ax := e.prov.Requests(sovatest.OpenAlex), e.prov.Requests(sovatest.Arxiv)
	if len(oa) != 1 || oa[0].Path != "/works" || oa[0].Query.Get("search") != q {
		t.Errorf("OpenAlex requests: %+v", oa)
	}
	if len(ax) != 1 || ax[0].Path != "/api/query" || !strings.Contains(ax[0].Query.Get("search_query"), "attention") {
		t.Errorf("arXiv requests: %+v", ax)
	}
	// 000 §3.2's shape, papers numbered, de-duplicated (Attention Is All
	// You Need is in both fixtures, once by DOI and once by arXiv id).
	papers, _ := at(out, "searches", 0, "results").([]any)
	if at(out, "searches", 0, "query") != q || len(papers) < 3 || at(papers, 0, "number") != float64(1) {
		t.Fatalf("academic_search output: %v", out)
	}
	titles := map[string]int{}
	for _, p := range papers {
		titles[at(p, "title").(string)]++
		if at(p, "url") == "" || at(p, "source") == nil {
			t.Errorf("paper without url or source: %v", p)
		}
	}
	if titles["Attention Is All You Need"] != 1 {
		t.Errorf("papers not de-duplicated: %v", titles)
	}
	checkQueries(t, s, 1)
	checkAnswer(t, s, at(papers, 0, "url").(string))
}

func TestGroupYouTube(t *testing.T) {
	e := newGroupEnv(t, nil)
	const q = "go concurrency patterns"
	s := e.ask(t, "youtube", q)
	in, out, errText := s.tool(t, "youtube_search")
	if errText != "" || in["query"] != q {
		t.Fatalf("youtube_search input %v, error %q", in, errText)
	}
	reqs := e.prov.Requests(sovatest.Invidious)
	if len(reqs) == 0 || reqs[0].Path != "/api/v1/search" || reqs[0].Query.Get("q") != q || reqs[0].Query.Get("type") != "video" {
		t.Fatalf("Invidious requests: %+v", reqs)
	}
	captions := 0
	for _, r := range reqs {
		if strings.HasPrefix(r.Path, "/api/v1/captions/") && r.Query.Get("label") != "" {
			captions++
		}
	}
	if captions == 0 {
		t.Errorf("no transcript was read: %+v", reqs)
	}
	// Videos with transcripts whose segments keep their timestamps and
	// link to their moment.
	video := at(out, "videos", 0)
	const watch = "https://www.youtube.com/watch?v=f6kdp27TYZs"
	if at(video, "url") != watch || at(video, "number") != float64(1) || at(video, "title") == nil {
		t.Fatalf("video: %v", video)
	}
	seg := at(video, "transcript", 1)
	if seg == nil || at(seg, "timestamp") != "01:05" || at(seg, "url") != watch+"&t=65s" ||
		!strings.HasPrefix(at(seg, "text").(string), "Don't communicate") {
		t.Errorf("transcript: %v", at(video, "transcript"))
	}
	// The model read the transcript with its timestamps.
	var toolMsg string
	for _, r := range e.model.Requests() {
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				toolMsg = m.Content
			}
		}
	}
	if !strings.Contains(toolMsg, "[1] Google I/O 2012 - Go Concurrency Patterns") || !strings.Contains(toolMsg, "[00:00] Hello, I'm Rob Pike.") {
		t.Errorf("the model read:\n%s", toolMsg)
	}
	checkQueries(t, s, 1)
	checkAnswer(t, s, watch)
}

func TestGroupReddit(t *testing.T) {
	e := newGroupEnv(t, nil)
	s := e.ask(t, "reddit", "sqlc or gorm")
	in, out, errText := s.tool(t, "reddit_search")
	if errText != "" || at(in, "timeRange", 0) != "month" {
		t.Fatalf("reddit_search input %v, error %q", in, errText)
	}
	// The subreddit named in the query is searched alone, over the month.
	reqs := e.prov.Requests(sovatest.Reddit)
	if len(reqs) != 1 || reqs[0].Path != "/r/golang/search.json" || reqs[0].Query.Get("t") != "month" ||
		reqs[0].Query.Get("restrict_sr") != "1" || reqs[0].Query.Get("q") != "sqlc or gorm" {
		t.Fatalf("Reddit requests: %+v", reqs)
	}
	post := at(out, "searches", 0, "results", 0)
	if at(out, "searches", 0, "timeRange") != "month" || at(post, "subreddit") != "golang" || at(post, "isRedditPost") != true ||
		at(post, "number") != float64(1) || !strings.Contains(at(post, "url").(string), "/comments/") {
		t.Fatalf("reddit_search output: %v", out)
	}
	checkQueries(t, s, 1)
	checkAnswer(t, s, at(post, "url").(string))
}

func TestGroupCode(t *testing.T) {
	t.Run("search chain", func(t *testing.T) {
		e := newGroupEnv(t, nil)
		s := e.ask(t, "code", "economy 1930s")
		_, out, errText := s.tool(t, "code_context")
		if errText != "" || !slices.Contains(e.sx.Queries(), "economy 1930s") {
			t.Fatalf("code_context error %q; SearXNG saw %v", errText, e.sx.Queries())
		}
		// The first results were read: their text is the page's, not the
		// snippet.
		first := at(out, "results", 0)
		if c, _ := at(first, "content").(string); !strings.Contains(c, "\n") || len(c) < 150 {
			t.Errorf("first result not read: %v", first)
		}
		if len(s.of("data-page")) == 0 {
			t.Errorf("no page reading shown: %v", s.types())
		}
		checkQueries(t, s, 1)
		checkAnswer(t, s, at(first, "url").(string))
	})
	t.Run("tavily", func(t *testing.T) {
		e := newGroupEnv(t, map[string]string{"TAVILY_API_KEY": "tvly-test"})
		s := e.ask(t, "code", "range over func in go")
		_, out, errText := s.tool(t, "code_context")
		reqs := e.prov.Requests(sovatest.Tavily)
		if errText != "" || len(reqs) != 1 {
			t.Fatalf("code_context error %q, Tavily requests %+v", errText, reqs)
		}
		var body map[string]any
		_ = json.Unmarshal(reqs[0].Body, &body)
		if body["search_depth"] != "advanced" || body["include_raw_content"] != "markdown" || body["query"] != "range over func in go" ||
			reqs[0].Header.Get("Authorization") != "Bearer tvly-test" {
			t.Errorf("Tavily request: %s %v", reqs[0].Body, reqs[0].Header)
		}
		first := at(out, "results", 0)
		if at(first, "url") != sovatest.TavilyCodeURL || at(first, "docs") != true || !strings.Contains(at(first, "content").(string), "```go") {
			t.Errorf("code_context output: %v", out)
		}
		checkAnswer(t, s, sovatest.TavilyCodeURL)
	})
}

func TestGroupWeb(t *testing.T) {
	e := newGroupEnv(t, nil)
	const q = "economy 1930s"
	s := e.ask(t, "web", q)
	in, out, errText := s.tool(t, "web_search")
	if errText != "" || len(in["queries"].([]any)) != 3 {
		t.Fatalf("web_search input %v, error %q", in, errText)
	}
	for _, want := range []string{q, q + " history", q + " analysis"} {
		if !slices.Contains(e.sx.Queries(), want) {
			t.Errorf("SearXNG did not get %q: %v", want, e.sx.Queries())
		}
	}
	if len(at(out, "searches").([]any)) != 3 || at(out, "searches", 0, "results", 0, "number") != float64(1) {
		t.Fatalf("web_search output: %v", out)
	}
	checkQueries(t, s, 3)
	checkAnswer(t, s, at(out, "searches", 0, "results", 0, "url").(string))
}

func TestGroupX(t *testing.T) {
	e := newGroupEnv(t, map[string]string{"XAI_API_KEY": "xai-test-key"})
	s := e.ask(t, "x", "go 1.23 iterators")
	_, out, errText := s.tool(t, "x_search")
	reqs := e.prov.Requests(sovatest.XAI)
	if errText != "" || len(reqs) != 1 || reqs[0].Path != "/responses" || reqs[0].Header.Get("Authorization") != "Bearer xai-test-key" {
		t.Fatalf("x_search error %q, xAI requests %+v", errText, reqs)
	}
	var body struct {
		Input []struct{ Role, Content string }
		Tools []struct {
			Type     string   `json:"type"`
			From     string   `json:"from_date"`
			To       string   `json:"to_date"`
			Included []string `json:"allowed_x_handles"`
		}
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 1 || body.Tools[0].Type != "x_search" || body.Tools[0].From != "2024-06-01" || body.Tools[0].To != "2024-06-30" ||
		len(body.Tools[0].Included) != 1 || body.Tools[0].Included[0] != "golang" || body.Input[len(body.Input)-1].Content != "go 1.23 iterators" {
		t.Errorf("xAI request: %s", reqs[0].Body)
	}
	// Both posts, each with the words quoted; the profile met is no source.
	posts, _ := at(out, "searches", 0, "sources").([]any)
	post := at(out, "searches", 0, "sources", 0)
	if len(posts) != 2 || at(post, "link") != sovatest.XPosts[0] || at(post, "title") != "@golang on X" || at(post, "number") != float64(1) ||
		at(post, "text") != sovatest.XPostTexts[0] || !strings.Contains(at(out, "searches", 0, "content").(string), "range-over-func") {
		t.Fatalf("x_search output: %v", out)
	}
	checkQueries(t, s, 1)
	for _, q := range s.queries() {
		if q["status"] == "completed" && q["resultsCount"] != float64(len(sovatest.XPosts)) {
			t.Errorf("the query counts %v posts, want %d: %v", q["resultsCount"], len(sovatest.XPosts), q)
		}
	}
	checkAnswer(t, s, sovatest.XPosts[0])
}

// A provider that fails (5xx, bad JSON, no answer in time) ends its tool
// call with an error part; the other tools' results stand and the answer
// comes.
func TestGroupProviderFails(t *testing.T) {
	tests := []struct {
		group, tool, args, prefix string
		reply                     sovatest.ProviderReply
		want                      string
	}{
		{"academic", "academic_search", `{"queries":["q"]}`, sovatest.OpenAlex, sovatest.ProviderReply{Status: 503, Body: "<html>down</html>"}, "HTTP 503"},
		{"youtube", "youtube_search", `{"query":"q"}`, sovatest.Invidious, sovatest.ProviderReply{Body: `{"videos": [`}, "not the expected JSON"},
		{"reddit", "reddit_search", `{"queries":["q"]}`, sovatest.Reddit, sovatest.ProviderReply{Delay: 3e9, Body: "{}"}, "no answer within"},
	}
	for _, tt := range tests {
		t.Run(tt.group, func(t *testing.T) {
			timeout := "5s" // a 5xx is retried once after 500ms
			if tt.reply.Delay > 0 {
				timeout = "400ms"
			}
			e := newGroupEnv(t, map[string]string{"SOVA_PROVIDER_TIMEOUT": timeout})
			e.prov.Fail(tt.prefix, tt.reply)
			e.prov.Fail(sovatest.Arxiv, tt.reply) // academic has two providers: both fail
			// The first step calls the group's tool and datetime at once.
			e.model.GroupCalls = func(r *llmtest.Request) []llm.ToolCall {
				return []llm.ToolCall{
					{ID: "a", Name: tt.tool, Arguments: tt.args},
					{ID: "b", Name: "datetime", Arguments: `{}`},
				}
			}
			s := e.ask(t, tt.group, "q")
			_, _, errText := s.tool(t, tt.tool)
			if !strings.Contains(errText, tt.want) {
				t.Errorf("%s error part %q, want one saying %q", tt.tool, errText, tt.want)
			}
			if _, out, errText := s.tool(t, "datetime"); errText != "" || out["timestamp"] == nil {
				t.Errorf("datetime: %v %q", out, errText)
			}
			last := s.chunks[len(s.chunks)-1]
			if !strings.Contains(s.text, "The sources agree") || last["finishReason"] != "stop" || len(s.of("error")) != 0 {
				t.Errorf("answer %q, finish %v, types %v", s.text, last, s.types())
			}
			// The model was told of the failure in the tool's result.
			var told bool
			for _, r := range e.model.Requests() {
				for _, m := range r.Messages {
					told = told || (m.Role == llm.RoleTool && strings.HasPrefix(m.Content, "Error: "))
				}
			}
			if !told {
				t.Error("the model was not told the tool failed")
			}
		})
	}
}

// An unknown group runs as web (seed 000 §6.1).
func TestUnknownGroupFallsBackToWeb(t *testing.T) {
	e := newGroupEnv(t, nil)
	s := e.ask(t, "nope", "economy 1930s")
	if s.header.Get("X-Mode") != "web" {
		t.Errorf("X-Mode = %q", s.header.Get("X-Mode"))
	}
	if _, out, errText := s.tool(t, "web_search"); errText != "" || out == nil {
		t.Errorf("web_search: %v %q", out, errText)
	}
	chats, _ := e.app.Store.ListChats(context.Background(), e.user, 10, 0)
	if len(chats) != 1 || chats[0].Mode != "web" {
		t.Errorf("chats = %+v", chats)
	}
}

// A tool whose provider needs a missing key is withdrawn: the run says so,
// the model is told which setting enables it, and /api/providers lists it.
func TestGroupToolWithdrawn(t *testing.T) {
	e := newGroupEnv(t, nil) // no XAI_API_KEY
	s := e.ask(t, "x", "what do people say about go 1.23?")
	var status map[string]any
	for _, c := range s.of("data-status") {
		if d := c["data"].(map[string]any); strings.Contains(d["message"].(string), "x_search") {
			status = d
		}
	}
	if status == nil || !strings.Contains(status["message"].(string), "needs XAI_API_KEY") {
		t.Errorf("no status part about x_search: %v", s.of("data-status"))
	}
	if len(s.of("tool-input-available")) != 0 || len(e.prov.Requests(sovatest.XAI)) != 0 {
		t.Errorf("a withdrawn tool ran: %v", s.types())
	}
	// The group's model call (the chat's title is asked for beside it).
	var last *llmtest.Request
	for _, r := range e.model.Requests() {
		if strings.Contains(r.System(), "Tool results are numbered") {
			last = r
		}
	}
	if last == nil || len(last.Tools) != 0 || !strings.Contains(last.System(), "Setting XAI_API_KEY on the server enables it") {
		t.Fatalf("model request: %+v", last)
	}
	if !strings.Contains(s.text, "XAI_API_KEY") {
		t.Errorf("answer %q", s.text)
	}

	var body struct {
		Tools []struct {
			Name, Provider, Reason string
			Available              bool
			Settings, Groups       []string
		}
	}
	if code := getJSON(t, e.srv.URL+"/api/providers", &body); code != 200 {
		t.Fatalf("GET /api/providers: %d", code)
	}
	tools := map[string]int{}
	for i, tl := range body.Tools {
		tools[tl.Name] = i
	}
	for _, name := range []string{"web_search", "retrieve", "text_translate", "datetime", "academic_search", "youtube_search", "reddit_search", "code_context", "x_search"} {
		if _, ok := tools[name]; !ok {
			t.Errorf("/api/providers lacks %s: %+v", name, body.Tools)
		}
	}
	x := body.Tools[tools["x_search"]]
	if x.Available || x.Reason != "needs XAI_API_KEY" || x.Settings[0] != "XAI_API_KEY" || !slices.Equal(x.Groups, []string{"x"}) {
		t.Errorf("x_search: %+v", x)
	}
	ac := body.Tools[tools["academic_search"]]
	if !ac.Available || ac.Provider != "openalex+arxiv" || !slices.Equal(ac.Groups, []string{"academic"}) {
		t.Errorf("academic_search: %+v", ac)
	}
	if dt := body.Tools[tools["datetime"]]; !slices.Equal(dt.Groups, []string{"web", "academic", "youtube", "reddit", "stocks", "crypto", "memory", "connectors"}) {
		t.Errorf("datetime: %+v", dt)
	}
	for _, name := range []string{"search_memories", "add_memory", "connectors_search"} {
		if tl, ok := tools[name]; !ok || !body.Tools[tl].Available {
			t.Errorf("/api/providers: %s missing or withdrawn: %+v", name, body.Tools)
		}
	}

	// With the key, the tool is there.
	e2 := newGroupEnv(t, map[string]string{"XAI_API_KEY": "k"})
	body.Tools = nil
	_ = getJSON(t, e2.srv.URL+"/api/providers", &body)
	for _, tl := range body.Tools {
		if tl.Name == "x_search" && (!tl.Available || tl.Provider != "xai" || tl.Reason != "") {
			t.Errorf("x_search with a key: %+v", tl)
		}
	}
	// The groups are modes.
	var modes struct{ Modes []struct{ ID string } }
	_ = getJSON(t, e2.srv.URL+"/api/modes", &modes)
	var ids []string
	for _, m := range modes.Modes {
		ids = append(ids, m.ID)
	}
	for _, g := range []string{"chat", "web", "academic", "youtube", "reddit", "code", "x", "stocks", "crypto", "memory", "connectors"} {
		if !slices.Contains(ids, g) {
			t.Errorf("/api/modes lacks %s: %v", g, ids)
		}
	}
}

// model "academic" on /v1/chat/completions, read by the official OpenAI
// SDK: the tool call arrives as a tool-call chunk, the answer as content.
func TestGroupOpenAISDK(t *testing.T) {
	e := newGroupEnv(t, nil)
	client := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "academic",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("attention in transformer models")},
	})
	acc := openai.ChatCompletionAccumulator{}
	var calls []string
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		for _, c := range ch.Choices {
			for _, tc := range c.Delta.ToolCalls {
				calls = append(calls, tc.Function.Name+" "+tc.Function.Arguments)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "academic_search {") || !strings.Contains(calls[0], `"queries":["attention in transformer models"]`) {
		t.Errorf("tool calls = %q", calls)
	}
	content := acc.Choices[0].Message.Content
	if !strings.Contains(content, "papers") || !strings.Contains(content, "[1]") || strings.Contains(content, "[9]") {
		t.Errorf("content = %q", content)
	}

	// An unknown model stays an error: OpenAI clients expect it.
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "nope", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "model_not_found" {
		t.Errorf("unknown model: %v", err)
	}
}

// The real AI SDK client parses the academic and youtube streams, tool
// parts and data-query_completion included.
func TestGroupAISDK(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test", "aisdk")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed; the AI SDK check needs Node.js")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai")); err != nil {
		t.Skip("AI SDK not installed: run npm ci --prefix test/aisdk")
	}
	e := newGroupEnv(t, nil)
	for _, g := range []struct{ group, question string }{{"academic", "attention in transformer models"}, {"youtube", "go concurrency patterns"}} {
		body := `{"id":"sdk-` + g.group + `","group":"` + g.group + `","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"` + g.question + `"}]}]}`
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(node, filepath.Join(dir, "validate.mjs"), "--url", e.srv.URL+"/api/search", "--body", body)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: AI SDK rejected the stream: %v\n%s", g.group, err, stderr.String())
		}
		var summary map[string]any
		if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &summary); err != nil {
			t.Fatalf("validator output %q: %v", stdout.String(), err)
		}
		if !strings.Contains(stdout.String(), "data-query_completion") {
			t.Errorf("%s: the SDK saw no query progress: %s", g.group, stdout.String())
		}
		t.Logf("%s: %s", g.group, strings.TrimSpace(stdout.String()))
	}
}

// Where the sandbox cannot run (here: bubblewrap is missing),
// code_interpreter is withdrawn from the web and academic groups with the
// reason, and /api/providers says so.
func TestGroupCodeInterpreterWithdrawn(t *testing.T) {
	e := newGroupEnv(t, map[string]string{"SOVA_SANDBOX_BWRAP": filepath.Join(t.TempDir(), "no-bwrap")})
	s := e.ask(t, "academic", "attention in transformer models")
	var status map[string]any
	for _, c := range s.of("data-status") {
		if d := c["data"].(map[string]any); strings.Contains(d["message"].(string), "code_interpreter") {
			status = d
		}
	}
	if status == nil || !strings.Contains(status["message"].(string), "the code sandbox cannot run on this server") {
		t.Errorf("no status part about code_interpreter: %v", s.of("data-status"))
	}
	for _, r := range e.model.Requests() {
		if r.HasTool("code_interpreter") {
			t.Errorf("code_interpreter offered without a sandbox")
		}
	}
	var body struct {
		Tools []struct {
			Name, Provider, Reason string
			Available              bool
			Settings, Groups       []string
		}
	}
	if code := getJSON(t, e.srv.URL+"/api/providers", &body); code != 200 {
		t.Fatalf("GET /api/providers: %d", code)
	}
	i := slices.IndexFunc(body.Tools, func(tl struct {
		Name, Provider, Reason string
		Available              bool
		Settings, Groups       []string
	}) bool {
		return tl.Name == "code_interpreter"
	})
	if i < 0 {
		t.Fatalf("/api/providers lacks code_interpreter: %+v", body.Tools)
	}
	if c := body.Tools[i]; c.Available || !strings.Contains(c.Reason, "the code sandbox cannot run on this server (") ||
		c.Settings[0] != "SOVA_SANDBOX_ENABLED" || !slices.Equal(c.Groups, []string{"web", "academic"}) {
		t.Errorf("code_interpreter: %+v", c)
	}
}

// The stocks group: stock_chart asks Yahoo Finance for each ticker; the
// symbols are numbered sources the answer cites.
func TestGroupStocks(t *testing.T) {
	e := newGroupEnv(t, nil)
	s := e.ask(t, "stocks", "Apple and Toyota this week")
	in, out, errText := s.tool(t, "stock_chart")
	if errText != "" || at(in, "symbols", 1) != "7203.T" {
		t.Fatalf("stock_chart input %v, error %q", in, errText)
	}
	reqs := e.prov.Requests(sovatest.Yahoo)
	paths := []string{}
	for _, r := range reqs {
		paths = append(paths, r.Path)
		if r.Query.Get("range") != "5d" {
			t.Errorf("Yahoo request %s?%s", r.Path, r.Query.Encode())
		}
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"/v8/finance/chart/7203.T", "/v8/finance/chart/AAPL"}) {
		t.Fatalf("Yahoo requests: %v", paths)
	}
	aapl := at(out, "charts", 0)
	if at(aapl, "symbol") != "AAPL" || at(aapl, "price") != 213.07 || at(aapl, "currency") != "USD" || at(aapl, "number") != float64(1) ||
		len(at(aapl, "points").([]any)) != 4 || at(aapl, "change", "percent") == nil {
		t.Fatalf("stock_chart output: %v", out)
	}
	if at(out, "charts", 1, "symbol") != "7203.T" || at(out, "charts", 1, "number") != float64(2) {
		t.Errorf("second chart: %v", at(out, "charts", 1))
	}
	checkAnswer(t, s, "https://finance.yahoo.com/quote/AAPL")
}

// The crypto group: coin_data asks CoinGecko's keyless API for the coin.
func TestGroupCrypto(t *testing.T) {
	e := newGroupEnv(t, nil)
	s := e.ask(t, "crypto", "How is bitcoin doing?")
	in, out, errText := s.tool(t, "coin_data")
	if errText != "" || in["coinId"] != "bitcoin" {
		t.Fatalf("coin_data input %v, error %q", in, errText)
	}
	reqs := e.prov.Requests(sovatest.CoinGecko)
	if len(reqs) != 1 || reqs[0].Path != "/api/v3/coins/bitcoin" || reqs[0].Header.Get("x-cg-demo-api-key") != "" {
		t.Fatalf("CoinGecko requests: %+v", reqs)
	}
	if at(out, "id") != "bitcoin" || at(out, "symbol") != "btc" || at(out, "number") != float64(1) || at(out, "currency") != "usd" {
		t.Fatalf("coin_data output: %v", out)
	}
	if p, _ := at(out, "price").(float64); p <= 0 {
		t.Errorf("price: %v", out)
	}
	// One source: [1] is kept, the made-up [2] and [9] are dropped.
	if !strings.Contains(s.text, "[1]") || strings.Contains(s.text, "[9]") || !slices.Contains(s.cited(), at(out, "url").(string)) {
		t.Errorf("answer %q, cited %v", s.text, s.cited())
	}
	// The groups are listed with their tools' providers.
	var body struct {
		Tools []struct {
			Name, Provider string
			Available      bool
			Groups         []string
		}
	}
	_ = getJSON(t, e.srv.URL+"/api/providers", &body)
	want := map[string]string{"stock_chart": "yahoo finance", "currency_converter": "frankfurter", "coin_data": "coingecko",
		"coin_ohlc": "coingecko", "coin_data_by_contract": "coingecko", "get_weather_data": "Open-Meteo", "nearby_places_search": "OpenStreetMap"}
	for _, tl := range body.Tools {
		if p, ok := want[tl.Name]; ok {
			if !tl.Available || tl.Provider != p || len(tl.Groups) != 1 {
				t.Errorf("%s: %+v", tl.Name, tl)
			}
			delete(want, tl.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("/api/providers lacks %v", want)
	}
}

// The web group's data tools: the weather from Open-Meteo and cafés from
// Nominatim and Overpass, called together in the one tool round.
func TestGroupWebWeatherAndPlaces(t *testing.T) {
	e := newGroupEnv(t, nil)
	e.model.GroupCalls = func(r *llmtest.Request) []llm.ToolCall {
		return []llm.ToolCall{
			{ID: "w", Name: "get_weather_data", Arguments: `{"location":"Berlin","days":2}`},
			{ID: "p", Name: "nearby_places_search", Arguments: `{"location":"Red Square, Moscow","type":"cafe"}`},
		}
	}
	s := e.ask(t, "web", "weather in Berlin and cafés near Red Square")
	_, w, errText := s.tool(t, "get_weather_data")
	if errText != "" || at(w, "provider") != "Open-Meteo" || at(w, "location", "name") != "Berlin" || at(w, "daily", 0, "date") == nil {
		t.Fatalf("get_weather_data output %v, error %q", w, errText)
	}
	_, p, errText := s.tool(t, "nearby_places_search")
	if errText != "" || at(p, "provider") != "OpenStreetMap" || at(p, "places", 0, "name") == nil {
		t.Fatalf("nearby_places_search output %v, error %q", p, errText)
	}
	if len(e.prov.Requests(sovatest.OpenMeteo)) < 2 || len(e.prov.Requests(sovatest.Nominatim)) != 1 || len(e.prov.Requests(sovatest.Overpass)) != 1 {
		t.Errorf("provider requests: %d Open-Meteo, %d Nominatim, %d Overpass", len(e.prov.Requests(sovatest.OpenMeteo)),
			len(e.prov.Requests(sovatest.Nominatim)), len(e.prov.Requests(sovatest.Overpass)))
	}
}
