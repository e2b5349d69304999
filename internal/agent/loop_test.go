package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

type echoArgs struct {
	URLs agent.StringList `json:"urls"`
}

// echoTools are an echo of the URLs given and a tool that ends the loop.
func echoTools() []agent.Tool {
	return []agent.Tool{
		agent.NewTool("echo", "Echoes.", func(_ context.Context, a echoArgs) (agent.Output, error) {
			return agent.Text(strings.Join(a.URLs, ",")), nil
		}),
		agent.NewTool("stop", "Stops.", func(context.Context, struct{}) (agent.Output, error) {
			return agent.Output{Text: "stopped", Stop: true}, nil
		}),
	}
}

// TestLoop is the ReAct loop as deep_research's agents and supervisor run
// it: no repair, calls in order, tools at every step, idle replies nudged.
func TestLoop(t *testing.T) {
	call := func(name, args string) llmtest.Reply {
		return llmtest.Calls(llm.ToolCall{Name: name, Arguments: args})
	}
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		maxSteps int
		maxIdle  int
		end      string
		steps    int
		// results the model saw, in order
		results []string
	}{
		{
			name:     "tool then stop tool",
			replies:  []llmtest.Reply{call("echo", `{"urls":["a","b"]}`), call("stop", `{}`)},
			maxSteps: 5, maxIdle: 1, end: agent.EndTool, steps: 2,
			results: []string{"a,b", "stopped"},
		},
		{
			name:     "a single string where a list is expected",
			replies:  []llmtest.Reply{call("echo", `{"urls":"only"}`), call("stop", ``)},
			maxSteps: 5, maxIdle: 1, end: agent.EndTool, steps: 2,
			results: []string{"only", "stopped"},
		},
		{
			name:     "unknown tool and broken JSON are told to the model",
			replies:  []llmtest.Reply{call("nope", `{}`), call("echo", `{"urls":[}`), call("stop", `{}`)},
			maxSteps: 5, maxIdle: 1, end: agent.EndTool, steps: 3,
			results: []string{`there is no tool "nope"`, "not valid JSON", "stopped"},
		},
		{
			name:     "step limit",
			replies:  []llmtest.Reply{call("echo", `{"urls":["1"]}`), call("echo", `{"urls":["2"]}`)},
			maxSteps: 2, maxIdle: 1, end: agent.EndSteps, steps: 2,
			results: []string{"1", "2"},
		},
		{
			name:     "idle twice ends after a nudge",
			replies:  []llmtest.Reply{llmtest.Text("thinking"), llmtest.Text("still thinking")},
			maxSteps: 10, maxIdle: 2, end: agent.EndAnswer, steps: 2,
		},
		{
			name:     "idle once, then back to tools",
			replies:  []llmtest.Reply{llmtest.Text("hm"), call("stop", `{}`)},
			maxSteps: 10, maxIdle: 2, end: agent.EndTool, steps: 2,
			results: []string{"stopped"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(tt.replies...)
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1, BackoffBase: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			res, err := agent.Run(context.Background(), agent.Config{
				Model: c, NoRepair: true, Concurrency: 1, ToolChoice: "auto", PrepareStep: agent.Policies(),
				MaxSteps: tt.maxSteps, MaxIdle: tt.maxIdle, Nudge: "use a tool", Tools: echoTools(),
			}, []llm.Message{{Role: llm.RoleSystem, Content: "s"}, {Role: llm.RoleUser, Content: "u"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.End != tt.end || len(res.Steps) != tt.steps {
				t.Errorf("end %q after %d steps, want %q after %d", res.End, len(res.Steps), tt.end, tt.steps)
			}
			var got []string
			for _, m := range res.Messages {
				if m.Role == llm.RoleTool {
					got = append(got, m.Content)
				}
			}
			if len(got) != len(tt.results) {
				t.Fatalf("tool results %q, want %d", got, len(tt.results))
			}
			for i, want := range tt.results {
				if !strings.Contains(got[i], want) {
					t.Errorf("result %d = %q, want it to contain %q", i, got[i], want)
				}
			}
			if tt.end == agent.EndAnswer && tt.maxIdle > 1 {
				if last := srv.Last(); last.LastUser() != "use a tool" {
					t.Errorf("the nudge was not sent; last user message %q", last.LastUser())
				}
			}
			if srv.Count() != tt.steps {
				t.Errorf("%d model calls, want %d", srv.Count(), tt.steps)
			}
			for _, r := range srv.Requests() {
				if r.ToolChoice != "auto" {
					t.Errorf("tool_choice %q, want auto at every step", r.ToolChoice)
				}
			}
		})
	}
}

// TestStepPolicies: the policy decides, step by step, which tools are
// offered and whether the model may use them (seed 000 §9.3).
func TestStepPolicies(t *testing.T) {
	always := func(r *llmtest.Request) llmtest.Reply {
		if r.ToolChoice == "none" || len(r.Tools) == 0 {
			return llmtest.Text("answer")
		}
		args := `{"urls":["x"]}`
		if r.Tools[0].Name == "stop" {
			args = `{}`
		}
		return llmtest.Calls(call("c", r.Tools[0].Name, args))
	}
	tests := []struct {
		name   string
		policy agent.PrepareStep
		// per request: the tools offered and the tool choice
		want []string
	}{
		{"default: the last step answers", nil, []string{"echo,stop|", "echo,stop|", "echo,stop|none"}},
		{"one tool round then the answer", agent.Policies(agent.OneToolRound, agent.LastStepAnswers), []string{"echo,stop|", "echo,stop|none"}},
		{"only some tools", agent.Policies(agent.OnlyTools("stop", "unknown")), []string{"stop|"}},
		{"no tools at all", agent.OnlyTools(), []string{"|"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Handle(always)
			out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: echoTools(), MaxSteps: 3, PrepareStep: tt.policy},
				[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range srv.Requests() {
				var names []string
				for _, tool := range r.Tools {
					names = append(names, tool.Name)
				}
				got = append(got, strings.Join(names, ",")+"|"+r.ToolChoice)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("requests %q, want %q", got, tt.want)
			}
			if last := out.Steps[len(out.Steps)-1]; len(last.Calls) > 0 && out.End != agent.EndTool {
				t.Errorf("the run ended on a step with calls: %+v (end %s)", last, out.End)
			}
		})
	}
}

func TestPolicyAddsMessagesAndCanEndTheRun(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply { return llmtest.Calls(call("c", "echo", `{"urls":["x"]}`)) })
	boom := errors.New("cannot reflect")
	policy := func(_ context.Context, p *agent.StepPlan) error {
		switch p.Step {
		case 2:
			p.Messages = append(p.Messages, llm.Message{Role: llm.RoleUser, Content: "reflection"})
		case 4:
			return boom
		}
		return nil
	}
	out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: echoTools(), MaxSteps: 5, PrepareStep: policy},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if !errors.Is(err, boom) || len(out.Steps) != 3 {
		t.Fatalf("err = %v after %d steps, want the policy's error after 3", err, len(out.Steps))
	}
	// The message added at step 2 stays in the conversation.
	for i, r := range srv.Requests() {
		has := slices.ContainsFunc(r.Messages, func(m llm.Message) bool { return m.Content == "reflection" })
		if has != (i >= 1) {
			t.Errorf("request %d: reflection present %v", i+1, has)
		}
	}
}

