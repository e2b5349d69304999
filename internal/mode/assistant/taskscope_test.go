package assistant

import (
	"encoding/json"
	"testing"

	"github.com/sova-ai/sova/internal/agent"
)

// A confirmed task's approval covers the acts it names: the same tool and
// no one beyond the named recipients, wherever the arguments put them.
func TestTaskScope(t *testing.T) {
	req := TaskRequest{Task: "пригласи Анну", Actions: []Act{
		{Tool: "office__create_event", Recipients: []string{"anna@example.com"}},
		{Tool: "send_email", Recipients: []string{"Anna@Example.com"}},
	}}
	tests := []struct {
		tool, args string
		allowed    bool
	}{
		{"office__create_event", `{"title":"Восток","attendees":["anna@example.com"]}`, true},
		{"office__create_event", `{"title":"Восток"}`, true},
		{"office__create_event", `{"title":"Восток","attendees":["anna@example.com","attacker@evil.example"]}`, false},
		{"office__create_event", `{"title":"Восток","attendees":[{"email":"attacker@evil.example"}]}`, false},
		{"office__send_email", `{"to":"anna@example.com","subject":"Восток","body":"пишите на boss@example.com"}`, true},
		{"office__send_email", `{"to":"attacker@evil.example","subject":"Summary"}`, false},
		{"office__send_email", `{"recipient_email":"attacker@evil.example","subject":"Summary"}`, false},
		{"office__send_email", `{"to":"anna@example.com","forward":{"target":"attacker@evil.example"}}`, false},
		{"office__delete_email", `{"id":"m1"}`, false},
		{"other__create_event", `{"title":"x"}`, false},
	}
	allow := scope(req)
	for _, tt := range tests {
		a := agent.NewAction("c", tt.tool, tt.tool, json.RawMessage(tt.args))
		if got := allow(a); got != tt.allowed {
			t.Errorf("%s %s: allowed %v, want %v (parties %v)", tt.tool, tt.args, got, tt.allowed, agent.Parties(a.Args))
		}
	}
	if scope(TaskRequest{Task: "только чтение"})(agent.NewAction("c", "office__create_event", "", json.RawMessage(`{}`))) {
		t.Error("a task without actions allowed a change")
	}
}
