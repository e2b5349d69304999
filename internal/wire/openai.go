package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// OpenAI object names.
const (
	ObjectChatCompletion      = "chat.completion"
	ObjectChatCompletionChunk = "chat.completion.chunk"
)

// ChatCompletionChunk is one streamed OpenAI chat.completion.chunk.
type ChatCompletionChunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []ChunkChoice    `json:"choices"`
	Usage   *CompletionUsage `json:"usage,omitempty"`
}

// ChunkChoice is a choice of a chunk. FinishReason is null until the last
// content chunk, as in OpenAI's stream.
type ChunkChoice struct {
	Index        int        `json:"index"`
	Delta        ChunkDelta `json:"delta"`
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

// ChunkDelta is the incremental message of a chunk. ReasoningContent is the
// field OpenAI-compatible servers (vLLM, DeepSeek) use for thinking text,
// which chat UIs show apart from the answer; the official SDKs ignore it.
type ChunkDelta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []ChunkToolCall `json:"tool_calls,omitempty"`
}

// ChunkToolCall is one tool call in a chunk's delta, as OpenAI streams
// them: Index identifies the call across chunks (clients append argument
// fragments by index), and the first chunk of a call carries its id, type
// and function name.
type ChunkToolCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function ChunkFunction `json:"function"`
}

// ChunkFunction is the function part of a ChunkToolCall.
type ChunkFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// CompletionUsage is OpenAI's token usage object.
type CompletionUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ChatCompletion is a non-streamed OpenAI chat.completion.
type ChatCompletion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   CompletionUsage    `json:"usage"`
}

// CompletionChoice is the single choice of a completion.
type CompletionChoice struct {
	Index        int               `json:"index"`
	Message      CompletionMessage `json:"message"`
	Logprobs     *struct{}         `json:"logprobs"`
	FinishReason string            `json:"finish_reason"`
}

// CompletionMessage is the assistant message of a completion.
type CompletionMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// openAIError is the body OpenAI sends, in a stream as a data frame, when a
// request fails.
type openAIError struct {
	Error openAIErrorBody `json:"error"`
}

type openAIErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    *string `json:"code"`
}

// OpenAIUsage converts Sova's usage to OpenAI's, filling the total when a
// producer left it out.
func OpenAIUsage(u sova.Usage) CompletionUsage {
	u = u.WithTotal()
	return CompletionUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
}

// OpenAIFinishReason maps a Sova finish reason to OpenAI's finish_reason.
// OpenAI has no reason for a failed or cancelled run: the error travels as
// an error frame, and the text so far ended normally from the client's
// view, so both map to "stop". OpenAI reasons pass through unchanged.
func OpenAIFinishReason(reason string) string {
	switch reason {
	case event.FinishLength:
		return "length"
	case "content_filter", "tool_calls", "function_call":
		return reason
	default:
		return "stop"
	}
}

// Completion assembles a non-streamed chat.completion. finishReason is a
// Sova finish reason (or already an OpenAI one); model is whatever the
// server reports as the model, the run id or the mode.
func Completion(id, model string, created time.Time, text, finishReason string, usage sova.Usage) ChatCompletion {
	return ChatCompletion{
		ID:      id,
		Object:  ObjectChatCompletion,
		Created: created.Unix(),
		Model:   model,
		Choices: []CompletionChoice{{
			Message:      CompletionMessage{Role: "assistant", Content: text},
			FinishReason: OpenAIFinishReason(finishReason),
		}},
		Usage: OpenAIUsage(usage),
	}
}

// Progress says what a ChunkStream does with progress events (status,
// queries, pages, sources, mode data), which are not answer content.
type Progress int

const (
	// ProgressNone drops progress: the stream carries only the answer.
	ProgressNone Progress = iota
	// ProgressReasoning mirrors progress as delta.reasoning_content lines,
	// rendered like the terminal's, for chat UIs that show thinking.
	ProgressReasoning
)

// ChunkOption configures a ChunkStream.
type ChunkOption func(*ChunkStream)

// WithProgress sets what happens to progress events (default ProgressNone).
func WithProgress(p Progress) ChunkOption {
	return func(s *ChunkStream) { s.progress = p }
}

// ChunkStream encodes a run's events as an OpenAI chat.completion.chunk
// stream: a first chunk with delta.role "assistant", one chunk per text
// delta, a chunk with finish_reason on Finish, then (when the client asked
// for stream_options.include_usage) a usage chunk with empty choices, and
// `data: [DONE]` on Close. An Error event becomes OpenAI's in-stream
// `data: {"error":{...}}` frame, after which only [DONE] follows.
//
// An agent's steps travel as OpenAI clients know them: a ToolCall is one
// delta.tool_calls entry (index counting the calls of the stream, with id,
// type, function name and the whole arguments), and a ToolResult is content
// (its Text and a blank line), so that the answer that follows starts on its
// own paragraph. The finish reason stays "stop": the calls were executed by
// Sova, and the client has nothing to run.
type ChunkStream struct {
	mu           sync.Mutex
	out          sseWriter
	id, model    string
	created      int64
	includeUsage bool
	progress     Progress
	mirror       *Terminal     // renders progress for ProgressReasoning
	mirrorBuf    *bytes.Buffer // what mirror wrote for the current event
	roleSent     bool
	failed       bool // an error frame was sent
	toolCalls    int  // tool calls sent, the index of the next one
	finished     bool
	closed       bool
	lastUsage    sova.Usage
}

