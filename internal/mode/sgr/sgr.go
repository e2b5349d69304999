// Package sgr is the schema-guided reasoning agent of seed 002 (mode
// sgr_agent). At every step the model returns a NextStep object: its
// reasoning and one tool, chosen from those the agent's limits still allow
// (clarification, generate_plan, adapt_plan, web_search,
// extract_page_content, create_report, final_answer). The agent runs the
// tool, shows the step as tool-call events and goes on until the task is
// answered, it needs the person's answers, or its steps run out.
//
// An agent is kept in the store after every step, under the id of the run
// that created it. It waits there for clarification answers (the run
// pauses; the next request naming the agent continues it) and survives a
// restart: a run executed again picks the agent up at its last step.
package sgr

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// ID is the mode id (and the OpenAI model name) of the agent.
const ID = "sgr_agent"

// Defaults of Config's limits (seed 002 and SGR Agent Core).
const (
	DefaultMaxSteps          = 6
	DefaultMaxSearches       = 4
	DefaultMaxClarifications = 3
)

// Config tunes the agent. Zero limits take the defaults above.
type Config struct {
	MaxSteps          int // SOVA_SGR_MAX_STEPS (6): steps over the agent's whole life
	MaxSearches       int // SOVA_SGR_MAX_SEARCHES (4)
	MaxClarifications int // SOVA_SGR_MAX_CLARIFICATIONS (3)
	// MaxResults caps the results of one web search (the tool allows 10).
	MaxResults   int
	Concurrency  int // parallel page reads
	BlockList    search.BlockList
	HistoryLimit int // earlier chat messages given to a new agent
	Temperature  float64
	MaxTokens    int
	Logger       *slog.Logger
}

// Searcher is the web search the agent uses (a search.Chain).
type Searcher = tools.Searcher

// Store is where agents are kept.
type Store interface {
	CreateAgent(ctx context.Context, a *sova.Agent) error
	GetAgent(ctx context.Context, userID, agentID string) (*sova.Agent, error)
	UpdateAgent(ctx context.Context, a *sova.Agent, fromState string) error
}

// Mode is the sgr_agent mode.
type Mode struct {
	cfg    Config
	model  *llm.Client
	search Searcher
	reader tools.PageReader
	store  Store
	log    *slog.Logger
}

var _ mode.AgentMode = (*Mode)(nil)

// New returns the agent mode.
func New(cfg Config, model *llm.Client, searcher Searcher, reader tools.PageReader, st Store) *Mode {
	cfg.MaxSteps = cmp.Or(cfg.MaxSteps, DefaultMaxSteps)
	if cfg.MaxSearches < 0 {
		cfg.MaxSearches = 0
	}
	if cfg.MaxClarifications < 0 {
		cfg.MaxClarifications = 0
	}
	if cfg.MaxResults <= 0 || cfg.MaxResults > maxSearchResults {
		cfg.MaxResults = maxSearchResults
	}
	cfg.Concurrency = max(cfg.Concurrency, 1)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Mode{cfg: cfg, model: model, search: searcher, reader: reader, store: st, log: log}
}

// ID implements mode.Mode.
func (m *Mode) ID() string { return ID }

// Description implements mode.Mode.
func (m *Mode) Description() string {
	return "Schema-guided reasoning agent: plans, asks clarifying questions, searches and reads the web step by step, writes a cited report; continue it by its agent id."
}

// KeepsAgents implements mode.AgentMode.
func (m *Mode) KeepsAgents() bool { return true }

// resumeState is the Pause state of a waiting agent: which agent to
// continue. The run service hands it back with the person's answers.
type resumeState struct {
	AgentID string `json:"agent_id"`
}

// memory is what an agent needs to go on, kept as store.Agent.Context.
type memory struct {
	Version  int    `json:"version"`
	Language string `json:"language"`
	// Conversation is the agent's dialogue with the model after the system
	// prompt (which is rebuilt at every step): the task, each step's tool
	// call and result, the person's answers.
	Conversation []llm.Message `json:"conversation"`
	Plan         *plan         `json:"plan,omitempty"`
	Report       *report       `json:"report,omitempty"`
	Questions    []string      `json:"questions,omitempty"`
	Steps        []stepRecord  `json:"steps,omitempty"`
}

