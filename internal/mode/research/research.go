// Package research is the deep_research mode of seed 001 §4: an optional
// initial deep search and clarifying questions, query analysis, a research
// plan, a team of researcher agents that work in parallel (ReAct with
// web_search, scrape_url and done), a supervisor that reviews their
// completed tasks one at a time and steers the research, compression of
// the findings and a structured final report with verified citations.
//
// The run's session folder (main.md, draft_report.md, supervisor.md,
// agents/agent_N.md, items/item_N.md) is written through the run's
// mode.Workspace, so the run engine can keep it with the run.
package research

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// ID is the mode id.
const ID = "deep_research"

// Config is the mode's tuning; every field is a setting (SOVA_DEEP_RESEARCH_*
// unless noted) with the seed's default, applied for zero values.
type Config struct {
	NumAgents               int  // SOVA_DEEP_RESEARCH_NUM_AGENTS (4)
	MaxSupervisorCalls      int  // SOVA_DEEP_RESEARCH_MAX_SUPERVISOR_CALLS (6)
	AgentMaxSteps           int  // SOVA_DEEP_RESEARCH_AGENT_MAX_STEPS (5): model calls per task
	SupervisorMaxIterations int  // SOVA_DEEP_RESEARCH_SUPERVISOR_MAX_ITERATIONS (10): model calls per review
	MaxIterations           int  // SOVA_DEEP_RESEARCH_DEFAULT_MAX_ITERATIONS (15): agent loop iterations (tasks per agent)
	RunDeepSearchFirst      bool // SOVA_DEEP_RESEARCH_RUN_DEEP_SEARCH_FIRST (true)
	ClarifyingQuestions     bool // SOVA_DEEP_RESEARCH_ENABLE_CLARIFYING_QUESTIONS (true)
	ReflectEvery            int  // SOVA_DEEP_RESEARCH_REFLECT_EVERY (3): steps between an agent's reflections
	MaxReformulations       int  // SOVA_DEEP_RESEARCH_MAX_REFORMULATIONS (5): extra searches per task
	MemoryNotes             int  // SOVA_DEEP_RESEARCH_AGENT_MEMORY_NOTES (10): own notes an agent sees
	SupervisorFindings      int  // SOVA_DEEP_RESEARCH_SUPERVISOR_FINDINGS (15): findings the supervisor sees
	MinDraftChars           int  // SOVA_DEEP_RESEARCH_MIN_DRAFT_CHARS (1000): shorter drafts give way to all findings
	MinReportChars          int  // SOVA_DEEP_RESEARCH_MIN_REPORT_CHARS (1500): shorter reports are re-asked
	MaxResults              int  // SOVA_DEEP_SEARCH_MAX_RESULTS (8): results per web_search
	ScrapeMaxURLs           int  // SOVA_DEEP_SEARCH_SCRAPE_TOP_N (4): pages per scrape_url call
	Concurrency             int  // SOVA_SEARCH_CONCURRENCY (4): pages read at once per scrape_url call
	BlockList               search.BlockList
	Temperature             float64
	MaxTokens               int
}

// Defaults of seed 001 §4.
func (c Config) withDefaults() Config {
	c.NumAgents = cmp.Or(c.NumAgents, 4)
	c.MaxSupervisorCalls = cmp.Or(c.MaxSupervisorCalls, 6)
	c.AgentMaxSteps = cmp.Or(c.AgentMaxSteps, 5)
	c.SupervisorMaxIterations = cmp.Or(c.SupervisorMaxIterations, 10)
	c.MaxIterations = cmp.Or(c.MaxIterations, 15)
	c.ReflectEvery = cmp.Or(c.ReflectEvery, 3)
	c.MaxReformulations = cmp.Or(c.MaxReformulations, 5)
	c.MemoryNotes = cmp.Or(c.MemoryNotes, 10)
	c.SupervisorFindings = cmp.Or(c.SupervisorFindings, 15)
	c.MinDraftChars = cmp.Or(c.MinDraftChars, 1000)
	c.MinReportChars = cmp.Or(c.MinReportChars, 1500)
	c.MaxResults = cmp.Or(c.MaxResults, 8)
	c.ScrapeMaxURLs = cmp.Or(c.ScrapeMaxURLs, 4)
	c.Concurrency = cmp.Or(c.Concurrency, 4)
	return c
}

// Searcher runs the initial deep search (the deep_search mode).
type Searcher interface {
	Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error)
}

// Research is the deep_research mode.
type Research struct {
	cfg      Config
	model    *llm.Client // planning, agents, supervisor, notes, report
	fast     *llm.Client // clarification check, page summaries, reflections
	chain    *search.Chain
	reader   tools.PageReader
	searcher Searcher // nil: no initial deep search
}

var _ mode.Mode = (*Research)(nil)

// New returns the mode. searcher may be nil, which turns the initial deep
// search off.
func New(cfg Config, model, fast *llm.Client, chain *search.Chain, reader tools.PageReader, searcher Searcher) *Research {
	if fast == nil {
		fast = model
	}
	return &Research{cfg: cfg.withDefaults(), model: model, fast: fast, chain: chain, reader: reader, searcher: searcher}
}