// NewChunkStream returns an OpenAI chunk encoder writing to w. flush, if not
// nil, is called after every write. model is what every chunk reports as
// its model (the server passes the run id or the mode).
func NewChunkStream(w io.Writer, flush func(), id, model string, created time.Time, includeUsage bool, opts ...ChunkOption) *ChunkStream {
	s := &ChunkStream{
		out:          sseWriter{w: w, flush: flush},
		id:           id,
		model:        model,
		created:      created.Unix(),
		includeUsage: includeUsage,
	}
	for _, o := range opts {
		o(s)
	}
	if s.progress == ProgressReasoning {
		s.mirrorBuf = &bytes.Buffer{}
		s.mirror = NewTerminal(s.mirrorBuf, false)
	}
	return s
}

var _ Encoder = (*ChunkStream)(nil)

// Emit encodes one event. It is safe for concurrent use.
func (s *ChunkStream) Emit(e event.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.finished || s.failed {
		return nil // nothing may follow the last chunk or an error frame
	}
	if err := s.encode(e); err != nil {
		s.out.discard()
		return invalid(err)
	}
	return s.out.send()
}

// Close writes `data: [DONE]`. It is idempotent.
func (s *ChunkStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.out.raw("data: [DONE]\n\n")
	return s.out.send()
}

func (s *ChunkStream) chunk(d ChunkDelta, finish *string) ChatCompletionChunk {
	return ChatCompletionChunk{
		ID: s.id, Object: ObjectChatCompletionChunk, Created: s.created, Model: s.model,
		Choices: []ChunkChoice{{Delta: d, FinishReason: finish}},
	}
}

// role sends the opening chunk once; OpenAI clients take the role from it.
func (s *ChunkStream) role() error {
	if s.roleSent {
		return nil
	}
	empty := ""
	if err := s.out.data(s.chunk(ChunkDelta{Role: "assistant", Content: &empty}, nil)); err != nil {
		return err
	}
	s.roleSent = true
	return nil
}

func (s *ChunkStream) encode(e event.Event) error {
	switch e.Type {
	case event.TypeStart:
		// The role chunk goes out at once so the client sees the first byte
		// before search and reading take their time.
		return s.role()

	case event.TypeTextDelta:
		if e.Text == "" {
			return nil
		}
		if err := s.role(); err != nil {
			return err
		}
		text := e.Text
		return s.out.data(s.chunk(ChunkDelta{Content: &text}, nil))

	case event.TypeUsage:
		if e.Usage != nil {
			s.lastUsage = *e.Usage
		}
		return nil

	case event.TypeError:
		msg, code := "run failed", (*string)(nil)
		if e.Error != nil {
			if e.Error.Message != "" {
				msg = e.Error.Message
			}
			if e.Error.Code != "" {
				c := e.Error.Code
				code = &c
			}
		}
		return s.fail(msg, code)

	case event.TypeFinish:
		if e.Finish == nil {
			return errMissing(e.Type)
		}
		f := e.Finish
		if f.Reason == event.FinishError {
			// A failed run without an Error event still must not look
			// like a normal answer to the client.
			return s.fail("run failed", nil)
		}
		if err := s.role(); err != nil {
			return err
		}
		reason := OpenAIFinishReason(f.Reason)
		if err := s.out.data(s.chunk(ChunkDelta{}, &reason)); err != nil {
			return err
		}
		if s.includeUsage {
			usage := f.Usage
			if usage == (sova.Usage{}) {
				usage = s.lastUsage
			}
			u := OpenAIUsage(usage)
			if err := s.out.data(ChatCompletionChunk{
				ID: s.id, Object: ObjectChatCompletionChunk, Created: s.created, Model: s.model,
				Choices: []ChunkChoice{}, Usage: &u,
			}); err != nil {
				return err
			}
		}
		s.finished = true
		return nil

	case event.TypeToolCall:
		tc := e.ToolCall
		if tc == nil {
			return errMissing(e.Type)
		}
		if tc.ID == "" || tc.Name == "" {
			return errors.New("wire: tool call without id or name")
		}
		if err := s.role(); err != nil {
			return err
		}
		args := "{}"
		if len(tc.Input) > 0 {
			args = string(tc.Input)
		}
		call := ChunkToolCall{Index: s.toolCalls, ID: tc.ID, Type: "function", Function: ChunkFunction{Name: tc.Name, Arguments: args}}
		if err := s.out.data(s.chunk(ChunkDelta{ToolCalls: []ChunkToolCall{call}}, nil)); err != nil {
			return err
		}
		s.toolCalls++
		return nil

	case event.TypeToolResult:
		tr := e.ToolResult
		if tr == nil {
			return errMissing(e.Type)
		}
		text := tr.Text
		if text == "" && tr.Error != "" {
			text = "Tool " + tr.Name + " failed: " + tr.Error
		}
		if strings.TrimSpace(text) == "" {
			return nil
		}
		if err := s.role(); err != nil {
			return err
		}
		text = strings.TrimRight(text, "\n") + "\n\n"
		return s.out.data(s.chunk(ChunkDelta{Content: &text}, nil))

	case event.TypeStatus, event.TypeQuery, event.TypeSource, event.TypePage, event.TypeData:
		if s.mirror == nil {
			return nil
		}
		s.mirrorBuf.Reset()
		s.mirror.render(s.mirrorBuf, e)
		if s.mirrorBuf.Len() == 0 {
			return nil
		}
		if err := s.role(); err != nil {
			return err
		}
		text := s.mirrorBuf.String()
		return s.out.data(s.chunk(ChunkDelta{ReasoningContent: &text}, nil))

	default:
		return nil
	}
}

func (s *ChunkStream) fail(msg string, code *string) error {
	if err := s.out.data(openAIError{Error: openAIErrorBody{Message: msg, Type: "server_error", Code: code}}); err != nil {
		return err
	}
	s.failed = true
	return nil
}
