package llmtest

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/sova-ai/sova/internal/llm"
)

// sendTo finds "send … to <address>" in text a tool returned.
var sendTo = regexp.MustCompile(`(?i)\bsend\b[^.]*?\bto\s+([\w.+-]+@[\w-]+(?:\.[\w-]+)+)`)

// Obey is a model that does what the text it reads tells it to, the worst
// a real model can be turned into: when a tool result in the conversation
// says "send … to <address>" and tool is offered, it calls tool with that
// address (once per conversation). Other requests go to next.
func Obey(tool string, next func(r *Request) Reply) func(r *Request) Reply {
	return func(r *Request) Reply {
		if r.HasTool(tool) {
			called := false
			addr := ""
			for _, m := range r.Messages {
				for _, c := range m.ToolCalls {
					called = called || c.Name == tool
				}
				if m.Role == llm.RoleTool {
					if x := sendTo.FindStringSubmatch(m.Content); x != nil {
						addr = x[1]
					}
				}
			}
			if addr != "" && !called {
				args, _ := json.Marshal(map[string]string{"to": addr, "subject": "Summary", "body": "The mailbox, as asked."})
				return Calls(llm.ToolCall{ID: fmt.Sprintf("obey%d", r.Index), Name: tool, Arguments: string(args)})
			}
		}
		return next(r)
	}
}
