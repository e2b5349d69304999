package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	agentloop "github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
)

// Checkpoints: the research's state, saved in the run's workspace after
// each step that cost model calls (the plan and the team made, each step
// of an agent's task, each task an agent finished, each supervisor
// review, the research done), so that a run continued after its node
// stopped (mode.Input.Continued) goes on from the last one instead of
// paying for the same calls again. A task under way resumes from its last
// step; a review under way is done again.

// fileCheckpoint is where the checkpoint lives in the session folder.
const fileCheckpoint = "checkpoint.json"

// Phases of a checkpoint.
const (
	phaseBoard   = "board"   // the agents and the supervisor are at work
	phaseReport  = "report"  // the research is done; the report is left
	phaseWritten = "written" // the report is written; it is left to publish
)

type checkpoint struct {
	Version      int            `json:"v"`
	Phase        string         `json:"phase"`
	Question     string         `json:"question"`
	Initial      string         `json:"initial,omitempty"`
	Answers      string         `json:"answers,omitempty"`
	Pages        []savedPage    `json:"pages,omitempty"`
	Rounds       int            `json:"rounds,omitempty"`
	Items        int            `json:"items"`
	Analysis     QueryAnalysis  `json:"analysis"`
	Plan         ResearchPlan   `json:"plan"`
	PlanRevision int            `json:"planRevision,omitempty"`
	Decisions    []DecisionData `json:"decisions,omitempty"`
	Board        savedBoard     `json:"board"`
	Report       *writtenReport `json:"report,omitempty"` // phase written
}

type savedBoard struct {
	Agents     []savedAgent `json:"agents"`
	Queue      []savedEntry `json:"queue,omitempty"`
	Finished   bool         `json:"finished,omitempty"`
	Calls      int          `json:"calls"`
	LimitNoted bool         `json:"limitNoted,omitempty"`
	TodoSeq    int          `json:"todoSeq"`
	Notes      []savedNote  `json:"notes,omitempty"` // all, in order of writing
}

type savedAgent struct {
	Profile AgentProfile `json:"profile"`
	Todos   []savedTodo  `json:"todos"`
	Notes   []int        `json:"notes,omitempty"` // items of its notes
	Tasks   int          `json:"tasks"`
	Exited  bool         `json:"exited,omitempty"`
}

type savedTodo struct {
	ID        int    `json:"id"`
	Title     string `json:"title"`
	Objective string `json:"objective"`
	Origin    string `json:"origin"`
	Status    string `json:"status"`
	Item      int    `json:"item,omitempty"`
	// Progress is the work of a task in progress, as of its last step.
	Progress *savedProgress `json:"progress,omitempty"`
}

// savedProgress is a task's agent loop and what its tools gathered, after
// its last finished step: a continued run resumes the task from it
// (agent.Config.Done) and repeats at most the step that was under way.
type savedProgress struct {
	Steps     []agentloop.Step `json:"steps"`
	Messages  []llm.Message    `json:"messages"`
	Read      []int            `json:"read,omitempty"`      // pages read, by number
	Summaries map[int]string   `json:"summaries,omitempty"` // page number → what the task learnt
	Found     []search.Result  `json:"found,omitempty"`
	Reflect   []string         `json:"reflect,omitempty"`
	Help      string           `json:"help,omitempty"`
}

type savedNote struct {
	Item      int      `json:"item"`
	Agent     string   `json:"agent"`
	Todo      string   `json:"todo"`
	Title     string   `json:"title"`
	Findings  string   `json:"findings"`
	KeyFacts  []string `json:"keyFacts,omitempty"`
	Sources   []int    `json:"sources,omitempty"`
	Relevance string   `json:"relevance,omitempty"`
	Help      string   `json:"help,omitempty"`
}

// savedEntry is a finished task waiting for the supervisor.
type savedEntry struct {
	Agent int `json:"agent"` // index in Agents
	Todo  int `json:"todo"`  // todo id
	Item  int `json:"item"`  // its note; 0 when the task failed
}

// saveCheckpoint writes the research's state. Saves are ordered: each
// writes the state as it is when it runs.
func (s *session) saveCheckpoint(ctx context.Context, phase string) error {
	s.cpMu.Lock()
	defer s.cpMu.Unlock()
	cp := checkpoint{Version: 1, Phase: phase, Question: s.question, Initial: s.initial, Answers: s.answers, Rounds: s.tools.Rounds()}
	for _, p := range s.pages.All() {
		cp.Pages = append(cp.Pages, savedPage{Number: p.N, Source: p.Source, Summary: p.Summary})
	}
	s.mu.Lock()
	cp.Items, cp.Analysis, cp.Plan, cp.PlanRevision = s.items, s.analysis, s.plan, s.planRevision
	cp.Decisions = append([]DecisionData(nil), s.decisions...)
	cp.Report = s.written
	s.mu.Unlock()
	if b := s.board; b != nil {
		b.mu.Lock()
		cp.Board = b.save()
		b.mu.Unlock()
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("deep_research: encoding the checkpoint: %w", err)
	}
	if err := s.ws.Write(ctx, fileCheckpoint, string(data)); err != nil {
		return fmt.Errorf("deep_research: saving the checkpoint: %w", err)
	}
	return nil
}

