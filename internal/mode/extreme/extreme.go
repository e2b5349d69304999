// Package extreme is the extreme mode of seed 000 §2: a research plan of
// themes and todos, an agent on the shared tool loop that works through it
// with webSearch, xSearch and codeRunner (Python in the sandbox, charts
// included), then an answer written from everything it found, with
// checked citations and the charts in place. Its progress streams as
// data-extreme_search parts of the seed's kinds (plan, query, source,
// content, code, x_search).
//
// The charts a cell draws are kept as run files (PNG) through the run's
// mode.FileWorkspace and served by the run-files endpoint; the model sees
// their names and sizes, never their bytes. The answer is also kept as a
// report, Markdown and PDF with the charts embedded.
package extreme

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// ID is the mode id.
const ID = "extreme"

// Names of the agent's tools, as the seed names them.
const (
	WebSearchName  = "webSearch"
	XSearchName    = "xSearch"
	CodeRunnerName = "codeRunner"
)

// Config tunes the mode; zero values take the defaults (the seed's where
// it has one).
type Config struct {
	// Providers serve the tools: Search and Reader (webSearch), X
	// (xSearch; nil withdraws it), Sandbox (codeRunner; nil withdraws it,
	// SandboxErr says why).
	Providers tools.Providers
	// MaxActions bounds the plan's todos, and with them the agent's
	// steps (15).
	MaxActions int
	// Results is how many results a webSearch keeps (8).
	Results int
	// ReadPages is how many of a search's results are read in full when
	// the provider gave little text of them (Results: every one, seed 000
	// §2.2).
	ReadPages int
	// ContentChars clips each source's text (3000).
	ContentChars int
	// ContextChars bounds the research the answer is written from (60000).
	ContextChars int
	// Concurrency is how many pages are read at once (4).
	Concurrency int
	// ChartBytes bounds the charts a run keeps (32 MiB).
	ChartBytes  int64
	BlockList   search.BlockList
	Temperature float64
	MaxTokens   int
	// HistoryLimit is how many earlier messages of the chat the plan and
	// the answer see (0: all).
	HistoryLimit int
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	c.MaxActions = cmp.Or(c.MaxActions, 15)
	c.Results = cmp.Or(c.Results, 8)
	c.ReadPages = cmp.Or(c.ReadPages, c.Results)
	c.ContentChars = cmp.Or(c.ContentChars, 3000)
	c.ContextChars = cmp.Or(c.ContextChars, 60000)
	c.Concurrency = cmp.Or(c.Concurrency, 4)
	c.ChartBytes = cmp.Or(c.ChartBytes, 32<<20)
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Mode is the extreme mode.
type Mode struct {
	cfg   Config
	model *llm.Client // plan, agent, answer
	fast  *llm.Client // repairs malformed tool calls
}

var (
	_ mode.Mode         = (*Mode)(nil)
	_ mode.ToolReporter = (*Mode)(nil)
	_ mode.Durable      = (*Mode)(nil)
)

// New returns the mode. fast repairs malformed tool calls; nil uses model.
func New(cfg Config, model, fast *llm.Client) *Mode {
	if fast == nil {
		fast = model
	}
	return &Mode{cfg: cfg.withDefaults(), model: model, fast: fast}
}

// ID implements mode.Mode.
func (m *Mode) ID() string { return ID }

// Description implements mode.Mode.
func (m *Mode) Description() string {
	return "Extreme research: plans up to 15 actions, then an agent searches the web and X and runs Python in a sandbox to compute and chart; a cited answer with the charts, kept as a report."
}

// Durable implements mode.Durable: a run saves checkpoints at each step
// that cost money (checkpoint.go), and a continued run goes on from the
// last.
func (m *Mode) Durable() bool { return true }

// Tools implements mode.ToolReporter: the agent's tools, available or
// withdrawn, under the seed's names.
func (m *Mode) Tools() []mode.ToolStatus {
	var out []mode.ToolStatus
	for _, t := range []struct{ name, as string }{
		{tools.WebSearchName, WebSearchName}, {tools.XSearchName, XSearchName}, {tools.CodeInterpreterName, CodeRunnerName},
	} {
		s, _ := m.cfg.Providers.Status(t.name)
		out = append(out, mode.ToolStatus{Name: t.as, Available: s.Available, Provider: s.Provider, Reason: s.Reason, Note: s.Note, Settings: s.Settings})
	}
	return out
}

// session is one run's state.
type session struct {
	m     *Mode
	cfg   Config
	in    mode.Input
	sink  event.Sink
	parts *parts
	lang  lang.Language
	cite  *tools.Citations
	read  *tools.Run // reads pages, once per run
	ws    mode.FileWorkspace
	files *tools.CodeFiles

	themes     []PlanTheme // the research plan
	withdrawn  []mode.ToolStatus
	cpMu       sync.Mutex // orders checkpoints (checkpoint.go)
	cpMessages int        // messages of the agent's conversation saved

	mu      sync.Mutex
	sources []*found // in citation order
	byNum   map[int]*found
	cells   []cell
	charts  map[string][]byte // chart URL → PNG, for the report's PDF
	posts   int
}

// found is a source the research found, with what was read of it.
type found struct {
	n     int
	src   sova.Source
	title string
	url   string
	text  string
}

// cell is a code cell as the answer is written from it.
type cell struct {
	title  string
	stdout string
	stderr string
	exit   int
	charts []Chart
}

// Run implements mode.Mode.
func (m *Mode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	question := strings.TrimSpace(in.Question)
	if question == "" {
		return nil, errors.New("extreme: the question is empty")
	}
	if in.Now.IsZero() {
		in.Now = m.cfg.Now()
	}
	s := &session{
		m: m, cfg: m.cfg, in: in, sink: sink, parts: newParts(sink), lang: lang.Detect(question),
		files: tools.NewCodeFiles(m.cfg.ChartBytes), byNum: map[int]*found{}, charts: map[string][]byte{},
	}
	s.cite = tools.NewCitations(func(src sova.Source) {
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	})
	s.read = tools.NewRun(tools.Providers{Reader: m.cfg.Providers.Reader}, nil)
	s.read.SetQuestion(question)
	if fw, ok := in.Workspace.(mode.FileWorkspace); ok {
		s.ws = fw
	}

	if in.Continued && s.ws != nil {
		cp, ok, err := s.loadCheckpoint(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			return s.continueFrom(ctx, cp)
		}
	}
	themes, err := s.plan(ctx)
	if err != nil {
		return nil, err
	}
	s.themes = themes
	ts := s.tools(true)
	if err := s.saveCheckpoint(ctx, phaseResearch, nil, nil, "", nil); err != nil {
		return nil, err
	}
	return s.researchAndAnswer(ctx, ts, nil, nil)
}

// researchAndAnswer runs the research agent, from the start or from the
// steps and conversation of a checkpoint, then writes the answer.
func (s *session) researchAndAnswer(ctx context.Context, ts []agent.Tool, done []agent.Step, msgs []llm.Message) (*mode.Result, error) {
	out, err := s.research(ctx, ts, done, msgs)
	if err != nil {
		return nil, err
	}
	s.parts.emit("plan", PlanPart{Kind: KindPlan, Status: PlanStatus{Title: "Research completed"}, Plan: s.themes})
	notes := ""
	if out != nil {
		notes = out.LastText()
	}
	if err := s.saveCheckpoint(ctx, phaseAnswer, nil, nil, notes, nil); err != nil {
		return nil, err
	}
	return s.answer(ctx, notes)
}

// tools are the agent's tools; a tool whose provider is missing is
// withdrawn, and when fresh (not in a continued run, whose withdrawn
// tools the checkpoint holds and the client was told of) with a status
// saying why and what enables it.
func (s *session) tools(fresh bool) []agent.Tool {
	var ts []agent.Tool
	var withdrawn []mode.ToolStatus
	p := s.cfg.Providers
	for _, t := range []struct {
		name, as string
		build    func() agent.Tool
	}{
		{tools.WebSearchName, WebSearchName, s.webSearchTool},
		{tools.XSearchName, XSearchName, s.xSearchTool},
		{tools.CodeInterpreterName, CodeRunnerName, s.codeRunnerTool},
	} {
		st, _ := p.Status(t.name)
		if !st.Available {
			ws := mode.ToolStatus{Name: t.as, Reason: st.Reason, Settings: st.Settings}
			if ws.Reason == "" {
				ws.Reason = "its provider is not configured"
			}
			withdrawn = append(withdrawn, ws)
			if fresh {
				tools.Withdraw(s.sink, tools.Status{Name: t.as, Reason: ws.Reason, Settings: st.Settings})
			}
			continue
		}
		ts = append(ts, t.build())
	}
	if fresh {
		s.withdrawn = withdrawn
	}
	return ts
}

// research runs the agent through the plan: one tool call at a time (seed:
// no parallel tool calls), about one step per todo, then a step without
// tools for its notes. A continued run hands it the steps done and their
// conversation; every reply and every tool result is checkpointed.
func (s *session) research(ctx context.Context, ts []agent.Tool, done []agent.Step, msgs []llm.Message) (*agent.Outcome, error) {
	todos := 0
	for _, th := range s.themes {
		todos += len(th.Todos)
	}
	if len(ts) == 0 {
		return nil, errors.New("extreme: no research tool is available (web search is not configured); set SOVA_SEARCH_PROVIDER")
	}
	ts = agent.UntrustedTools("", ts) // what they return reaches the model marked as data
	if msgs == nil {
		mode.Status(s.sink, "research", "Researching", fmt.Sprintf("%d actions planned", todos))
		msgs = []llm.Message{
			{Role: llm.RoleSystem, Content: s.agentPrompt(s.themes, ts, s.withdrawn, todos+1) + "\n\n" + agent.UntrustedRule},
			{Role: llm.RoleUser, Content: s.in.Question},
		}
	}
	temp := s.cfg.Temperature
	serial := false // seed 000 §7.4: parallel_tool_calls false
	out, err := agent.Run(ctx, agent.Config{
		Model: s.m.model, Repair: s.m.fast, Tools: ts, MaxSteps: todos + 1, Concurrency: 1, ParallelToolCalls: &serial,
		Temperature: &temp, MaxTokens: s.cfg.MaxTokens, Done: done,
		Checkpoint: func(ctx context.Context, steps []agent.Step, msgs []llm.Message) error {
			return s.saveCheckpoint(ctx, phaseResearch, steps, msgs, "", nil)
		},
	}, msgs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errCheckpoint) {
			return nil, err
		}
		// What was found before the model failed is still worth an answer.
		if out == nil || len(out.Steps) == 0 {
			return nil, fmt.Errorf("extreme: research agent: %w", err)
		}
		mode.Status(s.sink, "research", "The research agent stopped early; answering from what it found", err.Error())
	}
	return out, nil
}