// A fatal tool error ends the run at once: later calls of the step do not
// run when calls run in order, and the model is not asked again.
func TestFatalToolErrorEndsTheRun(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Calls(call("a", "write", `{}`), call("b", "echo", `{"urls":["x"]}`)), llmtest.Text("never"))
	var mu sync.Mutex
	var ran []string
	disk := errors.New("disk full")
	tools := append(echoTools(), agent.NewTool("write", "Writes.", func(context.Context, struct{}) (agent.Output, error) {
		mu.Lock()
		ran = append(ran, "write")
		mu.Unlock()
		return agent.Output{}, agent.Fatal(disk)
	}))
	var results []agent.Result
	out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: tools, Concurrency: 1,
		OnToolResult: func(r agent.Result) { results = append(results, r) }},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if !errors.Is(err, disk) || !agent.IsFatal(err) {
		t.Fatalf("err = %v, want the fatal disk error", err)
	}
	if srv.Count() != 1 || len(results) != 1 || results[0].Name != "write" || len(out.Steps) != 1 {
		t.Errorf("%d model calls, results %+v", srv.Count(), results)
	}
	// A tool error that is not fatal goes to the model.
	if agent.IsFatal(errors.New("x")) || agent.Fatal(nil) != nil {
		t.Error("IsFatal / Fatal(nil)")
	}
}

