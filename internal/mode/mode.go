// Package mode is the contract between Sova's modes and the run engine: a
// mode is a pipeline that takes a question (with its chat history), emits
// typed progress events and returns the answer. Each mode lives in its own
// package (chat, search, docs, research, sgr); this one holds what they
// share: Mode, Input, Result, the Registry, the run's Workspace, pausing
// for the person and resuming, and a few small helpers. A mode never knows
// about HTTP; the run and server packages put its events on the wire and
// its result in the store.
package mode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
)

// Input is what a mode gets for one run.
type Input struct {
	RunID string
	// OriginRunID is set when the run restarts an earlier one: the first
	// run of the chain of restarts. State a mode keeps under its run's id
	// (sgr_agent's agent) is found under this id and goes on.
	OriginRunID string
	ChatID      string
	// UserID owns the run; what a mode keeps (agents) is scoped by it.
	UserID string
	// History holds the earlier messages of the chat, oldest first, without
	// the question itself.
	History  []llm.Message
	Question string
	Timezone string
	Now      time.Time
	// Workspace is the run's file area (deep_research's session folder:
	// main.md, draft_report.md, agents/…, items/…). Nil for modes that
	// keep none.
	Workspace Workspace
	// Resume is set when the run continues after it paused for the person
	// (clarifying questions); nil on a fresh run.
	Resume *Resume
	// Spaces are the IDs of the user's document spaces to search along
	// with the web (modes that implement DocumentAware); empty: none, or
	// for the docs mode every space of the user.
	Spaces []string
	// WebSearch turns the docs mode's web search on or off for this run;
	// nil keeps the configured default.
	WebSearch *bool
	// Continued is set when the run is executed again after its node
	// stopped (another node took it over, or the one node restarted): a
	// Durable mode goes on from its last checkpoint.
	Continued bool
	// Instructions are the person's custom instructions (their settings),
	// added to the mode's system prompt by Personal; Language is the
	// ISO 639-1 code answers are written in ("": the question's), read by
	// LanguageOf.
	Instructions string
	Language     string
	// Preferences are what the person told the assistant's interview agent
	// (sova.UserSettings.Preferences), added by Personal as well.
	Preferences map[string]string
}

// Workspace is a run's set of text files, kept in the store so that they
// survive restarts and can be read through the API. Paths are relative and
// use forward slashes ("agents/agent_1.md").
type Workspace interface {
	Write(ctx context.Context, path, content string) error
	Append(ctx context.Context, path, content string) error
	// Read returns ErrNoFile when the file does not exist.
	Read(ctx context.Context, path string) (string, error)
	List(ctx context.Context) ([]string, error)
}

// FileWorkspace is a Workspace that also keeps files of bytes with their
// content type (charts a code cell drew, a report's PDF). The run
// engine's workspace implements it; a mode checks for it and keeps such
// files only where it is there.
type FileWorkspace interface {
	Workspace
	WriteBytes(ctx context.Context, path, contentType string, data []byte) error
	ReadBytes(ctx context.Context, path string) (data []byte, contentType string, err error)
}

// ErrNoFile is returned by Workspace.Read for a missing file.
var ErrNoFile = errors.New("workspace: no such file")

// Pause is returned in a Result when a run must wait for the person:
// the questions are shown, and State is handed back in Resume when the
// person answers (their next message in the chat).
type Pause struct {
	Questions []string
	State     json.RawMessage
	// Actions are the ids of the actions held for the person's approval
	// (agent.Action): a structured decision may name only these.
	Actions []string
}

// Resume carries what a paused run needs to continue.
type Resume struct {
	State  json.RawMessage
	Answer string
	// Approve and Decline are the person's structured decision, naming
	// held actions by id (buttons, the API's approve/decline): it stands
	// instead of the typed Answer. Held actions named in neither are
	// declined when either is set.
	Approve []string
	Decline []string
}

// Decided reports whether the resume carries a structured decision.
func (r *Resume) Decided() bool { return r != nil && (len(r.Approve) > 0 || len(r.Decline) > 0) }

// Result is what a mode returns when it has answered.
type Result struct {
	Text         string
	Sources      []sova.Source // cited sources, numbered as in Text
	Model        string
	FinishReason string
	// Reasoning and KeyPoints come from structured answers (chat mode).
	Reasoning string
	KeyPoints []string
	// Steps records the pipeline's tool-like work (queries, pages read) for
	// the stored message, as JSON.
	Steps json.RawMessage
	// Pause, when set, means the run waits for the person; Text holds the
	// questions as shown.
	Pause *Pause
	// Report is a finished research report in Markdown (deep_research);
	// it is kept with the run and offered as Markdown and PDF.
	Report string
}

// Mode is one pipeline.
type Mode interface {
	ID() string
	Description() string
	Run(ctx context.Context, in Input, sink event.Sink) (*Result, error)
}

