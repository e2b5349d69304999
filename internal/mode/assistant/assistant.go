// Package assistant is the assistant mode (seed 004): a router agent that
// answers directly, calls MCP tools (mail, calendar, files), hands the
// conversation off to the knowledge agent (the person's spaces and past
// chats) or the interview agent (learns the person's preferences), and
// delegates multi-step work to the planning agent and very large work to
// the complex-task agent. Control always returns to the router. A tool that
// changes something (an MCP tool without readOnlyHint, a complex task)
// pauses the run until the person confirms.
package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// The agents.
const (
	Router    = "router"
	Knowledge = "knowledge"
	Interview = "interview"
	Planner   = "planner"
	Task      = "task"
)

// Config tunes the assistant.
type Config struct {
	MaxSteps        int // SOVA_ASSISTANT_MAX_STEPS: model calls of one agent in one turn (10)
	MaxHandoffs     int // hand-offs and returns in one turn (6)
	PlannerMaxSteps int // SOVA_ASSISTANT_PLANNER_MAX_STEPS (12)
	TaskMaxSubtasks int // SOVA_ASSISTANT_TASK_MAX_SUBTASKS (12)
	TaskStepsEach   int // model calls of one subtask (6)
	HistoryLimit    int
	Temperature     float64
	MaxTokens       int
	DocResults      int // passages per search
}

// Deps are what the assistant uses; nil fields turn their part off.
type Deps struct {
	Model *llm.Client
	Fast  *llm.Client
	MCP   *mcp.Client
	// Servers are users' own MCP servers.
	Servers  sova.MCPServerStore
	Settings sova.SettingsStore
	Messages sova.MessageStore
	// Chats reads the chat's earlier answers: which agent holds the
	// conversation (the interview goes on across turns).
	Chats interface {
		ListMessages(ctx context.Context, userID, chatID string) ([]sova.Message, error)
	}
	Documents tools.DocumentSearcher
	Search    search.Provider
	// Runs reads the logs of the runs a restarted complex task restarts:
	// the subtasks they finished are not run again.
	Runs interface {
		RestartOf(ctx context.Context, userID, runID string) (*sova.Run, error)
		RunEvents(ctx context.Context, runID string, after int64) ([]sova.RunEvent, error)
	}
}

// Mode is the assistant mode.
type Mode struct {
	cfg Config
	d   Deps
}

// New returns the assistant mode.
func New(cfg Config, d Deps) *Mode {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 10
	}
	if cfg.MaxHandoffs <= 0 {
		cfg.MaxHandoffs = 6
	}
	if cfg.PlannerMaxSteps <= 0 {
		cfg.PlannerMaxSteps = 12
	}
	if cfg.TaskMaxSubtasks <= 0 {
		cfg.TaskMaxSubtasks = 12
	}
	if cfg.TaskStepsEach <= 0 {
		cfg.TaskStepsEach = 6
	}
	if cfg.DocResults <= 0 {
		cfg.DocResults = 5
	}
	if d.Fast == nil {
		d.Fast = d.Model
	}
	return &Mode{cfg: cfg, d: d}
}

// ID implements mode.Mode.
func (m *Mode) ID() string { return "assistant" }

// Description implements mode.Mode.
func (m *Mode) Description() string {
	return "Personal assistant: reads and acts on your mail, calendar and files through MCP servers (asking before it changes anything), searches your documents and past chats, learns your preferences, and plans multi-step tasks."
}

// SearchesDocuments implements mode.DocumentAware.
func (m *Mode) SearchesDocuments() bool { return true }

// turn is one run of the mode: the person's message and what the agents
// did with it.
type turn struct {
	m        *Mode
	in       mode.Input
	sink     event.Sink
	language lang.Language
	mcp      *mcp.Toolset
	// anonymous is a visitor without an account: no planner, no tasks.
	anonymous bool
	cites     *tools.Citations
	settings  sova.UserSettings
	// transcript is what each agent said in this turn, in order.
	transcript []said
	text       strings.Builder
	handoffs   int
	report     string
	model      string
	reason     string
	steps      []agent.Step
}

type said struct {
	Agent string `json:"agent"`
	Text  string `json:"text"`
}

