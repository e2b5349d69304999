// Package mode holds Sova's modes: each is a pipeline that takes a question
// (with its chat history), emits typed progress events and returns the
// answer. A mode never knows about HTTP; the run and server packages put
// its events on the wire and its result in the store.
package mode

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
)

// Input is what a mode gets for one run.
type Input struct {
	RunID  string
	ChatID string
	// History holds the earlier messages of the chat, oldest first, without
	// the question itself.
	History  []llm.Message
	Question string
	Timezone string
	Now      time.Time
}

// Result is what a mode returns when it has answered.
type Result struct {
	Text         string
	Sources      []event.Source // cited sources, numbered as in Text
	Model        string
	FinishReason string
	// Reasoning and KeyPoints come from structured answers (chat mode).
	Reasoning string
	KeyPoints []string
	// Steps records the pipeline's tool-like work (queries, pages read) for
	// the stored message, as JSON.
	Steps json.RawMessage
}

// Mode is one pipeline.
type Mode interface {
	ID() string
	Description() string
	Run(ctx context.Context, in Input, sink event.Sink) (*Result, error)
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

// All returns the registered modes in registration order.
func (r *Registry) All() []Mode {
	out := make([]Mode, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.modes[id])
	}
	return out
}

// status emits a status event.
func status(sink event.Sink, stage, msg, detail string) {
	sink.Emit(event.Event{Type: event.TypeStatus, Time: time.Now(), Status: &event.Status{Stage: stage, Message: msg, Detail: detail}})
}

// lastMessages keeps the newest n messages.
func lastMessages(msgs []llm.Message, n int) []llm.Message {
	if n <= 0 || len(msgs) <= n {
		return msgs
	}
	return msgs[len(msgs)-n:]
}
