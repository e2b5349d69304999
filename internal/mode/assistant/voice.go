package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/tools"
)

// Voice is the seed's three agents behind a realtime voice session: the
// upstream speech model plays the agent that holds the conversation, with
// that agent's instructions and tools, and every function call it makes
// runs here, through the same tools and action gate as a typed turn.
// Calls run one at a time (the session's order); Voice is not safe for
// concurrent use.
type Voice struct {
	t     *turn
	agent string
	held  []Action
}

// VoiceTool is a function the speech model may call.
type VoiceTool struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Parameters  *jsonschema.Schema `json:"parameters"`
}

// VoiceResult is what one function call came to.
type VoiceResult struct {
	// Output is the function's output, what the model reads.
	Output string
	// Handoff is the agent that holds the conversation now ("" none
	// passed), and why.
	Handoff, Reason string
	// Say is the planning agent's nextResponse, said verbatim.
	Say string
	// Question is Sova's question about the actions now held (Held),
	// said to the person; nothing runs until they decide.
	Question string
	Held     []Action
}

// Voice opens the agents for one session of the context's user; Close
// releases the MCP sessions.
func (m *Mode) Voice(ctx context.Context, userID, chatID, timezone string, sink event.Sink) (*Voice, error) {
	in := mode.Input{UserID: userID, ChatID: chatID, Timezone: timezone, Now: time.Now(), RunID: "voice-" + chatID}
	t := &turn{m: m, in: in, sink: sink, language: lang.Detect("")}
	t.cites = tools.NewCitations(func(src sova.Source) {
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	})
	if m.d.Settings != nil {
		s, err := m.d.Settings.UserSettings(ctx, userID)
		if err != nil {
			return nil, fmt.Errorf("reading your settings: %w", err)
		}
		t.settings = s
	}
	t.mcp = m.toolset(ctx, userID, sink)
	if u, ok := sova.UserFrom(ctx); !ok || u.Role == sova.RoleAnonymous {
		t.anonymous = true
	}
	return &Voice{t: t, agent: Router}, nil
}

// Close ends the agents' MCP sessions.
func (v *Voice) Close() { v.t.mcp.Close() }

// Agent is the agent holding the conversation.
func (v *Voice) Agent() string { return v.agent }

// Heard tells the agents what the person said (the language they answer
// in follows it).
func (v *Voice) Heard(text string) {
	if text != "" {
		v.t.language = lang.Detect(text)
		v.t.in.Question = text
	}
}

// Held is what waits for the person's decision.
func (v *Voice) Held() []Action { return slices.Clone(v.held) }

// spoken is what every agent is told about speaking.
const spoken = "\n\n## Speaking\nYou are speaking aloud with the person. Never say citation numbers, URLs, JSON or Markdown; say names and facts in plain words. Keep each reply to one to three short sentences."

// Setup is the holding agent's instructions and functions.
func (v *Voice) Setup() (string, []VoiceTool) {
	ts, prompt := v.t.agentTools(v.agent, &gate{acts: &agent.Gate{}})
	ts = v.t.forAccount(ts)
	out := make([]VoiceTool, 0, len(ts))
	for _, x := range ts {
		out = append(out, VoiceTool{Name: x.Name(), Description: x.Description(), Parameters: x.Schema()})
	}
	return prompt + spoken, out
}

// ReturnToRouter passes the conversation back to the router: the
// knowledge agent's exit criteria once it has answered.
func (v *Voice) ReturnToRouter(reason string) {
	if v.agent != Router {
		v.t.emit("handoff", fmt.Sprintf("voice-return-%d", time.Now().UnixNano()), map[string]any{"kind": "return", "from": v.agent, "to": Router, "reason": reason})
		v.agent = Router
	}
}

