package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// gate collects what an agent's tools decided during one loop: a hand-off,
// actions waiting for the person's confirmation, words to say verbatim.
type gate struct {
	current  string // the ID of the call running now (calls run in order)
	to, why  string
	verbatim string
	question string
	pending  []Action
}

// Action is a call that changes something, held until the person
// confirms it.
type Action struct {
	// CallID is the router's call whose result the action's outcome
	// becomes (a direct MCP call, delegateToSupervisor, executeComplexTask).
	CallID string          `json:"callId,omitempty"`
	Tool   string          `json:"tool"`
	Title  string          `json:"title"`
	Args   json.RawMessage `json:"args"`
}

// pauseState is what a run waiting for a confirmation keeps.
type pauseState struct {
	Agent    string        `json:"agent"`
	Messages []llm.Message `json:"messages"`
	Pending  []Action      `json:"pending"`
}

// gated wraps a tool that changes something: calling it records the
// action and ends the loop; it runs when the person agrees.
type gated struct {
	agent.Tool
	g *gate
	// hold keeps the loop going after the call is held (the planning
	// agent plans on and finishes with the decision "confirm").
	hold bool
}

func (t gated) Run(_ context.Context, args json.RawMessage) (agent.Output, error) {
	title := t.Name()
	if tt, ok := t.Tool.(agent.Titler); ok {
		title = tt.Title(args)
	}
	t.g.pending = append(t.g.pending, Action{CallID: t.g.current, Tool: t.Name(), Title: title, Args: args})
	data, _ := json.Marshal(map[string]any{"status": "awaiting_confirmation", "tool": t.Name(), "args": args})
	text := "Not done yet: Sova asks the person to confirm this action first. Do not call it again."
	if t.hold {
		text = "Held: this change runs only after the person confirms. Do not call it again; finish with finish_plan, decision \"confirm\", and a nextResponse that asks the person to confirm it."
	}
	return agent.Output{Text: text, Summary: "Waiting for your confirmation", Data: data, Stop: !t.hold}, nil
}

func (t gated) Call(ctx context.Context, args json.RawMessage) (string, error) {
	o, err := t.Run(ctx, args)
	return o.Text, err
}

// pause ends the turn with a question; the next message answers it.
func (t *turn) pause(agentName string, msgs []llm.Message, g *gate) *mode.Pause {
	q := g.question
	if q == "" {
		var titles []string
		for _, a := range g.pending {
			titles = append(titles, fmt.Sprintf("%s %s", a.Title, compactArgs(a.Args)))
		}
		if t.language.Code == "ru" {
			q = "Подтвердите, пожалуйста: " + strings.Join(titles, "; ") + ". Выполнить? (да/нет)"
		} else {
			q = "Please confirm: " + strings.Join(titles, "; ") + ". Go ahead? (yes/no)"
		}
	}
	if t.text.Len() > 0 {
		t.write("\n\n")
	}
	t.write(q)
	t.emit("confirmation", "confirmation-"+t.in.RunID, map[string]any{"runId": t.in.RunID, "question": q, "actions": g.pending, "status": "waiting"})
	state, _ := json.Marshal(pauseState{Agent: agentName, Messages: msgs, Pending: g.pending})
	return &mode.Pause{Questions: []string{q}, State: state}
}

func compactArgs(b json.RawMessage) string {
	s := string(b)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// resume continues a loop that waited for a confirmation: on yes the held
// actions run, on no nothing does; any other answer declines them and is
// passed on as the person's next message.
func (t *turn) resume(ctx context.Context, r *mode.Resume) (string, []llm.Message, error) {
	var st pauseState
	if err := json.Unmarshal(r.State, &st); err != nil || st.Agent == "" {
		return "", nil, fmt.Errorf("assistant: the paused run's state cannot be read: %v", err)
	}
	answer := Decide(r.Answer)
	outcomes := map[string][]string{}
	for i, a := range st.Pending {
		var res string
		if answer == Yes {
			out, err := t.execute(ctx, a, i)
			if err != nil {
				res = fmt.Sprintf("%s failed: %v", a.Tool, err)
			} else {
				res = fmt.Sprintf("%s done: %s", a.Tool, out)
			}
		} else {
			res = fmt.Sprintf("%s was NOT done: the person declined.", a.Tool)
		}
		outcomes[a.CallID] = append(outcomes[a.CallID], res)
	}
	status := map[string]string{Yes: "confirmed", No: "declined", Other: "declined"}[answer]
	t.emit("confirmation", "confirmation-"+t.in.RunID, map[string]any{"runId": t.in.RunID, "actions": st.Pending, "status": status})
	msgs := st.Messages
	for i := range msgs {
		if msgs[i].Role == llm.RoleTool {
			if res, ok := outcomes[msgs[i].ToolCallID]; ok {
				msgs[i].Content = "[after the person's answer] " + strings.Join(res, "\n")
			}
		}
	}
	note := "[Sova] The person confirmed; the actions ran (see the tool results). Tell them briefly what was done."
	switch answer {
	case No:
		note = "[Sova] The person declined; nothing was done. Acknowledge it briefly."
	case Other:
		note = "[Sova] The person did not confirm, so nothing was done. Their message: " + r.Answer
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: note})
	return st.Agent, msgs, nil
}

// execute runs a confirmed action.
func (t *turn) execute(ctx context.Context, a Action, i int) (string, error) {
	id := fmt.Sprintf("confirmed-%s-%d", a.CallID, i)
	t.sink.Emit(event.Event{Type: event.TypeToolCall, Time: time.Now(), ToolCall: &event.ToolCall{ID: id, Name: a.Tool, Input: a.Args, Title: a.Title}})
	var (
		out agent.Output
		err error
	)
	if a.Tool == "executeComplexTask" {
		var req TaskRequest
		if err = json.Unmarshal(a.Args, &req); err == nil {
			var res *TaskResult
			res, err = t.m.runTask(ctx, t.in, req, t.mcp, t.sink)
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
	return out.Text, err
}

// Answers to a confirmation.
const (
	Yes   = "yes"
	No    = "no"
	Other = "other"
)

var (
	yesWords = []string{"yes", "y", "yep", "yeah", "ok", "okay", "sure", "confirm", "confirmed", "go ahead", "do it", "send", "proceed", "continue",
		"да", "ага", "ок", "окей", "конечно", "подтверждаю", "давай", "хорошо", "продолжай", "продолжить", "отправляй", "выполняй", "согласен", "согласна"}
	noWords = []string{"no", "n", "nope", "cancel", "stop", "don't", "do not", "abort",
		"нет", "не надо", "не нужно", "отмена", "отменить", "отмени", "стоп", "не отправляй", "не создавай"}
)

// Decide reads a person's answer to a confirmation.
func Decide(answer string) string {
	s := strings.ToLower(strings.TrimSpace(answer))
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	words := strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == '!' || r == '.' })
	if len(words) == 0 {
		return Other
	}
	match := func(list []string) bool {
		for _, w := range list {
			if s == w || (len(words) <= 4 && (words[0] == w || strings.HasPrefix(s, w+" "))) {
				return true
			}
		}
		return false
	}
	switch {
	case match(noWords):
		return No
	case match(yesWords):
		return Yes
	}
	return Other
}
