// Package llmtest is a local OpenAI-compatible chat-completion server for
// tests. It speaks the real wire format (chat.completion objects, SSE
// chunk streams with tool-call deltas and a usage chunk, OpenAI error
// bodies), so code under test runs through the real client unchanged.
//
//	srv := llmtest.New(t)
//	srv.Enqueue(llmtest.Text("hello"), llmtest.Fail(503, "busy"))
//	client, _ := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m"})
//
// Replies come from the scripted queue first (in order), then from the
// handler set with Handle. A request with neither fails the test.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/llm"
)

// Reply is the server's answer to one chat-completion request.
type Reply struct {
	// Content is the assistant text. For an error Status it is the error
	// message (unless ErrorBody is set).
	Content   string
	ToolCalls []llm.ToolCall
	// Status is an error status (0 means 200).
	Status int
	// ErrorBody is sent verbatim as the body: for errors, or with Status 0
	// to send a malformed 200 answer.
	ErrorBody string
	// RetryAfter is sent as the Retry-After header.
	RetryAfter string
	// Delay is waited before the first byte; ChunkDelay between stream
	// chunks. Both stop when the client goes away.
	Delay      time.Duration
	ChunkDelay time.Duration
	// FinishReason defaults to "tool_calls" when there are tool calls,
	// else "stop".
	FinishReason string
	// Usage is reported when set: in the completion, or in a final usage
	// chunk when the client asked for stream_options.include_usage.
	Usage *llm.Usage
	// Model is the model name reported (default: the requested one).
	Model string
	// Drop closes the connection without answering (a network error).
	Drop bool
	// BreakAfter, when positive, cuts the connection after that many
	// content chunks of a stream.
	BreakAfter int
}

// Text is a plain text reply.
func Text(content string) Reply { return Reply{Content: content} }

// Calls is a reply that calls tools.
func Calls(calls ...llm.ToolCall) Reply { return Reply{ToolCalls: calls} }

// Fail is an error reply with OpenAI's error body; the error type follows
// the status as OpenAI's does.
func Fail(status int, message string) Reply {
	return Reply{Status: status, Content: message}
}

// FailWith is an error reply with the given error type and code.
func FailWith(status int, errType, code, message string) Reply {
	return Reply{Status: status, ErrorBody: ErrorJSON(errType, code, message)}
}

// ErrorJSON renders an OpenAI error body.
func ErrorJSON(errType, code, message string) string {
	e := map[string]any{"message": message, "type": errType, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return string(b)
}

// Tokens is a Usage with the total filled in.
func Tokens(prompt, completion int) *llm.Usage {
	return &llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// Request is one chat-completion request as the server decoded it.
type Request struct {
	Index          int // order of arrival, from 0
	Header         http.Header
	Body           []byte
	Raw            map[string]any
	Model          string
	Messages       []llm.Message
	Tools          []llm.Tool
	ToolChoice     string // "auto", "none", "required" or a forced function's name
	ResponseFormat *llm.ResponseFormat
	Stream         bool
	IncludeUsage   bool
	Temperature    *float64
	MaxTokens      int // max_tokens or max_completion_tokens
}

// System is the text of all system messages, joined by blank lines.
func (r *Request) System() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == llm.RoleSystem {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n\n")
}

// LastUser is the content of the last user message.
func (r *Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// HasTool reports whether a tool with this name was offered.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Format is the response_format type ("" when none was sent).
func (r *Request) Format() string {
	if r.ResponseFormat == nil {
		return ""
	}
	return r.ResponseFormat.Type
}

// SchemaName is the json_schema name ("" when none was sent).
func (r *Request) SchemaName() string {
	if r.ResponseFormat == nil {
		return ""
	}
	return r.ResponseFormat.Name
}

// Schema is the json_schema schema (nil when none was sent).
func (r *Request) Schema() map[string]any {
	if r.ResponseFormat == nil {
		return nil
	}
	return r.ResponseFormat.Schema
}

// APIKey is the bearer token the client sent.
func (r *Request) APIKey() string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// Server is the test server. Its methods are safe for concurrent use.
type Server struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	handler  func(*Request) Reply
	queue    []Reply
	requests []*Request
	models   []string
	apiKey   string // RequireKey
	seq      int

	emb embeddings // /v1/embeddings (embeddings.go)
}

// New starts a server that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, models: []string{"llmtest-model"}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// URL is the base URL to configure clients with; it ends in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close stops the server; later requests fail to connect. It may be
// called more than once.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Handle sets the function that answers requests when the queue is empty.
func (s *Server) Handle(fn func(r *Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
}

// Enqueue adds replies to be sent, in order, to the next requests.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending is the number of queued replies not yet sent.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// SetModels sets the ids listed by GET /v1/models.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// RequireKey makes the server refuse, as OpenAI does (401
// invalid_api_key), every request whose bearer token is not key. An empty
// key accepts any request again.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// Requests returns the chat-completion requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Count is the number of chat-completion requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Last is the last request received, or nil.
func (s *Server) Last() *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	key := s.apiKey
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, ErrorJSON("invalid_request_error", "invalid_api_key",
			"Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."), "")
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.chat(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.listModels(w)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/embeddings":
		s.embed(w, r)
	default:
		writeError(w, http.StatusNotFound, ErrorJSON("invalid_request_error", "unknown_url",
			fmt.Sprintf("Unknown request URL: %s %s. Please check the URL for typos.", r.Method, r.URL.Path)), "")
	}
}

func (s *Server) listModels(w http.ResponseWriter) {
	s.mu.Lock()
	data := make([]map[string]any, 0, len(s.models))
	for _, id := range s.models {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 1700000000, "owned_by": "llmtest"})
	}
	s.mu.Unlock()
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

