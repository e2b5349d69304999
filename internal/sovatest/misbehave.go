package sovatest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// Misbehaviours a Model shows in some of its replies (Model.Misbehave),
// the ways small local models and the servers in front of them do.
const (
	// MisTextCalls: tool calls written as text, no tool_calls field
	// (<tool_call>, [TOOL_CALLS], a bare JSON object, in turn).
	MisTextCalls = "text-calls"
	// MisBrokenArgs: arguments in a code fence with a trailing comma, or
	// cut off before their end.
	MisBrokenArgs = "broken-args"
	// MisSloppyArgs: valid JSON written loosely: numbers as text, a
	// one-element list as its element, short closed values in capitals
	// ("5D", "MONTH").
	MisSloppyArgs = "sloppy-args"
	// MisNoJSONSchema: a 400 refusing response_format json_schema, as
	// vLLM and llama.cpp builds without it answer.
	MisNoJSONSchema = "no-json-schema"
	// MisFencedJSON: a structured reply in a code fence among prose.
	MisFencedJSON = "fenced-json"
)

// misbehave turns a good reply into a bad one of the kinds real models
// send, for one in every m.Misbehave requests (by arrival order, so a run
// is the same each time it is made alone). It reports which, "" for none.
func (m *Model) misbehave(r *llmtest.Request, reply llmtest.Reply) (llmtest.Reply, string) {
	if m.Misbehave <= 0 || r.Index%m.Misbehave != m.Misbehave-1 || reply.Status != 0 {
		return reply, ""
	}
	turn := r.Index / m.Misbehave
	switch {
	case len(reply.ToolCalls) > 0 && turn%2 == 0:
		var b strings.Builder
		for i, tc := range reply.ToolCalls {
			switch turn / 2 % 3 {
			case 0:
				fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>\n", tc.Name, tc.Arguments)
			case 1:
				if i == 0 {
					b.WriteString("[TOOL_CALLS][")
				} else {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "{\"name\": %q, \"arguments\": %s}", tc.Name, tc.Arguments)
				if i == len(reply.ToolCalls)-1 {
					b.WriteString("]")
				}
			default:
				if i == 0 { // a bare object holds one call
					fmt.Fprintf(&b, "{\"name\": %q, \"arguments\": %s}", tc.Name, tc.Arguments)
				}
			}
		}
		return llmtest.Reply{Content: b.String(), Usage: reply.Usage}, MisTextCalls
	case len(reply.ToolCalls) > 0 && turn/2%3 == 2:
		calls := make([]llm.ToolCall, len(reply.ToolCalls))
		for i, tc := range reply.ToolCalls {
			calls[i] = llm.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: sloppy(tc.Arguments)}
		}
		reply.ToolCalls = calls
		return reply, MisSloppyArgs
	case len(reply.ToolCalls) > 0:
		calls := make([]llm.ToolCall, len(reply.ToolCalls))
		for i, tc := range reply.ToolCalls {
			args := strings.TrimSpace(tc.Arguments)
			if turn/2%3 == 0 && strings.HasSuffix(args, "}") {
				args = "```json\n" + strings.TrimSuffix(args, "}") + ",}\n```"
			} else if strings.HasSuffix(args, "}") {
				args = strings.TrimSuffix(args, "}") // cut off at the end
			}
			calls[i] = llm.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args}
		}
		reply.ToolCalls = calls
		return reply, MisBrokenArgs
	case r.Format() == llm.FormatJSONSchema:
		return llmtest.Reply{Status: 400, ErrorBody: llmtest.ErrorJSON("invalid_request_error", "",
			"response_format json_schema is not supported by this server; use json_object")}, MisNoJSONSchema
	case r.Format() != "" && strings.HasPrefix(strings.TrimSpace(reply.Content), "{"):
		reply.Content = "Here is the JSON:\n```json\n" + reply.Content + "\n```\nHope this helps."
		return reply, MisFencedJSON
	}
	return reply, ""
}

// sloppy rewrites tool arguments the loose way models write them: numbers
// as text, a one-element list as its element, short closed values in
// capitals.
func sloppy(args string) string {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil {
		return args
	}
	var loosen func(x any) any
	loosen = func(x any) any {
		switch x := x.(type) {
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		case string:
			if len(x) <= 5 && x == strings.ToLower(x) && strings.TrimLeft(x, "abcdefghijklmnopqrstuvwxyz0123456789") == "" {
				return strings.ToUpper(x)
			}
			return x
		case []any:
			if len(x) == 1 {
				if s, ok := x[0].(string); ok {
					return s
				}
			}
			for i := range x {
				x[i] = loosen(x[i])
			}
			return x
		case map[string]any:
			for k := range x {
				x[k] = loosen(x[k])
			}
			return x
		}
		return x
	}
	b, err := json.Marshal(loosen(v))
	if err != nil {
		return args
	}
	return string(b)
}