// addSource numbers a source for citation and keeps it for the answer.
func (s *session) addSource(src sova.Source, text string) int {
	n := s.cite.Number(src)
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.byNum[n]
	if f == nil {
		f = &found{n: n, src: src, title: src.Title, url: src.URL}
		s.byNum[n] = f
		s.sources = append(s.sources, f)
	}
	if len([]rune(text)) > len([]rune(f.text)) {
		f.text = text
	}
	return n
}

// newID is a short random id for a query, a cell or an X search.
func newID(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// partID is the id of the parts a tool call shows: after the agent's
// call (its step and id), which a run continued from a checkpoint calls
// again under the same id, so that the parts it shows replace what the
// client had of the call before the node stopped; random outside the
// agent.
func partID(ctx context.Context, prefix string) string {
	c, ok := agent.CallOf(ctx)
	if !ok || c.ID == "" {
		return newID(prefix)
	}
	id := []byte(agent.EventID(c.Step, c.ID))
	for i, b := range id {
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '_') {
			id[i] = '_' // the id names run files and URLs too
		}
	}
	return prefix + string(id[:min(len(id), 64)])
}

// record is what the stored answer keeps of the run: the last state of
// every part (plan, queries, code cells, X searches), shown again when the
// chat is reopened.
type record struct {
	Parts     []json.RawMessage `json:"extreme_search"`
	Withdrawn []mode.ToolStatus `json:"withdrawn,omitempty"`
}