// ID implements mode.Mode.
func (r *Research) ID() string { return ID }

// Description implements mode.Mode.
func (r *Research) Description() string {
	return "Multi-agent research: a supervisor plans and steers parallel researcher agents that search and read the web, then writes a structured report of 2000+ words with verified citations."
}

// pauseState is what a run paused for clarifying questions needs to go on.
type pauseState struct {
	Version   int         `json:"v"`
	Question  string      `json:"question"`
	Language  string      `json:"language"`
	Initial   string      `json:"initial,omitempty"`
	Pages     []savedPage `json:"pages,omitempty"`
	Rounds    int         `json:"rounds,omitempty"`
	Questions []string    `json:"questions"`
}

// savedPage is a page read by the initial deep search.
type savedPage struct {
	Number  int         `json:"n"`
	Source  sova.Source `json:"source"`
	Summary string      `json:"summary,omitempty"`
}

// Run implements mode.Mode.
func (r *Research) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	s := r.newSession(in, sink)
	if in.Continued {
		cp, ok, err := s.loadCheckpoint(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			s.restoreCheckpoint(cp)
			status(sink, "continue", "Continuing the research from its last checkpoint",
				fmt.Sprintf("%d notes written, %d supervisor reviews", len(s.board.notes), s.board.calls))
			switch cp.Phase {
			case phaseReport:
				return s.conclude(ctx)
			case phaseWritten:
				if cp.Report == nil {
					return nil, errors.New("deep_research: the checkpoint of the written report holds no report")
				}
				return s.publish(ctx, cp.Report)
			}
			return s.work(ctx)
		}
	}
	if in.Resume != nil {
		var st pauseState
		if err := json.Unmarshal(in.Resume.State, &st); err != nil || st.Question == "" {
			if err == nil {
				err = errors.New("it holds no question")
			}
			return nil, fmt.Errorf("deep_research: the saved state of the paused run cannot be read: %w", err)
		}
		s.restore(st, in.Resume.Answer)
		status(sink, "clarify", "Continuing with your answers", clip(in.Resume.Answer, 200))
	} else {
		if strings.TrimSpace(in.Question) == "" {
			return nil, errors.New("deep_research: the question is empty")
		}
		if r.cfg.RunDeepSearchFirst && r.searcher != nil {
			if err := s.initialSearch(ctx); err != nil {
				return nil, err
			}
		}
		if r.cfg.ClarifyingQuestions {
			res, err := s.clarify(ctx)
			if err != nil || res != nil {
				return res, err
			}
		}
	}
	return s.research(ctx)
}

// session is one run's state.
type session struct {
	r        *Research
	cfg      Config
	in       mode.Input
	sink     event.Sink
	ws       mode.Workspace
	lang     lang.Language
	question string
	initial  string // the initial deep search's answer, citations renumbered to pages
	answers  string // clarification questions and the person's answers
	// tools is what the agents' tools share: the search (with failover
	// reports), the page reader, the search rounds and the pages read,
	// numbered as the research cites them.
	tools *tools.Run
	pages *tools.Pages

	cpMu      sync.Mutex // orders checkpoints (checkpoint.go)
	mu        sync.Mutex
	items     int // notes written
	plan      ResearchPlan
	analysis  QueryAnalysis
	board     *board
	decisions []DecisionData
	written   *writtenReport // the report, once the model wrote it
	// planRevision counts replans.
	planRevision int
}

func (r *Research) newSession(in mode.Input, sink event.Sink) *session {
	ws := in.Workspace
	if ws == nil {
		ws = NewMemWorkspace()
	}
	s := &session{
		r: r, cfg: r.cfg, in: in, sink: sink, ws: ws,
		question: strings.TrimSpace(in.Question),
		lang:     mode.LanguageOf(in),
	}
	provider := r.chain.WithFailover(func(failed string, err error, next string) {
		status(sink, "search", fmt.Sprintf("Search provider %s failed; trying %s", failed, next), err.Error())
	})
	s.tools = tools.NewRun(tools.Providers{Search: provider, Reader: r.reader}, sink)
	s.tools.SetQuestion(s.question)
	s.pages = s.tools.Pages()
	return s
}

func (s *session) restore(st pauseState, answer string) {
	s.question = st.Question
	s.lang = mode.LanguageOf(mode.Input{Question: st.Question, Language: s.in.Language})
	s.tools.SetRounds(st.Rounds)
	// Pages keep their numbers when saved densely in order; the mapping
	// keeps the initial result's citations right even if they were not.
	mapping := map[int]int{}
	for _, p := range st.Pages {
		mapping[p.Number] = s.pages.Add(p.Source, p.Summary).N
	}
	s.initial = tools.RemapMarkers(st.Initial, mapping)
	var b strings.Builder
	for i, q := range st.Questions {
		fmt.Fprintf(&b, "%d. %s\n", i+1, q)
	}
	fmt.Fprintf(&b, "\nAnswers: %s", strings.TrimSpace(answer))
	s.answers = b.String()
}

