package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Tool-calling modes (Config.ToolCalling).
const (
	// ToolsAuto sends tools natively and switches a model to ToolsPrompt
	// when its endpoint refuses them (a 400 naming tools).
	ToolsAuto = "auto"
	// ToolsNative always sends tools in the request's tools field.
	ToolsNative = "native"
	// ToolsPrompt describes the tools in the system prompt and reads the
	// calls from the reply's text, for endpoints without native tool
	// calling.
	ToolsPrompt = "prompt"
)

// Markers of tool calls written as text by servers whose chat template's
// parser did not take them out of the content.
const (
	tagCallOpen   = "<tool_call>"
	tagCallClose  = "</tool_call>"
	mistralMarker = "[TOOL_CALLS]"
)

var functionTagRE = regexp.MustCompile(`(?s)<function=([A-Za-z0-9_.\-]+)>(.*?)(?:</function>|$)`)

// textToolCalls recognises tool calls a model wrote as text instead of in
// the tool_calls field: Hermes/Qwen's <tool_call>{…}</tool_call>,
// Mistral's [TOOL_CALLS][{…}], Llama's <function=name>{…}</function>,
// and a reply that is only a JSON object (or array of them), perhaps in a
// code fence, naming an offered tool with its arguments. Only calls of
// offered tools count. It returns the calls and the text around them.
func textToolCalls(content string, tools []Tool) ([]ToolCall, string) {
	if len(tools) == 0 || strings.TrimSpace(content) == "" {
		return nil, content
	}
	known := func(name string) bool {
		return slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == name })
	}
	var calls []ToolCall
	add := func(obj map[string]any) bool {
		name, args, ok := callOf(obj)
		if !ok || !known(name) {
			return false
		}
		calls = append(calls, ToolCall{ID: fmt.Sprintf("call_text_%d", len(calls)+1), Name: name, Arguments: args})
		return true
	}
	// <tool_call>…</tool_call>, any number, the last perhaps cut off.
	if strings.Contains(content, tagCallOpen) {
		var rest strings.Builder
		s := content
		for {
			i := strings.Index(s, tagCallOpen)
			if i < 0 {
				rest.WriteString(s)
				break
			}
			rest.WriteString(s[:i])
			s = s[i+len(tagCallOpen):]
			body := s
			if j := strings.Index(s, tagCallClose); j >= 0 {
				body, s = s[:j], s[j+len(tagCallClose):]
			} else {
				s = ""
			}
			for _, obj := range objectsIn(body) {
				add(obj)
			}
		}
		if len(calls) > 0 {
			return calls, strings.TrimSpace(rest.String())
		}
	}
	// [TOOL_CALLS][{…}] or [TOOL_CALLS]name[ARGS]{…}.
	if i := strings.Index(content, mistralMarker); i >= 0 {
		body := content[i+len(mistralMarker):]
		if name, args, ok := strings.Cut(body, "[ARGS]"); ok && known(strings.TrimSpace(name)) {
			if objs := objectsIn(args); len(objs) > 0 {
				b, _ := json.Marshal(objs[0])
				calls = append(calls, ToolCall{ID: "call_text_1", Name: strings.TrimSpace(name), Arguments: string(b)})
			}
		} else {
			for _, obj := range objectsIn(body) {
				add(obj)
			}
		}
		if len(calls) > 0 {
			return calls, strings.TrimSpace(content[:i])
		}
	}
	// <function=name>{…}</function>.
	if m := functionTagRE.FindAllStringSubmatchIndex(content, -1); m != nil {
		rest := content
		for k := len(m) - 1; k >= 0; k-- {
			name, body := content[m[k][2]:m[k][3]], content[m[k][4]:m[k][5]]
			if !known(name) {
				continue
			}
			args := "{}"
			if objs := objectsIn(body); len(objs) > 0 {
				b, _ := json.Marshal(objs[0])
				args = string(b)
			}
			calls = append([]ToolCall{{Name: name, Arguments: args}}, calls...)
			rest = rest[:m[k][0]] + rest[m[k][1]:]
		}
		for i := range calls {
			calls[i].ID = fmt.Sprintf("call_text_%d", i+1)
		}
		if len(calls) > 0 {
			return calls, strings.TrimSpace(rest)
		}
	}
	// Prose, then the call(s) in a code fence that ends the reply.
	if open, block, ok := lastFence(content); ok && open > 0 {
		if b := strings.TrimSpace(block); strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
			objs := objectsIn(b)
			all := len(objs) > 0
			for _, obj := range objs {
				all = all && add(obj)
			}
			if all {
				return calls, strings.TrimSpace(content[:open])
			}
			calls = nil
		}
	}
	// A reply that is nothing but the call(s) as JSON.
	body := strings.TrimSpace(content)
	if f, ok := strings.CutPrefix(body, "```"); ok {
		if nl := strings.IndexByte(f, '\n'); nl >= 0 {
			f = f[nl+1:]
		}
		body = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "```"))
	}
	if strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") {
		objs := objectsIn(body)
		for _, obj := range objs {
			if !add(obj) {
				return nil, content // JSON that is not all calls is an answer
			}
		}
		if len(calls) > 0 {
			return calls, ""
		}
	}
	return nil, content
}

