// Package agent is the tool-calling loop every agent of Sova runs on: the
// model is offered tools, the calls it makes are checked against their
// JSON schemas (malformed arguments are mended locally, then by asking a
// model to fix them, seed 000 §8.1; repair.go), run in parallel, and their results go back to the
// model, step after step, until it answers, a tool ends the loop, or the
// step limit is reached. Before every step a step policy (seed 000 §9.3's
// prepareStep) may narrow the tools offered, forbid tool use, or add to
// the conversation; by default the last step allows no tools, so a run
// always ends with an answer.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
)

// DefaultMaxSteps bounds a run when Config.MaxSteps is not set.
const DefaultMaxSteps = 10

// Config configures a run.
type Config struct {
	Model llm.Model
	// Repair fixes tool calls whose arguments are not valid JSON or do not
	// fit the tool's schema; nil uses Model.
	Repair llm.Model
	// NoRepair reports arguments that cannot be mended locally (see
	// repair.go) to the model instead of asking a model to repair them.
	NoRepair bool
	Tools    []Tool
	// MaxSteps is the most model calls a run makes.
	MaxSteps    int
	Temperature *float64
	MaxTokens   int
	// ToolChoice is the tool_choice of every step unless the policy says
	// otherwise ("": the endpoint's default).
	ToolChoice string
	// PrepareStep is the step policy; nil is LastStepAnswers.
	PrepareStep PrepareStep
	// MaxIdle is how many replies without tool calls in a row end the run
	// (default 1: an answer ends it). Before that, Nudge is sent as the
	// person's message and the run goes on.
	MaxIdle int
	Nudge   string
	// Concurrency is how many calls of one step run at once: 0 all of
	// them, 1 one after another in the model's order.
	Concurrency int
	// ParallelToolCalls, when set, is sent with every step that offers
	// tools (false asks for one call per reply).
	ParallelToolCalls *bool

	// OnText receives the model's text as it streams, from every step;
	// when nil the model's replies are not streamed.
	OnText func(delta string)
	// OnToolCall is called when a call is about to run (its arguments
	// checked or repaired); OnToolResult when it has finished. Calls of
	// one step may run in parallel, so these may be called concurrently.
	OnToolCall   func(Call)
	OnToolResult func(Result)
	// Sink, when set, receives a tool-call event for every call and a
	// tool-result event for every result, with the tools' titles and
	// summaries (IDs "s<step>-<call id>", unique within the run).
	Sink event.Sink

	// Checkpoint, when set, is called whenever the run holds something
	// that cost money: after each model reply that calls tools, and after
	// each tool result (with Concurrency other than 1, after all the
	// step's results), with the steps so far (the last one unfinished
	// until its calls are) and the conversation. What it keeps continues
	// the run (Done). An error ends the run.
	Checkpoint func(ctx context.Context, steps []Step, msgs []llm.Message) error
	// Gate decides the calls of acting tools (Acting): they run only when
	// it allows them, and are held otherwise. Nil: no acting call runs.
	Gate *Gate

	// Done are the steps of an earlier execution of this run, restored
	// from a checkpoint; the messages given to Run are its conversation
	// as the checkpoint kept it. The loop numbers its steps after them,
	// and when the conversation ends with tool calls not all answered, it
	// runs the calls left before it asks the model again.
	Done []Step
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
	// Title says for people what the call does (Titler; the name
	// otherwise).
	Title string `json:"-"`
}

// Result is what a tool call returned.
type Result struct {
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// Output is the text the model was given.
	Output string `json:"output"`
	// Error is set when the tool failed or could not be called.
	Error string `json:"error,omitempty"`
	// Note tells the model what the loop changed in the call's arguments
	// to run it (an invalid optional argument left out); it comes before
	// Output in the model's tool message.
	Note string `json:"note,omitempty"`
	Step int    `json:"step"`
	// Summary and Data are how the result shows in the stream (Output's).
	Summary string          `json:"-"`
	Data    json.RawMessage `json:"-"`
	// Stop: the tool ended the loop.
	Stop bool `json:"-"`
}

// Step is one model call and the tools it called.
type Step struct {
	Text         string    `json:"text,omitempty"`
	Calls        []Call    `json:"toolCalls,omitempty"`
	Results      []Result  `json:"toolResults,omitempty"`
	FinishReason string    `json:"finishReason"`
	Usage        llm.Usage `json:"usage"`
}

// How a run ended.
const (
	EndAnswer = "answer" // the model replied without calling tools
	EndTool   = "tool"   // a tool ended the loop (Output.Stop)
	EndSteps  = "steps"  // the step limit was reached with tools still in use
)

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
	// End says how the run ended; StopTool names the tool that ended it.
	End      string
	StopTool string
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