type plan struct {
	Goal       string   `json:"goal"`
	Steps      []string `json:"steps"`
	Strategies []string `json:"strategies,omitempty"`
	Changes    []string `json:"changes,omitempty"`
}

type report struct {
	Title      string        `json:"title"`
	Text       string        `json:"text"` // verified, with its list of sources
	Sources    []sova.Source `json:"sources,omitempty"`
	Confidence string        `json:"confidence,omitempty"`
}

// stepRecord is one step as the stored chat message keeps it.
type stepRecord struct {
	Step    int             `json:"step"`
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input,omitempty"`
	Summary string          `json:"summary,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// work is one run of an agent: the stored agent and its decoded memory.
type work struct {
	agent *sova.Agent
	mem   memory
	model string     // the model that answered last
	tools *tools.Run // what the run's web_search and extract_page_content share
}

func (w *work) language() lang.Language {
	if w.mem.Language == lang.Russian.Code {
		return lang.Russian
	}
	return lang.English
}

// read returns the pages read, numbered as the model sees them.
func (w *work) read() []sova.Source {
	var out []sova.Source
	for _, s := range w.agent.Sources {
		if s.Number > 0 {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b sova.Source) int { return a.Number - b.Number })
	return out
}

// Run implements mode.Mode.
func (m *Mode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	w, done, err := m.open(ctx, in, sink)
	if err != nil || done != nil {
		return done, err
	}
	w.tools = tools.NewRun(tools.Providers{Search: m.search, Reader: m.reader}, sink)
	w.tools.SetQuestion(in.Question)
	res, err := m.loop(ctx, w, in, sink)
	if err != nil {
		w.agent.State = sova.AgentFailed
		w.agent.Error = err.Error()
		if ctx.Err() != nil {
			w.agent.Error = "stopped: " + context.Cause(ctx).Error()
		}
		m.save(ctx, w)
		return nil, err
	}
	return res, nil
}

// open finds or creates the agent of this run and claims it for the run.
// A non-nil Result means there is nothing left to run (a finished agent's
// run was executed again).
func (m *Mode) open(ctx context.Context, in mode.Input, sink event.Sink) (*work, *mode.Result, error) {
	userID := in.UserID
	if userID == "" {
		// Agents are kept per user; a run for nobody would keep one that
		// nobody can see or continue.
		return nil, nil, errors.New("sgr_agent: the run names no user")
	}
	id := in.RunID
	if in.OriginRunID != "" {
		id = in.OriginRunID // a restart continues the agent of the first run
	}
	if in.Resume != nil {
		var rs resumeState
		if err := json.Unmarshal(in.Resume.State, &rs); err == nil && rs.AgentID != "" {
			id = rs.AgentID
		}
	}
	a, err := m.store.GetAgent(ctx, userID, id)
	switch {
	case errors.Is(err, sova.ErrNotFound) && in.Resume == nil:
		return m.create(ctx, in, userID, id, sink)
	case errors.Is(err, sova.ErrNotFound):
		return nil, nil, fmt.Errorf("agent %s no longer exists; ask again to start a new one", id)
	case err != nil:
		return nil, nil, fmt.Errorf("loading agent %s: %w", id, err)
	}
	w := &work{agent: a}
	if len(a.Context) > 0 {
		if err := json.Unmarshal(a.Context, &w.mem); err != nil {
			return nil, nil, fmt.Errorf("agent %s: its stored context is unreadable: %w", id, err)
		}
	}
	from := a.State
	resume := in.Resume
	if resume != nil && in.Continued && (a.State != sova.AgentWaiting || tookAnswers(w.mem, resume.Answer)) {
		// The run is executed again after its node stopped, and the agent
		// had taken these answers (they are stored with its claim): it goes
		// on from its last step, or waits again for its newer questions.
		resume = nil
	}
	switch {
	case resume != nil:
		if a.State != sova.AgentWaiting {
			return nil, nil, fmt.Errorf("agent %s is %s, not waiting for clarification", id, a.State)
		}
		w.mem.Conversation = append(w.mem.Conversation, llm.Message{Role: llm.RoleUser, Content: answersMessage(resume.Answer)})
		w.mem.Questions = nil
		// Stored with the claim below: a run executed again after its
		// node stopped finds the answers taken, whatever step it stopped at.
		ctxJSON, err := json.Marshal(w.mem)
		if err != nil {
			return nil, nil, fmt.Errorf("agent %s: %w", id, err)
		}
		a.Context = ctxJSON
		status(sink, "clarification", "Continuing with your answers", clip(resume.Answer, 200))
	case a.State == sova.AgentCompleted || a.State == sova.AgentFailed && lastTool(w.mem.Steps) == ToolFinalAnswer:
		// The run was executed again after the agent answered: answer as
		// before (an agent that answered it could not do the task counts).
		sink.Emit(textDelta(a.Result))
		return nil, &mode.Result{Text: a.Result, Sources: a.ResultSources, FinishReason: event.FinishStop, Steps: stepsJSON(w.mem.Steps)}, nil
	case a.State == sova.AgentWaiting:
		sink.Emit(textDelta(a.Result))
		return nil, m.pauseResult(w, a.Result), nil
	default:
		// Inited, researching or failed: the run stopped before the agent
		// did (a restart, an error); go on from the last step kept.
		status(sink, "resume", fmt.Sprintf("Resuming the agent after step %d of %d", a.Iteration, m.cfg.MaxSteps), "")
	}
	a.State, a.Error = sova.AgentResearching, ""
	if err := m.store.UpdateAgent(ctx, a, from); err != nil {
		if errors.Is(err, sova.ErrConflict) {
			return nil, nil, fmt.Errorf("agent %s is already being continued by another request", id)
		}
		return nil, nil, fmt.Errorf("claiming agent %s: %w", id, err)
	}
	return w, nil, nil
}

// tookAnswers says whether the agent's conversation holds answer as the
// person's answers to its questions.
func tookAnswers(mem memory, answer string) bool {
	want := answersMessage(answer)
	for _, m := range mem.Conversation {
		if m.Role == llm.RoleUser && m.Content == want {
			return true
		}
	}
	return false
}

// create starts a new agent for the task.
func (m *Mode) create(ctx context.Context, in mode.Input, userID, id string, sink event.Sink) (*work, *mode.Result, error) {
	w := &work{agent: &sova.Agent{
		ID: id, UserID: userID, ChatID: in.ChatID, Mode: ID, Task: in.Question, State: sova.AgentInited,
	}}
	w.mem = memory{Version: 1, Language: mode.LanguageOf(in).Code}
	history := in.History
	if n := m.cfg.HistoryLimit; n > 0 && len(history) > n {
		history = history[len(history)-n:]
	}
	for _, h := range history {
		if (h.Role == llm.RoleUser || h.Role == llm.RoleAssistant) && strings.TrimSpace(h.Content) != "" {
			w.mem.Conversation = append(w.mem.Conversation, llm.Message{Role: h.Role, Content: h.Content})
		}
	}
	w.mem.Conversation = append(w.mem.Conversation, llm.Message{Role: llm.RoleUser, Content: in.Question})
	ctxJSON, err := json.Marshal(w.mem)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: %w", id, err)
	}
	w.agent.Context = ctxJSON
	if err := m.store.CreateAgent(ctx, w.agent); err != nil {
		return nil, nil, fmt.Errorf("creating agent %s: %w", id, err)
	}
	status(sink, "agent", "Agent created", id)
	w.agent.State = sova.AgentResearching
	if err := m.store.UpdateAgent(ctx, w.agent, sova.AgentInited); err != nil {
		return nil, nil, fmt.Errorf("starting agent %s: %w", id, err)
	}
	return w, nil, nil
}

// loop runs steps until the agent answers, asks, or runs out of steps.
func (m *Mode) loop(ctx context.Context, w *work, in mode.Input, sink event.Sink) (*mode.Result, error) {
	for w.agent.Iteration < m.cfg.MaxSteps {
		step := w.agent.Iteration + 1
		tools := m.tools(w, step)
		status(sink, "step", fmt.Sprintf("Step %d of %d", step, m.cfg.MaxSteps), strings.Join(tools, ", "))
		next, err := m.decide(ctx, w, in, step, tools)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
		w.agent.Iteration = step
		w.agent.Reasoning, _ = json.Marshal(next.Reasoning())

		reasonID := fmt.Sprintf("call_%d_%s", step, toolReasoning)
		sink.Emit(toolCall(reasonID, toolReasoning, w.agent.Reasoning,
			fmt.Sprintf("Step %d of %d: %s", step, m.cfg.MaxSteps, clip(next.CurrentSituation, 120))))
		decision, _ := json.Marshal(map[string]any{"tool": next.Function.Tool, "remaining_steps": next.RemainingSteps})
		sink.Emit(toolResult(reasonID, toolReasoning, outcome{output: decision}))

		callID := fmt.Sprintf("call_%d_%s", step, next.Function.Tool)
		input, _ := json.Marshal(next.Function)
		sink.Emit(toolCall(callID, next.Function.Tool, input, m.title(next.Function)))
		var out outcome
		if !slices.Contains(tools, next.Function.Tool) {
			// Replies are validated against the schema of the allowed
			// tools, so this does not happen; the limits do not rest on it.
			out = outcome{err: fmt.Sprintf("%s is not available at this step; available: %s", next.Function.Tool, strings.Join(tools, ", "))}
			out.forModel = "Error: " + out.err
		} else {
			out = m.execute(ctx, w, next, step, sink)
		}
		sink.Emit(toolResult(callID, next.Function.Tool, out))

		note := cmp.Or(firstOf(next.RemainingSteps), next.CurrentSituation, "Next step")
		w.mem.Conversation = append(w.mem.Conversation,
			llm.Message{Role: llm.RoleAssistant, Content: note, ToolCalls: []llm.ToolCall{{ID: callID, Name: next.Function.Tool, Arguments: string(input)}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: callID, Name: next.Function.Tool, Content: out.forModel})
		w.mem.Steps = append(w.mem.Steps, stepRecord{Step: step, Tool: next.Function.Tool, Input: input, Summary: clip(out.text, 300), Error: out.err})
		if ctx.Err() != nil && !out.pause && !out.final {
			// The step is kept as it ended (its tool failed with the
			// context), so the agent's record stays consistent.
			return nil, context.Cause(ctx)
		}

		switch {
		case out.pause:
			w.agent.State = sova.AgentWaiting
			m.save(ctx, w)
			sink.Emit(textDelta(w.agent.Result))
			return m.pauseResult(w, w.agent.Result), nil
		case out.final:
			m.save(ctx, w)
			return m.finalResult(w, sink), nil
		case step >= m.cfg.MaxSteps && w.mem.Report != nil:
			m.complete(w, sova.AgentCompleted, w.mem.Report.Text, w.mem.Report.Sources)
			m.save(ctx, w)
			return m.finalResult(w, sink), nil
		}
		m.save(ctx, w)
	}
	if w.mem.Report != nil {
		m.complete(w, sova.AgentCompleted, w.mem.Report.Text, w.mem.Report.Sources)
		m.save(ctx, w)
		return m.finalResult(w, sink), nil
	}
	return nil, fmt.Errorf("the agent used all %d steps (SOVA_SGR_MAX_STEPS) without an answer", m.cfg.MaxSteps)
}

// tools are those the agent may choose at a step: a tool is withdrawn when
// its limit is reached, the plan tools follow whether a plan exists, and at
// the last step only the report and the final answer remain. Once the
// report is written only the final answer is left (seed 001): a
// clarifying question then would pause the run with the report out of
// reach.
func (m *Mode) tools(w *work, step int) []string {
	if w.mem.Report != nil {
		return []string{ToolFinalAnswer}
	}
	if step >= m.cfg.MaxSteps {
		return []string{ToolCreateReport, ToolFinalAnswer}
	}
	var out []string
	for _, t := range allTools {
		switch {
		case t == ToolClarification && w.agent.ClarificationsUsed >= m.cfg.MaxClarifications:
		case t == ToolWebSearch && w.agent.SearchesUsed >= m.cfg.MaxSearches:
		case t == ToolGeneratePlan && w.mem.Plan != nil:
		case t == ToolAdaptPlan && w.mem.Plan == nil:
		default:
			out = append(out, t)
		}
	}
	return out
}

// decide asks the model for the next step.
func (m *Mode) decide(ctx context.Context, w *work, in mode.Input, step int, tools []string) (NextStep, error) {
	msgs := make([]llm.Message, 0, len(w.mem.Conversation)+1)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: m.systemPrompt(w, step, tools, in.Now, in.Timezone) + mode.Personal(in)})
	msgs = append(msgs, w.mem.Conversation...)
	temp := m.cfg.Temperature
	next, resp, err := llm.Structured[NextStep](ctx, m.model, llm.Request{
		Messages: msgs, Temperature: &temp, MaxTokens: m.cfg.MaxTokens,
	}, llm.WithSchemaName("NextStep"), llm.WithSchema(nextStepSchema(tools)))
	if err != nil {
		return NextStep{}, err
	}
	if resp != nil {
		w.model = resp.Model
	}
	return next, nil
}

// complete records the agent's final answer. An agent that read no page
// answers from the model's own knowledge: its answer (and its report)
// start with a note that says so, unless it says it could not do the task.
func (m *Mode) complete(w *work, state, text string, sources []sova.Source) {
	if unverified(w, state) {
		searched := w.agent.SearchesUsed > 0
		if r := w.mem.Report; r != nil && r.Text == text {
			r.Text = mode.WithUnverifiedNote(w.language(), searched, r.Text)
		}
		text = mode.WithUnverifiedNote(w.language(), searched, text)
	}
	w.agent.State = state
	w.agent.Result = text
	w.agent.ResultSources = sources
}

// unverified reports whether an answer in state rests on no page read
// where pages were wanted: the agent searched, or wrote a report. An agent
// that answered at once, searching nothing (a greeting, a thank-you, a
// sum), judged the request to need no sources, and the note would only
// puzzle the person.
func unverified(w *work, state string) bool {
	return state == sova.AgentCompleted && len(w.read()) == 0 &&
		(w.agent.SearchesUsed > 0 || w.mem.Report != nil)
}

func (m *Mode) finalResult(w *work, sink event.Sink) *mode.Result {
	if unverified(w, w.agent.State) {
		mode.Unverified(sink, w.language(), w.agent.SearchesUsed > 0, w.tools.SearchFailure(), "")
	}
	sink.Emit(textDelta(w.agent.Result))
	res := &mode.Result{
		Text: w.agent.Result, Sources: w.agent.ResultSources, Model: w.model,
		FinishReason: event.FinishStop, Steps: stepsJSON(w.mem.Steps),
	}
	if r := w.mem.Report; r != nil && w.agent.Result == r.Text {
		res.Report = r.Text
	}
	return res
}

func (m *Mode) pauseResult(w *work, text string) *mode.Result {
	state, _ := json.Marshal(resumeState{AgentID: w.agent.ID})
	return &mode.Result{
		Text: text, Model: w.model, FinishReason: event.FinishStop, Steps: stepsJSON(w.mem.Steps),
		Pause: &mode.Pause{Questions: w.mem.Questions, State: state},
	}
}

// save keeps the agent, also when the run's context has ended: what the
// agent did must not be lost with the request.
func (m *Mode) save(ctx context.Context, w *work) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	b, err := json.Marshal(w.mem)
	if err != nil {
		m.log.Error("encoding agent context failed", "agent", w.agent.ID, "err", err)
		return
	}
	w.agent.Context = b
	if err := m.store.UpdateAgent(ctx, w.agent, ""); err != nil {
		m.log.Error("storing agent failed", "agent", w.agent.ID, "err", err)
	}
}

func stepsJSON(steps []stepRecord) json.RawMessage {
	if len(steps) == 0 {
		return nil
	}
	b, _ := json.Marshal(steps)
	return b
}

func lastTool(steps []stepRecord) string {
	if len(steps) == 0 {
		return ""
	}
	return steps[len(steps)-1].Tool
}

func firstOf(list []string) string {
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// Helpers the modes share.
var (
	status    = mode.Status
	textDelta = mode.TextDelta
	dateIn    = mode.DateIn
)

func toolCall(id, name string, input json.RawMessage, title string) event.Event {
	return event.Event{Type: event.TypeToolCall, Time: time.Now(), ToolCall: &event.ToolCall{ID: id, Name: name, Input: input, Title: title}}
}

func toolResult(id, name string, o outcome) event.Event {
	return event.Event{Type: event.TypeToolResult, Time: time.Now(), ToolResult: &event.ToolResult{
		ID: id, Name: name, Text: o.text, Output: o.output, Error: o.err,
	}}
}

// Durable implements mode.Durable: the agent is saved after every step
// (NextStep), and a continued run opens the same agent and goes on after
// its last step kept.
func (m *Mode) Durable() bool { return true }