// lastFence finds the code fence that ends content (perhaps cut off
// before its closing ```): where it opens and what it holds, without its
// info string.
func lastFence(content string) (open int, block string, ok bool) {
	t := strings.TrimRight(content, " \t\r\n")
	body, closed := strings.CutSuffix(t, "```")
	open = strings.LastIndex(body, "```")
	if open < 0 {
		return 0, "", false
	}
	if !closed && strings.Count(body[:open], "```")%2 == 1 {
		return 0, "", false // the last ``` closes an earlier block
	}
	rest := body[open+3:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.ContainsAny(rest[:nl], "{[") {
		return 0, "", false
	}
	return open, rest[nl+1:], true
}

// objectsIn reads the JSON objects of text: one object, an array of
// them, or several objects one after another; almost-JSON is mended.
func objectsIn(text string) []map[string]any {
	text = strings.TrimSpace(text)
	var arr []map[string]any
	if json.Unmarshal([]byte(text), &arr) == nil {
		return arr
	}
	var out []map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			break
		}
		out = append(out, obj)
	}
	if len(out) > 0 {
		return out
	}
	if fixed, ok := repairJSON(text); ok {
		var obj map[string]any
		if json.Unmarshal([]byte(fixed), &obj) == nil {
			return []map[string]any{obj}
		}
	}
	return nil
}

// callOf reads a call object: {"name", "arguments"|"parameters"} or
// OpenAI's {"function": {"name", "arguments"}}; arguments may be an
// object or a JSON string.
func callOf(obj map[string]any) (name, args string, ok bool) {
	if fn, isFn := obj["function"].(map[string]any); isFn {
		obj = fn
	}
	name, _ = obj["name"].(string)
	if name == "" {
		return "", "", false
	}
	a, has := obj["arguments"]
	if !has {
		a, has = obj["parameters"]
	}
	switch v := a.(type) {
	case nil:
		return name, "{}", true
	case string:
		return name, v, true
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return "", "", false
		}
		return name, string(b), has
	}
}

// textCallHold holds back streamed text that may be a tool call written
// as text, so that people do not see the call as part of the answer: from
// a marker (or a reply that opens with JSON or a code fence) on, deltas
// wait until the reply ends, and are passed on (release) unless they were
// a call (drop).
type textCallHold struct {
	on      func(string)
	all     strings.Builder
	passed  int
	holding bool
	// A code fence after prose may hold calls: it waits (inFence, from
	// fenceAt) until its first line shows whether it opens with JSON;
	// fences before skipFrom were answers.
	inFence  bool
	fenceAt  int
	skipFrom int
}

func (h *textCallHold) write(d string) {
	h.all.WriteString(d)
	if h.holding {
		return
	}
	s := h.all.String()
	if h.passed == 0 {
		// A reply that opens with JSON, a fence or Mistral's marker may be
		// nothing but calls; "[1] says…" is an answer.
		t := strings.TrimSpace(s)
		arr := strings.TrimSpace(strings.TrimPrefix(t, "["))
		switch {
		case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "```") || strings.HasPrefix(t, mistralMarker) ||
			strings.HasPrefix(t, "[") && strings.HasPrefix(arr, "{"):
			h.holding = true
			return
		case t == "" || strings.HasPrefix(mistralMarker, t) || t == "[" || strings.HasPrefix("```", t):
			return // too little to tell yet
		}
	}
	if h.inFence {
		switch fenceOpensJSON(s[h.fenceAt:]) {
		case 0:
			return // its first line is not there yet
		case 1:
			return // perhaps calls: held until the reply ends
		}
		h.inFence, h.skipFrom = false, h.fenceAt+3
	}
	cut := len(s)
	for _, m := range []string{tagCallOpen, mistralMarker, "<function="} {
		if i := strings.Index(s[h.passed:], m); i >= 0 {
			cut = min(cut, h.passed+i)
			h.holding = true
		}
	}
	from := max(h.passed, h.skipFrom)
	if i := strings.Index(s[from:], "```"); i >= 0 && from+i < cut {
		cut, h.holding, h.inFence, h.fenceAt = from+i, false, true, from+i
	}
	if !h.holding && !h.inFence {
		// A marker may be cut in two by the deltas: keep back a tail that
		// starts one.
		for i := max(h.passed, len(s)-len(tagCallOpen)); i < len(s); i++ {
			if s[i] == '<' || s[i] == '[' || s[i] == '`' && i >= h.skipFrom {
				tail := s[i:]
				if strings.HasPrefix(tagCallOpen, tail) || strings.HasPrefix(mistralMarker, tail) || strings.HasPrefix("<function=", tail) || strings.HasPrefix("```", tail) {
					cut = i
					break
				}
			}
		}
	}
	if strings.TrimSpace(s[:cut]) == "" && cut < len(s) {
		return // nothing but what is held
	}
	if cut > h.passed {
		h.on(s[h.passed:cut])
		h.passed = cut
	}
}