func (s *Server) chat(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, ErrorJSON("invalid_request_error", "", "We could not parse the JSON body of your request: "+err.Error()), "")
		return
	}
	req.Header = hr.Header.Clone()

	s.mu.Lock()
	req.Index = len(s.requests)
	s.requests = append(s.requests, req)
	var reply Reply
	var ok bool
	if len(s.queue) > 0 {
		reply, s.queue, ok = s.queue[0], s.queue[1:], true
	}
	handler := s.handler
	s.seq++
	id := fmt.Sprintf("chatcmpl-llmtest-%d", s.seq)
	s.mu.Unlock()

	if !ok {
		if handler == nil {
			s.t.Errorf("llmtest: request %d arrived with no reply queued and no handler (last user message %q)", req.Index, req.LastUser())
			writeError(w, http.StatusInternalServerError, ErrorJSON("server_error", "", "llmtest: no reply scripted"), "")
			return
		}
		reply = handler(req)
	}

	if !wait(hr, reply.Delay) {
		return
	}
	if reply.Drop {
		panic(http.ErrAbortHandler)
	}
	if reply.Status >= 400 {
		body := reply.ErrorBody
		if body == "" {
			msg := reply.Content
			if msg == "" {
				msg = http.StatusText(reply.Status)
			}
			body = ErrorJSON(errorType(reply.Status), "", msg)
		}
		writeError(w, reply.Status, body, reply.RetryAfter)
		return
	}
	model := reply.Model
	if model == "" {
		model = req.Model
	}
	if reply.ErrorBody != "" {
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = io.WriteString(w, reply.ErrorBody)
		return
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	calls := make([]llm.ToolCall, len(reply.ToolCalls))
	for i, c := range reply.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_llmtest_%d", i)
		}
		calls[i] = c
	}
	if req.Stream {
		s.stream(w, hr, req, reply, id, model, finish, calls)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if reply.Content != "" || len(calls) == 0 {
		msg["content"] = reply.Content
	}
	if len(calls) > 0 {
		tcs := make([]map[string]any, len(calls))
		for i, c := range calls {
			tcs[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		}
		msg["tool_calls"] = tcs
	}
	out := map[string]any{
		"id":                 id,
		"object":             "chat.completion",
		"created":            time.Now().Unix(),
		"model":              model,
		"system_fingerprint": "fp_llmtest",
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish,
		}},
	}
	if reply.Usage != nil {
		out["usage"] = usageJSON(*reply.Usage)
	}
	writeJSON(w, out)
}

