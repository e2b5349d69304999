package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// snapshot is a checkpoint as a mode keeps it: through JSON.
type snapshot struct {
	Steps []agent.Step  `json:"steps"`
	Msgs  []llm.Message `json:"msgs"`
	raw   json.RawMessage
}

// A run continued from any of its checkpoints ends as the uninterrupted
// run does, asking the model only for the replies the checkpoint does not
// hold and running only the calls that have no result in it; the tools
// see the same call (ID and step) as they would have.
func TestContinueFromCheckpoint(t *testing.T) {
	// The model: one call, then two calls in one step, then the answer.
	script := func(r *llmtest.Request) llmtest.Reply {
		results := 0
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				results++
			}
		}
		switch results {
		case 0:
			return llmtest.Calls(call("a", "echo", `{"urls":["a"]}`))
		case 1:
			return llmtest.Calls(call("b", "echo", `{"urls":["b"]}`), call("c", "echo", `{"urls":["c"]}`))
		}
		return llmtest.Text("done")
	}
	for _, conc := range []int{1, 0} {
		t.Run(fmt.Sprintf("concurrency %d", conc), func(t *testing.T) {
			var mu sync.Mutex
			ran := map[string]int{}     // url → runs
			seen := map[string]string{} // url → the call the tool saw
			tools := []agent.Tool{agent.NewTool("echo", "Echoes.", func(ctx context.Context, a echoArgs) (agent.Output, error) {
				c, ok := agent.CallOf(ctx)
				mu.Lock()
				defer mu.Unlock()
				ran[a.URLs[0]]++
				if ok {
					seen[a.URLs[0]] = agent.EventID(c.Step, c.ID)
				}
				return agent.Text("echo " + a.URLs[0]), nil
			})}
			question := []llm.Message{{Role: llm.RoleSystem, Content: "s"}, {Role: llm.RoleUser, Content: "u"}}
			run := func(done []agent.Step, msgs []llm.Message, keep *[]snapshot) (*agent.Outcome, int) {
				t.Helper()
				srv := llmtest.New(t)
				srv.Handle(script)
				cfg := agent.Config{Model: newClient(t, srv), NoRepair: true, Tools: tools, MaxSteps: 5, Concurrency: conc, Done: done}
				if keep != nil {
					cfg.Checkpoint = func(_ context.Context, steps []agent.Step, msgs []llm.Message) error {
						raw, err := json.Marshal(snapshot{Steps: steps, Msgs: msgs})
						if err != nil {
							return err
						}
						var s snapshot
						if err := json.Unmarshal(raw, &s); err != nil {
							return err
						}
						s.raw = raw
						*keep = append(*keep, s)
						return nil
					}
				}
				out, err := agent.Run(t.Context(), cfg, msgs)
				if err != nil {
					t.Fatal(err)
				}
				return out, srv.Count()
			}

			var snaps []snapshot
			whole, calls := run(nil, question, &snaps)
			wantSeen := seen
			seen = map[string]string{}
			if want := map[string]string{"a": "s1-a", "b": "s2-b", "c": "s2-c"}; !reflect.DeepEqual(wantSeen, want) {
				t.Fatalf("the tools saw the calls %v, want %v", wantSeen, want)
			}
			if whole.End != agent.EndAnswer || len(whole.Steps) != 3 || calls != 3 {
				t.Fatalf("uninterrupted: end %s, %d steps, %d model calls", whole.End, len(whole.Steps), calls)
			}
			// One after each reply with calls, one after each result (or
			// after each step's results when they run in parallel).
			if want := map[int]int{1: 5, 0: 4}[conc]; len(snaps) != want {
				t.Fatalf("%d checkpoints, want %d", len(snaps), want)
			}
			for i, s := range snaps {
				for k := range ran {
					ran[k] = 0
				}
				held := map[string]bool{}
				for _, st := range s.Steps {
					for _, r := range st.Results {
						var a echoArgs
						for _, c := range st.Calls {
							if c.ID == r.CallID {
								_ = json.Unmarshal(c.Args, &a)
							}
						}
						held[a.URLs[0]] = true
					}
				}
				out, n := run(s.Steps, s.Msgs, nil)
				if n != calls-len(s.Steps) {
					t.Errorf("checkpoint %d: %d model calls after it, want %d", i, n, calls-len(s.Steps))
				}
				for _, u := range []string{"a", "b", "c"} {
					if want := map[bool]int{true: 0, false: 1}[held[u]]; ran[u] != want {
						t.Errorf("checkpoint %d: %s ran %d times, want %d", i, u, ran[u], want)
					}
					if !held[u] && seen[u] != wantSeen[u] {
						t.Errorf("checkpoint %d: the tool saw call %q for %s, want %q", i, seen[u], u, wantSeen[u])
					}
				}
				if !reflect.DeepEqual(out.Messages, whole.Messages) || out.End != whole.End || len(out.Steps) != len(whole.Steps) || out.Text != whole.Text {
					t.Errorf("checkpoint %d (%s): continued run differs:\n%+v\nwant\n%+v", i, s.raw, out.Messages, whole.Messages)
				}
				for j := range out.Steps {
					if len(out.Steps[j].Results) != len(whole.Steps[j].Results) {
						t.Errorf("checkpoint %d: step %d has %d results, want %d", i, j+1, len(out.Steps[j].Results), len(whole.Steps[j].Results))
					}
				}
			}
		})
	}
}
