package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/tools"
)

// TaskRequest is executeComplexTask's arguments and the body of POST
// /api/tasks/execute.
type TaskRequest struct {
	Task    string `json:"task" jsonschema:"the whole task, as the person asked for it"`
	Context string `json:"context,omitempty" jsonschema:"what the conversation established that the task needs"`
	// Actions are the changes the task makes, as the person asked for
	// them: approving the task approves these and nothing else.
	Actions []Act `json:"actions,omitempty" jsonschema:"every change the task makes (send, create, delete): the tool and its recipients as the person named them; leave it out for a task that only reads"`
}

// Subtask is one part of a complex task.
type Subtask struct {
	ID           int    `json:"id"`
	Title        string `json:"title"`
	Instructions string `json:"instructions"`
	Status       string `json:"status"` // pending, running, done, failed
	Result       string `json:"result,omitempty"`
}

// TaskResult is the complex-task agent's answer (seed 004: {success,
// report}).
type TaskResult struct {
	Success  bool      `json:"success"`
	Report   string    `json:"report"`
	Subtasks []Subtask `json:"subtasks,omitempty"`
	// Held are the actions the task waits on: a subtask called an acting
	// tool its approval does not cover. The task goes on after the
	// person's decision.
	Held []Action `json:"held,omitempty"`

	checkpoint *taskCheckpoint // where a held task goes on from
	request    TaskRequest
}

type decomposition struct {
	Subtasks []struct {
		Title        string `json:"title" jsonschema:"a short name of the subtask"`
		Instructions string `json:"instructions" jsonschema:"what to do, with the names, dates and tools it needs"`
	} `json:"subtasks" jsonschema:"the subtasks in the order they run; later ones may use earlier results"`
}

// TaskModeID is the mode POST /api/tasks/execute runs as a durable run:
// the complex-task agent alone, with the task as the run's question.
const TaskModeID = "assistant_task"

// TaskMode runs the complex-task agent as a run of its own (POST
// /api/tasks/execute): detached, followed and cancelled like any run, and
// continued by a restart from the subtasks already done. Starting it
// approves the changes the request names (TaskRequest.Actions); any other
// change pauses the run for the person's decision.
type TaskMode struct{ m *Mode }

// TaskMode returns the mode of the complex-task agent's own runs.
func (m *Mode) TaskMode() *TaskMode { return &TaskMode{m: m} }

// ID implements mode.Mode.
func (t *TaskMode) ID() string { return TaskModeID }

// Description implements mode.Mode.
func (t *TaskMode) Description() string {
	return "The assistant's complex-task agent on its own (POST /api/tasks/execute): decomposes a large task into subtasks, runs them with the MCP tools, makes without asking again only the changes the request names, and reports."
}

// Durable implements mode.Durable: the task's progress is saved in the
// run's workspace after the decomposition, after each step of a
// subtask's agent and each subtask finished, and with the report; a run
// continued after its node stopped goes on from there without asking the
// model again or repeating the MCP actions the checkpoint holds.
func (t *TaskMode) Durable() bool { return true }

// Unlisted keeps the mode out of the mode menu: it is reached through
// POST /api/tasks/execute, which is the person's confirmation.
func (t *TaskMode) Unlisted() bool { return true }

// Run implements mode.Mode: the question is the task; system messages of
// the history are its context (TaskMessages).
func (t *TaskMode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	m := t.m
	if m.d.Model == nil {
		return nil, errors.New("assistant: no model configured")
	}
	req := TaskRequest{Task: in.Question}
	var ctxParts []string
	for _, h := range in.History {
		if h.Role != llm.RoleSystem || strings.TrimSpace(h.Content) == "" {
			continue
		}
		if acts, ok := strings.CutPrefix(h.Content, taskActsPrefix); ok {
			if err := json.Unmarshal([]byte(acts), &req.Actions); err != nil {
				return nil, fmt.Errorf("assistant: the task's actions cannot be read: %w", err)
			}
			continue
		}
		ctxParts = append(ctxParts, h.Content)
	}
	req.Context = strings.Join(ctxParts, "\n")
	ts := m.toolset(ctx, in.UserID, sink)
	defer ts.Close()
	var rs *taskResume
	if in.Resume != nil {
		// The person decided about the actions the task held.
		var held []Action
		_ = json.Unmarshal(in.Resume.State, &held)
		approved, ok := decision(in.Resume, held)
		if !ok {
			return t.ask(in, sink, held, true), nil
		}
		rs = &taskResume{approved: approved}
	}
	res, err := m.runTask(ctx, in, req, ts, sink, rs)
	if err != nil {
		return nil, err
	}
	if len(res.Held) > 0 {
		return t.ask(in, sink, res.Held, false), nil
	}
	steps, _ := json.Marshal(res)
	if in.Workspace != nil {
		if err := in.Workspace.Write(ctx, "task/result.json", string(steps)); err != nil {
			mode.Status(sink, "task", "The task's result could not be kept with the run", err.Error())
		}
	}
	mode.Status(sink, "task", "Task finished", "")
	return &mode.Result{Text: res.Report, Report: res.Report, Steps: steps, FinishReason: event.FinishStop}, nil
}

