package extreme

import (
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/mode"
)

// agentPrompt is the research agent's system prompt (seed 000 §2.5), with
// the plan, the tools offered and those withdrawn.
func (s *session) agentPrompt(plan []PlanTheme, ts []agent.Tool, withdrawn []mode.ToolStatus, steps int) string {
	var b strings.Builder
	offered := map[string]bool{}
	for _, t := range ts {
		offered[t.Name()] = true
	}
	b.WriteString("You are Sova's research agent. Carry out the research plan below with your tools.\n\n")
	b.WriteString("PRIMARY FOCUS: Search-based research (95% of your work)\nPRIORITY: Search over code execution\n\n")
	b.WriteString("Search Strategy:\n1. START: Broad foundational searches\n2. PROGRESS: Specific technical queries\n" +
		"3. CONTINUE: Recent/current developments\n4. FINISH: Expert analyses/reviews\n\n")
	b.WriteString("Query Guidelines:\n- 5-15 words max\n- Use category \"news\" for recent events, \"general\" otherwise\n" +
		"- Use includeDomains for specific sources\n")
	if offered[XSearchName] {
		b.WriteString("- Use xSearch for real-time discussions on X\n")
	}
	b.WriteString("- Search in the language that finds the best sources\n\n")
	if offered[CodeRunnerName] {
		b.WriteString("Code Usage (minimal, codeRunner):\n- Only when data processing is needed\n- After sufficient search data is collected\n" +
			"- For calculations, visualizations, data analysis\n" +
			"- The code has no network: put the figures you found into the code, and print() every result\n" +
			"- Python 3 with numpy, pandas and matplotlib only; nothing can be installed\n" +
			"- Charts: draw with matplotlib, give each a title and labelled axes, and call plt.show(); each figure is kept as a PNG chart\n\n")
	}
	b.WriteString("Progressive Specificity:\nStep 1-2: Broad searches\nStep 3+: Targeted queries based on findings\n\n")
	b.WriteString("Cross-validation:\n- Compare multiple sources\n- Verify key claims\n- No duplicate searches\n\n")
	fmt.Fprintf(&b, "Make one tool call per step; you have about %d steps. When the plan is covered, or nothing more can be found, "+
		"reply without a tool call with a short summary of what you found and what remains uncertain: that ends the research. "+
		"The final answer is written afterwards from everything your tools returned.\n\n", steps)
	if len(withdrawn) > 0 {
		b.WriteString("Not available on this server:\n")
		for _, w := range withdrawn {
			fmt.Fprintf(&b, "- %s: %s.\n", w.Name, w.Reason)
		}
		b.WriteString("Skip the parts of the plan that need them.\n\n")
	}
	b.WriteString("Research plan:\n")
	writePlan(&b, plan)
	fmt.Fprintf(&b, "\nCurrent date: %s. The person writes in %s.", mode.DateIn(s.in.Now, s.in.Timezone), s.lang.Name)
	return b.String()
}

func writePlan(b *strings.Builder, plan []PlanTheme) {
	for i, th := range plan {
		fmt.Fprintf(b, "%d. %s\n", i+1, th.Title)
		for _, td := range th.Todos {
			fmt.Fprintf(b, "   - %s\n", td)
		}
	}
}

// answerPrompt is the instructions of the final answer: written from the
// research, cited, with the charts in place.
func (s *session) answerPrompt(charts bool, withdrawn []mode.ToolStatus) string {
	var b strings.Builder
	b.WriteString("You are Sova, a research assistant. Write the final answer to the person's question from the research below: " +
		"a thorough, well-structured report in Markdown: the direct answer first, then sections with headings that follow the research plan, " +
		"figures and comparisons where the research has them (tables help), and what remains uncertain or disputed.\n\n")
	b.WriteString("Citations:\n")
	b.WriteString("- The sources are numbered. Cite each factual sentence with the numbers of its sources in square brackets right after the claim, like [1] or [2][5].\n")
	b.WriteString("- Cite only numbers you were given. Do not write a list of sources at the end; it is added for you.\n")
	b.WriteString("- Where sources disagree, say so and cite each side. Never invent facts, figures or citations.\n\n")
	if charts {
		b.WriteString("Charts:\n")
		b.WriteString("- The code cells drew charts, listed with their Markdown. Place each chart where it supports the text, on a line of its own, " +
			"written exactly as given: ![title](url). Say in the text what each chart shows.\n")
		b.WriteString("- Figures computed by code come from the cell's output: state them as computed from the cited sources.\n\n")
	}
	if len(withdrawn) > 0 {
		b.WriteString("Not available on this server, so not searched: ")
		names := make([]string, len(withdrawn))
		for i, w := range withdrawn {
			names[i] = w.Name
		}
		b.WriteString(strings.Join(names, ", ") + ". Mention it if the question needed them.\n\n")
	}
	tz := s.in.Timezone
	if tz == "" {
		tz = "not given"
	}
	fmt.Fprintf(&b, "Current date: %s (time zone: %s).\n", mode.DateIn(s.in.Now, s.in.Timezone), tz)
	fmt.Fprintf(&b, "Answer in %s (the language of the question), in Markdown.", s.lang.Name)
	return b.String()
}
