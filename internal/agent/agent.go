// Package agent is the tool-calling loop that agent modes share: the model
// is offered tools, the calls it makes are checked against their JSON
// schemas (malformed arguments are repaired by asking a model to fix them,
// seed 000 §8.1), run in parallel, and their results go back to the model,
// step after step, until it answers or the step limit is reached. The last
// step allows no tools, so a run always ends with an answer.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/llm"
)

// Tool is a function the model may call.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema of the arguments, an object.
	Schema() *jsonschema.Schema
	// Call runs the tool with arguments that satisfy the schema. The text
	// returned is what the model sees; an error is shown to the model as
	// the tool's failure, and the run goes on.
	Call(ctx context.Context, args json.RawMessage) (string, error)
}

// DefaultMaxSteps bounds a run when Config.MaxSteps is not set.
const DefaultMaxSteps = 10

// Config configures a run.
type Config struct {
	Model llm.Model
	// Repair fixes tool calls whose arguments are not valid JSON or do not
	// fit the tool's schema; nil uses Model.
	Repair llm.Model
	Tools  []Tool
	// MaxSteps is the most model calls a run makes; the last one may not
	// call tools.
	MaxSteps    int
	Temperature *float64
	MaxTokens   int

	// OnText receives the model's text as it streams, from every step.
	OnText func(delta string)
	// OnToolCall is called when a call is about to run (its arguments
	// checked or repaired); OnToolResult when it has finished. Calls of
	// one step run in parallel, so these may be called concurrently.
	OnToolCall   func(Call)
	OnToolResult func(Result)
}

// Call is one tool call of the model.
type Call struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// RawArgs is what the model wrote, kept when the arguments had to be
	// repaired or could not be used.
	RawArgs  string `json:"rawArgs,omitempty"`
	Repaired bool   `json:"repaired,omitempty"`
	Step     int    `json:"step"`
}

// Result is what a tool call returned.
type Result struct {
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// Output is the text the model was given.
	Output string `json:"output"`
	// Error is set when the tool failed or could not be called.
	Error string `json:"error,omitempty"`
	Step  int    `json:"step"`
}

// Step is one model call and the tools it called.
type Step struct {
	Text         string    `json:"text,omitempty"`
	Calls        []Call    `json:"toolCalls,omitempty"`
	Results      []Result  `json:"toolResults,omitempty"`
	FinishReason string    `json:"finishReason"`
	Usage        llm.Usage `json:"usage"`
}

// Outcome is a finished run.
type Outcome struct {
	// Text is everything the model wrote, over all steps.
	Text         string
	Steps        []Step
	FinishReason string
	Model        string
	Usage        llm.Usage
	// Messages is the conversation as sent, with the model's final answer:
	// what a continuation would start from.
	Messages []llm.Message
}

// Calls returns every tool call of the run, in order.
func (o *Outcome) Calls() []Call {
	var out []Call
	for _, s := range o.Steps {
		out = append(out, s.Calls...)
	}
	return out
}

// Results returns every tool result of the run, in order.
func (o *Outcome) Results() []Result {
	var out []Result
	for _, s := range o.Steps {
		out = append(out, s.Results...)
	}
	return out
}

// tool is a Tool with its schema prepared.
type tool struct {
	Tool
	def      llm.Tool
	resolved *jsonschema.Resolved
	schema   string // for repair prompts
}

// Run runs the loop from messages (system prompt, history and the
// question). On error the Outcome holds the steps done so far.
func Run(ctx context.Context, cfg Config, messages []llm.Message) (*Outcome, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: no model")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Repair == nil {
		cfg.Repair = cfg.Model
	}
	tools, defs, err := prepareTools(cfg.Tools)
	if err != nil {
		return nil, err
	}
	msgs := append([]llm.Message(nil), messages...)
	out := &Outcome{}
	var text strings.Builder
	for step := 1; step <= cfg.MaxSteps; step++ {
		last := step == cfg.MaxSteps
		req := llm.Request{Messages: msgs, Tools: defs, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens}
		if len(defs) > 0 && last {
			// The tools stay listed (earlier calls refer to them) but may
			// not be used: the model has to answer now.
			req.ToolChoice = "none"
		}
		var stepText strings.Builder
		resp, err := cfg.Model.Stream(ctx, req, func(d string) {
			stepText.WriteString(d)
			text.WriteString(d)
			if cfg.OnText != nil {
				cfg.OnText(d)
			}
		})
		if err != nil {
			out.Text = text.String()
			out.Messages = msgs
			return out, fmt.Errorf("step %d: %w", step, err)
		}
		out.Usage = addUsage(out.Usage, resp.Usage)
		out.Model = resp.Model
		st := Step{Text: stepText.String(), FinishReason: resp.FinishReason, Usage: resp.Usage}
		if len(resp.ToolCalls) == 0 || last || len(defs) == 0 {
			out.Steps = append(out.Steps, st)
			out.FinishReason = resp.FinishReason
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content})
			break
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		st.Calls, st.Results = runCalls(ctx, cfg, tools, resp.ToolCalls, step)
		if err := ctx.Err(); err != nil {
			out.Steps = append(out.Steps, st)
			out.Text = text.String()
			out.Messages = msgs
			return out, err
		}
		for _, r := range st.Results {
			content := r.Output
			if r.Error != "" {
				content = "Error: " + r.Error
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: r.CallID, Name: r.Name, Content: content})
		}
		out.Steps = append(out.Steps, st)
	}
	out.Text = text.String()
	out.Messages = msgs
	return out, nil
}