// LastText is the text of the last step, trimmed.
func (o *Outcome) LastText() string {
	if len(o.Steps) == 0 {
		return ""
	}
	return strings.TrimSpace(o.Steps[len(o.Steps)-1].Text)
}

// tool is a Tool with its schema prepared.
type tool struct {
	Tool
	def      llm.Tool
	resolved *jsonschema.Resolved
	schema   string // for repair prompts
	args     *argSchema
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
	if cfg.NoRepair {
		cfg.Repair = nil
	}
	if cfg.PrepareStep == nil {
		cfg.PrepareStep = LastStepAnswers
	}
	cfg.MaxIdle = max(cfg.MaxIdle, 1)
	tools, names, err := prepareTools(cfg.Tools)
	if err != nil {
		return nil, err
	}
	msgs := append([]llm.Message(nil), messages...)
	out := &Outcome{End: EndSteps, Steps: slices.Clone(cfg.Done)}
	var text strings.Builder
	for _, st := range out.Steps {
		text.WriteString(st.Text)
		out.Usage = addUsage(out.Usage, st.Usage)
	}
	if len(out.Steps) > 0 {
		var stopped bool
		msgs, stopped, err = finishStep(ctx, cfg, tools, out, msgs)
		if err != nil || stopped {
			out.Text, out.Messages = text.String(), msgs
			return out, err
		}
	}
	idle := 0
	for step := len(out.Steps) + 1; step <= cfg.MaxSteps; step++ {
		plan := &StepPlan{Step: step, MaxSteps: cfg.MaxSteps, Steps: out.Steps, Messages: msgs,
			Tools: slices.Clone(names), ToolChoice: cfg.ToolChoice}
		if err := cfg.PrepareStep(ctx, plan); err != nil {
			out.Text, out.Messages = text.String(), msgs
			return out, err
		}
		msgs = plan.Messages
		offered := map[string]*tool{}
		var defs []llm.Tool
		for _, n := range names { // in the run's order
			if slices.Contains(plan.Tools, n) {
				offered[n] = tools[n]
				defs = append(defs, tools[n].def)
			}
		}
		req := llm.Request{Messages: msgs, Tools: defs, ToolChoice: plan.ToolChoice, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens,
			ParallelToolCalls: cfg.ParallelToolCalls}
		if len(defs) == 0 {
			req.ToolChoice = ""
		}
		var resp *llm.Response
		if cfg.OnText != nil {
			resp, err = cfg.Model.Stream(ctx, req, cfg.OnText)
		} else {
			resp, err = cfg.Model.Complete(ctx, req)
		}
		if err != nil {
			out.Text, out.Messages = text.String(), msgs
			return out, fmt.Errorf("step %d: %w", step, err)
		}
		text.WriteString(resp.Content)
		out.Usage = addUsage(out.Usage, resp.Usage)
		out.Model = resp.Model
		out.FinishReason = resp.FinishReason
		st := Step{Text: resp.Content, FinishReason: resp.FinishReason, Usage: resp.Usage}
		if len(resp.ToolCalls) == 0 || len(defs) == 0 || plan.ToolChoice == "none" {
			// An answer: calls the step did not allow are not run.
			out.Steps = append(out.Steps, st)
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content})
			if idle++; idle >= cfg.MaxIdle {
				out.End = EndAnswer
				break
			}
			// Not yet idle long enough to end: nudge the model back to
			// its tools (at the last step the run ends at the limit).
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: cfg.Nudge})
			continue
		}
		idle = 0
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		if cfg.Checkpoint != nil {
			if err := cfg.Checkpoint(ctx, append(slices.Clone(out.Steps), st), slices.Clone(msgs)); err != nil {
				out.Text, out.Messages = text.String(), msgs
				return out, err
			}
		}
		var fatal error
		st.Calls, st.Results, fatal = runCalls(ctx, cfg, tools, offered, resp.ToolCalls, step, stepCheckpoint(cfg, out.Steps, st, msgs))
		msgs = append(msgs, toolMessages(st.Results)...)
		out.Steps = append(out.Steps, st)
		if fatal == nil {
			fatal = ctx.Err() // results cut short by the end of ctx are not kept
		}
		if fatal == nil && cfg.Checkpoint != nil && cfg.Concurrency != 1 {
			fatal = cfg.Checkpoint(ctx, slices.Clone(out.Steps), slices.Clone(msgs))
		}
		if fatal != nil {
			out.Text, out.Messages = text.String(), msgs
			return out, fatal
		}
		if i := slices.IndexFunc(st.Results, func(r Result) bool { return r.Stop }); i >= 0 {
			out.End, out.StopTool = EndTool, st.Results[i].Name
			break
		}
	}
	out.Text = text.String()
	out.Messages = msgs
	return out, nil
}

