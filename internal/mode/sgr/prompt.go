package sgr

import (
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/lang"
)

// systemPrompt is rebuilt at every step: it carries the limits left and
// the pages that may be cited, which change as the agent works.
func (m *Mode) systemPrompt(w *work, step int, tools []string, now time.Time, tz string) string {
	l := w.language()
	var b strings.Builder
	fmt.Fprintf(&b, `You are Sova's research agent. You work in steps: at each step you return NextStep, your reasoning about where the research stands and exactly one tool to run next; the tool's result comes back to you as the next message.

Write everything meant for the person (clarifying questions, the report, the answer) in %s, the language of their request.
Current date: %s.

How to work:
- If the request is ambiguous in a way that changes the research (an unclear term, a missing region, period or purpose), ask with clarification before anything else. Do not ask about what you can reasonably assume.
- Plan with generate_plan; change the plan with adapt_plan when the findings call for it.
- Search with web_search, then read the most promising pages with extract_page_content. Snippets are not enough: only pages you have read are sources, numbered [1], [2], … in the order they were read.
- When enough has been read, write the report with create_report, citing the numbers of pages read right after each fact, then finish with final_answer.
- A question that needs no research (a greeting, a request about yourself) is answered with final_answer directly.
- Never invent sources, numbers or quotations.
- %s
`, l.Name, dateIn(now, tz), agent.UntrustedRule)

	fmt.Fprintf(&b, "\nStep %d of %d. Web searches used: %d of %d. Clarifications used: %d of %d.\n",
		step, m.cfg.MaxSteps, w.agent.SearchesUsed, m.cfg.MaxSearches, w.agent.ClarificationsUsed, m.cfg.MaxClarifications)
	if step >= m.cfg.MaxSteps {
		b.WriteString("This is the last step: finish now with create_report (when pages were read) or final_answer.\n")
	}
	fmt.Fprintf(&b, "Tools available at this step: %s.\n", strings.Join(tools, ", "))
	if p := w.mem.Plan; p != nil {
		fmt.Fprintf(&b, "\nCurrent plan — goal: %s\n", p.Goal)
		for i, s := range p.Steps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, s)
		}
	}
	read := w.read()
	if len(read) == 0 {
		b.WriteString("\nNo page has been read yet, so there is nothing to cite.\n")
	} else {
		b.WriteString("\nPages read (cite only these numbers):\n")
		for _, s := range read {
			fmt.Fprintf(&b, "[%d] %s — %s\n", s.Number, s.Title, s.URL)
		}
	}
	if w.mem.Report != nil {
		fmt.Fprintf(&b, "\nA report titled %q has been written; finish with final_answer unless it must be rewritten.\n", w.mem.Report.Title)
	}
	return b.String()
}

// questionsText shows clarifying questions to the person.
func questionsText(l lang.Language, qs, assumptions []string) string {
	var b strings.Builder
	if l == lang.Russian {
		b.WriteString("Чтобы исследование было точным, уточните, пожалуйста:\n\n")
	} else {
		b.WriteString("To make the research accurate, please clarify:\n\n")
	}
	for i, q := range qs {
		fmt.Fprintf(&b, "%d. %s\n", i+1, q)
	}
	if len(assumptions) > 0 {
		if l == lang.Russian {
			b.WriteString("\nЕсли ответа нет, я буду исходить из того, что:\n")
		} else {
			b.WriteString("\nWithout answers I would assume that:\n")
		}
		for _, a := range assumptions {
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	if l == lang.Russian {
		b.WriteString("\nОтветьте следующим сообщением — исследование продолжится с учётом ответов.")
	} else {
		b.WriteString("\nReply with your answers and the research will continue.")
	}
	return b.String()
}

// sourcesSection is the list of cited sources that ends a report.
func sourcesSection(l lang.Language, cited []sova.Source) string {
	if len(cited) == 0 {
		return ""
	}
	var b strings.Builder
	if l == lang.Russian {
		b.WriteString("\n\n## Источники\n\n")
	} else {
		b.WriteString("\n\n## Sources\n\n")
	}
	for _, s := range cited {
		title := s.Title
		if title == "" {
			title = s.URL
		}
		fmt.Fprintf(&b, "%d. [%s](%s)\n", s.Number, strings.ReplaceAll(title, "]", ")"), s.URL)
	}
	return strings.TrimRight(b.String(), "\n")
}

// answersMessage hands the person's answers to the agent.
func answersMessage(answer string) string {
	return "Answers to your clarifying questions:\n" + answer
}

// clip shortens s to at most n runes, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
