// Package event defines the typed progress events a run emits and the Sink
// they are emitted to. Modes emit events and never write to a socket; the
// encoders that turn events into wire formats are in internal/wire, and a
// Sink that records them for tests in event/eventtest.
package event

import (
	"encoding/json"
	"time"

	"github.com/sova-ai/sova"
)

// Type names one kind of event.
type Type string

const (
	TypeStart     Type = "start"      // a run began; Start is set
	TypeStatus    Type = "status"     // a stage of the pipeline; Status is set
	TypeQuery     Type = "query"      // a search query started/completed/failed; Query is set
	TypeSource    Type = "source"     // a source became known (search result or cited page); Source is set
	TypePage      Type = "page"       // a page is being read / was read / failed; Page is set
	TypeTextDelta Type = "text-delta" // a piece of the answer text; Text is set
	TypeUsage     Type = "usage"      // token usage so far; Usage is set
	TypeData      Type = "data"       // mode-specific structured progress; Data is set
	TypeError     Type = "error"      // the run failed; Error is set
	TypeFinish    Type = "finish"     // the run ended; Finish is set
)

// Events of agents: the tool an agent chose with its input, then what the
// tool returned.
const (
	TypeToolCall   Type = "tool-call"   // a tool was called; ToolCall is set
	TypeToolResult Type = "tool-result" // a tool finished; ToolResult is set
)

// Event is one progress event of a run. Exactly the payload field that
// matches Type is set. Events are JSON-serialisable so that they can be
// written as NDJSON and kept in a run's event log.
type Event struct {
	Type Type      `json:"type"`
	Time time.Time `json:"time"`
	// Seq numbers a run's events from 1, in the order they were emitted;
	// it is the SSE event id a client resumes from (Last-Event-ID).
	Seq    int64        `json:"seq,omitempty"`
	Start  *Start       `json:"start,omitempty"`
	Status *Status      `json:"status,omitempty"`
	Query  *Query       `json:"query,omitempty"`
	Source *sova.Source `json:"source,omitempty"`
	Page   *Page        `json:"page,omitempty"`
	Text   string       `json:"text,omitempty"`
	Usage  *sova.Usage  `json:"usage,omitempty"`
	Data   *Data        `json:"data,omitempty"`
	Error  *Error       `json:"error,omitempty"`
	Finish *Finish      `json:"finish,omitempty"`

	ToolCall   *ToolCall   `json:"toolCall,omitempty"`
	ToolResult *ToolResult `json:"toolResult,omitempty"`
}

// Start opens a run.
type Start struct {
	RunID     string `json:"runId"`
	ChatID    string `json:"chatId,omitempty"`
	MessageID string `json:"messageId,omitempty"`
	Mode      string `json:"mode"`
	Model     string `json:"model,omitempty"`
}

// Status reports the pipeline stage. Stage is a stable machine-readable
// identifier ("rewrite", "search", "rerank", "read", "synthesize", ...);
// Message is for people; Detail carries stage-specific values (for
// "rewrite" the rewritten query). Level is "warning" for a step that
// failed without failing the run (the run goes on another way), else empty.
type Status struct {
	Stage   string `json:"stage"`
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
	Level   string `json:"level,omitempty"`
}

// LevelWarning marks a status that reports a step which failed while the
// run goes on.
const LevelWarning = "warning"

// Query status values, as in seed 000 §5.2 data-query_completion.
const (
	QueryStarted   = "started"
	QueryCompleted = "completed"
	QueryError     = "error"
)

// Query is the data-query_completion payload of seed 000 §5.2, plus the
// search iteration it belongs to.
type Query struct {
	Query        string `json:"query"`
	Index        int    `json:"index"`
	Total        int    `json:"total"`
	Status       string `json:"status"`
	ResultsCount *int   `json:"resultsCount,omitempty"`
	ImagesCount  *int   `json:"imagesCount,omitempty"`
	Error        string `json:"error,omitempty"`
	Iteration    int    `json:"iteration,omitempty"`
	Provider     string `json:"provider,omitempty"`
}

// Page states.
const (
	PageReading = "reading"
	PageRead    = "read"
	PageFailed  = "failed"
)

// Page reports reading one page.
type Page struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
	State string `json:"state"`
	Chars int    `json:"chars,omitempty"`
	Error string `json:"error,omitempty"`
}

// Data is mode-specific progress. Name becomes the UI stream part type
// "data-<Name>"; Value must marshal to JSON. Transient data is shown live
// but not kept in the message.
type Data struct {
	Name      string          `json:"name"`
	ID        string          `json:"id,omitempty"`
	Value     json.RawMessage `json:"value"`
	Transient bool            `json:"transient,omitempty"`
}

// ToolCall is a tool an agent decided to call. ID is unique within the run
// (and across the continuations of an agent), so that clients can match the
// result to the call; Input is the arguments, a JSON object. Title, when
// set, says for people what the call does ("Searching the web for …").
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
	Title string          `json:"title,omitempty"`
}

// ToolResult is the outcome of the ToolCall with the same ID. Text is a
// short Markdown summary for people (OpenAI clients show it as content);
// Output is the structured result for UIs. Error is set when the tool
// failed; the agent sees the failure and goes on.
type ToolResult struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Text   string          `json:"text,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Error ends a run unsuccessfully.
type Error struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// Finish reasons.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishError     = "error"
	FinishCancelled = "cancelled"
)

// Finish closes a run. Sources are the cited sources, numbered as in the
// answer text.
type Finish struct {
	Reason  string        `json:"reason"`
	Sources []sova.Source `json:"sources,omitempty"`
	Usage   sova.Usage    `json:"usage"`
	Model   string        `json:"model,omitempty"`
}

// Sink receives a run's events. Emit must be safe for concurrent use:
// parallel search and scraping emit from several goroutines.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a Sink. The function must be safe for
// concurrent use.
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }

// Discard is a Sink that drops every event.
var Discard Sink = SinkFunc(func(Event) {})

// Tee returns a Sink that passes every event to each sink in order. Nil
// sinks are skipped, so callers can pass optional ones directly.
func Tee(sinks ...Sink) Sink {
	var live []Sink
	for _, s := range sinks {
		if s != nil {
			live = append(live, s)
		}
	}
	switch len(live) {
	case 0:
		return Discard
	case 1:
		return live[0]
	}
	return SinkFunc(func(e Event) {
		for _, s := range live {
			s.Emit(e)
		}
	})
}