// toolMessages are the messages that give the model the results.
func toolMessages(results []Result) []llm.Message {
	out := make([]llm.Message, 0, len(results))
	for _, r := range results {
		content := r.Output
		if r.Error != "" {
			content = "Error: " + r.Error
		}
		if r.Note != "" {
			content = "Note: " + r.Note + ".\n\n" + content
		}
		out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: r.CallID, Name: r.Name, Content: content})
	}
	return out
}

// stepCheckpoint is what runCalls calls after each result of a step whose
// calls run one at a time: the run's checkpoint with the step so far. Nil
// when there is nothing to call.
func stepCheckpoint(cfg Config, done []Step, st Step, msgs []llm.Message) func(context.Context, []Call, []Result) error {
	if cfg.Checkpoint == nil || cfg.Concurrency != 1 {
		return nil
	}
	return func(ctx context.Context, calls []Call, results []Result) error {
		part := st
		part.Calls = append(slices.Clone(st.Calls), calls...)
		part.Results = append(slices.Clone(st.Results), results...)
		m := append(slices.Clone(msgs), toolMessages(results)...)
		return cfg.Checkpoint(ctx, append(slices.Clone(done), part), m)
	}
}

// finishStep runs the calls of a restored run's last step that have no
// result yet (its checkpoint was taken while they ran), with every tool
// offered, and reports whether one of the step's tools ended the loop.
func finishStep(ctx context.Context, cfg Config, tools map[string]*tool, out *Outcome, msgs []llm.Message) ([]llm.Message, bool, error) {
	last := len(msgs) - 1
	for last >= 0 && msgs[last].Role == llm.RoleTool {
		last--
	}
	if last < 0 || msgs[last].Role != llm.RoleAssistant || len(msgs[last].ToolCalls) == 0 {
		return msgs, false, nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		answered[m.ToolCallID] = true
	}
	var left []llm.ToolCall
	for _, tc := range msgs[last].ToolCalls {
		if !answered[tc.ID] {
			left = append(left, tc)
		}
	}
	i := len(out.Steps) - 1
	st := out.Steps[i]
	if len(left) > 0 {
		calls, results, fatal := runCalls(ctx, cfg, tools, tools, left, i+1, stepCheckpoint(cfg, out.Steps[:i], st, msgs))
		st.Calls, st.Results = append(st.Calls, calls...), append(st.Results, results...)
		msgs = append(msgs, toolMessages(results)...)
		out.Steps[i] = st
		if fatal == nil {
			fatal = ctx.Err() // results cut short by the end of ctx are not kept
		}
		if fatal == nil && cfg.Checkpoint != nil && cfg.Concurrency != 1 {
			fatal = cfg.Checkpoint(ctx, slices.Clone(out.Steps), slices.Clone(msgs))
		}
		if fatal != nil {
			return msgs, false, fatal
		}
	}
	if j := slices.IndexFunc(st.Results, func(r Result) bool { return r.Stop }); j >= 0 {
		out.End, out.StopTool = EndTool, st.Results[j].Name
		return msgs, true, nil
	}
	return msgs, false, nil
}

func addUsage(a, b llm.Usage) llm.Usage {
	return llm.Usage{
		PromptTokens:     a.PromptTokens + b.PromptTokens,
		CompletionTokens: a.CompletionTokens + b.CompletionTokens,
		TotalTokens:      a.TotalTokens + b.TotalTokens,
	}
}

func prepareTools(in []Tool) (map[string]*tool, []string, error) {
	tools := make(map[string]*tool, len(in))
	names := make([]string, 0, len(in))
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
		tools[name] = &tool{Tool: t, def: def, resolved: resolved, schema: string(raw), args: newArgSchema(s, params)}
		names = append(names, name)
	}
	return tools, names, nil
}

