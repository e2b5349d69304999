package group

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/memory"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/store/storetest"
	"github.com/sova-ai/sova/internal/tools"
)

// signedIn is a run's context for the test's user, an account.
func signedIn(t *testing.T) context.Context {
	return sova.WithUser(t.Context(), sova.User{ID: "u", Name: "u", Role: sova.RoleFree})
}

// An anonymous visitor keeps no memories: visitors are told apart only by
// their address, so a memory kept for one would be read by everyone
// behind it. The model that tries to save or search is told to sign in.
func TestMemoryGroupRefusesAnonymous(t *testing.T) {
	e := newTestEnv(t)
	mem := &memory.Builtin{Store: storetest.SQLite(t)}
	e.cfg.Providers.Memory = mem
	if _, err := mem.Add(t.Context(), "u", "My neighbour's door code is 4512"); err != nil {
		t.Fatal(err)
	}
	e.model.Enqueue(
		llmtest.Calls(llm.ToolCall{ID: "a", Name: "add_memory", Arguments: `{"memory":"My sister Olga lives in Novosibirsk"}`},
			llm.ToolCall{ID: "b", Name: "search_memories", Arguments: `{"query":"door code"}`}),
		llmtest.Text("I cannot keep memories for you."),
	)
	ctx := sova.WithUser(t.Context(), sova.User{ID: "u", Role: sova.RoleAnonymous})
	var rec eventtest.Recorder
	if _, err := e.mode(t, "memory").Run(ctx, input("Remember that my sister Olga lives in Novosibirsk; what is the door code?"), &rec); err != nil {
		t.Fatal(err)
	}
	if list, _ := mem.List(t.Context(), "u", 0); len(list) != 1 {
		t.Fatalf("stored memories %+v", list)
	}
	reqs := e.model.Requests()
	last := reqs[len(reqs)-1]
	var seen string
	for _, m := range last.Messages {
		if m.Role == llm.RoleTool {
			seen += m.Content + "\n"
		}
	}
	if strings.Contains(seen, "4512") || strings.Count(seen, "sign in") < 2 {
		t.Errorf("the model read:\n%s", seen)
	}
}

// The memory group: one round saves a memory, a later run finds it with
// search_memories and answers from it; the prompt has no citation rules.
func TestMemoryGroup(t *testing.T) {
	e := newTestEnv(t)
	mem := &memory.Builtin{Store: storetest.SQLite(t)}
	e.cfg.Providers.Memory = mem
	e.model.Enqueue(
		llmtest.Calls(llm.ToolCall{ID: "a", Name: "add_memory", Arguments: `{"memory":"My sister Olga lives in Novosibirsk"}`}),
		llmtest.Text("Noted: your sister Olga lives in Novosibirsk."),
		llmtest.Calls(llm.ToolCall{ID: "b", Name: "search_memories", Arguments: `{"query":"sister lives"}`}),
		llmtest.Text("Your sister Olga lives in Novosibirsk."),
	)
	var rec eventtest.Recorder
	if _, err := e.mode(t, "memory").Run(signedIn(t), input("Remember that my sister Olga lives in Novosibirsk"), &rec); err != nil {
		t.Fatal(err)
	}
	if list, _ := mem.List(t.Context(), "u", 0); len(list) != 1 || list[0].Content != "My sister Olga lives in Novosibirsk" {
		t.Fatalf("stored memories %+v", list)
	}
	// Another person's memory is never found.
	if _, err := mem.Add(t.Context(), "other", "My sister lives in Paris"); err != nil {
		t.Fatal(err)
	}
	rec = eventtest.Recorder{}
	res, err := e.mode(t, "memory").Run(signedIn(t), input("Where does my sister live?"), &rec)
	if err != nil {
		t.Fatal(err)
	}
	req := e.model.Requests()[2]
	if !req.HasTool("search_memories") || !req.HasTool("add_memory") || !req.HasTool("datetime") ||
		strings.Contains(req.System(), "Cite each factual sentence") || !strings.Contains(req.System(), "call search_memories first") {
		t.Errorf("request: tools %v\n%s", req.Tools, req.System())
	}
	results := rec.Filter(event.TypeToolResult)
	if len(results) != 1 {
		t.Fatalf("%d tool results", len(results))
	}
	var out tools.MemoryResult
	if err := json.Unmarshal(results[0].ToolResult.Output, &out); err != nil {
		t.Fatalf("output %s: %v", results[0].ToolResult.Output, err)
	}
	if len(out.Memories) != 1 || out.Memories[0].Content != "My sister Olga lives in Novosibirsk" || out.Memories[0].Score <= 0 ||
		out.Memories[0].Timestamp == "" || out.Provider != "built-in" {
		t.Errorf("search_memories output %+v", out)
	}
	if !strings.Contains(e.model.Last().Messages[len(e.model.Last().Messages)-1].Content, "Novosibirsk") {
		t.Errorf("the model did not read the memory: %+v", e.model.Last().Messages)
	}
	if res.Text != "Your sister Olga lives in Novosibirsk." {
		t.Errorf("answer %q", res.Text)
	}
}

type connectorList []sova.Connector

func (l connectorList) ListConnectors(_ context.Context, userID string) ([]sova.Connector, error) {
	var out []sova.Connector
	for _, c := range l {
		if c.UserID == userID {
			out = append(out, c)
		}
	}
	return out, nil
}

// The connectors group searches only the connected spaces and cites
// their passages.
func TestConnectorsGroup(t *testing.T) {
	svc, sp := sovatest.Projects(t)
	other, err := svc.CreateSpace(t.Context(), "local", "Unconnected", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, connected := range []bool{true, false} {
		e := newTestEnv(t)
		e.cfg.Providers.Documents = svc
		if connected {
			e.cfg.Providers.Connectors = connectorList{{UserID: "local", SpaceID: sp.ID, Kind: sova.ConnectorFolder}}
		} else {
			e.cfg.Providers.Connectors = connectorList{{UserID: "local", SpaceID: other.ID, Kind: sova.ConnectorFolder}}
		}
		e.model.Enqueue(
			llmtest.Calls(llm.ToolCall{ID: "a", Name: "connectors_search", Arguments: `{"query":"Vostok budget"}`}),
			llmtest.Text("The Vostok budget is five million roubles [1]."),
		)
		in := input("What is the Vostok budget?")
		in.UserID = "local"
		var rec eventtest.Recorder
		res, err := e.mode(t, "connectors").Run(t.Context(), in, &rec)
		if err != nil {
			t.Fatal(err)
		}
		results := rec.Filter(event.TypeToolResult)
		if len(results) != 1 {
			t.Fatalf("%d tool results", len(results))
		}
		var out tools.ResultList
		_ = json.Unmarshal(results[0].ToolResult.Output, &out)
		if !connected {
			if len(out.Results) != 0 || len(res.Sources) != 0 {
				t.Errorf("unconnected space searched: %+v", out)
			}
			continue
		}
		if len(out.Results) == 0 || out.Results[0].Document != "vostok.md" || out.Results[0].Number != 1 {
			t.Fatalf("connectors_search output %+v", out)
		}
		if len(res.Sources) != 1 || !strings.HasPrefix(res.Sources[0].URL, "sova://") || res.Text != "The Vostok budget is five million roubles [1]." {
			t.Errorf("answer %q sources %+v", res.Text, res.Sources)
		}
	}
}