// fenceOpensJSON tells of a text that starts with a code fence whether
// its content opens with JSON: 0 not known yet, 1 yes, 2 no.
func fenceOpensJSON(t string) int {
	rest := t[3:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		if strings.ContainsAny(rest, "{[") || len(rest) > 16 {
			return 2 // a call's fence has a short info string alone on its line
		}
		return 0
	}
	body := strings.TrimLeft(rest[nl+1:], " \t\r\n")
	switch {
	case body == "":
		return 0
	case body[0] == '{' || body[0] == '[':
		return 1
	}
	return 2
}

// release passes on what was held.
func (h *textCallHold) release() {
	if s := h.all.String(); len(s) > h.passed {
		h.on(s[h.passed:])
		h.passed = len(s)
	}
}

// rejectsTools recognises an endpoint's answer that it takes no tools:
// Ollama's "does not support tools", vLLM's "auto tool choice requires
// --enable-auto-tool-choice", llama.cpp's "tools param requires --jinja".
func rejectsTools(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || (ae.StatusCode != http.StatusBadRequest && ae.StatusCode != http.StatusUnprocessableEntity && ae.StatusCode != http.StatusNotImplemented) {
		return false
	}
	text := strings.ToLower(ae.Message + " " + ae.body)
	if !strings.Contains(text, "tool") && !strings.Contains(text, "function") {
		return false
	}
	for _, key := range []string{"not support", "unsupported", "requires", "enable-auto-tool-choice", "--jinja", "not enabled", "not allowed", "no tool"} {
		if strings.Contains(text, key) {
			return true
		}
	}
	return false
}

// inPrompt rewrites a request with tools for an endpoint without native
// tool calling: the tools are described in the system prompt with the
// format of a call, earlier calls and their results become text, and the
// tools field is left out.
func inPrompt(req Request) Request {
	var b strings.Builder
	b.WriteString("\n\n# Tools\n\nYou can call these tools. Each is given with the JSON schema of its arguments:\n")
	for _, t := range req.Tools {
		params, _ := json.Marshal(t.Parameters)
		fmt.Fprintf(&b, "\n- %s: %s\n  arguments: %s\n", t.Name, t.Description, params)
	}
	b.WriteString("\nTo call a tool, reply with one line per call and nothing else:\n" +
		tagCallOpen + `{"name": "<tool name>", "arguments": {<arguments>}}` + tagCallClose + "\n" +
		"The results come back in the next message. When you need no more tools, answer normally, without " + tagCallOpen + ".")
	switch req.ToolChoice {
	case "none":
		b.WriteString("\nDo not call any tool now: answer from what you have.")
	case "", "auto":
	case "required":
		b.WriteString("\nCall at least one tool now.")
	default:
		fmt.Fprintf(&b, "\nCall the tool %s now.", req.ToolChoice)
	}
	out := req
	out.Tools, out.ToolChoice, out.ParallelToolCalls = nil, "", nil
	out.Messages = make([]Message, 0, len(req.Messages)+1)
	system := false
	for _, m := range req.Messages {
		switch {
		case m.Role == RoleSystem && !system:
			system = true
			m.Content += b.String()
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			var c strings.Builder
			c.WriteString(m.Content)
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if !json.Valid([]byte(args)) {
					args = "{}"
				}
				fmt.Fprintf(&c, "\n%s{\"name\": %q, \"arguments\": %s}%s", tagCallOpen, tc.Name, args, tagCallClose)
			}
			m = Message{Role: RoleAssistant, Content: strings.TrimSpace(c.String())}
		case m.Role == RoleTool:
			m = Message{Role: RoleUser, Content: fmt.Sprintf("Result of the tool %s:\n%s", m.Name, m.Content)}
		}
		out.Messages = append(out.Messages, m)
	}
	if !system {
		out.Messages = append([]Message{{Role: RoleSystem, Content: strings.TrimSpace(b.String())}}, out.Messages...)
	}
	return out
}

// toolsInPrompt reports whether model's tools go in the prompt.
func (k *core) toolsInPrompt(model string) bool {
	if k.cfg.ToolCalling == ToolsPrompt {
		return true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.caps[model].toolsInPrompt
}

// switchToPrompt records that model's endpoint refuses native tools.
func (k *core) switchToPrompt(model string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	caps := k.caps[model]
	caps.toolsInPrompt = true
	k.caps[model] = caps
	k.log.Warn("the model endpoint refused native tool calling; describing the tools in the prompt for this model (set SOVA_LLM_TOOL_CALLING=prompt to start so)",
		"model", model)
}