// Call runs one function call of the holding agent. A tool that changes
// something is held (agent.Acting), never run here: Sova's question about
// it comes back to be said.
func (v *Voice) Call(ctx context.Context, callID, name string, args json.RawMessage) VoiceResult {
	g := &gate{acts: &agent.Gate{}, current: callID}
	ts, _ := v.t.agentTools(v.agent, g)
	ts = v.t.forAccount(ts)
	i := slices.IndexFunc(ts, func(x agent.Tool) bool { return x.Name() == name })
	if i < 0 {
		return VoiceResult{Output: fmt.Sprintf("Error: the %s agent has no function %q.", v.agent, name)}
	}
	tool := ts[i]
	if !json.Valid(args) {
		return VoiceResult{Output: "Error: the arguments are not valid JSON; call the function again with a JSON object."}
	}
	title := name
	if tt, ok := tool.(agent.Titler); ok {
		title = tt.Title(args)
	}
	v.t.sink.Emit(event.Event{Type: event.TypeToolCall, Time: time.Now(), ToolCall: &event.ToolCall{ID: callID, Name: name, Input: args, Title: title}})
	if agent.Acts(tool) {
		a := viewTask(agent.NewAction(callID, name, title, args))
		if !slices.ContainsFunc(v.held, func(h Action) bool { return h.ID == a.ID }) {
			v.held = append(v.held, a)
		}
		return v.hold(callID, name, "")
	}
	var (
		out agent.Output
		err error
	)
	if r, ok := tool.(agent.Runner); ok {
		out, err = r.Run(ctx, args)
	} else {
		out.Text, err = tool.Call(ctx, args)
	}
	res := &event.ToolResult{ID: callID, Name: name, Text: out.Summary, Output: out.Data}
	if err != nil {
		res.Error, res.Text = err.Error(), "Failed: "+err.Error()
		out.Text = "Error: " + err.Error()
	}
	v.t.sink.Emit(event.Event{Type: event.TypeToolResult, Time: time.Now(), ToolResult: res})
	r := VoiceResult{Output: out.Text}
	if len(g.pending) > 0 {
		// The planning agent held changes: its words, then Sova's question.
		for _, a := range g.pending {
			if !slices.ContainsFunc(v.held, func(h Action) bool { return h.ID == a.ID }) {
				v.held = append(v.held, a)
			}
		}
		return v.hold(callID, name, g.lead)
	}
	r.Say = g.verbatim
	if g.to != "" {
		kind := "handoff"
		if g.to == Router {
			kind = "return"
		}
		v.t.emit("handoff", "voice-handoff-"+callID, map[string]any{"kind": kind, "from": v.agent, "to": g.to, "reason": g.why})
		v.agent, r.Handoff, r.Reason = g.to, g.to, g.why
	}
	return r
}

func (v *Voice) hold(callID, name, lead string) VoiceResult {
	q := v.t.question(v.held)
	if lead != "" {
		q = lead + " " + q
	}
	v.t.emit("confirmation", "confirmation-"+v.t.in.RunID, map[string]any{"question": q, "actions": v.held, "status": "waiting"})
	return VoiceResult{
		Output:   fmt.Sprintf("Held, not done: Sova asks the person to approve %s first. Do not call it again; say Sova's question.", name),
		Question: q, Held: v.Held(),
	}
}

// Decide applies the person's decision about the held actions: a spoken
// or typed answer (approved only when it is an unambiguous yes, Decide),
// or approve/decline by action id. The approved ones run. It returns what
// to tell the model, and false when the answer decided nothing (the
// question stands and is asked again).
func (v *Voice) Decide(ctx context.Context, answer string, approve, decline []string) (string, bool) {
	if len(v.held) == 0 {
		return "", false
	}
	approved, ok := decision(&mode.Resume{Answer: answer, Approve: approve, Decline: decline}, v.held)
	if !ok {
		return "", false
	}
	var (
		report []string
		status []map[string]any
	)
	for i, a := range v.held {
		if !approved[a.ID] {
			report = append(report, a.Tool+" was NOT done: the person declined.")
		} else if out, _, err := v.t.execute(ctx, a, i); err != nil {
			report = append(report, fmt.Sprintf("%s failed: %v", a.Tool, err))
		} else {
			report = append(report, fmt.Sprintf("%s done: %s", a.Tool, clip(out, 2000)))
		}
		status = append(status, map[string]any{"id": a.ID, "approved": approved[a.ID]})
	}
	v.t.emit("confirmation", "confirmation-"+v.t.in.RunID, map[string]any{"actions": v.held, "decisions": status, "status": overall(approved)})
	v.held = nil
	b, _ := json.Marshal(report)
	return "[Sova] The person decided; tell them briefly what was done and what was not: " + string(b), true
}

// Again is what is said when an answer decided nothing.
func (v *Voice) Again() string {
	intro := "I did not take that as a yes, so nothing was done."
	if v.t.language.Code == "ru" {
		intro = "Я не понял ответ как согласие, поэтому ничего не сделано."
	}
	return intro + " " + v.t.question(v.held)
}
