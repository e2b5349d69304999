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
	"github.com/sova-ai/sova/internal/mcp"
)

// Act is a change a complex task's description names: approving the task
// approves calls of this tool that reach only these recipients (or
// attendees, or targets), and nothing else.
type Act struct {
	Tool       string   `json:"tool" jsonschema:"the tool that makes the change, e.g. office__send_email"`
	Recipients []string `json:"recipients,omitempty" jsonschema:"whom or what it reaches, as the person named them: addresses, attendees, paths"`
}

// String is an act as a person reads it.
func (a Act) String() string {
	if len(a.Recipients) == 0 {
		return a.Tool
	}
	return a.Tool + " → " + strings.Join(a.Recipients, ", ")
}

// covers reports whether an approved act covers the action: the same tool
// (by its full or its server's name) and no recipient beyond the act's.
func (a Act) covers(x Action) bool {
	tool := strings.TrimSpace(a.Tool)
	if tool == "" || (x.Tool != tool && !strings.HasSuffix(x.Tool, "__"+tool)) {
		return false
	}
	allowed := make([]string, 0, len(a.Recipients))
	for _, r := range a.Recipients {
		allowed = append(allowed, strings.ToLower(strings.TrimSpace(r)))
	}
	for _, p := range agent.Parties(x.Args) {
		if !slices.Contains(allowed, p) {
			return false
		}
	}
	return true
}

// scope is what a confirmed task may do without asking again: the acts
// its request names. An action approved inside the task ran once, when it
// was approved (settle); calling it again asks again.
func scope(req TaskRequest) func(Action) bool {
	return func(x Action) bool {
		return slices.ContainsFunc(req.Actions, func(a Act) bool { return a.covers(x) })
	}
}

// taskResume continues a task that waited for the person: its checkpoint
// and the decision (nil: none yet, the held actions are asked again).
type taskResume struct {
	cp       *taskCheckpoint
	approved map[string]bool
}

// settle gives the held calls of a paused subtask their outcome: approved
// actions run now, the others are declined; the subtask's conversation
// then goes on from there.
func settle(ctx context.Context, cur *subtaskProgress, held []Action, approved map[string]bool, ts *mcp.Toolset, sink event.Sink) {
	outcome := map[string]string{}
	for _, a := range held {
		if !approved[a.ID] {
			outcome[a.CallID] = fmt.Sprintf("%s was NOT done: the person declined this action. Do not try it again another way.", a.Tool)
			continue
		}
		id := "approved-" + a.ID
		sink.Emit(event.Event{Type: event.TypeToolCall, Time: time.Now(), ToolCall: &event.ToolCall{ID: id, Name: a.Tool, Input: a.Args, Title: a.Title}})
		res := &event.ToolResult{ID: id, Name: a.Tool}
		if tool := ts.Find(a.Tool); tool == nil {
			res.Error = fmt.Sprintf("the tool %s is not available now (its MCP server did not answer)", a.Tool)
		} else if out, err := tool.Run(ctx, a.Args); err != nil {
			res.Error = err.Error()
		} else {
			res.Text, res.Output = out.Summary, out.Data
			outcome[a.CallID] = fmt.Sprintf("%s done (the person approved it): %s", a.Tool, out.Text)
		}
		if res.Error != "" {
			res.Text = "Failed: " + res.Error
			outcome[a.CallID] = fmt.Sprintf("%s failed: %s", a.Tool, res.Error)
		}
		sink.Emit(event.Event{Type: event.TypeToolResult, Time: time.Now(), ToolResult: res})
	}
	for i := range cur.Messages {
		if m := cur.Messages[i]; m.Role == llm.RoleTool {
			if o, ok := outcome[m.ToolCallID]; ok {
				cur.Messages[i].Content = o
			}
		}
	}
}

// taskActsPrefix marks the system message of a task run that carries the
// acts its request names (TaskMessages; TaskMode reads it back).
const taskActsPrefix = "[sova:task-actions] "

func actsMessage(acts []Act) string {
	b, _ := json.Marshal(acts)
	return taskActsPrefix + string(b)
}
