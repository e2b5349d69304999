// Package llm is Sova's client for OpenAI-compatible chat-completion
// endpoints: streaming text, tool calls, structured output validated against
// a JSON schema derived from Go types, retries with backoff, a fallback
// model on overload, and per-run token accounting.
package llm

import (
	"context"
	"encoding/json"
)

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message in OpenAI's shape.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is a function call requested by the model. Arguments is the
// raw JSON text of the arguments.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool describes a function the model may call. Parameters is a JSON schema
// object.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Request is one chat-completion call.
type Request struct {
	// Model overrides the client's default model; empty means default.
	Model      string
	Messages   []Message
	Tools      []Tool
	ToolChoice string // "", "auto", "none", "required"
	// ParallelToolCalls, when set, is sent as parallel_tool_calls with
	// tools (false: at most one call per reply).
	ParallelToolCalls *bool
	Temperature       *float64
	MaxTokens         int
	// ResponseFormat asks for JSON output; nil means free text.
	ResponseFormat *ResponseFormat
}

// ResponseFormat types.
const (
	FormatJSONSchema = "json_schema"
	FormatJSONObject = "json_object"
)

// ResponseFormat is OpenAI's response_format.
type ResponseFormat struct {
	Type   string         // FormatJSONSchema or FormatJSONObject
	Name   string         // schema name, for json_schema
	Schema map[string]any // for json_schema
	Strict bool
	// RawSchema, when set, is sent instead of Schema. It keeps the property
	// order of the original schema (a map loses it), and models write the
	// fields in that order, which matters when a field is streamed live.
	RawSchema json.RawMessage
}

// Usage is the token usage of one or more calls.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Response is a finished chat completion.
type Response struct {
	Content      string
	ToolCalls    []ToolCall
	FinishReason string
	// Model is the configured model name that answered: the requested one,
	// or the fallback model when the requested one was overloaded.
	Model string
	// ServerModel is the model name the endpoint reported, which may be
	// more specific (for example a dated snapshot).
	ServerModel string
	// Refusal is set when the model declined to answer (OpenAI structured
	// outputs report refusals apart from the content).
	Refusal string
	Usage   Usage
}

// Model is what modes need from a language model. *Client implements it;
// defined here as well so that modes can depend on a narrow interface.
type Model interface {
	// Complete runs one call and returns the whole response.
	Complete(ctx context.Context, req Request) (*Response, error)
	// Stream runs one call and calls onText with each content delta as it
	// arrives; the returned Response holds the full content and any tool
	// calls rebuilt from the stream.
	Stream(ctx context.Context, req Request, onText func(delta string)) (*Response, error)
}
