package research

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	agentloop "github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
)

// todo is one task of an agent.
type todo struct {
	id        int
	title     string
	objective string
	origin    string // "plan", "supervisor", "replan"
	status    string
	item      int // the note it produced
	// progress is the task's work so far while it is in progress, kept
	// in the checkpoint after each step so that a continued run resumes
	// the task where it stood (agent.go).
	progress *savedProgress
}

// note is what an agent wrote when it finished a task (items/item_N.md).
type note struct {
	item      int
	agent     string
	todo      string
	title     string
	findings  string
	keyFacts  []string
	sources   []int // read pages the note relies on
	relevance string
	help      string // a request for the supervisor, from a reflection
}

// agent is one researcher's state. Its fields are guarded by board.mu;
// fileMu orders writes of its file.
type agent struct {
	n       int
	id      string // "agent_1"
	profile AgentProfile
	todos   []*todo
	notes   []*note
	state   string
	current *todo
	tasks   int    // tasks taken: the agent loop's iterations
	detail  string // last reflection or problem, for the UI
	exited  bool
	// inReview is set while the agent's last finished task waits in the
	// SupervisorQueue or is being reviewed: the agent gets its next task
	// after the review, which may change its todos or end the research.
	inReview bool
	fileMu   sync.Mutex
}

// completion is an entry of the SupervisorQueue: an agent finished a task.
type completion struct {
	agent *agent
	todo  *todo
	note  *note // nil when the task failed
	// announce is set on the first entry past the supervisor call limit.
	announce bool
}

// board coordinates the agents and the supervisor (seed 001 §4, stage 3):
// agents take their own todos one at a time, in parallel; each finished
// task joins the SupervisorQueue, which the supervisor works through in
// order, and the agent takes its next todo once its task was reviewed (at
// once, after the supervisor call limit). An agent with no todo waits while
// the supervisor may still give it one; the research ends when nobody
// works, the queue is empty and no todo is left, or when the supervisor
// decides to finish.
type board struct {
	s      *session
	mu     sync.Mutex
	cond   *sync.Cond
	agents []*agent

	queue       []completion
	supervising bool
	finished    bool    // the supervisor decided (or was forced) to finish
	calls       int     // supervisor calls made
	limitNoted  bool    // the call limit was announced
	running     int     // agents on a task
	todoSeq     int     // todo ids
	notes       []*note // all notes, in order of writing
	cancelled   bool
	reviewing   *completion // the entry the supervisor is reviewing
}

func newBoard(s *session, team []AgentProfile) *board {
	b := &board{s: s}
	b.cond = sync.NewCond(&b.mu)
	for i, p := range team {
		a := &agent{n: i + 1, id: fmt.Sprintf("agent_%d", i+1), profile: p, state: AgentReady}
		for _, t := range p.Todos {
			a.todos = append(a.todos, b.newTodo(t, "plan"))
		}
		b.agents = append(b.agents, a)
	}
	return b
}

// newTodo makes a pending todo; b.mu held or not yet shared.
func (b *board) newTodo(t PlanTask, origin string) *todo {
	b.todoSeq++
	return &todo{id: b.todoSeq, title: strings.TrimSpace(t.Title), objective: strings.TrimSpace(t.Objective), origin: origin, status: TodoPending}
}

// start writes the agents' files and announces them.
func (b *board) start(ctx context.Context) error {
	for _, a := range b.agents {
		if err := b.publish(ctx, a); err != nil {
			return err
		}
	}
	status(b.s.sink, "research", fmt.Sprintf("%d agents are researching in parallel", len(b.agents)), "")
	return nil
}

