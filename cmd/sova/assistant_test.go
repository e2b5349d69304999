package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mcp/mcptest"
)

// sova ask --mode assistant: an action that changes something pauses the
// run; the CLI says nothing was done and how to answer; "no" sends
// nothing, and a later "yes" to a new request sends the mail once.
func TestAskAssistantConfirmation(t *testing.T) {
	w := newWorld(t)
	office := mcptest.NewOffice(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers":{"office":{"url":%q}}}`, office.URL+"/mcp")), 0o600); err != nil {
		t.Fatal(err)
	}
	w.extra = map[string]string{"SOVA_MCP_CONFIG": cfg}
	var mu sync.Mutex
	var queue []llmtest.Reply
	script := func(r ...llmtest.Reply) { mu.Lock(); queue = append(queue, r...); mu.Unlock() }
	w.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if !strings.Contains(r.System(), "Sova's") {
			return w.model.Respond(r) // titles
		}
		mu.Lock()
		defer mu.Unlock()
		if len(queue) == 0 {
			return llmtest.Fail(400, "no scripted reply")
		}
		next := queue[0]
		queue = queue[1:]
		return next
	})
	send := llmtest.Calls(llm.ToolCall{ID: "c1", Name: "office__send_email", Arguments: `{"to":"anna@example.com","subject":"Восток","body":"Согласен."}`})

	script(send)
	stdout, stderr, err := w.sova(t, "ask", "--mode", "assistant", "Ответь Анне, что я согласен")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// The question is Sova's list of the held action, with its id.
	if !strings.Contains(stdout, "Ожидают подтверждения") || !strings.Contains(stdout, "anna@example.com") || !strings.Contains(stderr, "Nothing was done yet") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	hint := regexp.MustCompile(`sova ask (--chat \S+ --mode assistant) --approve (act_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if hint == nil || !strings.Contains(stderr, hint[1]+" --decline "+hint[2]) {
		t.Fatalf("no hint to answer in:\n%s", stderr)
	}
	if n := len(office.Sent()); n != 0 {
		t.Fatalf("sent %d before the answer", n)
	}
	answer := func(words ...string) (string, string) {
		t.Helper()
		args := append([]string{"ask"}, strings.Fields(hint[1])...)
		stdout, stderr, err := w.sova(t, append(args, words...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", words, err, stderr)
		}
		return stdout, stderr
	}

	// A mixed reply sends nothing and asks again, without the model.
	if out, _ := answer("Хорошо, но не отправляй"); !strings.Contains(out, "ничего не сделано") || len(office.Sent()) != 0 {
		t.Fatalf("after a mixed reply: %q, sent %d", out, len(office.Sent()))
	}
	script(llmtest.Text("Хорошо, не отправляю."))
	if out, _ := answer("нет"); !strings.Contains(out, "не отправляю") || len(office.Sent()) != 0 {
		t.Fatalf("after no: %q, sent %d", out, len(office.Sent()))
	}

	script(send, llmtest.Text("Отправил письмо Анне."))
	out, errOut := answer("Всё же ответь Анне")
	if !strings.Contains(out, "Ожидают подтверждения") {
		t.Fatalf("second request: %q", out)
	}
	id := regexp.MustCompile(`--approve (act_[0-9a-f]+)`).FindStringSubmatch(errOut)
	if id == nil {
		t.Fatalf("no action id in:\n%s", errOut)
	}
	// An id the run does not hold is refused and changes nothing.
	args := append([]string{"ask"}, strings.Fields(hint[1])...)
	if _, _, err := w.sova(t, append(args, "--approve", "act_0000000000000000")...); err == nil || len(office.Sent()) != 0 {
		t.Fatalf("an unknown action id was accepted (err %v, sent %d)", err, len(office.Sent()))
	}
	if out, _ := answer("--approve", id[1]); !strings.Contains(out, "Отправил") || len(office.Sent()) != 1 {
		t.Fatalf("after approve: %q, sent %d", out, len(office.Sent()))
	}
}