// record is what an answer keeps (the stored message's steps): the agent
// that holds the conversation, and what each said.
type record struct {
	Agent      string       `json:"agent"`
	Transcript []said       `json:"transcript"`
	Steps      []agent.Step `json:"steps,omitempty"`
}

// Run implements mode.Mode.
func (m *Mode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	if m.d.Model == nil {
		return nil, errors.New("assistant: no model configured")
	}
	t := &turn{m: m, in: in, sink: sink, language: lang.Detect(in.Question)}
	t.cites = tools.NewCitations(func(src sova.Source) {
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	})
	if m.d.Settings != nil {
		s, err := m.d.Settings.UserSettings(ctx, in.UserID)
		if err != nil {
			return nil, fmt.Errorf("reading your settings: %w", err)
		}
		t.settings = s
	}
	t.mcp = m.toolset(ctx, in.UserID, sink)
	defer t.mcp.Close()
	if u, ok := sova.UserFrom(ctx); !ok || u.Role == sova.RoleAnonymous {
		t.anonymous = true
	}

	var (
		next  = Router
		msgs  []llm.Message
		note  string
		pause *mode.Pause
		err   error
	)
	if in.Resume != nil {
		next, msgs, pause, err = t.resume(ctx, in.Resume)
		if err != nil {
			return nil, err
		}
	} else {
		next = m.activeAgent(ctx, in)
		if next != Router {
			note = fmt.Sprintf("You hold this conversation (%s agent); the person's message follows.", next)
		}
	}
	for pause == nil {
		var to, why string
		to, why, pause, err = t.runAgent(ctx, next, msgs, note)
		msgs, note = nil, ""
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s agent: %w", next, err)
		}
		if pause != nil || to == "" {
			break
		}
		if t.handoffs++; t.handoffs > m.cfg.MaxHandoffs {
			mode.Status(sink, "handoff", "Too many hand-offs in one turn; the router answers", "")
			break
		}
		kind := "handoff"
		if to == Router {
			kind = "return"
		}
		t.emit("handoff", fmt.Sprintf("handoff-%d", t.handoffs), map[string]any{"kind": kind, "from": next, "to": to, "reason": why})
		if to == Router {
			note = fmt.Sprintf("The %s agent returned control to you: %s", next, why)
			if next == Interview {
				note += "\nThe interview is over; ask the person how you can help, in one short sentence."
			}
		} else {
			note = fmt.Sprintf("The router handed the conversation to you: %s", why)
		}
		next = to
	}
	if s := t.cites.Flush(); s != "" {
		t.write(s)
	}
	holder := Router
	if pause == nil && next == Interview {
		holder = Interview // waits for the answer to its question
	}
	rec, _ := json.Marshal(record{Agent: holder, Transcript: t.transcript, Steps: t.steps})
	res := &mode.Result{
		Text: t.text.String(), Sources: t.cites.Cited(), Model: t.model,
		FinishReason: mode.FinishReason(t.reason), Steps: rec, Report: t.report, Pause: pause,
	}
	return res, nil
}

// toolset connects the admin's servers the person may use and the
// person's own MCP servers; those that fail are reported and left out.
// Whom the run acts for is the context's user (its role and name decide
// which of the admin's servers it gets); anonymous visitors get none.
func (m *Mode) toolset(ctx context.Context, userID string, sink event.Sink) *mcp.Toolset {
	user, ok := sova.UserFrom(ctx)
	if m.d.MCP == nil || !ok || user.ID != userID || user.Role == sova.RoleAnonymous {
		return &mcp.Toolset{}
	}
	var own []mcp.Server
	if m.d.Servers != nil {
		list, err := m.d.Servers.MCPServers(ctx, userID)
		if err != nil {
			mode.Status(sink, "mcp", "Your MCP servers could not be read", err.Error())
		}
		for _, s := range list {
			own = append(own, mcp.Server{Name: s.Name, URL: s.URL, Headers: s.Headers})
		}
	}
	ts := m.d.MCP.Tools(ctx, user, own)
	for _, p := range ts.Problems {
		mode.Status(sink, "mcp", "MCP server "+p.Server+" is unavailable", p.Error)
	}
	return ts
}

