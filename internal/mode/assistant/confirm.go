package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// gate collects what an agent's tools decided during one loop: a hand-off,
// words to say verbatim, and the actions held for the person. Acting
// calls are held by the loop's agent.Gate (acts); a planning agent's held
// actions come back through delegateToSupervisor (pending).
type gate struct {
	current  string // the ID of the call running now (calls run in order)
	to, why  string
	verbatim string
	// lead is the model's text that comes before Sova's question (the
	// planner's nextResponse); it never replaces the question.
	lead    string
	pending []Action
	acts    *agent.Gate
}

// held is every action waiting for the person, in the order called.
func (g *gate) held() []Action {
	out := slices.Clone(g.pending)
	for _, a := range g.acts.Held() {
		if !slices.ContainsFunc(out, func(b Action) bool { return b.ID == a.ID }) {
			out = append(out, a)
		}
	}
	return out
}

// Action is a call that changes something, held until the person
// approves it by its ID.
type Action = agent.Action

// pauseState is what a run waiting for a decision keeps.
type pauseState struct {
	Agent    string        `json:"agent"`
	Messages []llm.Message `json:"messages"`
	Pending  []Action      `json:"pending"`
	// Task is a complex task paused inside (a subtask called an acting
	// tool its approval does not cover); Pending are its actions then.
	Task *taskPause `json:"task,omitempty"`
}

// taskPause is a complex task waiting inside for the person.
type taskPause struct {
	CallID     string         `json:"callId"`
	Request    TaskRequest    `json:"request"`
	Checkpoint taskCheckpoint `json:"checkpoint"`
}

// question is Sova's question about the held actions: built from them,
// in the person's language, whatever the model wrote.
func (t *turn) question(actions []Action) string {
	q := agent.Question(t.language.Code, actions)
	if slices.ContainsFunc(actions, func(a Action) bool { return a.Tool == taskToolName }) {
		if t.language.Code == "ru" {
			q += " Сложная задача займёт несколько минут; изменения, которых нет в её описании, Sova спросит отдельно."
		} else {
			q += " The complex task takes several minutes; changes its description does not name are asked about separately."
		}
	}
	return q
}

// pause ends the turn with Sova's question; the next message (or a
// structured decision) answers it.
func (t *turn) pause(agentName string, msgs []llm.Message, g *gate) *mode.Pause {
	held := g.held()
	for i := range held {
		held[i] = viewTask(held[i])
	}
	if g.lead != "" {
		if t.text.Len() > 0 {
			t.write("\n\n")
		}
		t.write(g.lead)
	}
	return t.ask(pauseState{Agent: agentName, Messages: msgs, Pending: held}, "")
}

// ask shows the question about st.Pending (after intro, when set) and
// keeps st for the answer.
func (t *turn) ask(st pauseState, intro string) *mode.Pause {
	q := t.question(st.Pending)
	if t.text.Len() > 0 {
		t.write("\n\n")
	}
	if intro != "" {
		t.write(intro + " ")
	}
	t.write(q)
	ids := make([]string, 0, len(st.Pending))
	for _, a := range st.Pending {
		ids = append(ids, a.ID)
	}
	t.emit("confirmation", "confirmation-"+t.in.RunID, map[string]any{"runId": t.in.RunID, "question": q, "actions": st.Pending, "status": "waiting"})
	state, _ := json.Marshal(st)
	return &mode.Pause{Questions: []string{q}, State: state, Actions: ids}
}

// viewTask shows a complex task by its task and the acts it names.
func viewTask(a Action) Action {
	if a.Tool != taskToolName {
		return a
	}
	var req TaskRequest
	if json.Unmarshal(a.Args, &req) == nil {
		a.View = agent.ActionView{Excerpt: clip(req.Task, 300)}
		for _, act := range req.Actions {
			a.View.Recipients = append(a.View.Recipients, act.String())
		}
	}
	return a
}

// decision reads the person's answer: the approved action IDs, and
// whether they answered at all (false: ask again, nothing runs).
func decision(r *mode.Resume, pending []Action) (approved map[string]bool, answered bool) {
	approved = map[string]bool{}
	if r.Decided() {
		for _, a := range pending {
			approved[a.ID] = slices.Contains(r.Approve, a.ID) && !slices.Contains(r.Decline, a.ID)
		}
		return approved, true
	}
	switch Decide(r.Answer) {
	case Yes:
		for _, a := range pending {
			approved[a.ID] = true
		}
		return approved, true
	case No:
		return approved, true
	}
	return nil, false
}