// AgentMode is implemented by modes whose runs are kept as agents (seed
// 002, sgr_agent): the run id is the agent's id, which clients send back
// as the OpenAI "model" to continue it, and which the API reports in the
// X-Agent-ID header.
type AgentMode interface {
	Mode
	KeepsAgents() bool
}

// Registry maps mode ids to modes.
type Registry struct {
	modes map[string]Mode
	order []string
}

// NewRegistry returns a registry of the given modes; ids must be unique.
func NewRegistry(modes ...Mode) (*Registry, error) {
	r := &Registry{modes: map[string]Mode{}}
	for _, m := range modes {
		if _, dup := r.modes[m.ID()]; dup {
			return nil, fmt.Errorf("mode %q registered twice", m.ID())
		}
		r.modes[m.ID()] = m
		r.order = append(r.order, m.ID())
	}
	return r, nil
}

// Get returns the mode with the given id.
func (r *Registry) Get(id string) (Mode, bool) {
	m, ok := r.modes[id]
	return m, ok
}

// IDs returns the registered ids in registration order.
func (r *Registry) IDs() []string { return slices.Clone(r.order) }

// Listed returns the ids of the modes a client may name, in registration
// order: all but the Unlisted ones.
func (r *Registry) Listed() []string {
	var out []string
	for _, id := range r.order {
		if u, ok := r.modes[id].(Unlisted); ok && u.Unlisted() {
			continue
		}
		out = append(out, id)
	}
	return out
}

// All returns the registered modes in registration order.
func (r *Registry) All() []Mode {
	out := make([]Mode, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.modes[id])
	}
	return out
}

// Unlisted is implemented by modes that run only through an endpoint of
// their own (the assistant's complex-task agent): they are left out of the
// mode list (GET /api/modes) and so of the UI's menu.
type Unlisted interface {
	Unlisted() bool
}

// DocumentAware is implemented by modes that search the document spaces a
// request names (Input.Spaces) along with the web.
type DocumentAware interface {
	SearchesDocuments() bool
}

// Durable is implemented by modes whose runs outlive their node: the mode
// saves its state at each step that cost money (in the run's workspace or
// the store), and a run executed again with Input.Continued goes on from
// the last state saved instead of beginning again. A run of another mode
// whose node stops is marked interrupted.
type Durable interface {
	Durable() bool
}

// Status emits a status event.
func Status(sink event.Sink, stage, msg, detail string) {
	sink.Emit(event.Event{Type: event.TypeStatus, Time: time.Now(), Status: &event.Status{Stage: stage, Message: msg, Detail: detail}})
}

// Warn emits a status event for a step that failed while the run goes on
// (a rewrite that could not be made, a provider that failed over); detail
// says why.
func Warn(sink event.Sink, stage, msg, detail string) {
	sink.Emit(event.Event{Type: event.TypeStatus, Time: time.Now(), Status: &event.Status{Stage: stage, Message: msg, Detail: detail, Level: event.LevelWarning}})
}

// TextDelta is an event carrying a piece of the answer.
func TextDelta(s string) event.Event {
	return event.Event{Type: event.TypeTextDelta, Time: time.Now(), Text: s}
}

// FinishReason maps a model's finish reason to the run's.
func FinishReason(r string) string {
	switch r {
	case "length":
		return event.FinishLength
	default:
		return event.FinishStop
	}
}

// DateIn formats the current date in the person's time zone when it is
// known, so "today" means their today.
func DateIn(now time.Time, tz string) string {
	if now.IsZero() {
		now = time.Now()
	}
	if tz != "" {
		if loc, err := time.LoadLocation(tz); err == nil {
			now = now.In(loc)
		}
	}
	return now.Format("Monday, 2 January 2006")
}

// LastMessages keeps the newest n messages (all when n <= 0).
func LastMessages(msgs []llm.Message, n int) []llm.Message {
	if n <= 0 || len(msgs) <= n {
		return msgs
	}
	return msgs[len(msgs)-n:]
}

// Clip shortens s, trimmed, to at most n runes.
func Clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// LanguageOf is the language a mode answers in: the one the person chose
// in their settings, or else the question's.
func LanguageOf(in Input) lang.Language {
	if l, ok := lang.Parse(in.Language); ok {
		return l
	}
	return lang.Detect(in.Question)
}

// Personal is what the person's custom instructions and the preferences
// they gave the interview agent add to a mode's system prompt (every mode
// appends it to the prompt that writes the answer); "" without any.
func Personal(in Input) string {
	var b strings.Builder
	if ins := strings.TrimSpace(in.Instructions); ins != "" {
		b.WriteString("\n\nThe person's own instructions for every answer (follow them where they do not contradict the rules above):\n" + ins)
	}
	if note := PreferencesNote(in.Preferences, LanguageOf(in).Code); note != "" {
		b.WriteString("\n\n" + strings.TrimSpace(note))
	}
	return b.String()
}
