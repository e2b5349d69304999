package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// newSpacesEnv is newEnv with document spaces served.
func newSpacesEnv(t *testing.T, extra map[string]string) *env {
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
	e.srv = httptest.NewServer(server.New(server.Options{
		Service: a.Service, Store: a.Store, Auth: testAuth(a), MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test",
		Spaces: a.Spaces, MaxUploadBytes: cfg.SpacesMaxUploadBytes, MaxFileBytes: cfg.SpacesMaxFileBytes,
		Memory: a.Memory, Connectors: a.Connectors,
	}))
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return e
}

// do sends a request and decodes a JSON answer into out (when not nil).
func do(t *testing.T, method, u string, body io.Reader, contentType string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, u, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

type apiErr struct {
	Error struct{ Message, Type, Code string } `json:"error"`
}

// upload posts files as multipart/form-data.
func upload(t *testing.T, u string, files map[string]string) (int, map[string]any, apiErr) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("note", "an ordinary field is ignored")
	for name, content := range files {
		w, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(content))
	}
	_ = mw.Close()
	var raw json.RawMessage
	status := do(t, "POST", u, &buf, mw.FormDataContentType(), &raw)
	var ok map[string]any
	var bad apiErr
	_ = json.Unmarshal(raw, &ok)
	_ = json.Unmarshal(raw, &bad)
	return status, ok, bad
}

const vostokMD = "# Vostok\n\n## Budget\n\nThe Vostok budget is five million roubles, approved in March.\n"

