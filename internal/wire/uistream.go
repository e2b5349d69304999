package wire

import (
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// UI message stream protocol headers (AI SDK UI_MESSAGE_STREAM_HEADERS).
const (
	UIStreamHeader      = "x-vercel-ai-ui-message-stream"
	UIStreamVersion     = "v1"
	UIStreamContentType = "text/event-stream"
)

// HeaderSetter is the part of http.Header the header helpers need; it keeps
// this package free of net/http.
type HeaderSetter interface {
	Set(key, value string)
}

// SetUIStreamHeaders sets the response headers of a UI message stream.
// X-Accel-Buffering stops nginx from holding back frames.
func SetUIStreamHeaders(h HeaderSetter) {
	h.Set("Content-Type", UIStreamContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set(UIStreamHeader, UIStreamVersion)
	h.Set("X-Accel-Buffering", "no")
}

// UIStream encodes a run's events as an AI SDK UI message stream (protocol
// v1): one `data: {json}` frame per chunk, `data: [DONE]` on Close.
//
// Mapping (chunk fields as declared by the `ai` package's
// uiMessageChunkSchema, no others):
//
//	Start            start {messageId, messageMetadata{runId,chatId,mode,model}}, start-step
//	Status           data-status      id "status-<stage>"  {stage,message,detail?}
//	Query            data-query_completion id "query-<iteration>-<index>"
//	                 {query,index,total,status,resultsCount?,imagesCount?,error?,iteration}
//	Source, cited    source-url {sourceId:"<number>", url, title?,
//	                 providerMetadata?{sova:{snippetOnly:true}}} (once per number;
//	                 the metadata marks a source the run never read)
//	Source, candidate data-source     id "source-<url>"
//	Page             data-page        id "page-<url>"  {url,title?,state,chars?,error?}
//	TextDelta        text-start {id} (once), text-delta {id, delta}
//	Usage            data-usage, transient
//	Data             data-<Name> {id?, data, transient?}
//	ToolCall         tool-input-available {toolCallId, toolName, input, providerExecuted:true, title?}
//	ToolResult       tool-output-available {toolCallId, output, providerExecuted:true}
//	                 (output is the structured Output, else the Text), or
//	                 tool-output-error {toolCallId, errorText, providerExecuted:true}
//	Error            error {errorText}
//	Finish           text-end (if text started), source-url for cited sources not
//	                 yet sent, [abort if cancelled], finish-step, finish
//	                 {finishReason, messageMetadata{finishReason,usage,model?,sources?}}
//
// Stable ids make the client replace a part in place (query started →
// completed, page reading → read) instead of appending a new one. Status
// gets one part per stage rather than one for all, so a stored message
// keeps the trail of stages the run went through.
// Events after Finish are dropped: the message is complete.
//
// Tool parts are static (type "tool-<name>") and marked providerExecuted:
// Sova ran the tool, so a client must not run it again. A result whose call
// was not sent is an invalid event: the AI SDK fails on an unknown call id.
type UIStream struct {
	mu        sync.Mutex
	out       sseWriter
	started   bool
	stepOpen  bool
	textID    string // non-empty once text-start was sent
	textOpen  bool
	finished  bool
	closed    bool
	cited     map[int]bool // citation numbers already sent as source-url
	tools     map[string]bool
	lastUsage sova.Usage
}

// NewUIStream returns a UI message stream encoder writing to w. flush, if
// not nil, is called after every write (http.Flusher.Flush).
func NewUIStream(w io.Writer, flush func()) *UIStream {
	return &UIStream{out: sseWriter{w: w, flush: flush}, cited: map[int]bool{}, tools: map[string]bool{}}
}

// UI message chunks. Each struct carries exactly the fields the AI SDK
// schema declares for its type; optional ones are omitempty.
type (
	uiStart struct {
		Type            string           `json:"type"`
		MessageID       string           `json:"messageId,omitempty"`
		MessageMetadata *uiStartMetadata `json:"messageMetadata,omitempty"`
	}
	uiStartMetadata struct {
		RunID  string `json:"runId,omitempty"`
		ChatID string `json:"chatId,omitempty"`
		Mode   string `json:"mode,omitempty"`
		Model  string `json:"model,omitempty"`
	}
	uiBare struct {
		Type string `json:"type"`
	}
	uiText struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	uiTextDelta struct {
		Type  string `json:"type"`
		ID    string `json:"id"`
		Delta string `json:"delta"`
	}
	uiSourceURL struct {
		Type             string                    `json:"type"`
		SourceID         string                    `json:"sourceId"`
		URL              string                    `json:"url"`
		Title            string                    `json:"title,omitempty"`
		ProviderMetadata map[string]map[string]any `json:"providerMetadata,omitempty"`
	}
	uiData struct {
		Type      string `json:"type"`
		ID        string `json:"id,omitempty"`
		Data      any    `json:"data"`
		Transient bool   `json:"transient,omitempty"`
	}
	uiError struct {
		Type      string `json:"type"`
		ErrorText string `json:"errorText"`
	}
	uiToolInput struct {
		Type             string `json:"type"`
		ToolCallID       string `json:"toolCallId"`
		ToolName         string `json:"toolName"`
		Input            any    `json:"input"`
		ProviderExecuted bool   `json:"providerExecuted"`
		Title            string `json:"title,omitempty"`
	}
	uiToolOutput struct {
		Type             string `json:"type"`
		ToolCallID       string `json:"toolCallId"`
		Output           any    `json:"output"`
		ProviderExecuted bool   `json:"providerExecuted"`
	}
	uiToolError struct {
		Type             string `json:"type"`
		ToolCallID       string `json:"toolCallId"`
		ErrorText        string `json:"errorText"`
		ProviderExecuted bool   `json:"providerExecuted"`
	}
	uiAbort struct {
		Type   string `json:"type"`
		Reason string `json:"reason,omitempty"`
	}
	uiFinish struct {
		Type            string           `json:"type"`
		FinishReason    string           `json:"finishReason,omitempty"`
		MessageMetadata uiFinishMetadata `json:"messageMetadata"`
	}
	uiFinishMetadata struct {
		FinishReason string        `json:"finishReason"`
		Usage        sova.Usage    `json:"usage"`
		Model        string        `json:"model,omitempty"`
		Sources      []sova.Source `json:"sources,omitempty"`
	}
)

// Payloads of Sova's data parts.
type (
	statusData struct {
		Stage   string `json:"stage"`
		Message string `json:"message"`
		Detail  string `json:"detail,omitempty"`
		Level   string `json:"level,omitempty"`
	}
	// queryData is seed 000 §5.2's data-query_completion plus iteration.
	queryData struct {
		Query        string `json:"query"`
		Index        int    `json:"index"`
		Total        int    `json:"total"`
		Status       string `json:"status"`
		ResultsCount *int   `json:"resultsCount,omitempty"`
		ImagesCount  *int   `json:"imagesCount,omitempty"`
		Error        string `json:"error,omitempty"`
		Iteration    int    `json:"iteration"`
	}
)

// UIFinishReason maps a Sova finish reason to the AI SDK's FinishReason
// enum (stop, length, content-filter, tool-calls, error, interrupted, other).
// A cancelled run's output may be incomplete, which is what "interrupted"
// means there.
func UIFinishReason(reason string) string {
	switch reason {
	case event.FinishStop, "":
		return "stop"
	case event.FinishLength:
		return "length"
	case event.FinishError:
		return "error"
	case event.FinishCancelled:
		return "interrupted"
	default:
		return "other"
	}
}

// Emit encodes one event. It is safe for concurrent use; frames of one
// event are written together.
func (s *UIStream) Emit(e event.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.finished {
		return nil
	}
	s.out.id = e.Seq
	defer func() { s.out.id = 0 }()
	if err := s.encode(e); err != nil {
		s.out.discard()
		return invalid(err)
	}
	return s.out.send()
}

// KeepAlive writes an SSE comment, which clients ignore, so that proxies do
// not close a stream that is quiet during a long step.
func (s *UIStream) KeepAlive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.out.raw(": keep-alive\n\n")
	return s.out.send()
}

// Close writes `data: [DONE]`. It does not invent a finish chunk: a run
// that never finished shows as such to the client. Close is idempotent.
func (s *UIStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.out.raw("data: [DONE]\n\n")
	return s.out.send()
}

func (s *UIStream) encode(e event.Event) error {
	switch e.Type {
	case event.TypeStart:
		if e.Start == nil {
			return errMissing(e.Type)
		}
		if s.started {
			return nil // one stream carries one assistant message
		}
		st := e.Start
		id := st.MessageID
		if id == "" {
			id = st.RunID
		}
		var md *uiStartMetadata
		if st.RunID != "" || st.ChatID != "" || st.Mode != "" || st.Model != "" {
			md = &uiStartMetadata{RunID: st.RunID, ChatID: st.ChatID, Mode: st.Mode, Model: st.Model}
		}
		if err := s.out.data(uiStart{Type: "start", MessageID: id, MessageMetadata: md}); err != nil {
			return err
		}
		s.started = true
		return s.startStep()

	case event.TypeStatus:
		if e.Status == nil {
			return errMissing(e.Type)
		}
		st := e.Status
		msg := st.Message
		if msg == "" {
			msg = st.Stage
		}
		return s.out.data(uiData{Type: "data-status", ID: "status-" + st.Stage,
			Data: statusData{Stage: st.Stage, Message: msg, Detail: st.Detail, Level: st.Level}})

	case event.TypeQuery:
		if e.Query == nil {
			return errMissing(e.Type)
		}
		q := e.Query
		return s.out.data(uiData{
			Type: "data-query_completion",
			ID:   "query-" + strconv.Itoa(q.Iteration) + "-" + strconv.Itoa(q.Index),
			Data: queryData{Query: q.Query, Index: q.Index, Total: q.Total, Status: q.Status,
				ResultsCount: q.ResultsCount, ImagesCount: q.ImagesCount, Error: q.Error, Iteration: q.Iteration},
		})

	case event.TypeSource:
		if e.Source == nil {
			return errMissing(e.Type)
		}
		if e.Source.Number > 0 {
			return s.citedSource(*e.Source)
		}
		return s.out.data(uiData{Type: "data-source", ID: "source-" + e.Source.URL, Data: e.Source})

	case event.TypePage:
		if e.Page == nil {
			return errMissing(e.Type)
		}
		return s.out.data(uiData{Type: "data-page", ID: "page-" + e.Page.URL, Data: e.Page})

	case event.TypeTextDelta:
		if e.Text == "" {
			return nil // an empty delta changes nothing
		}
		if !s.textOpen {
			// Only Finish ends the text part, and nothing follows Finish,
			// so one text part per message suffices.
			s.textID = "text-0"
			if err := s.out.data(uiText{Type: "text-start", ID: s.textID}); err != nil {
				return err
			}
			s.textOpen = true
		}
		return s.out.data(uiTextDelta{Type: "text-delta", ID: s.textID, Delta: e.Text})

	case event.TypeUsage:
		if e.Usage == nil {
			return errMissing(e.Type)
		}
		s.lastUsage = *e.Usage
		return s.out.data(uiData{Type: "data-usage", Data: e.Usage, Transient: true})

	case event.TypeData:
		d := e.Data
		if d == nil {
			return errMissing(e.Type)
		}
		if d.Name == "" {
			return errors.New("wire: data event without a name")
		}
		var v any = d.Value
		if len(d.Value) == 0 {
			v = nil // an empty RawMessage is invalid JSON; send null
		}
		return s.out.data(uiData{Type: "data-" + d.Name, ID: d.ID, Data: v, Transient: d.Transient})

	case event.TypeToolCall:
		tc := e.ToolCall
		if tc == nil {
			return errMissing(e.Type)
		}
		if tc.ID == "" || tc.Name == "" {
			return errors.New("wire: tool call without id or name")
		}
		var input any = map[string]any{}
		if len(tc.Input) > 0 {
			input = tc.Input
		}
		if err := s.out.data(uiToolInput{Type: "tool-input-available", ToolCallID: tc.ID, ToolName: tc.Name,
			Input: input, ProviderExecuted: true, Title: tc.Title}); err != nil {
			return err
		}
		s.tools[tc.ID] = true
		return nil

	case event.TypeToolResult:
		tr := e.ToolResult
		if tr == nil {
			return errMissing(e.Type)
		}
		if !s.tools[tr.ID] {
			return errors.New("wire: tool result for call " + strconv.Quote(tr.ID) + ", which was not sent")
		}
		if tr.Error != "" {
			return s.out.data(uiToolError{Type: "tool-output-error", ToolCallID: tr.ID, ErrorText: tr.Error, ProviderExecuted: true})
		}
		var output any = tr.Text
		if len(tr.Output) > 0 {
			output = tr.Output
		}
		return s.out.data(uiToolOutput{Type: "tool-output-available", ToolCallID: tr.ID, Output: output, ProviderExecuted: true})

	case event.TypeError:
		if e.Error == nil {
			return errMissing(e.Type)
		}
		msg := e.Error.Message
		if msg == "" {
			msg = "error"
		}
		return s.out.data(uiError{Type: "error", ErrorText: msg})

	case event.TypeFinish:
		if e.Finish == nil {
			return errMissing(e.Type)
		}
		return s.finish(*e.Finish)

	default:
		return errors.New("wire: unknown event type " + strconv.Quote(string(e.Type)))
	}
}

func (s *UIStream) startStep() error {
	if err := s.out.data(uiBare{Type: "start-step"}); err != nil {
		return err
	}
	s.stepOpen = true
	return nil
}

func (s *UIStream) citedSource(src sova.Source) error {
	if s.cited[src.Number] {
		return nil // a source-url part is not replaced by id; send each once
	}
	part := uiSourceURL{Type: "source-url", SourceID: strconv.Itoa(src.Number), URL: src.URL, Title: src.Title}
	if src.SnippetOnly {
		part.ProviderMetadata = map[string]map[string]any{"sova": {"snippetOnly": true}}
	}
	if err := s.out.data(part); err != nil {
		return err
	}
	s.cited[src.Number] = true
	return nil
}

func (s *UIStream) finish(f event.Finish) error {
	if s.textOpen {
		if err := s.out.data(uiText{Type: "text-end", ID: s.textID}); err != nil {
			return err
		}
		s.textOpen = false
	}
	for _, src := range f.Sources {
		if src.Number > 0 {
			if err := s.citedSource(src); err != nil {
				return err
			}
		}
	}
	if f.Reason == event.FinishCancelled {
		if err := s.out.data(uiAbort{Type: "abort", Reason: event.FinishCancelled}); err != nil {
			return err
		}
	}
	if s.stepOpen {
		if err := s.out.data(uiBare{Type: "finish-step"}); err != nil {
			return err
		}
		s.stepOpen = false
	}
	usage := f.Usage
	if usage == (sova.Usage{}) {
		usage = s.lastUsage
	}
	usage = usage.WithTotal()
	reason := f.Reason
	if reason == "" {
		reason = event.FinishStop
	}
	if err := s.out.data(uiFinish{
		Type:         "finish",
		FinishReason: UIFinishReason(reason),
		MessageMetadata: uiFinishMetadata{
			FinishReason: reason, Usage: usage, Model: f.Model, Sources: f.Sources,
		},
	}); err != nil {
		return err
	}
	s.finished = true
	return nil
}

func errMissing(t event.Type) error {
	return errors.New("wire: " + string(t) + " event without its payload")
}

var _ Encoder = (*UIStream)(nil)
