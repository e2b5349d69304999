package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestRunsListAndShow(t *testing.T) {
	w := newWorld(t)
	ask := func(args ...string) (runID, chatID string) {
		t.Helper()
		out, errOut, err := w.sova(t, append([]string{"ask", "--json", "--mode", "chat"}, args...)...)
		if err != nil {
			t.Fatalf("ask: %v\n%s", err, errOut)
		}
		var first struct {
			Start struct{ RunID, ChatID string }
		}
		_ = json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first)
		if first.Start.RunID == "" || first.Start.ChatID == "" {
			t.Fatalf("no run or chat id: %.300s", out)
		}
		return first.Start.RunID, first.Start.ChatID
	}
	run1, chat1 := ask("What is the capital of Australia?")
	run2, chat2 := ask("--chat", chat1, "And of New Zealand?")
	run3, chat3 := ask("A question in a new chat")
	if chat2 != chat1 || chat3 == chat1 {
		t.Fatalf("chats %s %s %s", chat1, chat2, chat3)
	}

	for _, args := range [][]string{{"runs", "list"}, {"runs"}} {
		out, errOut, err := w.sova(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 4 || !regexp.MustCompile(`^ID\s+CREATED\s+MODE\s+STATE\s+QUESTION$`).MatchString(lines[0]) {
			t.Fatalf("%v:\n%s", args, out)
		}
		for i, want := range []struct{ id, q string }{{run3, "A question in a new chat"}, {run2, "And of New Zealand?"}, {run1, "What is the capital of Australia?"}} {
			re := regexp.MustCompile(`^` + regexp.QuoteMeta(want.id) + `\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+chat\s+completed\s+` + regexp.QuoteMeta(want.q) + `$`)
			if !re.MatchString(lines[i+1]) {
				t.Errorf("%v line %d = %q, want run %s", args, i+2, lines[i+1], want.id)
			}
		}
	}
	out, _, err := w.sova(t, "runs", "list", "--limit", "1", "--json")
	var runs []struct{ ID, Mode, State, Question string }
	if err != nil || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 || runs[0].ID != run3 || runs[0].State != "completed" {
		t.Errorf("runs list --limit 1 --json: %v\n%s", err, out)
	}

	// A chat's id shows its latest run; a run's id that run.
	for _, tt := range []struct{ id, wantRun, wantQ string }{
		{chat1, run2, "And of New Zealand?"},
		{run1, run1, "What is the capital of Australia?"},
	} {
		out, errOut, err := w.sova(t, "runs", "show", tt.id)
		if err != nil {
			t.Fatalf("runs show %s: %v\n%s", tt.id, err, errOut)
		}
		if !regexp.MustCompile(`(?m)^id\s+`+tt.wantRun+`$`).MatchString(out) || !regexp.MustCompile(`(?m)^chat\s+`+chat1+`$`).MatchString(out) ||
			!strings.Contains(out, tt.wantQ) {
			t.Errorf("runs show %s:\n%s", tt.id, out)
		}
	}
	if _, errOut, err := w.sova(t, "runs", "show", "no-such-id"); err == nil || !strings.Contains(errOut, "no run or chat no-such-id: not found") {
		t.Errorf("unknown id: %v %s", err, errOut)
	}
}
