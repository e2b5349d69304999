package sovatest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// ExtremeCode is the code cell the scripted extreme agent runs: a bar
// chart of growth by decade and its average, printed.
const ExtremeCode = `import matplotlib.pyplot as plt
decades = ["1930s", "1940s", "1950s"]
growth = [1.3, 5.6, 4.2]
plt.bar(decades, growth)
plt.title("GDP growth by decade")
plt.ylabel("% per year")
plt.show()
print("average growth", round(sum(growth) / len(growth), 2))
`

var chartRE = regexp.MustCompile(`Chart: (!\[[^\]]*\]\([^)\s]+\))`)

// extreme answers the extreme mode's steps: a plan of two themes, an agent
// that searches the web, then X (when offered), then runs ExtremeCode
// (when codeRunner is offered) and sums up, and an answer that cites [1],
// [2] and a made-up [9] and places the first chart. It reports false for
// requests of other modes.
func (m *Model) extreme(r *llmtest.Request) (llmtest.Reply, bool) {
	usage := llmtest.Tokens(300, 60)
	sys := r.System()
	switch {
	case r.SchemaName() == "ExtremePlan":
		return llmtest.Reply{Content: mustJSON(map[string]any{"plan": []any{
			map[string]any{"title": "Growth figures", "todos": []string{"GDP growth by decade 1930s 1940s 1950s", "New Deal recovery statistics"}},
			map[string]any{"title": "Analysis", "todos": []string{"chart growth by decade with code"}},
		}}), Usage: usage}, true
	case strings.Contains(sys, "You are Sova's research agent"):
		done := map[string]bool{}
		for _, msg := range r.Messages {
			for _, tc := range msg.ToolCalls {
				done[tc.Name] = true
			}
		}
		call := func(name string, args any) (llmtest.Reply, bool) {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_x%d", r.Index), Name: name, Arguments: mustJSON(args)}}, Usage: usage}, true
		}
		switch {
		case r.ToolChoice == "none":
		case !done["webSearch"] && r.HasTool("webSearch"):
			return call("webSearch", map[string]any{"query": "GDP growth by decade in the 1930s and 1940s"})
		case !done["xSearch"] && r.HasTool("xSearch"):
			return call("xSearch", map[string]any{"query": "New Deal recovery discussion"})
		case !done["codeRunner"] && r.HasTool("codeRunner"):
			return call("codeRunner", map[string]any{"title": "GDP growth by decade", "code": ExtremeCode})
		}
		return llmtest.Reply{Content: "Growth was low in the 1930s and high in the 1940s; the chart shows it.", Usage: usage}, true
	case strings.Contains(sys, "Write the final answer to the person's question from the research below"):
		answer := "Growth was uneven across the decades [1]: slow in the 1930s and fast in the 1940s [2]. An invented claim [9]."
		if c := chartRE.FindStringSubmatch(r.LastUser()); c != nil {
			answer += "\n\n" + c[1] + "\n\nThe chart shows the average growth of 3.7% per year."
		}
		return llmtest.Reply{Content: answer, Usage: llmtest.Tokens(2000, 300)}, true
	}
	return llmtest.Reply{}, false
}
