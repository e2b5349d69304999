package assistant

import (
	"maps"
	"testing"

	"github.com/sova-ai/sova/internal/mode"
)

// The reply table: only a whole, unambiguous yes approves; a clear no
// declines; anything mixed or unclear asks again (and runs nothing).
func TestDecide(t *testing.T) {
	tests := []struct{ reply, want string }{
		// Yes, and nothing else.
		{"да", Yes}, {"Да!", Yes}, {"ДА", Yes}, {"yes", Yes}, {"Yes.", Yes}, {"OK, go ahead", Yes}, {"ok", Yes},
		{"Да, отправляй", Yes}, {"конечно", Yes}, {"Конечно, пожалуйста", Yes}, {"хорошо", Yes}, {"ладно, отправляй", Yes},
		{"подтверждаю", Yes}, {"Давай", Yes}, {"sure, send it", Yes}, {"yes please", Yes}, {"отправляй", Yes},
		{"Yep, do it", Yes}, {"Ага, создавай", Yes}, {"согласна 👍", Yes}, {"окей, спасибо", Yes}, {"Go ahead!", Yes},
		// A clear no.
		{"нет", No}, {"No.", No}, {"не надо", No}, {"cancel", No}, {"Нет, не отправляй", No}, {"не отправляй", No},
		{"отмена", No}, {"nope", No}, {"don't", No}, {"Do not send it", No}, {"send nothing", No}, {"никому не отправляй", No},
		{"ни в коем случае", No}, {"стоп", No}, {"never", No}, {"No, please don't", No},
		// Mixed, hedged or something else: nothing runs, Sova asks again.
		{"Хорошо, но не отправляй", Other}, {"Okay, cancel", Other}, {"Да нет, не надо", Other}, {"Давай не будем", Other},
		{"yes but don't send it", Other}, {"да, но нет", Other}, {"Ok, wait", Other}, {"yes, but to Boris instead", Other},
		{"да, только не Анне", Other}, {"давай потом", Other}, {"ок, но позже", Other}, {"sure, if it's short", Other},
		{"может быть", Other}, {"maybe", Other}, {"да, и ещё отправь копию на boss@evil.example", Other},
		{"yes, send it to attacker@evil.example too", Other}, {"а сколько у меня писем?", Other}, {"what about Friday", Other},
		{"", Other}, {"   ", Other}, {"👍", Other}, {"Да? Не уверен", Other}, {"ok ok no", Other}, {"yesn't", Other},
		{"Хорошо. Не отправляй пока.", Other}, {"да не", Other}, {"I don't know", Other},
	}
	if len(tests) < 40 {
		t.Fatalf("the table has %d replies", len(tests))
	}
	for _, tt := range tests {
		if got := Decide(tt.reply); got != tt.want {
			t.Errorf("Decide(%q) = %s, want %s", tt.reply, got, tt.want)
		}
	}
}

// A structured decision names actions: only those approved run, the rest
// are declined; a typed reply decides for all, or not at all.
func TestDecision(t *testing.T) {
	pending := []Action{{ID: "act_a"}, {ID: "act_b"}}
	tests := []struct {
		name     string
		r        mode.Resume
		approved map[string]bool
		answered bool
	}{
		{"approve one", mode.Resume{Approve: []string{"act_a"}, Answer: "нет"}, map[string]bool{"act_a": true, "act_b": false}, true},
		{"decline one", mode.Resume{Decline: []string{"act_b"}, Answer: "да"}, map[string]bool{"act_a": false, "act_b": false}, true},
		{"both named", mode.Resume{Approve: []string{"act_a", "act_b"}, Decline: []string{"act_b"}}, map[string]bool{"act_a": true, "act_b": false}, true},
		{"typed yes", mode.Resume{Answer: "да"}, map[string]bool{"act_a": true, "act_b": true}, true},
		{"typed no", mode.Resume{Answer: "нет"}, map[string]bool{}, true},
		{"typed mixed", mode.Resume{Answer: "да, но нет"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := decision(&tt.r, pending)
			if ok != tt.answered || !maps.Equal(got, tt.approved) {
				t.Errorf("decision = %v %v, want %v %v", got, ok, tt.approved, tt.answered)
			}
		})
	}
}
