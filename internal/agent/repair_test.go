package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

type chartArgs struct {
	Symbols  []string `json:"symbols"`
	Range    string   `json:"range,omitempty"`
	Interval string   `json:"interval,omitempty"`
	Points   int      `json:"points,omitempty"`
}

// chartTool is a tool with closed sets (enums) among its optional
// arguments, and a mender of its own for "month".
func chartTool(got *[]chartArgs, mu *sync.Mutex) agent.Tool {
	return agent.NewTool("chart", "Draws a chart.", func(_ context.Context, a chartArgs) (agent.Output, error) {
		mu.Lock()
		*got = append(*got, a)
		mu.Unlock()
		return agent.Text("drawn " + strings.Join(a.Symbols, ",") + " over " + a.Range), nil
	}, agent.WithSchema(func(s *jsonschema.Schema) {
		s.Properties["range"].Enum = []any{"1d", "5d", "1mo", "1y"}
		s.Properties["interval"].Enum = []any{"1d", "1wk"}
	}), agent.WithArgFix(func(args map[string]any) {
		if args["range"] == "month" {
			args["range"] = "1mo"
		}
	}))
}

// TestArgumentsMendedLocally: what a small model gets wrong in its
// arguments is mended without another model call, and an invalid
// optional argument is left out (the model told) instead of failing the
// call.
func TestArgumentsMendedLocally(t *testing.T) {
	tests := []struct {
		name string
		args string
		want chartArgs
		note string // in the tool message the model reads
	}{
		{name: "code fence", args: "```json\n{\"symbols\":[\"AAPL\"],\"range\":\"1y\"}\n```", want: chartArgs{Symbols: []string{"AAPL"}, Range: "1y"}},
		{name: "cut off", args: `{"symbols":["AAPL","MSFT"],"range":"5d","interv`, want: chartArgs{Symbols: []string{"AAPL", "MSFT"}, Range: "5d"}},
		{name: "trailing comma, single quotes", args: `{'symbols': ['AAPL'], 'range': '1d',}`, want: chartArgs{Symbols: []string{"AAPL"}, Range: "1d"}},
		{name: "encoded twice", args: `"{\"symbols\":[\"AAPL\"]}"`, want: chartArgs{Symbols: []string{"AAPL"}}},
		{name: "one symbol for a list, number as text", args: `{"symbols":"AAPL","points":"30"}`, want: chartArgs{Symbols: []string{"AAPL"}, Points: 30}},
		{name: "enum spelt loosely", args: `{"symbols":["AAPL"],"range":"1MO","interval":"1 WK"}`, want: chartArgs{Symbols: []string{"AAPL"}, Range: "1mo", Interval: "1wk"}},
		{name: "tool's own mender", args: `{"symbols":["AAPL"],"range":"month"}`, want: chartArgs{Symbols: []string{"AAPL"}, Range: "1mo"}},
		{name: "invalid optional dropped", args: `{"symbols":["AAPL"],"range":"1y","interval":"aapl month"}`, want: chartArgs{Symbols: []string{"AAPL"}, Range: "1y"},
			note: `Note: the optional argument "interval" had an invalid value ("aapl month"`},
		{name: "unknown argument dropped", args: `{"symbols":["AAPL"],"colour":"red"}`, want: chartArgs{Symbols: []string{"AAPL"}},
			note: `Note: the argument "colour" is not a parameter of chart`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				if strings.Contains(r.System(), "fix malformed tool calls") {
					t.Errorf("the repair model was asked for %s", tc.args)
					return llmtest.Text("{}")
				}
				if r.Index == 0 {
					return llmtest.Calls(call("c1", "chart", tc.args))
				}
				return llmtest.Text("done")
			})
			var (
				mu  sync.Mutex
				got []chartArgs
			)
			out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{chartTool(&got, &mu)}},
				[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("tool ran %d times; results %+v", len(got), out.Results())
			}
			g := got[0]
			if strings.Join(g.Symbols, ",") != strings.Join(tc.want.Symbols, ",") || g.Range != tc.want.Range || g.Interval != tc.want.Interval || g.Points != tc.want.Points {
				t.Errorf("tool ran with %+v, want %+v", g, tc.want)
			}
			if c := out.Calls()[0]; !c.Repaired || c.RawArgs != tc.args {
				t.Errorf("call %+v: not marked repaired", c)
			}
			msgs := srv.Last().Messages
			toolMsg := msgs[len(msgs)-1].Content
			if tc.note != "" && !strings.HasPrefix(toolMsg, tc.note) {
				t.Errorf("tool message %q, want it to start with %q", toolMsg, tc.note)
			}
			if tc.note == "" && strings.HasPrefix(toolMsg, "Note:") {
				t.Errorf("tool message %q has a note", toolMsg)
			}
		})
	}
}

// TestRepairAsksWithTheToolsSchema: arguments that cannot be mended
// locally (a required argument missing) are asked for again with the
// tool's schema as the reply's json_schema; an endpoint that refuses
// json_schema is asked in plain text.
func TestRepairAsksWithTheToolsSchema(t *testing.T) {
	for _, refuses := range []bool{false, true} {
		t.Run(map[bool]string{false: "json_schema", true: "endpoint refuses json_schema"}[refuses], func(t *testing.T) {
			srv := llmtest.New(t)
			var (
				mu      sync.Mutex
				formats []string
			)
			srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				if strings.Contains(r.System(), "fix malformed tool calls") {
					mu.Lock()
					formats = append(formats, r.Format()+":"+r.SchemaName())
					mu.Unlock()
					if refuses && r.Format() != "" {
						// vLLM's and llama.cpp's answer to a format they do not take.
						return llmtest.Fail(400, "response_format json_schema is not supported by this server")
					}
					if !refuses {
						if props, _ := r.Schema()["properties"].(map[string]any); props["symbols"] == nil {
							t.Errorf("repair schema %v lacks the tool's properties", r.Schema())
						}
					}
					return llmtest.Text(`Here: {"symbols":["TSLA"],"range":"5d"}`)
				}
				if r.Index == 0 {
					return llmtest.Calls(call("c1", "chart", `{"range":"5d"}`))
				}
				return llmtest.Text("done")
			})
			var got []chartArgs
			out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{chartTool(&got, &mu)}},
				[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Symbols[0] != "TSLA" {
				t.Fatalf("tool ran with %+v; results %+v", got, out.Results())
			}
			want := []string{"json_schema:chart_arguments"}
			if refuses {
				want = append(want, ":")
			}
			if strings.Join(formats, " ") != strings.Join(want, " ") {
				t.Errorf("repair requests %v, want %v", formats, want)
			}
		})
	}
}