// research runs everything after the clarification: analysis, plan, team,
// agents with the supervisor, compression and the report.
func (s *session) research(ctx context.Context) (*mode.Result, error) {
	if err := s.writeMain(ctx); err != nil {
		return nil, err
	}
	if err := s.ws.Write(ctx, fileDraft, ""); err != nil {
		return nil, fmt.Errorf("writing %s: %w", fileDraft, err)
	}
	if err := s.ws.Write(ctx, fileSupervisor, "# Supervisor notes\n\n"); err != nil {
		return nil, fmt.Errorf("writing %s: %w", fileSupervisor, err)
	}
	s.analyze(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.makePlan(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := s.writeMain(ctx); err != nil {
		return nil, err
	}
	team := s.makeTeam(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.board = newBoard(s, team)
	if err := s.saveCheckpoint(ctx, phaseBoard); err != nil {
		return nil, err
	}
	return s.work(ctx)
}

// work runs the agents and the supervisor, then concludes.
func (s *session) work(ctx context.Context) (*mode.Result, error) {
	if err := s.board.start(ctx); err != nil {
		return nil, err
	}
	if err := s.board.run(ctx); err != nil {
		return nil, err
	}
	if err := s.saveCheckpoint(ctx, phaseReport); err != nil {
		return nil, err
	}
	return s.conclude(ctx)
}

// conclude compresses the findings and writes the report.
func (s *session) conclude(ctx context.Context) (*mode.Result, error) {
	notes := s.board.allNotes()
	if len(notes) == 0 && s.initial == "" {
		return nil, errors.New("deep_research: the agents found nothing to report (every task failed); check the search provider and the model endpoint")
	}
	status(s.sink, "compress", "Compressing findings", fmt.Sprintf("%d notes", len(notes)))
	findings := compressFindings(notes)
	return s.report(ctx, findings)
}

// nextItem hands out the next note number.
func (s *session) nextItem() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items++
	return s.items
}

// context is the research context every agent and the supervisor see: the
// original question, the initial search and the clarification, never the
// chat history (seed 001 §4).
func (s *session) context() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Original research request: %s\n", s.question)
	if s.answers != "" {
		fmt.Fprintf(&b, "\nClarifying questions and the person's answers:\n%s\n", s.answers)
	}
	if s.initial != "" {
		fmt.Fprintf(&b, "\nInitial deep search result (context only; numbers refer to read pages):\n%s\n", clip(s.initial, 4000))
	}
	return b.String()
}

// writeMain writes main.md: the request, the plan, and the key-insights
// section the supervisor appends to.
func (s *session) writeMain(ctx context.Context) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Research: %s\n\n", s.question)
	if s.answers != "" {
		fmt.Fprintf(&b, "## Clarification\n\n%s\n\n", s.answers)
	}
	if s.plan.Goal != "" {
		fmt.Fprintf(&b, "## Plan\n\nGoal: %s\n\n", s.plan.Goal)
		for _, th := range s.plan.Themes {
			fmt.Fprintf(&b, "### %s\n\n%s\n\n", th.Title, th.Description)
			for _, t := range th.Tasks {
				fmt.Fprintf(&b, "- %s: %s\n", t.Title, t.Objective)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString(insightsMarker + "\n\n")
	// Insights the supervisor already added survive a new plan.
	if doc, err := s.ws.Read(ctx, fileMain); err == nil {
		if _, after, ok := strings.Cut(doc, insightsMarker); ok && strings.TrimSpace(after) != "" {
			b.WriteString(strings.TrimSpace(after) + "\n")
		}
	}
	if err := s.ws.Write(ctx, fileMain, b.String()); err != nil {
		return fmt.Errorf("writing %s: %w", fileMain, err)
	}
	return nil
}

// insightsMarker heads the part of main.md that holds key insights.
const insightsMarker = "## Key insights"

// insights returns main.md's key insights, newest kept when clipped.
func (s *session) insights(ctx context.Context) string {
	doc, err := s.ws.Read(ctx, fileMain)
	if err != nil {
		return ""
	}
	_, after, ok := strings.Cut(doc, insightsMarker)
	if !ok {
		return ""
	}
	after = strings.TrimSpace(after)
	if r := []rune(after); len(r) > 4000 {
		after = "…" + string(r[len(r)-4000:])
	}
	return after
}

// temperature is the configured sampling temperature.
func (s *session) temperature() *float64 {
	t := s.cfg.Temperature
	return &t
}

// Durable implements mode.Durable: the research saves checkpoints
// (checkpoint.go) and a continued run goes on from the last one.
func (r *Research) Durable() bool { return true }

// Helpers the modes share.
var (
	status = mode.Status
	clip   = mode.Clip
	dateIn = mode.DateIn
)

// SearchesDocuments implements mode.DocumentAware: with spaces named, the
// initial deep search reads the person's documents beside the web, and
// what it finds is the research's starting context.
func (r *Research) SearchesDocuments() bool {
	da, ok := r.searcher.(mode.DocumentAware)
	return ok && da.SearchesDocuments()
}