// run executes the agents in parallel with the supervisor working the
// queue, until the research ends.
func (b *board) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	// Waiters must wake when the run is cancelled or a goroutine fails.
	stop := context.AfterFunc(gctx, func() {
		b.mu.Lock()
		b.cancelled = true
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	for _, a := range b.agents {
		g.Go(func() error { return b.agentLoop(gctx, a) })
	}
	g.Go(func() error { return b.supervisorLoop(gctx) })
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// agentLoop runs one agent's todos, one at a time.
func (b *board) agentLoop(ctx context.Context, a *agent) error {
	for {
		t, ok := b.next(a)
		if !ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return b.publish(ctx, a)
		}
		if err := b.publish(ctx, a); err != nil {
			return err
		}
		n, err := b.s.runTask(ctx, a, t)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && (agentloop.IsFatal(err) || llm.IsSetupError(err)) {
			return err // a model endpoint set up wrongly fails every agent alike
		}
		if err != nil {
			status(b.s.sink, "research", fmt.Sprintf("%s could not finish %q", a.id, t.title), err.Error())
		}
		b.complete(a, t, n)
		if err := b.s.saveCheckpoint(ctx, phaseBoard); err != nil {
			return err
		}
		if err := b.publish(ctx, a); err != nil {
			return err
		}
	}
}

// next hands agent a its next todo, waiting while the supervisor may still
// give it one. It reports false when the agent is done.
func (b *board) next(a *agent) (*todo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if b.cancelled {
			return nil, false
		}
		if b.finished || a.tasks >= b.s.cfg.MaxIterations {
			b.retire(a)
			return nil, false
		}
		if a.inReview {
			a.state, a.current = AgentWaiting, nil
			b.cond.Wait()
			continue
		}
		for _, t := range a.todos {
			if t.status == TodoPending {
				t.status = TodoInProgress
				a.current, a.state, a.detail = t, AgentWorking, ""
				a.tasks++
				b.running++
				return t, true
			}
		}
		if b.quiet() {
			b.retire(a)
			return nil, false
		}
		a.state, a.current = AgentWaiting, nil
		b.cond.Wait()
	}
}

// quiet reports that no more work can appear: nobody works, the queue is
// empty, the supervisor is idle and no agent that can still work has a
// pending todo. b.mu held.
func (b *board) quiet() bool {
	if b.running > 0 || len(b.queue) > 0 || b.supervising {
		return false
	}
	for _, o := range b.agents {
		if o.exited || o.tasks >= b.s.cfg.MaxIterations {
			continue
		}
		for _, t := range o.todos {
			if t.status == TodoPending {
				return false
			}
		}
	}
	return true
}

// retire marks an agent done and drops its pending todos. b.mu held.
func (b *board) retire(a *agent) {
	if a.exited {
		return
	}
	a.exited, a.state, a.current = true, AgentDone, nil
	for _, t := range a.todos {
		if t.status == TodoPending {
			t.status = TodoSkipped
		}
	}
	b.cond.Broadcast()
}

// complete records a finished task and queues it for the supervisor.
func (b *board) complete(a *agent, t *todo, n *note) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running--
	a.current, a.state = nil, AgentWaiting
	t.progress = nil // the note holds what the task found
	if n != nil {
		t.status, t.item = TodoDone, n.item
		a.notes = append(a.notes, n)
		b.notes = append(b.notes, n)
	} else {
		t.status = TodoFailed
	}
	a.inReview = true
	b.queue = append(b.queue, completion{agent: a, todo: t, note: n})
	b.cond.Broadcast()
}

// supervisorLoop works the SupervisorQueue in order until every agent is
// done. After the call limit, or once the research is finishing, entries
// are taken without a review: agents finish their todos on their own.
func (b *board) supervisorLoop(ctx context.Context) error {
	for {
		c, review, ok := b.take()
		if !ok {
			return ctx.Err()
		}
		if !review && c.announce {
			status(b.s.sink, "supervisor", fmt.Sprintf("Supervisor call limit (%d) reached; agents finish their todos on their own", b.s.cfg.MaxSupervisorCalls), "")
		}
		var err error
		if review {
			err = b.s.review(ctx, c)
		}
		b.mu.Lock()
		b.supervising, b.reviewing = false, nil
		c.agent.inReview = false
		b.cond.Broadcast()
		b.mu.Unlock()
		if err != nil {
			return err
		}
		if review {
			if err := b.s.saveCheckpoint(ctx, phaseBoard); err != nil {
				return err
			}
		}
	}
}

// take pops the next queue entry and says whether the supervisor reviews it.
func (b *board) take() (completion, bool, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if b.cancelled {
			return completion{}, false, false
		}
		if len(b.queue) > 0 {
			c := b.queue[0]
			b.queue = b.queue[1:]
			b.supervising = true
			review := !b.finished && b.calls < b.s.cfg.MaxSupervisorCalls
			if review {
				b.reviewing = &c
				b.calls++
			} else if !b.finished && !b.limitNoted {
				b.limitNoted = true
				c.announce = true
			}
			return c, review, true
		}
		if b.allExited() {
			return completion{}, false, false
		}
		b.cond.Wait()
	}
}

func (b *board) allExited() bool {
	for _, a := range b.agents {
		if !a.exited {
			return false
		}
	}
	return true
}

// callNumber is the number of the supervisor call under way.
func (b *board) callNumber() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// finish ends the research: no agent takes another todo.
func (b *board) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finished = true
	for _, a := range b.agents {
		for _, t := range a.todos {
			if t.status == TodoPending {
				t.status = TodoSkipped
			}
		}
	}
	b.cond.Broadcast()
}

