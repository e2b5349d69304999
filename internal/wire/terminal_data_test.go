package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/event"
)

func TestTerminalResearchData(t *testing.T) {
	data := func(name, value string) event.Event {
		return event.Event{Type: event.TypeData, Time: t0(), Data: &event.Data{Name: name, ID: "x", Value: json.RawMessage(value)}}
	}
	tests := []struct {
		name  string
		event event.Event
		want  string
	}{
		{"plan", data("research_plan", `{"goal":"Explain the 1930s economy","revision":0,"themes":[{"title":"Banking","tasks":[{"title":"Bank holiday"},{"title":"Deposits"}]}]}`),
			"→ Research plan: Explain the 1930s economy\n  ▸ Banking\n    · Bank holiday\n    · Deposits\n"},
		{"revised plan", data("research_plan", `{"goal":"G","revision":1,"themes":[]}`),
			"→ Revised research plan: G\n"},
		{"agent working", data("research_agent", `{"id":"agent_1","number":1,"specialisation":"Historical Analyst","state":"working","currentTodo":"Bank holiday","todos":[{"id":1,"title":"Bank holiday","status":"in_progress"},{"id":2,"title":"B","status":"pending"}],"notes":0}`),
			"  ◆ agent_1 · Historical Analyst — working on \"Bank holiday\" (0/2 todos done)\n"},
		{"agent waiting with detail", data("research_agent", `{"id":"agent_2","specialisation":"Economist","state":"waiting","todos":[{"status":"done"}],"notes":1,"detail":"asks the supervisor: which years"}`),
			"  ◆ agent_2 · Economist — waiting for the supervisor (1/1 todos done, 1 note) · asks the supervisor: which years\n"},
		{"agent done", data("research_agent", `{"id":"agent_3","specialisation":"S","state":"done","todos":[{"status":"done"},{"status":"skipped"}],"notes":1}`),
			"  ◆ agent_3 · S — done (1/2 todos done, 1 note)\n"},
		{"note", data("research_note", `{"item":3,"agent":"agent_1","todo":"T","title":"The bank holiday","sources":[{"number":1,"url":"u"},{"number":2,"url":"v"}],"file":"items/item_3.md"}`),
			"  ✎ agent_1 · item 3: \"The bank holiday\" — 2 sources\n"},
		{"decision", data("supervisor_decision", `{"call":1,"maxCalls":6,"decision":"continue","reason":"gaps in the banking data","newTodos":[{"agent":"agent_2","title":"Deposit figures"}]}`),
			"→ Supervisor, call 1/6: continue — gaps in the banking data\n    + agent_2: \"Deposit figures\"\n"},
		{"forced finish", data("supervisor_decision", `{"call":2,"maxCalls":6,"decision":"finish","reason":"stopped","forced":true,"newTodos":[]}`),
			"→ Supervisor, call 2/6: finish (forced) — stopped\n"},
		{"other data prints nothing", data("extreme_search", `{"kind":"plan"}`), ""},
		{"malformed value prints nothing", data("research_agent", `"oops"`), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			term := NewTerminal(&b, false)
			if err := term.Emit(tt.event); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
	// With colour on, the decision is styled and the text is intact.
	var b strings.Builder
	if err := NewTerminal(&b, true).Emit(tests[7].event); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ansiGreen+"finish (forced)"+ansiReset) {
		t.Errorf("coloured decision: %q", b.String())
	}
}