// ask pauses the task's run with Sova's question about the actions it
// holds; again says the last answer was not taken as a decision.
func (t *TaskMode) ask(in mode.Input, sink event.Sink, held []Action, again bool) *mode.Result {
	code := lang.Detect(in.Question).Code
	q := agent.Question(code, held)
	if again {
		if code == "ru" {
			q = "Я не понял ответ как согласие, поэтому ничего не сделано. " + q
		} else {
			q = "I did not take that as a yes, so nothing was done. " + q
		}
	}
	ids := make([]string, 0, len(held))
	for _, a := range held {
		ids = append(ids, a.ID)
	}
	b, _ := json.Marshal(map[string]any{"runId": in.RunID, "question": q, "actions": held, "status": "waiting"})
	sink.Emit(event.Event{Type: event.TypeData, Time: time.Now(), Data: &event.Data{Name: "assistant_confirmation", ID: "confirmation-" + in.RunID, Value: b}})
	sink.Emit(mode.TextDelta(q))
	state, _ := json.Marshal(held)
	return &mode.Result{Text: q, FinishReason: event.FinishStop, Pause: &mode.Pause{Questions: []string{q}, State: state, Actions: ids}}
}

// TaskMessages are the run messages of a task request: its context (as a
// system message, which TaskMode reads as the context) and the task.
func TaskMessages(req TaskRequest) []llm.Message {
	var msgs []llm.Message
	if c := strings.TrimSpace(req.Context); c != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: c})
	}
	if len(req.Actions) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: actsMessage(req.Actions)})
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: req.Task})
}

// taskCheckpoint is a complex task's progress, kept in the run's workspace
// (task/checkpoint.json) after each step that cost money and in the
// assistant_task progress parts of the run's log (those without Current
// and Report), so that a continued or restarted run goes on from it.
type taskCheckpoint struct {
	Task     string    `json:"task"`
	State    string    `json:"state"`
	Subtasks []Subtask `json:"subtasks"`
	// Current is the subtask under way; Report the report once written.
	Current *subtaskProgress `json:"current,omitempty"`
	Report  string           `json:"report,omitempty"`
	// Held are the actions the subtask under way waits on.
	Held []Action `json:"held,omitempty"`
}

// subtaskProgress is the agent of the subtask under way as its last
// checkpoint left it (agent.Config's Checkpoint), without the tool
// results' output, which its conversation holds.
type subtaskProgress struct {
	ID       int           `json:"id"`
	Steps    []agent.Step  `json:"steps"`
	Messages []llm.Message `json:"messages"`
}

const checkpointFile = "task/checkpoint.json"

// checkpoint finds the progress an earlier attempt at the same task made:
// in the run's own workspace (a run continued after its node stopped),
// else in the logs of the runs it restarts (an interrupted run's workspace
// is not kept; its log is), newest first.
func (m *Mode) checkpoint(ctx context.Context, in mode.Input, task string) *taskCheckpoint {
	if in.Workspace != nil {
		if s, err := in.Workspace.Read(ctx, checkpointFile); err == nil {
			var cp taskCheckpoint
			if json.Unmarshal([]byte(s), &cp) == nil && cp.Task == task && len(cp.Subtasks) > 0 {
				return &cp
			}
		}
	}
	if m.d.Runs == nil || in.OriginRunID == "" || in.OriginRunID == in.RunID {
		return nil
	}
	// The chain of restarts, from the first run up to this one.
	chain := []string{in.OriginRunID}
	for id := in.OriginRunID; len(chain) < 50; {
		next, err := m.d.Runs.RestartOf(ctx, in.UserID, id)
		if err != nil || next.ID == in.RunID {
			break
		}
		chain = append(chain, next.ID)
		id = next.ID
	}
	for i := len(chain) - 1; i >= 0; i-- {
		evs, err := m.d.Runs.RunEvents(ctx, chain[i], 0)
		if err != nil {
			continue
		}
		for j := len(evs) - 1; j >= 0; j-- {
			var e event.Event
			if json.Unmarshal(evs[j].Event, &e) != nil || e.Type != event.TypeData || e.Data == nil || e.Data.Name != "assistant_task" {
				continue
			}
			var cp taskCheckpoint
			if json.Unmarshal(e.Data.Value, &cp) == nil && cp.Task == task && len(cp.Subtasks) > 0 {
				// Not in the parts: a fresh run starts its subtasks again,
				// and asks again about what they hold.
				cp.Current, cp.Report, cp.Held = nil, "", nil
				return &cp
			}
		}
	}
	return nil
}