func addUsage(a, b llm.Usage) llm.Usage {
	return llm.Usage{
		PromptTokens:     a.PromptTokens + b.PromptTokens,
		CompletionTokens: a.CompletionTokens + b.CompletionTokens,
		TotalTokens:      a.TotalTokens + b.TotalTokens,
	}
}

func prepareTools(in []Tool) (map[string]*tool, []llm.Tool, error) {
	tools := make(map[string]*tool, len(in))
	defs := make([]llm.Tool, 0, len(in))
	for _, t := range in {
		name := t.Name()
		if _, dup := tools[name]; dup {
			return nil, nil, fmt.Errorf("agent: tool %q given twice", name)
		}
		s := t.Schema()
		if s == nil {
			s = &jsonschema.Schema{Type: "object"}
		}
		resolved, err := s.Resolve(nil)
		if err != nil {
			return nil, nil, fmt.Errorf("agent: schema of tool %s: %w", name, err)
		}
		raw, err := json.Marshal(s)
		if err != nil {
			return nil, nil, fmt.Errorf("agent: schema of tool %s: %w", name, err)
		}
		var params map[string]any
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, nil, fmt.Errorf("agent: schema of tool %s: %w", name, err)
		}
		def := llm.Tool{Name: name, Description: t.Description(), Parameters: params}
		tools[name] = &tool{Tool: t, def: def, resolved: resolved, schema: string(raw)}
		defs = append(defs, def)
	}
	return tools, defs, nil
}

// runCalls checks, repairs and runs one step's calls in parallel; the
// results are in call order.
func runCalls(ctx context.Context, cfg Config, tools map[string]*tool, calls []llm.ToolCall, step int) ([]Call, []Result) {
	outCalls := make([]Call, len(calls))
	results := make([]Result, len(calls))
	var wg sync.WaitGroup
	for i, tc := range calls {
		wg.Go(func() {
			c := Call{ID: tc.ID, Name: tc.Name, Step: step}
			res := Result{CallID: tc.ID, Name: tc.Name, Step: step}
			t := tools[tc.Name]
			if t == nil {
				c.RawArgs = tc.Arguments
				res.Error = fmt.Sprintf("there is no tool named %q; the tools are: %s", tc.Name, toolNames(tools))
			} else {
				args, repaired, err := checkArgs(ctx, cfg.Repair, t, tc.Arguments)
				c.Args, c.Repaired = args, repaired
				if repaired || err != nil {
					c.RawArgs = tc.Arguments
				}
				if err != nil {
					res.Error = err.Error()
				}
			}
			if cfg.OnToolCall != nil {
				cfg.OnToolCall(c)
			}
			if res.Error == "" {
				output, err := t.Call(ctx, c.Args)
				res.Output = output
				if err != nil {
					res.Error = err.Error()
				}
			}
			if cfg.OnToolResult != nil {
				cfg.OnToolResult(res)
			}
			outCalls[i], results[i] = c, res
		})
	}
	wg.Wait()
	return outCalls, results
}

func toolNames(tools map[string]*tool) string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// checkArgs parses and validates a call's arguments, asking the repair
// model to fix them once when they do not fit.
func checkArgs(ctx context.Context, repair llm.Model, t *tool, raw string) (json.RawMessage, bool, error) {
	args, err := validate(t, raw)
	if err == nil {
		return args, false, nil
	}
	fixed, rerr := repairArgs(ctx, repair, t, raw, err)
	if rerr != nil {
		return nil, false, fmt.Errorf("invalid arguments for %s: %v (repair failed: %v)", t.Name(), err, rerr)
	}
	args, err2 := validate(t, fixed)
	if err2 != nil {
		return nil, false, fmt.Errorf("invalid arguments for %s: %v; the repaired arguments were invalid too: %v", t.Name(), err, err2)
	}
	return args, true, nil
}

// validate parses raw as a JSON object and checks it against the schema.
func validate(t *tool, raw string) (json.RawMessage, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("arguments must be a JSON object")
	}
	if err := t.resolved.Validate(v); err != nil {
		return nil, err
	}
	return json.RawMessage(raw), nil
}

// repairArgs asks the model to rewrite malformed arguments so that they
// fit the schema.
func repairArgs(ctx context.Context, model llm.Model, t *tool, raw string, problem error) (string, error) {
	sys := "You fix malformed tool calls. Reply with only the corrected JSON object of arguments: no prose, no code fence. " +
		"Keep the caller's intent and values; fix the format (arrays, types, quoting) and fill missing required fields sensibly."
	user := fmt.Sprintf("Tool: %s\nDescription: %s\nJSON schema of the arguments:\n%s\n\nThe call's arguments:\n%s\n\nProblem: %v",
		t.Name(), t.Description(), t.schema, raw, problem)
	resp, err := model.Complete(ctx, llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user}},
	})
	if err != nil {
		return "", err
	}
	return extractObject(resp.Content), nil
}

// extractObject takes the JSON object out of a reply that may wrap it in
// a code fence or prose.
func extractObject(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "{"); i >= 0 {
		if j := strings.LastIndex(s, "}"); j > i {
			return s[i : j+1]
		}
	}
	return s
}
