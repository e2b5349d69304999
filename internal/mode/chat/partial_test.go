package chat

import (
	"encoding/json"
	"testing"
)

func TestPartialField(t *testing.T) {
	full := `{"reasoning":"says \"answer\": \"no\"","answer":"Line one\nЛиния \u0434ва \"q\" 😀 end","key_points":["a"]}`
	var want struct{ Answer string }
	if err := json.Unmarshal([]byte(full), &want); err != nil {
		t.Fatal(err)
	}
	prev := ""
	for i := 0; i <= len(full); i++ {
		got := partialField(full[:i], "answer")
		if len(got) < len(prev) || got[:len(prev)] != prev {
			t.Fatalf("prefix %d: %q does not extend %q", i, got, prev)
		}
		prev = got
	}
	if prev != want.Answer {
		t.Fatalf("final %q, want %q", prev, want.Answer)
	}
	tests := map[string]string{
		`{"answer": "hi`:                 "hi",
		`{"answer"`:                      "",
		`{"other":{"answer":"x"},"ans`:   "",
		`{"list":["answer"],"answer":"y`: "y",
	}
	for in, want := range tests {
		if got := partialField(in, "answer"); got != want {
			t.Errorf("partialField(%q) = %q, want %q", in, got, want)
		}
	}
}