// resume continues a loop that waited for a decision: approved actions
// run, declined ones do not; an answer that is neither an unambiguous yes
// nor a clear no runs nothing and asks again (the returned pause).
func (t *turn) resume(ctx context.Context, r *mode.Resume) (string, []llm.Message, *mode.Pause, error) {
	var st pauseState
	if err := json.Unmarshal(r.State, &st); err != nil || st.Agent == "" {
		return "", nil, nil, fmt.Errorf("assistant: the paused run's state cannot be read: %v", err)
	}
	approved, ok := decision(r, st.Pending)
	if !ok {
		intro := "I did not take that as a yes, so nothing was done."
		if t.language.Code == "ru" {
			intro = "Я не понял ответ как согласие, поэтому ничего не сделано."
		}
		return "", nil, t.ask(st, intro), nil
	}
	outcomes := map[string][]string{}
	var status []map[string]any
	if st.Task != nil {
		// A complex task waited inside: it goes on with the decision.
		tp := st.Task
		res, err := t.m.runTask(ctx, t.in, tp.Request, t.mcp, t.sink, &taskResume{cp: &tp.Checkpoint, approved: approved})
		for _, a := range st.Pending {
			status = append(status, map[string]any{"id": a.ID, "approved": approved[a.ID]})
		}
		t.emit("confirmation", "confirmation-"+t.in.RunID, map[string]any{"runId": t.in.RunID, "actions": st.Pending, "decisions": status, "status": overall(approved)})
		if err == nil && len(res.Held) > 0 {
			return "", nil, t.ask(pauseState{Agent: st.Agent, Messages: st.Messages, Pending: res.Held,
				Task: &taskPause{CallID: tp.CallID, Request: tp.Request, Checkpoint: *res.checkpoint}}, ""), nil
		}
		if err == nil {
			t.report = res.Report
		}
		outcomes[tp.CallID] = []string{taskOutcome(res, err)}
	} else {
		for i, a := range st.Pending {
			var res string
			if approved[a.ID] {
				out, held, err := t.execute(ctx, a, i)
				if held != nil {
					// The task holds an act its approval does not cover.
					return "", nil, t.ask(pauseState{Agent: st.Agent, Messages: st.Messages, Pending: held.Held,
						Task: &taskPause{CallID: a.CallID, Request: held.request, Checkpoint: *held.checkpoint}}, ""), nil
				}
				if err != nil {
					res = fmt.Sprintf("%s failed: %v", a.Tool, err)
				} else {
					res = fmt.Sprintf("%s done: %s", a.Tool, out)
				}
			} else {
				res = fmt.Sprintf("%s was NOT done: the person declined.", a.Tool)
			}
			status = append(status, map[string]any{"id": a.ID, "approved": approved[a.ID]})
			outcomes[a.CallID] = append(outcomes[a.CallID], res)
		}
		t.emit("confirmation", "confirmation-"+t.in.RunID, map[string]any{"runId": t.in.RunID, "actions": st.Pending, "decisions": status, "status": overall(approved)})
	}
	msgs := st.Messages
	for i := range msgs {
		if msgs[i].Role == llm.RoleTool {
			if res, ok := outcomes[msgs[i].ToolCallID]; ok {
				msgs[i].Content = "[after the person's decision] " + strings.Join(res, "\n")
			}
		}
	}
	note := "[Sova] The person decided; the approved actions ran and the others did not (see the tool results). Tell them briefly what was done and what was not."
	if overall(approved) == "declined" {
		note = "[Sova] The person declined; nothing was done. Acknowledge it briefly."
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: note})
	return st.Agent, msgs, nil, nil
}

// overall is a decision in one word: confirmed (all approved), declined
// (none) or partial.
func overall(approved map[string]bool) string {
	n := 0
	for _, ok := range approved {
		if ok {
			n++
		}
	}
	switch {
	case n == 0:
		return "declined"
	case n == len(approved):
		return "confirmed"
	}
	return "partial"
}

func taskOutcome(res *TaskResult, err error) string {
	if err != nil {
		return fmt.Sprintf("%s failed: %v", taskToolName, err)
	}
	b, _ := json.Marshal(res)
	return fmt.Sprintf("%s done: %s", taskToolName, b)
}

// execute runs an approved action. A complex task that holds an act its
// approval does not cover comes back as held.
func (t *turn) execute(ctx context.Context, a Action, i int) (string, *TaskResult, error) {
	id := fmt.Sprintf("confirmed-%s-%d", a.CallID, i)
	t.sink.Emit(event.Event{Type: event.TypeToolCall, Time: time.Now(), ToolCall: &event.ToolCall{ID: id, Name: a.Tool, Input: a.Args, Title: a.Title}})
	var (
		out agent.Output
		err error
	)
	if a.Tool == taskToolName {
		var req TaskRequest
		if err = json.Unmarshal(a.Args, &req); err == nil {
			var res *TaskResult
			res, err = t.m.runTask(ctx, t.in, req, t.mcp, t.sink, nil)
			if err == nil && len(res.Held) > 0 {
				res.request = req
				t.sink.Emit(event.Event{Type: event.TypeToolResult, Time: time.Now(), ToolResult: &event.ToolResult{ID: id, Name: a.Tool, Text: "Waiting for your decision"}})
				return "", res, nil
			}
			if err == nil {
				t.report = res.Report
				b, _ := json.Marshal(res)
				out = agent.Output{Text: string(b), Summary: "Task finished", Data: b}
			}
		}
	} else if tool := t.mcp.Find(a.Tool); tool == nil {
		err = fmt.Errorf("the tool %s is not available now (its MCP server did not answer)", a.Tool)
	} else {
		out, err = tool.Run(ctx, a.Args)
	}
	res := &event.ToolResult{ID: id, Name: a.Tool, Text: out.Summary, Output: out.Data}
	if err != nil {
		res.Error, res.Text = err.Error(), "Failed: "+err.Error()
	}
	t.sink.Emit(event.Event{Type: event.TypeToolResult, Time: time.Now(), ToolResult: res})
	return out.Text, nil, err
}
