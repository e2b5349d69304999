package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
)

// fatalError is an error that ends the run rather than one task: the
// workspace cannot be written, for example. Model and tool failures are
// not fatal; the agent or supervisor sees them and goes on.
type fatalError struct{ err error }

func fatal(err error) error         { return &fatalError{err: err} }
func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

func isFatal(err error) bool {
	var f *fatalError
	return errors.As(err, &f)
}

// tool is a function the model may call in a ReAct loop.
type tool struct {
	def llm.Tool
	// run executes the call. Its text goes back to the model; stop ends
	// the loop after this reply's calls (done, make_final_decision). A
	// returned error ends the loop (it is fatal or the context ended);
	// problems the model can fix belong in the text.
	run func(ctx context.Context, args json.RawMessage) (out string, stop bool, err error)
}

// loop is one ReAct conversation: the model reasons, calls tools, sees
// their results, and so on, within a step limit.
type loop struct {
	client    *llm.Client
	temp      *float64
	maxTokens int
	messages  []llm.Message
	tools     []tool
	maxSteps  int
	// before runs before each step after the first and may add messages
	// (an agent's reflection).
	before func(ctx context.Context, step int, msgs []llm.Message) ([]llm.Message, error)
	// maxIdle replies in a row without a tool call end the loop; after
	// each one short of that, nudge is sent as a user message.
	maxIdle int
	nudge   string
}

// loop end reasons.
const (
	endTool  = "tool"  // a stop tool was called
	endSteps = "steps" // the step limit was reached
	endIdle  = "idle"  // the model stopped calling tools
)

type loopResult struct {
	steps    int
	end      string
	stopTool string
	text     string // the last reply's text
	messages []llm.Message
}

// run drives the loop. Several tool calls in one reply run in order; a stop
// tool among them ends the loop after the others.
func (l *loop) run(ctx context.Context) (*loopResult, error) {
	defs := make([]llm.Tool, len(l.tools))
	byName := map[string]tool{}
	for i, t := range l.tools {
		defs[i] = t.def
		byName[t.def.Name] = t
	}
	msgs := l.messages
	res := &loopResult{}
	idle := 0
	for step := 1; step <= l.maxSteps; step++ {
		if step > 1 && l.before != nil {
			var err error
			if msgs, err = l.before(ctx, step, msgs); err != nil {
				return nil, err
			}
		}
		resp, err := l.client.Complete(ctx, llm.Request{
			Messages: msgs, Tools: defs, ToolChoice: "auto", Temperature: l.temp, MaxTokens: l.maxTokens,
		})
		if err != nil {
			return nil, err
		}
		res.steps = step
		res.text = strings.TrimSpace(resp.Content)
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		if len(resp.ToolCalls) == 0 {
			idle++
			if idle >= l.maxIdle {
				res.end, res.messages = endIdle, msgs
				return res, nil
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: l.nudge})
			continue
		}
		idle = 0
		stop := ""
		for _, call := range resp.ToolCalls {
			t, ok := byName[call.Name]
			var out string
			switch {
			case !ok:
				out = fmt.Sprintf("Error: there is no tool %q. Available tools: %s.", call.Name, toolNames(l.tools))
			default:
				args := json.RawMessage(call.Arguments)
				if strings.TrimSpace(call.Arguments) == "" {
					args = json.RawMessage("{}")
				}
				if !json.Valid(args) {
					out = "Error: the arguments are not valid JSON; call the tool again with a JSON object."
					break
				}
				var halt bool
				out, halt, err = t.run(ctx, args)
				if err != nil {
					return nil, err
				}
				if halt && stop == "" {
					stop = t.def.Name
				}
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: out})
		}
		if stop != "" {
			res.end, res.stopTool, res.messages = endTool, stop, msgs
			return res, nil
		}
	}
	res.end, res.messages = endSteps, msgs
	return res, nil
}

// noStop adapts a tool function that never ends the loop.
func noStop(fn func(context.Context, json.RawMessage) (string, error)) func(context.Context, json.RawMessage) (string, bool, error) {
	return func(ctx context.Context, args json.RawMessage) (string, bool, error) {
		out, err := fn(ctx, args)
		return out, false, err
	}
}

func toolNames(ts []tool) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.def.Name
	}
	return strings.Join(names, ", ")
}

// decodeArgs unmarshals tool arguments, returning a message for the model
// when they do not fit.
func decodeArgs(raw json.RawMessage, v any) string {
	if err := json.Unmarshal(raw, v); err != nil {
		return "Error: the arguments do not fit the tool's parameters: " + err.Error()
	}
	return ""
}

// stringList is a list of strings that also accepts a single string,
// which models often send for a one-element list.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*l = stringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*l = many
	return nil
}

// object is a JSON schema object with the given properties, all required.
func object(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