// runCalls checks, repairs and runs one step's calls, in parallel up to
// cfg.Concurrency; the results are in call order. A Fatal error of a tool
// is returned; calls not yet started when it (or the end of ctx) comes
// are not run.
func runCalls(ctx context.Context, cfg Config, all, offered map[string]*tool, calls []llm.ToolCall, step int,
	checkpoint func(context.Context, []Call, []Result) error) ([]Call, []Result, error) {
	outCalls := make([]Call, len(calls))
	results := make([]Result, len(calls))
	var (
		mu    sync.Mutex
		fatal error
	)
	stopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return fatal != nil || ctx.Err() != nil
	}
	one := func(i int, tc llm.ToolCall) {
		c := Call{ID: tc.ID, Name: tc.Name, Step: step, Title: tc.Name}
		res := Result{CallID: tc.ID, Name: tc.Name, Step: step}
		t := offered[tc.Name]
		switch {
		case t == nil && all[tc.Name] != nil:
			c.RawArgs = tc.Arguments
			res.Error = fmt.Sprintf("the tool %q is not offered at this step; the tools are: %s", tc.Name, toolNames(offered))
		case t == nil:
			c.RawArgs = tc.Arguments
			res.Error = fmt.Sprintf("there is no tool %q (no tool named %q is offered); the tools are: %s", tc.Name, tc.Name, toolNames(offered))
		default:
			args, repaired, notes, err := checkArgs(ctx, cfg.Repair, t, tc.Arguments)
			c.Args, c.Repaired = args, repaired
			res.Note = strings.Join(notes, "; ")
			if repaired || err != nil {
				c.RawArgs = tc.Arguments
			}
			if err != nil {
				res.Error = err.Error()
			}
			if tt, ok := t.Tool.(Titler); ok && err == nil {
				c.Title = tt.Title(c.Args)
			}
		}
		if cfg.OnToolCall != nil {
			cfg.OnToolCall(c)
		}
		emitCall(cfg.Sink, c)
		if res.Error == "" && Acts(t.Tool) {
			// gate.go: an acting call runs only with the person's approval.
			if o, held := cfg.Gate.check(c); held {
				res.Output, res.Summary, res.Data, res.Stop = o.Text, o.Summary, o.Data, o.Stop
				if cfg.OnToolResult != nil {
					cfg.OnToolResult(res)
				}
				emitResult(cfg.Sink, res)
				outCalls[i], results[i] = c, res
				return
			}
		}
		if res.Error == "" {
			o, err := call(context.WithValue(ctx, callKey{}, c), t.Tool, c.Args)
			res.Output, res.Summary, res.Data, res.Stop = o.Text, o.Summary, o.Data, o.Stop
			if err != nil {
				res.Error = err.Error()
				if IsFatal(err) {
					mu.Lock()
					if fatal == nil {
						fatal = err
					}
					mu.Unlock()
				}
			}
		}
		if cfg.OnToolResult != nil {
			cfg.OnToolResult(res)
		}
		emitResult(cfg.Sink, res)
		outCalls[i], results[i] = c, res
	}
	if cfg.Concurrency == 1 {
		n := 0
		for i, tc := range calls {
			if stopped() {
				break
			}
			one(i, tc)
			n++
			if checkpoint != nil && fatal == nil && ctx.Err() == nil {
				if err := checkpoint(ctx, outCalls[:n], results[:n]); err != nil {
					fatal = err
				}
			}
		}
		return outCalls[:n], results[:n], fatal
	}
	var wg sync.WaitGroup
	var sem chan struct{}
	if cfg.Concurrency > 1 {
		sem = make(chan struct{}, cfg.Concurrency)
	}
	for i, tc := range calls {
		wg.Go(func() {
			if sem != nil {
				sem <- struct{}{}
				defer func() { <-sem }()
			}
			one(i, tc)
		})
	}
	wg.Wait()
	return outCalls, results, fatal
}

// call runs a tool, through Run when it has one.
func call(ctx context.Context, t Tool, args json.RawMessage) (Output, error) {
	if r, ok := t.(Runner); ok {
		return r.Run(ctx, args)
	}
	text, err := t.Call(ctx, args)
	return Output{Text: text}, err
}

type callKey struct{}

// CallOf is the call a tool runs for, from the context the loop gives it:
// its ID and step name the call for as long as the run lasts, also in a
// run continued from a checkpoint.
func CallOf(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}

// EventID makes a tool call's ID unique within a run: some servers
// number calls per response (call_0, call_1, …).
func EventID(step int, id string) string {
	return fmt.Sprintf("s%d-%s", step, id)
}

func emitCall(sink event.Sink, c Call) {
	if sink == nil {
		return
	}
	sink.Emit(event.Event{Type: event.TypeToolCall, Time: time.Now(), ToolCall: &event.ToolCall{
		ID: EventID(c.Step, c.ID), Name: c.Name, Input: c.Args, Title: c.Title,
	}})
}

func emitResult(sink event.Sink, r Result) {
	if sink == nil {
		return
	}
	text, output := r.Summary, r.Data
	if r.Error != "" {
		text = "Failed: " + r.Error
	}
	if output == nil && json.Valid([]byte(r.Output)) {
		output = json.RawMessage(r.Output)
	}
	sink.Emit(event.Event{Type: event.TypeToolResult, Time: time.Now(), ToolResult: &event.ToolResult{
		ID: EventID(r.Step, r.CallID), Name: r.Name, Text: text, Output: output, Error: r.Error,
	}})
}

func toolNames(tools map[string]*tool) string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
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
