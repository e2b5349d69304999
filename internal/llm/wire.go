package llm

// The chat-completions, embeddings and models wire format of
// OpenAI-compatible endpoints, as much of it as Sova sends and reads.
//
// Sova speaks it itself rather than through the official Go SDK: the SDK's
// packages register every type of the whole OpenAI API at start (Responses,
// Realtime, Assistants, ...), which made about a fifth of sova's binary and
// a minute of every cold build's critical path (docs/benchmarks.md, "Build
// and binary"), while Sova uses three calls. What the SDK gave is kept:
// typed errors (errors.go reads every error shape servers use, more than the
// SDK did), streamed tool-call assembly, usage in the last chunk, retries
// (client.go, with the breaker). The official SDKs remain the clients that
// test Sova's own /v1 endpoint.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools,omitempty"`
	ToolChoice          any             `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is absent only on an assistant message that carries tool
	// calls and no text, as OpenAI's own clients send it.
	Content    *string        `json:"content,omitempty"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters"`
}

type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *jsonSchemaSpec `json:"json_schema,omitempty"`
}

type jsonSchemaSpec struct {
	Name   string `json:"name"`
	Strict bool   `json:"strict,omitempty"`
	Schema any    `json:"schema,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string    `json:"name,omitempty"`
		Arguments arguments `json:"arguments"`
	} `json:"function"`
}

// arguments is a tool call's arguments: a JSON string as the API has it,
// or, from servers that get it wrong, the object itself, kept as its text.
type arguments string

func (a *arguments) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = arguments(s)
		return nil
	}
	if string(b) == "null" {
		*a = ""
		return nil
	}
	*a = arguments(b)
	return nil
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type chatCompletion struct {
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content   string         `json:"content"`
			Refusal   string         `json:"refusal"`
			ToolCalls []wireToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
}

type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string         `json:"content"`
			Refusal   string         `json:"refusal"`
			ToolCalls []wireToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
}

type embeddingRequest struct {
	Input          []string `json:"input"`
	Model          string   `json:"model"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Usage wireUsage `json:"usage"`
}

type modelList struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
}

// endpointURL is the endpoint's URL for a path under it ("chat/completions"),
// keeping a query the configured URL has (some gateways want api-version).
func (k *core) endpointURL(path string) string {
	u, err := url.Parse(k.cfg.BaseURL)
	if err != nil {
		return strings.TrimRight(k.cfg.BaseURL, "/") + "/" + path
	}
	return u.JoinPath(path).String()
}

// send makes one request to the endpoint and returns the answer once
// check has accepted it: an error answer becomes an *APIError, a 2xx body
// that is not what was asked for a *badResponseError.
func (k *core) send(ctx context.Context, method, path string, body any, model string, stream bool) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("llm: encoding the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.endpointURL(path), rd)
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if k.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+k.cfg.APIKey)
	}
	res, err := k.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	return k.check(res, model, stream)
}

// decode reads a checked JSON answer into v.
func decode(res *http.Response, v any) error {
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(v)
}

// maxEventLine bounds one line of an event stream; a chunk is a few
// hundred bytes, a whole answer rarely more than some kilobytes.
const maxEventLine = 8 << 20

// events reads a server-sent event stream and calls fn with the data of
// each event until "[DONE]", the end of the stream or an error. An event
// whose data is an error object (or whose type is "error") ends it with
// an *APIError.
func (k *core) events(r io.Reader, model string, fn func(data []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		data  bytes.Buffer
		event string
	)
	dispatch := func() (bool, error) {
		defer func() { data.Reset(); event = "" }()
		if data.Len() == 0 {
			return false, nil
		}
		d := bytes.TrimSpace(data.Bytes())
		if string(d) == "[DONE]" {
			return true, nil
		}
		if event == "error" || embeddedError(d) != nil {
			return true, k.streamAPIError(d, event, model)
		}
		return false, fn(d)
	}
	for {
		line, err := readLine(br)
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			if errors.Is(err, io.EOF) {
				_, derr := dispatch()
				return derr
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if done, derr := dispatch(); done || derr != nil {
				return derr
			}
		case line[0] == ':': // a comment, often a keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.Write(value)
			case "event":
				event = string(value)
			}
		}
		if errors.Is(err, io.EOF) {
			_, derr := dispatch()
			return derr
		}
	}
}

// readLine reads one line of at most maxEventLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxEventLine {
			return nil, errors.New("llm: an event-stream line longer than 8 MiB")
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// toolCallAssembler puts streamed tool-call pieces together by index.
type toolCallAssembler struct {
	calls []wireToolCall
}

func (a *toolCallAssembler) add(deltas []wireToolCall) {
	for _, d := range deltas {
		idx := len(a.calls)
		switch {
		case d.Index != nil:
			idx = *d.Index
		case d.ID == "" && len(a.calls) > 0:
			idx = len(a.calls) - 1 // a continuation without an index
		}
		if idx < 0 || idx > 1024 {
			continue
		}
		for len(a.calls) <= idx {
			a.calls = append(a.calls, wireToolCall{})
		}
		c := &a.calls[idx]
		if d.ID != "" {
			c.ID = d.ID
		}
		if d.Type != "" {
			c.Type = d.Type
		}
		// Most servers send the name once; some repeat it whole in every
		// piece, which must not double it.
		if n := d.Function.Name; n != "" && n != c.Function.Name {
			c.Function.Name += n
		}
		c.Function.Arguments += d.Function.Arguments
	}
}