func TestSpacesAPI(t *testing.T) {
	e := newSpacesEnv(t, map[string]string{"SOVA_SPACES_MAX_FILE_BYTES": "4096"})
	base := e.srv.URL + "/api/spaces"

	var sp sova.Space
	if st := do(t, "POST", base, strings.NewReader(`{"name":"Projects","description":"plans"}`), "application/json", &sp); st != 201 || sp.ID == "" || sp.Name != "Projects" {
		t.Fatalf("create: %d %+v", st, sp)
	}
	var e409 apiErr
	if st := do(t, "POST", base, strings.NewReader(`{"name":"Projects"}`), "application/json", &e409); st != 409 || e409.Error.Code != "space_exists" {
		t.Errorf("duplicate: %d %+v", st, e409)
	}
	// The answer says the name is taken, never the store's SQL.
	for _, leak := range []string{"constraint", "UNIQUE", "spaces.", "store:", "sqlite", "SQL"} {
		if strings.Contains(e409.Error.Message, leak) {
			t.Errorf("409 message leaks %q: %s", leak, e409.Error.Message)
		}
	}
	if !strings.Contains(e409.Error.Message, "already exists") {
		t.Errorf("409 message: %q", e409.Error.Message)
	}
	if st := do(t, "POST", base, strings.NewReader(`{"description":"no name"}`), "application/json", &e409); st != 400 {
		t.Errorf("no name: %d", st)
	}

	// Upload: Markdown and text are added, an image fails, a form field is
	// ignored.
	st, body, _ := upload(t, base+"/"+sp.ID+"/documents", map[string]string{
		"vostok.md": vostokMD, "notes.txt": "Zapad starts in June.", "photo.png": "\x89PNG\r\n\x1a\n\x00",
	})
	if st != 201 {
		t.Fatalf("upload: %d %v", st, body)
	}
	statuses := map[string]string{}
	for _, d := range body["documents"].([]any) {
		m := d.(map[string]any)
		statuses[m["name"].(string)] = m["status"].(string)
	}
	if statuses["vostok.md"] != "added" || statuses["notes.txt"] != "added" || statuses["photo.png"] != "failed" {
		t.Errorf("upload statuses = %v", statuses)
	}
	// The same file again: 200, unchanged.
	if st, body, _ := upload(t, base+"/"+sp.ID+"/documents", map[string]string{"vostok.md": vostokMD}); st != 200 ||
		!strings.Contains(fmt.Sprint(body), "unchanged") {
		t.Errorf("re-upload: %d %v", st, body)
	}
	// Only bad files: the error of the first.
	if st, _, bad := upload(t, base+"/"+sp.ID+"/documents", map[string]string{"photo.png": "\x89PNG\r\n\x1a\n\x00"}); st != 415 || bad.Error.Code != "unsupported_format" {
		t.Errorf("image only: %d %+v", st, bad)
	}
	if st, _, bad := upload(t, base+"/"+sp.ID+"/documents", map[string]string{"big.txt": strings.Repeat("x ", 5000)}); st != 413 || bad.Error.Code != "file_too_large" {
		t.Errorf("too large: %d %+v", st, bad)
	}
	if st := do(t, "POST", base+"/"+sp.ID+"/documents", strings.NewReader(`{}`), "application/json", &e409); st != 400 || e409.Error.Code != "invalid_upload" {
		t.Errorf("JSON upload: %d %+v", st, e409)
	}

	// Listing, by ID and by name.
	var list struct{ Spaces []sova.Space }
	if st := do(t, "GET", base, nil, "", &list); st != 200 || len(list.Spaces) != 1 || list.Spaces[0].DocumentCount != 2 || list.Spaces[0].ChunkCount < 2 {
		t.Errorf("list: %d %+v", st, list)
	}
	var docs struct{ Documents []sova.Document }
	if st := do(t, "GET", base+"/Projects/documents", nil, "", &docs); st != 200 || len(docs.Documents) != 2 {
		t.Fatalf("documents: %d %+v", st, docs)
	}
	for _, d := range docs.Documents {
		if d.Size == 0 || d.ChunkCount == 0 || d.SHA256 == "" {
			t.Errorf("document without size or chunks: %+v", d)
		}
	}

	// Search.
	var res struct {
		Hits []struct {
			Document, Snippet, URL, Position, Heading string
			Seq                                       int
		}
	}
	if st := do(t, "GET", base+"/"+sp.ID+"/search?q="+url.QueryEscape("Vostok budget")+"&limit=3", nil, "", &res); st != 200 || len(res.Hits) == 0 {
		t.Fatalf("search: %d %+v", st, res)
	}
	h := res.Hits[0]
	if h.Document != "vostok.md" || !strings.Contains(h.Snippet, "budget") || !strings.HasPrefix(h.URL, "sova://spaces/"+sp.ID+"/documents/") ||
		h.Position != "chunk 1 of 1, Vostok > Budget" {
		t.Errorf("hit = %+v", h)
	}
	if st := do(t, "GET", base+"/"+sp.ID+"/search?q=", nil, "", &e409); st != 400 || e409.Error.Code != "empty_query" {
		t.Errorf("empty query: %d %+v", st, e409)
	}
	if st := do(t, "GET", base+"/"+sp.ID+"/search?q=x&limit=0", nil, "", &e409); st != 400 {
		t.Errorf("bad limit: %d", st)
	}

	// Rename and describe.
	var renamed sova.Space
	if st := do(t, "PATCH", base+"/"+sp.ID, strings.NewReader(`{"name":"Plans"}`), "application/json", &renamed); st != 200 || renamed.Name != "Plans" || renamed.Description != "plans" {
		t.Errorf("rename: %d %+v", st, renamed)
	}

	// Delete a document, then the space.
	var doc sova.Document
	for _, d := range docs.Documents {
		if d.Name == "notes.txt" {
			doc = d
		}
	}
	if st := do(t, "GET", base+"/"+sp.ID+"/documents/"+doc.ID, nil, "", &doc); st != 200 || doc.Name != "notes.txt" {
		t.Errorf("get document: %d %+v", st, doc)
	}
	if st := do(t, "DELETE", base+"/"+sp.ID+"/documents/"+doc.ID, nil, "", nil); st != 204 {
		t.Errorf("delete document: %d", st)
	}
	if st := do(t, "DELETE", base+"/"+sp.ID+"/documents/"+doc.ID, nil, "", &e409); st != 404 || e409.Error.Code != "document_not_found" {
		t.Errorf("delete again: %d %+v", st, e409)
	}
	if st := do(t, "DELETE", base+"/"+sp.ID, nil, "", nil); st != 204 {
		t.Errorf("delete space: %d", st)
	}
	if st := do(t, "GET", base+"/"+sp.ID, nil, "", &e409); st != 404 || e409.Error.Code != "space_not_found" {
		t.Errorf("deleted space: %d %+v", st, e409)
	}
}