// TestCallsInOrder: with Concurrency 1 the calls of a step run one after
// another in the model's order; otherwise at once.
func TestCallsInOrder(t *testing.T) {
	for _, conc := range []int{1, 0, 2} {
		srv := llmtest.New(t)
		srv.Enqueue(llmtest.Calls(call("a", "slow", `{"urls":["1"]}`), call("b", "slow", `{"urls":["2"]}`), call("c", "slow", `{"urls":["3"]}`)), llmtest.Text("ok"))
		var mu sync.Mutex
		var order []string
		inFlight, peak := 0, 0
		slow := agent.NewTool("slow", "Slow.", func(_ context.Context, a echoArgs) (agent.Output, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			inFlight--
			order = append(order, a.URLs[0])
			mu.Unlock()
			return agent.Text(a.URLs[0]), nil
		})
		out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{slow}, Concurrency: conc},
			[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
		if err != nil {
			t.Fatal(err)
		}
		wantPeak := map[int]int{1: 1, 0: 3, 2: 2}[conc]
		if peak != wantPeak {
			t.Errorf("concurrency %d: %d calls at once, want %d", conc, peak, wantPeak)
		}
		if conc == 1 && !slices.Equal(order, []string{"1", "2", "3"}) {
			t.Errorf("calls ran in order %v", order)
		}
		if res := out.Results(); len(res) != 3 || res[0].Output != "1" || res[2].Output != "3" {
			t.Errorf("results not in call order: %+v", res)
		}
	}
}

type queryArgs struct {
	Query string   `json:"query" jsonschema:"what to look for"`
	Tags  []string `json:"tags,omitempty"`
}

func TestNewTool(t *testing.T) {
	tool := agent.NewTool("find", "Finds.", func(_ context.Context, a queryArgs) (agent.Output, error) {
		if a.Query == "fail" {
			return agent.Output{}, errors.New("nothing")
		}
		return agent.Output{Text: "found " + a.Query, Summary: "1 result", Data: json.RawMessage(`{"n":1}`)}, nil
	}, agent.WithTitle(func(a queryArgs) string { return "Finding “" + a.Query + "”" }),
		agent.WithSchema(func(s *jsonschema.Schema) { s.Properties["query"].MaxLength = new(int(20)) }))

	s := tool.Schema()
	if s.Type != "object" || !slices.Equal(s.Required, []string{"query"}) || s.Properties["query"].Description != "what to look for" ||
		!slices.Contains(s.Properties["tags"].Types, "array") || *s.Properties["query"].MaxLength != 20 {
		b, _ := json.Marshal(s)
		t.Errorf("schema = %s", b)
	}
	if got := tool.(agent.Titler).Title(json.RawMessage(`{"query":"cats"}`)); got != "Finding “cats”" {
		t.Errorf("title = %q", got)
	}
	text, err := tool.Call(t.Context(), json.RawMessage(`{"query":"cats"}`))
	if err != nil || text != "found cats" {
		t.Errorf("Call = %q, %v", text, err)
	}
	if _, err := tool.Call(t.Context(), json.RawMessage(`{"query":5}`)); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("bad arguments: %v", err)
	}

	// In a run, the title, summary and data reach the events; a failure
	// shows as such.
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Calls(call("c1", "find", `{"query":"cats"}`), call("c2", "find", `{"query":"fail"}`), call("c3", "find", `{"query":"x","extra":1}`)), llmtest.Text("done"))
	var rec eventtest.Recorder
	if _, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{tool}, Sink: &rec, NoRepair: true, Concurrency: 1},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}}); err != nil {
		t.Fatal(err)
	}
	calls, results := rec.Filter(event.TypeToolCall), rec.Filter(event.TypeToolResult)
	if len(calls) != 3 || len(results) != 3 {
		t.Fatalf("%d call events, %d result events", len(calls), len(results))
	}
	if c := calls[0].ToolCall; c.ID != "s1-c1" || c.Name != "find" || c.Title != "Finding “cats”" || string(c.Input) != `{"query":"cats"}` {
		t.Errorf("call event %+v", c)
	}
	if r := results[0].ToolResult; r.ID != "s1-c1" || r.Text != "1 result" || string(r.Output) != `{"n":1}` || r.Error != "" {
		t.Errorf("result event %+v", r)
	}
	if r := results[1].ToolResult; r.Error != "nothing" || r.Text != "Failed: nothing" {
		t.Errorf("failed result event %+v", r)
	}
	// An argument the schema does not know is left out, and the model
	// told so, rather than the call refused.
	if c, r := calls[2].ToolCall, results[2].ToolResult; string(c.Input) != `{"query":"x"}` || r.Error != "" {
		t.Errorf("call %+v, result %+v", c, r)
	}
	if m := srv.Last().Messages; !strings.Contains(m[len(m)-1].Content, `Note: the argument "extra" is not a parameter of find`) {
		t.Errorf("the model was not told of the argument left out: %q", m[len(m)-1].Content)
	}
}

func TestToolNotOfferedAtThisStep(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Calls(call("a", "echo", `{"urls":["x"]}`)), llmtest.Text("ok"))
	out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: echoTools(), PrepareStep: agent.OnlyTools("stop")},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Results(); len(res) != 1 || !strings.Contains(res[0].Error, `"echo" is not offered at this step; the tools are: stop`) {
		t.Errorf("results = %+v", res)
	}
}