// agentByID finds an agent by "agent_2", "2" or "agent 2".
func (b *board) agentByID(id string) (*agent, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	id = strings.TrimPrefix(strings.TrimPrefix(id, "agent_"), "agent ")
	for _, a := range b.agents {
		if fmt.Sprint(a.n) == id {
			return a, true
		}
	}
	return nil, false
}

// addTodo gives agent a new pending todo, if it can still work.
func (b *board) addTodo(a *agent, t PlanTask, origin string) (*todo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.exited {
		return nil, fmt.Errorf("%s has finished its work for this run; give the task to another agent", a.id)
	}
	if a.tasks >= b.s.cfg.MaxIterations {
		return nil, fmt.Errorf("%s has reached its task limit (%d); give the task to another agent", a.id, b.s.cfg.MaxIterations)
	}
	nt := b.newTodo(t, origin)
	a.todos = append(a.todos, nt)
	b.cond.Broadcast()
	return nt, nil
}

// replaceTodos drops every pending todo (a replan) and hands out tasks to
// the agents that can still work, least loaded first.
func (b *board) replaceTodos(tasks []PlanTask) []NewTodoData {
	b.mu.Lock()
	defer b.mu.Unlock()
	var open []*agent
	for _, a := range b.agents {
		for _, t := range a.todos {
			if t.status == TodoPending {
				t.status = TodoSkipped
			}
		}
		if !a.exited && a.tasks < b.s.cfg.MaxIterations {
			open = append(open, a)
		}
	}
	var out []NewTodoData
	if len(open) == 0 {
		return out
	}
	for i, t := range tasks {
		a := open[i%len(open)]
		a.todos = append(a.todos, b.newTodo(t, "replan"))
		out = append(out, NewTodoData{Agent: a.id, Title: t.Title})
	}
	b.cond.Broadcast()
	return out
}

// setState sets an agent's state and detail line.
func (b *board) setState(a *agent, state, detail string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a.state, a.detail = state, detail
}

// allNotes returns every note in the order written.
func (b *board) allNotes() []*note {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*note(nil), b.notes...)
}

// snapshot returns an agent's event payload.
func (b *board) snapshot(a *agent) AgentData {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.snapshotLocked(a)
}

func (b *board) snapshotLocked(a *agent) AgentData {
	d := AgentData{ID: a.id, Number: a.n, Specialisation: a.profile.Specialisation, State: a.state, Notes: len(a.notes), Detail: a.detail, Todos: []TodoData{}}
	if a.current != nil {
		d.CurrentTodo = a.current.title
	}
	for _, t := range a.todos {
		d.Todos = append(d.Todos, TodoData{ID: t.id, Title: t.title, Status: t.status, Item: t.item})
	}
	return d
}

// publish writes the agent's file and emits its state.
func (b *board) publish(ctx context.Context, a *agent) error {
	a.fileMu.Lock()
	defer a.fileMu.Unlock()
	b.mu.Lock()
	d := b.snapshotLocked(a)
	doc := b.agentDoc(a)
	b.mu.Unlock()
	emitData(b.s.sink, DataAgent, agentEventID(a.n), d)
	if err := b.s.ws.Write(ctx, agentFile(a.n), doc); err != nil {
		return agentloop.Fatal(fmt.Errorf("writing %s: %w", agentFile(a.n), err))
	}
	return nil
}

// agentDoc renders agents/agent_N.md: profile, todos and notes. b.mu held.
func (b *board) agentDoc(a *agent) string {
	var w strings.Builder
	fmt.Fprintf(&w, "# %s — %s\n\n", a.id, a.profile.Specialisation)
	if a.profile.Style != "" {
		fmt.Fprintf(&w, "Style: %s\n\n", a.profile.Style)
	}
	if a.profile.SourcePreferences != "" {
		fmt.Fprintf(&w, "Source preferences: %s\n\n", a.profile.SourcePreferences)
	}
	w.WriteString("## Todos\n\n")
	for _, t := range a.todos {
		mark := map[string]string{TodoPending: "[ ]", TodoInProgress: "[~]", TodoDone: "[x]", TodoFailed: "[!]", TodoSkipped: "[-]"}[t.status]
		fmt.Fprintf(&w, "- %s %s — %s (%s", mark, t.title, t.objective, t.status)
		if t.item > 0 {
			fmt.Fprintf(&w, ", item %d", t.item)
		}
		w.WriteString(")\n")
	}
	w.WriteString("\n## Notes\n\n")
	for _, n := range a.notes {
		w.WriteString(b.s.noteDoc(n, 3))
	}
	return w.String()
}
