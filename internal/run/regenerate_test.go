package run

import (
	"reflect"
	"testing"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/llm"
)

// A regenerated question counts once, with its newest answer: that is the
// version later questions go on from.
func TestHistoryOfKeepsNewestVersion(t *testing.T) {
	msgs := []sova.Message{
		{ID: "q1", Role: llm.RoleUser, Content: "first"},
		{ID: "a1", Role: llm.RoleAssistant, Content: "old answer", ReplyTo: "q1"},
		{ID: "a2", Role: llm.RoleAssistant, Content: "new answer", ReplyTo: "q1"},
		{ID: "q2", Role: llm.RoleUser, Content: "second"},
		{ID: "a3", Role: llm.RoleAssistant, Content: "reply", ReplyTo: "q2"},
		{ID: "a4", Role: llm.RoleAssistant, Content: "no replyTo (older rows)"},
		{ID: "e", Role: llm.RoleAssistant, Content: "", ReplyTo: "q3"},
	}
	want := []llm.Message{
		{Role: llm.RoleUser, Content: "first"},
		{Role: llm.RoleAssistant, Content: "new answer"},
		{Role: llm.RoleUser, Content: "second"},
		{Role: llm.RoleAssistant, Content: "reply"},
		{Role: llm.RoleAssistant, Content: "no replyTo (older rows)"},
	}
	if got := historyOf(msgs); !reflect.DeepEqual(got, want) {
		t.Errorf("historyOf = %+v\nwant %+v", got, want)
	}
}

// An edited question leaves the history with its answers; the edit takes
// its place.
func TestHistoryOfDropsEditedQuestion(t *testing.T) {
	msgs := []sova.Message{
		{ID: "q1", Role: llm.RoleUser, Content: "first"},
		{ID: "a1", Role: llm.RoleAssistant, Content: "answer", ReplyTo: "q1"},
		{ID: "q2", Role: llm.RoleUser, Content: "typo"},
		{ID: "a2", Role: llm.RoleAssistant, Content: "answer to typo", ReplyTo: "q2"},
		{ID: "q3", Role: llm.RoleUser, Content: "fixed", ReplyTo: "q2"},
		{ID: "a3", Role: llm.RoleAssistant, Content: "answer to fixed", ReplyTo: "q3"},
	}
	want := []llm.Message{
		{Role: llm.RoleUser, Content: "first"},
		{Role: llm.RoleAssistant, Content: "answer"},
		{Role: llm.RoleUser, Content: "fixed"},
		{Role: llm.RoleAssistant, Content: "answer to fixed"},
	}
	if got := historyOf(msgs); !reflect.DeepEqual(got, want) {
		t.Errorf("historyOf = %+v\nwant %+v", got, want)
	}
}