// activeAgent is the agent holding the chat: the interview goes on until
// it ends; everything else starts at the router.
func (m *Mode) activeAgent(ctx context.Context, in mode.Input) string {
	if m.d.Chats == nil || in.ChatID == "" {
		return Router
	}
	msgs, err := m.d.Chats.ListMessages(ctx, in.UserID, in.ChatID)
	if err != nil {
		return Router
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleAssistant {
			continue
		}
		var r record
		if msgs[i].Mode == m.ID() && json.Unmarshal(msgs[i].ToolCalls, &r) == nil && r.Agent == Interview {
			return Interview
		}
		return Router
	}
	return Router
}

// write streams a piece of the answer.
func (t *turn) write(s string) {
	t.text.WriteString(s)
	t.sink.Emit(mode.TextDelta(s))
}

// emit sends a data part "assistant_<name>".
func (t *turn) emit(name, id string, v any) {
	b, _ := json.Marshal(v)
	t.sink.Emit(event.Event{Type: event.TypeData, Time: time.Now(), Data: &event.Data{Name: "assistant_" + name, ID: id, Value: b}})
}

// speak announces that an agent speaks, and separates its text from the
// previous agent's.
func (t *turn) speak(agentName string) {
	t.emit("agent", fmt.Sprintf("agent-%d", len(t.transcript)+1), map[string]any{"agent": agentName})
}

// runAgent runs one agent's loop. It returns the agent control passes to
// ("" when the turn ends), why, or a pause for the person's confirmation.
// msgs, when set, continue a loop that paused.
func (t *turn) runAgent(ctx context.Context, name string, msgs []llm.Message, note string) (string, string, *mode.Pause, error) {
	gate := &gate{acts: &agent.Gate{}}
	ts, prompt := t.agentTools(name, gate)
	ts = t.forAccount(ts)
	if msgs == nil {
		msgs = []llm.Message{{Role: llm.RoleSystem, Content: prompt}}
		msgs = append(msgs, mode.LastMessages(t.in.History, t.m.cfg.HistoryLimit)...)
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: t.in.Question})
		for _, s := range t.transcript {
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("[%s agent] %s", s.Agent, s.Text)})
		}
		if note != "" {
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "[Sova] " + note})
		}
	}
	t.speak(name)
	var text strings.Builder
	if t.text.Len() > 0 {
		t.write("\n\n")
	}
	temp := t.m.cfg.Temperature
	out, err := agent.Run(ctx, agent.Config{
		Model: t.m.d.Model, Repair: t.m.d.Fast, Tools: ts, MaxSteps: t.m.cfg.MaxSteps,
		Temperature: &temp, MaxTokens: t.m.cfg.MaxTokens, Concurrency: 1, Gate: gate.acts,
		Sink:       prefixed(t.sink, fmt.Sprintf("%s%d-%d-", name, t.in.Now.Unix()%100000, len(t.steps))),
		OnToolCall: func(c agent.Call) { gate.current = c.ID },
		OnText: func(delta string) {
			s := delta
			if name == Knowledge {
				s = t.cites.Write(delta)
			}
			if s != "" {
				text.WriteString(s)
				t.write(s)
			}
		},
	}, msgs)
	if out != nil {
		t.steps = append(t.steps, out.Steps...)
		t.model, t.reason = out.Model, out.FinishReason
	}
	if err != nil {
		return "", "", nil, err
	}
	if name == Knowledge {
		if s := t.cites.Flush(); s != "" {
			text.WriteString(s)
			t.write(s)
		}
	}
	// What the planning agent answered is said verbatim (seed 004).
	if gate.verbatim != "" {
		if text.Len() > 0 {
			t.write("\n\n")
		}
		text.WriteString(gate.verbatim)
		t.write(gate.verbatim)
	}
	if s := strings.TrimSpace(text.String()); s != "" {
		t.transcript = append(t.transcript, said{Agent: name, Text: s})
	}
	if len(gate.held()) > 0 {
		return "", "", t.pause(name, out.Messages, gate), nil
	}
	switch {
	case gate.to != "":
		return gate.to, gate.why, nil, nil
	case name == Knowledge:
		// Its answer given, the knowledge agent returns control (exit
		// criteria); the router is ready for the next request.
		t.emit("handoff", fmt.Sprintf("return-%d", len(t.transcript)), map[string]any{"kind": "return", "from": Knowledge, "to": Router, "reason": "answered"})
	}
	return "", "", nil, nil
}