func TestUploadBodyLimit(t *testing.T) {
	e := newSpacesEnv(t, map[string]string{"SOVA_SPACES_MAX_UPLOAD_BYTES": "2048"})
	var sp sova.Space
	do(t, "POST", e.srv.URL+"/api/spaces", strings.NewReader(`{"name":"S"}`), "application/json", &sp)
	st, _, bad := upload(t, e.srv.URL+"/api/spaces/"+sp.ID+"/documents", map[string]string{"a.txt": strings.Repeat("word ", 1000)})
	if st != 413 || bad.Error.Code != "body_too_large" {
		t.Errorf("over the upload limit: %d %+v", st, bad)
	}
}

// addDocs creates a space holding the Vostok document.
func addDocs(t *testing.T, e *env) sova.Space {
	t.Helper()
	var sp sova.Space
	do(t, "POST", e.srv.URL+"/api/spaces", strings.NewReader(`{"name":"Projects"}`), "application/json", &sp)
	if st, body, _ := upload(t, e.srv.URL+"/api/spaces/"+sp.ID+"/documents", map[string]string{"vostok.md": vostokMD}); st != 201 {
		t.Fatalf("upload: %d %v", st, body)
	}
	return sp
}

func TestSearchModesTakeSpaces(t *testing.T) {
	e := newSpacesEnv(t, nil)
	addDocs(t, e)

	var bad apiErr
	if st := do(t, "POST", e.srv.URL+"/api/search", strings.NewReader(`{"group":"chat","spaces":["Projects"],"messages":[{"role":"user","content":"hi"}]}`), "application/json", &bad); st != 400 ||
		bad.Error.Code != "spaces_unsupported" || !strings.Contains(bad.Error.Message, "docs") {
		t.Errorf("chat with spaces: %d %+v", st, bad)
	}
	if st := do(t, "POST", e.srv.URL+"/api/search", strings.NewReader(`{"group":"search","spaces":["Nope"],"messages":[{"role":"user","content":"hi"}]}`), "application/json", &bad); st != 400 ||
		bad.Error.Code != "unknown_space" {
		t.Errorf("unknown space: %d %+v", st, bad)
	}

	// Four pages are read, so the passage found in the space is [5]. The
	// answer is set through Handle, which the model server reads under its
	// lock.
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := e.model.Respond(r)
		if strings.Contains(r.System(), "answers from web sources") {
			reply.Content = "The web says one thing [1]; the Vostok plan says five million roubles [5]."
		}
		return reply
	})
	resp := e.post(t, "/api/search", `{"id":"chat-docs","group":"search","spaces":["Projects"],"messages":[{"role":"user","content":"What is the Vostok budget?"}]}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var candidate, cited bool
	for _, c := range frames(t, resp.Body) {
		switch c["type"] {
		case "data-source":
			d, _ := c["data"].(map[string]any)
			candidate = candidate || (d["kind"] == "document" && strings.HasPrefix(fmt.Sprint(d["url"]), "sova://spaces/"))
		case "source-url":
			cited = cited || strings.HasPrefix(fmt.Sprint(c["url"]), "sova://spaces/")
		}
	}
	if !candidate || !cited {
		t.Errorf("document passage in the stream: candidate %v, cited %v", candidate, cited)
	}
	var chat struct{ Messages []sova.Message }
	deadline := time.Now().Add(5 * time.Second)
	for len(chat.Messages) < 2 && time.Now().Before(deadline) {
		do(t, "GET", e.srv.URL+"/api/chats/chat-docs", nil, "", &chat)
		time.Sleep(20 * time.Millisecond)
	}
	if len(chat.Messages) != 2 {
		t.Fatalf("messages = %+v", chat.Messages)
	}
	kinds := map[string]bool{}
	for _, s := range chat.Messages[1].Sources {
		kinds[s.Kind] = true
	}
	if !kinds["web"] || !kinds["document"] {
		t.Errorf("stored sources = %+v", chat.Messages[1].Sources)
	}
}

func TestDocsModeOverAPIIsStored(t *testing.T) {
	e := newSpacesEnv(t, nil)
	addDocs(t, e)
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if !r.HasTool("search_documents") {
			return e.model.Respond(r) // titles
		}
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				return llmtest.Reply{Content: "Five million roubles [1].", Usage: llmtest.Tokens(200, 20)}
			}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "search_documents", Arguments: `{"query":"Vostok budget"}`}}, Usage: llmtest.Tokens(100, 10)}
	})
	resp := e.post(t, "/api/search", `{"id":"chat-agent","group":"docs","messages":[{"role":"user","content":"What is the Vostok budget?"}]}`)
	defer resp.Body.Close()
	types := map[string]int{}
	for _, c := range frames(t, resp.Body) {
		types[c["type"].(string)]++
	}
	if types["tool-input-available"] != 1 || types["tool-output-available"] != 1 || types["text-delta"] == 0 || types["finish"] != 1 {
		t.Errorf("stream parts = %v", types)
	}

	var chat struct {
		Messages []sova.Message
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		do(t, "GET", e.srv.URL+"/api/chats/chat-agent", nil, "", &chat)
		if len(chat.Messages) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(chat.Messages) != 2 {
		t.Fatalf("messages = %+v", chat.Messages)
	}
	user, answer := chat.Messages[0], chat.Messages[1]
	if user.Role != "user" || user.Content != "What is the Vostok budget?" {
		t.Errorf("question = %+v", user)
	}
	if answer.Content != "Five million roubles [1]." || len(answer.Sources) != 1 || answer.Sources[0].Kind != "document" ||
		answer.Usage == nil || answer.Usage.TotalTokens != 330 || answer.Mode != "docs" {
		t.Errorf("answer = %+v", answer)
	}
	var steps struct {
		ToolCalls   []map[string]any `json:"toolCalls"`
		ToolResults []map[string]any `json:"toolResults"`
		Sources     []map[string]any `json:"sources"`
	}
	if err := json.Unmarshal(answer.ToolCalls, &steps); err != nil || len(steps.ToolCalls) != 1 || len(steps.ToolResults) != 1 || len(steps.Sources) == 0 {
		t.Errorf("stored steps = %s (%v)", answer.ToolCalls, err)
	}
}

// deep_research takes spaces too: its initial deep search finds the
// passage in the person's documents.
func TestDeepResearchTakesSpaces(t *testing.T) {
	e := newSpacesEnv(t, nil)
	addDocs(t, e)
	resp := e.post(t, "/api/search", `{"id":"dr-docs","group":"deep_research","spaces":["Projects"],"messages":[{"role":"user","content":"What is the Vostok budget?"}]}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var document, finished bool
	for _, c := range frames(t, resp.Body) {
		switch c["type"] {
		case "data-source":
			d, _ := c["data"].(map[string]any)
			document = document || (d["kind"] == "document" && strings.HasPrefix(fmt.Sprint(d["url"]), "sova://spaces/"))
		case "finish":
			finished = c["finishReason"] == "stop"
		}
	}
	if !document || !finished {
		t.Errorf("deep research with spaces: document passage %v, finished %v", document, finished)
	}
}