// save returns the board's state; b.mu held.
func (b *board) save() savedBoard {
	sb := savedBoard{Finished: b.finished, Calls: b.calls, LimitNoted: b.limitNoted, TodoSeq: b.todoSeq}
	index := map[*agent]int{}
	for i, a := range b.agents {
		index[a] = i
		sa := savedAgent{Profile: a.profile, Tasks: a.tasks, Exited: a.exited}
		for _, t := range a.todos {
			sa.Todos = append(sa.Todos, savedTodo{ID: t.id, Title: t.title, Objective: t.objective, Origin: t.origin, Status: t.status, Item: t.item, Progress: t.progress})
		}
		for _, n := range a.notes {
			sa.Notes = append(sa.Notes, n.item)
		}
		sb.Agents = append(sb.Agents, sa)
	}
	queue := b.queue
	if b.reviewing != nil { // under review: reviewed again after a restore
		queue = append([]completion{*b.reviewing}, queue...)
	}
	for _, c := range queue {
		e := savedEntry{Agent: index[c.agent], Todo: c.todo.id}
		if c.note != nil {
			e.Item = c.note.item
		}
		sb.Queue = append(sb.Queue, e)
	}
	for _, n := range b.notes {
		sb.Notes = append(sb.Notes, savedNote{Item: n.item, Agent: n.agent, Todo: n.todo, Title: n.title, Findings: n.findings,
			KeyFacts: n.keyFacts, Sources: n.sources, Relevance: n.relevance, Help: n.help})
	}
	return sb
}

// loadCheckpoint reads the last checkpoint; false when there is none.
func (s *session) loadCheckpoint(ctx context.Context) (*checkpoint, bool, error) {
	doc, err := s.ws.Read(ctx, fileCheckpoint)
	if errors.Is(err, mode.ErrNoFile) || err == nil && doc == "" {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("deep_research: reading the checkpoint: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal([]byte(doc), &cp); err != nil || cp.Version != 1 {
		return nil, false, fmt.Errorf("deep_research: the checkpoint cannot be read (version %d): %v", cp.Version, err)
	}
	return &cp, true, nil
}

// restoreCheckpoint sets the session and its board to a checkpoint. A
// task that was under way is pending again, and its agent has not taken
// it; its steps so far are kept, and the agent resumes it from them.
func (s *session) restoreCheckpoint(cp *checkpoint) {
	s.question, s.lang = cp.Question, lang.Detect(cp.Question)
	s.initial, s.answers = cp.Initial, cp.Answers
	s.tools.SetRounds(cp.Rounds)
	for _, p := range cp.Pages {
		s.pages.Add(p.Source, p.Summary) // saved densely in order: numbers kept
	}
	s.items, s.analysis, s.plan, s.planRevision = cp.Items, cp.Analysis, cp.Plan, cp.PlanRevision
	s.decisions = cp.Decisions
	b := &board{s: s, finished: cp.Board.Finished, calls: cp.Board.Calls, limitNoted: cp.Board.LimitNoted, todoSeq: cp.Board.TodoSeq}
	b.cond = sync.NewCond(&b.mu)
	notes := map[int]*note{}
	for _, n := range cp.Board.Notes {
		nn := &note{item: n.Item, agent: n.Agent, todo: n.Todo, title: n.Title, findings: n.Findings, keyFacts: n.KeyFacts,
			sources: n.Sources, relevance: n.Relevance, help: n.Help}
		notes[n.Item] = nn
		b.notes = append(b.notes, nn)
	}
	todos := map[int]*todo{}
	for i, sa := range cp.Board.Agents {
		a := &agent{n: i + 1, id: fmt.Sprintf("agent_%d", i+1), profile: sa.Profile, tasks: sa.Tasks, exited: sa.Exited, state: AgentReady}
		if a.exited {
			a.state = AgentDone
		}
		for _, st := range sa.Todos {
			t := &todo{id: st.ID, title: st.Title, objective: st.Objective, origin: st.Origin, status: st.Status, item: st.Item}
			if t.status == TodoInProgress {
				t.progress = st.Progress // resumed from its last step
				t.status = TodoPending
				a.tasks--
			}
			todos[t.id] = t
			a.todos = append(a.todos, t)
		}
		for _, item := range sa.Notes {
			if n := notes[item]; n != nil {
				a.notes = append(a.notes, n)
			}
		}
		b.agents = append(b.agents, a)
	}
	for _, e := range cp.Board.Queue {
		if e.Agent < 0 || e.Agent >= len(b.agents) || todos[e.Todo] == nil {
			continue
		}
		a := b.agents[e.Agent]
		a.inReview, a.state = true, AgentWaiting
		b.queue = append(b.queue, completion{agent: a, todo: todos[e.Todo], note: notes[e.Item]})
	}
	s.board = b
}
