package sovatest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// Text formats in which a model without native tool calling writes its
// calls (Model.NoNativeTools), in the order they are used, one per reply.
const (
	TextCallHermes  = "hermes"  // prose, then <tool_call>{…}</tool_call> per call (Hermes, Qwen)
	TextCallFenced  = "fenced"  // a ```json block holding {"name", "arguments"} (or a list of them)
	TextCallProse   = "prose"   // a sentence, then the fenced block
	TextCallMistral = "mistral" // [TOOL_CALLS][{…}, …]
	TextCallLlama   = "llama"   // <function=name>{…}</function> per call
	TextCallBare    = "bare"    // nothing but the JSON object(s)
)

var textCallFormats = []string{TextCallHermes, TextCallFenced, TextCallMistral, TextCallLlama, TextCallBare, TextCallProse}

var (
	toolHeadRE   = regexp.MustCompile(`(?m)^- ([A-Za-z0-9_.\-]+): `)
	toolCallTag  = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*</tool_call>`)
	toolResultRE = regexp.MustCompile(`(?s)^Result of the tool ([A-Za-z0-9_.\-]+):\n(.*)$`)
	callToolRE   = regexp.MustCompile(`\nCall the tool ([A-Za-z0-9_.\-]+) now\.`)
)

// withoutNativeTools answers r as a model served without native tool
// calling does: a request with a tools field is refused with Ollama's 400;
// tools described in the system prompt are read from it, earlier calls and
// results written as text are read back, and the calls of the reply are
// written as text, in a different real-world format each time. It
// reports the format used, "" when the reply called no tool.
func (m *Model) withoutNativeTools(r *llmtest.Request) (llmtest.Reply, string) {
	if len(r.Tools) > 0 {
		return llmtest.Fail(400, fmt.Sprintf("registry.ollama.ai/library/%s does not support tools", r.Model)), ""
	}
	native := fromPrompt(r)
	reply := m.respond(native)
	if len(reply.ToolCalls) == 0 || reply.Status != 0 {
		return reply, ""
	}
	format := textCallFormats[r.Index%len(textCallFormats)]
	reply.Content, reply.ToolCalls = callsAsText(format, reply.ToolCalls), nil
	return reply, format
}

// fromPrompt reads a prompt-described tool request back into the native
// form the scripted steps answer: the tools and the tool choice from the
// system prompt's "# Tools" section, calls from <tool_call> text, results
// from the user messages that carry them.
func fromPrompt(r *llmtest.Request) *llmtest.Request {
	out := *r
	out.Messages = make([]llm.Message, 0, len(r.Messages))
	var pending []llm.ToolCall
	n := 0
	for _, msg := range r.Messages {
		switch {
		case msg.Role == llm.RoleSystem && strings.Contains(msg.Content, "\n# Tools\n"):
			head, section, _ := strings.Cut(msg.Content, "\n# Tools\n")
			out.Tools = toolsIn(section)
			switch {
			case strings.Contains(section, "\nDo not call any tool now"):
				out.ToolChoice = "none"
			case strings.Contains(section, "\nCall at least one tool now."):
				out.ToolChoice = "required"
			default:
				if x := callToolRE.FindStringSubmatch(section); x != nil {
					out.ToolChoice = x[1]
				}
			}
			msg.Content = strings.TrimSpace(head)
		case msg.Role == llm.RoleAssistant && strings.Contains(msg.Content, "<tool_call>"):
			pending = nil
			for _, x := range toolCallTag.FindAllStringSubmatch(msg.Content, -1) {
				var c struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				}
				if json.Unmarshal([]byte(x[1]), &c) != nil {
					continue
				}
				n++
				pending = append(pending, llm.ToolCall{ID: fmt.Sprintf("text%d", n), Name: c.Name, Arguments: string(c.Arguments)})
			}
			msg = llm.Message{Role: llm.RoleAssistant, Content: strings.TrimSpace(toolCallTag.ReplaceAllString(msg.Content, "")), ToolCalls: pending}
		case msg.Role == llm.RoleUser:
			if x := toolResultRE.FindStringSubmatch(msg.Content); x != nil {
				id := ""
				for i, c := range pending {
					if c.Name == x[1] {
						id = c.ID
						pending = append(pending[:i:i], pending[i+1:]...)
						break
					}
				}
				msg = llm.Message{Role: llm.RoleTool, Name: x[1], ToolCallID: id, Content: x[2]}
			}
		}
		out.Messages = append(out.Messages, msg)
	}
	return &out
}

// toolsIn reads the tools of a "# Tools" section: "- name: description"
// then "  arguments: {schema}".
func toolsIn(section string) []llm.Tool {
	var tools []llm.Tool
	heads := toolHeadRE.FindAllStringSubmatchIndex(section, -1)
	for i, h := range heads {
		end := len(section)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		body := section[h[1]:end]
		t := llm.Tool{Name: section[h[2]:h[3]]}
		desc, args, ok := strings.Cut(body, "\n  arguments: ")
		t.Description = strings.TrimSpace(desc)
		if ok {
			var params map[string]any
			if json.NewDecoder(strings.NewReader(args)).Decode(&params) == nil {
				t.Parameters = params
			}
		}
		tools = append(tools, t)
	}
	return tools
}

// callsAsText writes calls in one of the text formats.
func callsAsText(format string, calls []llm.ToolCall) string {
	objs := make([]string, len(calls))
	for i, c := range calls {
		args := strings.TrimSpace(c.Arguments)
		if !json.Valid([]byte(args)) {
			args = "{}"
		}
		objs[i] = fmt.Sprintf(`{"name": %q, "arguments": %s}`, c.Name, args)
	}
	list := objs[0]
	if len(objs) > 1 {
		list = "[" + strings.Join(objs, ", ") + "]"
	}
	var b strings.Builder
	switch format {
	case TextCallHermes:
		b.WriteString("I will look this up first.\n")
		for _, o := range objs {
			fmt.Fprintf(&b, "<tool_call>\n%s\n</tool_call>\n", o)
		}
	case TextCallFenced:
		fmt.Fprintf(&b, "```json\n%s\n```", list)
	case TextCallProse:
		fmt.Fprintf(&b, "Searching now:\n```json\n%s\n```\n", list)
	case TextCallMistral:
		fmt.Fprintf(&b, "[TOOL_CALLS][%s]", strings.Join(objs, ", "))
	case TextCallLlama:
		for _, c := range calls {
			fmt.Fprintf(&b, "<function=%s>%s</function>", c.Name, c.Arguments)
		}
	default:
		b.WriteString(list)
	}
	return b.String()
}