// runTask decomposes the task, runs the subtasks in order (each an agent
// loop with every tool: the person confirmed the task), and writes the
// report. Progress goes to sink as assistant_task parts and to the run's
// workspace; a restarted run takes the subtasks already done from there
// and does not run them again. A subtask that fails is reported, and the
// task goes on.
func (m *Mode) runTask(ctx context.Context, in mode.Input, req TaskRequest, ts *mcp.Toolset, sink event.Sink, rs *taskResume) (*TaskResult, error) {
	if strings.TrimSpace(req.Task) == "" {
		return nil, fmt.Errorf("%w: task is required", sova.ErrInvalid)
	}
	userID := in.UserID
	id := taskPartID(in.RunID, req.Task)
	// save keeps the task's progress in the run's workspace.
	save := func(cp taskCheckpoint) {
		if in.Workspace == nil {
			return
		}
		b, _ := json.Marshal(cp)
		if err := in.Workspace.Write(ctx, checkpointFile, string(b)); err != nil && ctx.Err() == nil {
			mode.Status(sink, "task", "The task's progress could not be saved", err.Error())
		}
	}
	// keep is the subtask under way that a continued run took from its
	// checkpoint (with the outcome of the actions the person decided on),
	// saved with the progress until its agent saves its own: a run stopped
	// again before that goes on from it too, rather than starting the
	// subtask over and repeating, or asking again about, what it did.
	var keep *subtaskProgress
	// progress shows the subtasks as an assistant_task part and saves them.
	progress := func(subs []Subtask, state, report string) {
		b, _ := json.Marshal(taskCheckpoint{Task: req.Task, State: state, Subtasks: subs})
		sink.Emit(event.Event{Type: event.TypeData, Time: time.Now(), Data: &event.Data{Name: "assistant_task", ID: id, Value: b}})
		save(taskCheckpoint{Task: req.Task, State: state, Subtasks: subs, Report: report, Current: keep})
	}
	names := make([]string, 0, len(ts.Tools))
	for _, x := range ts.Tools {
		names = append(names, x.FullName+": "+clip(x.Desc, 120))
	}
	var subs []Subtask
	var current *subtaskProgress
	var approved map[string]bool
	cp := (*taskCheckpoint)(nil)
	if rs != nil {
		cp, approved = rs.cp, rs.approved
	}
	if cp == nil {
		cp = m.checkpoint(ctx, in, req.Task)
	}
	if cp != nil && len(cp.Held) > 0 {
		if approved == nil || cp.Current == nil {
			// No decision yet (a restart): the task waits still.
			return &TaskResult{Subtasks: cp.Subtasks, Held: cp.Held, checkpoint: cp, request: req}, nil
		}
		settle(ctx, cp.Current, cp.Held, approved, ts, sink)
		cp.Held = nil
	}
	if cp != nil {
		if cp.Report != "" && (cp.State == "done" || cp.State == "failed") {
			// The run stopped after the report: it is the answer.
			mode.Status(sink, "task", "The task was finished before the run stopped", "")
			return &TaskResult{Success: cp.State == "done", Report: cp.Report, Subtasks: cp.Subtasks}, nil
		}
		subs, current = cp.Subtasks, cp.Current
		keep = current
	}
	if len(subs) > 0 {
		done := 0
		for i := range subs {
			if subs[i].Status == "done" {
				done++
			} else {
				subs[i].Status, subs[i].Result = "pending", ""
			}
		}
		mode.Status(sink, "task", fmt.Sprintf("Resuming the task: %d of %d subtasks already done", done, len(subs)), "")
	} else {
		dec, _, err := llm.Structured[decomposition](ctx, m.d.Model, llm.Request{Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: taskPrompt(m.cfg.TaskMaxSubtasks)},
			{Role: llm.RoleUser, Content: fmt.Sprintf("Task: %s\nContext: %s\nTools available to each subtask:\n- %s", req.Task, req.Context, strings.Join(names, "\n- "))},
		}})
		if err != nil {
			return nil, fmt.Errorf("complex task: decomposing: %w", err)
		}
		for i, s := range dec.Subtasks {
			if i >= m.cfg.TaskMaxSubtasks {
				break
			}
			subs = append(subs, Subtask{ID: i + 1, Title: s.Title, Instructions: s.Instructions, Status: "pending"})
		}
	}
	if len(subs) == 0 {
		return nil, errors.New("complex task: the task was not decomposed into subtasks")
	}
	progress(subs, "running", "")
	tl := agent.UntrustedTools("MCP", ts.AgentTools())
	tl = append(tl, agent.UntrustedTools("search", m.knowledgeTools(ctx, userID, "", nil))...)
	if m.d.Search != nil {
		tl = append(tl, agent.UntrustedTools("web", []agent.Tool{tools.WebSearch(tools.NewRun(tools.Providers{Search: m.d.Search}, nil), tools.WebSearchOptions{Results: 5, Calls: 2, Format: tools.JSON})})...)
	}
	var done strings.Builder
	failed := 0
	temp := m.cfg.Temperature
	for i := range subs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if subs[i].Status != "done" {
			subs[i].Status = "running"
			progress(subs, "running", "")
			msgs := []llm.Message{
				{Role: llm.RoleSystem, Content: subtaskPrompt()},
				{Role: llm.RoleUser, Content: fmt.Sprintf("Overall task: %s\nContext: %s\n\nResults so far:\n%s\nYour subtask %d: %s\n%s",
					req.Task, req.Context, orDash(done.String()), subs[i].ID, subs[i].Title, subs[i].Instructions)},
			}
			var steps []agent.Step
			if current != nil && current.ID == subs[i].ID && len(current.Messages) > 0 {
				// Its agent goes on where the checkpoint left it.
				steps, msgs = current.Steps, current.Messages
				mode.Status(sink, "task", fmt.Sprintf("Resuming subtask %d after %d steps", subs[i].ID, len(steps)), "")
			}
			current = nil
			sub := subs[i].ID
			// The approval of the task covers the acts it names and the
			// actions approved inside it; any other acting call waits.
			g := &agent.Gate{Allow: scope(req)}
			out, err := agent.Run(ctx, agent.Config{
				Model: m.d.Model, Repair: m.d.Fast, Tools: tl, MaxSteps: m.cfg.TaskStepsEach, Temperature: &temp,
				MaxTokens: m.cfg.MaxTokens, Concurrency: 1, Sink: prefixed(sink, fmt.Sprintf("%s-%d-", id, i+1)),
				Done: steps, Gate: g,
				Checkpoint: func(ctx context.Context, steps []agent.Step, msgs []llm.Message) error {
					save(taskCheckpoint{Task: req.Task, State: "running", Subtasks: subs,
						Current: &subtaskProgress{ID: sub, Steps: withoutOutputs(steps), Messages: msgs}})
					return nil // a subtask goes on without its checkpoint (save said why)
				},
			}, msgs)
			keep = nil // the subtask's agent has ended; what it did is in subs below
			if held := g.Held(); err == nil && len(held) > 0 {
				// The subtask waits for the person; it goes on from here.
				wait := taskCheckpoint{Task: req.Task, State: "waiting", Subtasks: subs,
					Current: &subtaskProgress{ID: sub, Steps: out.Steps, Messages: out.Messages}, Held: held}
				save(wait)
				b, _ := json.Marshal(taskCheckpoint{Task: req.Task, State: "waiting", Subtasks: subs, Held: held})
				sink.Emit(event.Event{Type: event.TypeData, Time: time.Now(), Data: &event.Data{Name: "assistant_task", ID: id, Value: b}})
				return &TaskResult{Subtasks: subs, Held: held, checkpoint: &wait, request: req}, nil
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				subs[i].Status, subs[i].Result = "failed", err.Error()
			} else {
				subs[i].Status, subs[i].Result = "done", clip(out.LastText(), 2000)
			}
		}
		if subs[i].Status == "failed" {
			failed++
		}
		fmt.Fprintf(&done, "%d. %s [%s]: %s\n", subs[i].ID, subs[i].Title, subs[i].Status, subs[i].Result)
		progress(subs, "running", "")
	}
	resp, err := m.d.Model.Complete(ctx, llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: reportPrompt()},
		{Role: llm.RoleUser, Content: fmt.Sprintf("Task: %s\n\nSubtasks and results:\n%s", req.Task, done.String())},
	}})
	if err != nil {
		return nil, fmt.Errorf("complex task: writing the report: %w", err)
	}
	res := &TaskResult{Success: failed == 0, Report: strings.TrimSpace(resp.Content), Subtasks: subs}
	state := "done"
	if !res.Success {
		state = "failed"
	}
	progress(subs, state, res.Report)
	return res, nil
}

// taskPartID names a task's assistant_task parts: the same for the run's
// task when the run is continued, so that its parts replace the earlier.
func taskPartID(runID, task string) string {
	if runID == "" {
		return fmt.Sprintf("task-%d", time.Now().UnixNano())
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(task))
	return fmt.Sprintf("task-%s-%08x", runID, h.Sum32())
}

// withoutOutputs returns steps without their tool results' output (the
// conversation holds it), for a checkpoint.
func withoutOutputs(steps []agent.Step) []agent.Step {
	out := make([]agent.Step, len(steps))
	for i, st := range steps {
		st.Results = slices.Clone(st.Results)
		for j := range st.Results {
			st.Results[j].Output = ""
		}
		out[i] = st
	}
	return out
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-\n"
	}
	return s
}
