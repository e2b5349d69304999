package research

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/mode"
)

// cutRun runs the research until the supervisor's second review starts,
// cancels it there (the node stopping), and returns the checkpoint it left.
func cutRun(t *testing.T, e *env, in mode.Input) checkpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		for e.sc.count("supervisor") < 2 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var rec eventtest.Recorder
	if _, err := e.mode(t).Run(ctx, in, &rec); err == nil {
		t.Fatal("the cut-short run succeeded")
	}
	doc, err := in.Workspace.Read(context.Background(), fileCheckpoint)
	if err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	var cp checkpoint
	if err := json.Unmarshal([]byte(doc), &cp); err != nil || cp.Phase != phaseBoard {
		t.Fatalf("checkpoint phase %q: %v", cp.Phase, err)
	}
	return cp
}

// A task in progress when the node stopped is pending again on continue
// and is done: not dropped from the research (a report of full length
// would otherwise hide that part of the plan was never researched).
func TestContinueRedoesTheTaskInProgress(t *testing.T) {
	e := newEnv(t)
	e.sc.tasksPerAgent = 2
	ws := NewMemWorkspace()
	in := mode.Input{Question: question, Workspace: ws, Now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	cp := cutRun(t, e, in)

	// The tasks the checkpoint shows in progress; where the cut left none
	// (timing), one pending task is marked so, as a cut would leave it.
	inProgress := map[string]bool{}
	complete := map[string]bool{} // tasks whose saved steps already hold all three replies
	for i, a := range cp.Board.Agents {
		for _, td := range a.Todos {
			if td.Status == TodoInProgress {
				inProgress[agentID(i)+"/"+td.Title] = true
				complete[agentID(i)+"/"+td.Title] = td.Progress != nil && len(td.Progress.Steps) >= 3
			}
		}
	}
	if len(inProgress) == 0 {
		a := &cp.Board.Agents[0]
		cp.Board.TodoSeq++
		a.Todos = append(a.Todos, savedTodo{ID: cp.Board.TodoSeq, Title: "Deposit insurance", Objective: "The FDIC's start", Origin: "plan", Status: TodoInProgress})
		a.Tasks++
		a.Exited = false
		inProgress[agentID(0)+"/Deposit insurance"] = true
		data, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(context.Background(), fileCheckpoint, string(data)); err != nil {
			t.Fatal(err)
		}
	}
	e.sc.mu.Lock()
	stepsBefore := maps.Clone(e.sc.steps)
	e.sc.mu.Unlock()

	in.Continued = true
	e.run(t, in)
	e.sc.mu.Lock()
	for task := range inProgress {
		// A task cut after its last step was saved is finished from
		// its steps without asking the model again.
		if !complete[task] && e.sc.steps[task] <= stepsBefore[task] {
			t.Errorf("task %s, in progress at the cut, was not worked on after continuing (%d model calls before, %d after)", task, stepsBefore[task], e.sc.steps[task])
		}
	}
	e.sc.mu.Unlock()
	var final checkpoint
	if doc, err := ws.Read(context.Background(), fileCheckpoint); err != nil || json.Unmarshal([]byte(doc), &final) != nil {
		t.Fatalf("final checkpoint: %v", err)
	}
	for i, a := range final.Board.Agents {
		for _, td := range a.Todos {
			if inProgress[agentID(i)+"/"+td.Title] && td.Status != TodoDone {
				t.Errorf("task %s ended %q, want %q", agentID(i)+"/"+td.Title, td.Status, TodoDone)
			}
		}
	}
}

// A review under way when the node stopped is saved as still to do, at
// the front of the queue, and the continued run makes it.
func TestContinueRedoesTheReviewUnderWay(t *testing.T) {
	a := &agent{n: 1, id: "agent_1"}
	td := &todo{id: 4, title: "Bank holiday", status: TodoDone, item: 2}
	other := &todo{id: 5, title: "Tariffs", status: TodoDone, item: 3}
	a.todos = []*todo{td, other}
	n := &note{item: 2, agent: a.id, todo: td.title, title: "Findings"}
	b := &board{agents: []*agent{a}, notes: []*note{n},
		reviewing: &completion{agent: a, todo: td, note: n},
		queue:     []completion{{agent: a, todo: other}}}
	sb := b.save()
	if len(sb.Queue) != 2 || sb.Queue[0].Todo != td.id || sb.Queue[0].Item != 2 || sb.Queue[1].Todo != other.id {
		t.Fatalf("saved queue %+v: want the review under way (todo %d) first, then todo %d", sb.Queue, td.id, other.id)
	}

	// End to end: a checkpoint whose queue holds a finished task is
	// reviewed by the supervisor after continuing.
	e := newEnv(t)
	e.sc.tasksPerAgent = 2
	ws := NewMemWorkspace()
	in := mode.Input{Question: question, Workspace: ws, Now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	cp := cutRun(t, e, in)
	if len(cp.Board.Queue) == 0 {
		// Put the first finished task back to review, as a save during its
		// review does.
	find:
		for i, sa := range cp.Board.Agents {
			for _, st := range sa.Todos {
				if st.Status == TodoDone {
					cp.Board.Queue = append(cp.Board.Queue, savedEntry{Agent: i, Todo: st.ID, Item: st.Item})
					break find
				}
			}
		}
		data, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(context.Background(), fileCheckpoint, string(data)); err != nil {
			t.Fatal(err)
		}
	}
	if len(cp.Board.Queue) == 0 {
		t.Fatal("no finished task to review in the checkpoint")
	}
	want := cp.Board.Queue[0]
	title := ""
	for _, st := range cp.Board.Agents[want.Agent].Todos {
		if st.ID == want.Todo {
			title = st.Title
		}
	}
	in.Continued = true
	_, rec := e.run(t, in)
	reviewed := false
	for _, ev := range rec.Events() {
		if ev.Status != nil && ev.Status.Stage == "supervisor" && ev.Status.Detail == title {
			reviewed = true
		}
	}
	if !reviewed {
		t.Errorf("the task %q waiting for review at the cut was not reviewed after continuing", title)
	}
}

// A task under way when the node stopped resumes from its last step on
// continue: its finished steps are not asked of the model again.
func TestContinueResumesTheTaskFromItsSteps(t *testing.T) {
	e := newEnv(t)
	ws := NewMemWorkspace()
	in := mode.Input{Question: question, Workspace: ws, Now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}

	// The node stops while an agent's task asks for its second step.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			e.sc.mu.Lock()
			cut := false
			for _, n := range e.sc.steps {
				cut = cut || n >= 2
			}
			e.sc.mu.Unlock()
			if cut {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var rec eventtest.Recorder
	if _, err := e.mode(t).Run(ctx, in, &rec); err == nil {
		t.Fatal("the cut-short run succeeded")
	}
	doc, err := ws.Read(context.Background(), fileCheckpoint)
	if err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	var cp checkpoint
	if err := json.Unmarshal([]byte(doc), &cp); err != nil {
		t.Fatal(err)
	}
	held := map[string]int{} // task → steps its checkpoint holds
	for i, a := range cp.Board.Agents {
		for _, td := range a.Todos {
			if td.Status == TodoInProgress && td.Progress != nil {
				held[agentID(i)+"/"+td.Title] = len(td.Progress.Steps)
			}
		}
	}
	if len(held) == 0 {
		t.Fatal("no task in progress kept its steps in the checkpoint")
	}
	e.sc.mu.Lock()
	before := maps.Clone(e.sc.steps)
	e.sc.mu.Unlock()

	in.Continued = true
	_, rec2 := e.run(t, in)
	// An uninterrupted task takes three replies: web_search, scrape_url, done.
	e.sc.mu.Lock()
	defer e.sc.mu.Unlock()
	for task, k := range held {
		if got, want := e.sc.steps[task]-before[task], 3-k; got != want {
			t.Errorf("task %s held %d steps at the cut and asked the model %d times after continuing, want %d", task, k, got, want)
		}
	}
	resumed := false
	for _, ev := range rec2.Events() {
		if ev.Status != nil && ev.Status.Stage == "continue" && strings.Contains(ev.Status.Message, "resumes") {
			resumed = true
		}
	}
	if !resumed {
		t.Error("no status says a task resumed")
	}
}

// The model calls of a run cut at 60% of its calls and continued, with
// the tasks' step checkpoints and without them (the continued run given
// the checkpoint with the tasks' progress removed, as before they were
// kept), beside an uninterrupted run's; the figures are in
// docs/benchmarks.md:
//
//	go test -count=1 -run TestModelCallsOfACutRun -v ./internal/mode/research
func TestModelCallsOfACutRun(t *testing.T) {
	calls := func(e *env) int { return len(e.sc.model.Requests()) }
	setup := func() *env {
		e := newEnv(t)
		e.sc.tasksPerAgent = 2
		e.sc.agentLatency = 5 * time.Millisecond
		return e
	}
	whole := setup()
	in := mode.Input{Question: question, Workspace: NewMemWorkspace(), Now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	whole.run(t, in)
	total := calls(whole)

	cutAt := total * 6 / 10
	run := func(keepProgress bool) int {
		e := setup()
		ws := NewMemWorkspace()
		in := mode.Input{Question: question, Workspace: ws, Now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		go func() {
			for calls(e) < cutAt && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		var rec eventtest.Recorder
		if _, err := e.mode(t).Run(ctx, in, &rec); err == nil {
			t.Fatal("the cut-short run succeeded")
		}
		if !keepProgress {
			doc, err := ws.Read(context.Background(), fileCheckpoint)
			if err != nil {
				t.Fatal(err)
			}
			var cp checkpoint
			if err := json.Unmarshal([]byte(doc), &cp); err != nil {
				t.Fatal(err)
			}
			for i := range cp.Board.Agents {
				for j := range cp.Board.Agents[i].Todos {
					cp.Board.Agents[i].Todos[j].Progress = nil
				}
			}
			data, _ := json.Marshal(cp)
			if err := ws.Write(context.Background(), fileCheckpoint, string(data)); err != nil {
				t.Fatal(err)
			}
		}
		in.Continued = true
		e.run(t, in)
		return calls(e)
	}
	with, without := run(true), run(false)
	t.Logf("model calls: uninterrupted %d; cut at %d and continued: %d with the tasks' step checkpoints, %d without", total, cutAt, with, without)
	// Each agent repeats at most the step it had under way, and the
	// supervisor the review it had under way (timing moves the rest: how
	// many reviews a run makes depends on when tasks finish).
	if bound := total + whole.cfg.NumAgents + whole.cfg.SupervisorMaxIterations; with > bound {
		t.Errorf("with step checkpoints the cut run made %d model calls, over %d", with, bound)
	}
}