// stream writes the reply as OpenAI's SSE chunks: a role chunk, content
// fragments, tool calls (a header delta with id and name, then argument
// fragments), a finish chunk, an optional usage chunk, then [DONE].
func (s *Server) stream(w http.ResponseWriter, hr *http.Request, req *Request, reply Reply, id, model, finish string, calls []llm.ToolCall) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	created := time.Now().Unix()
	first := true
	send := func(choices []any, usage any) bool {
		if !first && !wait(hr, reply.ChunkDelay) {
			return false
		}
		first = false
		chunk := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"system_fingerprint": "fp_llmtest", "choices": choices,
		}
		if req.IncludeUsage {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}

	role := map[string]any{"role": "assistant", "content": "", "refusal": nil}
	if reply.Content == "" && len(calls) > 0 {
		role["content"] = nil
	}
	if !send(choice(role, nil), nil) {
		return
	}
	for i, part := range split(reply.Content, 4) {
		if reply.BreakAfter > 0 && i == reply.BreakAfter {
			panic(http.ErrAbortHandler)
		}
		if !send(choice(map[string]any{"content": part}, nil), nil) {
			return
		}
	}
	for i, c := range calls {
		head := map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}}
		if !send(choice(head, nil), nil) {
			return
		}
		for _, frag := range split(c.Arguments, 6) {
			d := map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": frag},
			}}}
			if !send(choice(d, nil), nil) {
				return
			}
		}
	}
	if reply.BreakAfter > 0 {
		panic(http.ErrAbortHandler)
	}
	if !send(choice(map[string]any{}, finish), nil) {
		return
	}
	if req.IncludeUsage && reply.Usage != nil {
		if !send([]any{}, usageJSON(*reply.Usage)) {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// split cuts s into pieces of n runes.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// wait sleeps for d unless the client goes away first.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

func usageJSON(u llm.Usage) map[string]any {
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": total}
}

// errorType is the OpenAI error type for a status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status == 529 || status == http.StatusServiceUnavailable:
		return "overloaded_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, body, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// wire types for decoding requests

type wireRequest struct {
	Model          string          `json:"model"`
	Messages       []wireMessage   `json:"messages"`
	Tools          []wireTool      `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat *wireFormat     `json:"response_format"`
	Stream         bool            `json:"stream"`
	StreamOptions  *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature         *float64 `json:"temperature"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

type wireFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict"`
	} `json:"json_schema"`
}

func decodeRequest(body []byte) (*Request, error) {
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return nil, err
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	r := &Request{
		Body:        body,
		Raw:         raw,
		Model:       wr.Model,
		Stream:      wr.Stream,
		Temperature: wr.Temperature,
		MaxTokens:   max(wr.MaxTokens, wr.MaxCompletionTokens),
	}
	if wr.StreamOptions != nil {
		r.IncludeUsage = wr.StreamOptions.IncludeUsage
	}
	for _, m := range wr.Messages {
		msg := llm.Message{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID, Content: contentText(m.Content)}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range wr.Tools {
		r.Tools = append(r.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if len(wr.ToolChoice) > 0 {
		var s string
		if json.Unmarshal(wr.ToolChoice, &s) == nil {
			r.ToolChoice = s
		} else {
			var named struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if json.Unmarshal(wr.ToolChoice, &named) == nil {
				r.ToolChoice = named.Function.Name
			}
		}
	}
	if f := wr.ResponseFormat; f != nil {
		rf := &llm.ResponseFormat{Type: f.Type}
		if js := f.JSONSchema; js != nil {
			rf.Name = js.Name
			rf.Strict = js.Strict
			if len(js.Schema) > 0 {
				rf.RawSchema = bytes.Clone(js.Schema)
				_ = json.Unmarshal(js.Schema, &rf.Schema)
			}
		}
		r.ResponseFormat = rf
	}
	return r, nil
}

// contentText flattens a message content: a string, null, or a list of
// parts whose text parts are joined.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}
