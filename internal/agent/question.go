package agent

import (
	"fmt"
	"strings"
)

// Question is Sova's question about held actions, in the person's
// language (ru; English for the others): each action with its tool,
// recipients, subject, time and a body excerpt, as read from its
// arguments, never as a model wrote it.
func Question(langCode string, actions []Action) string {
	ru := langCode == "ru" || langCode == "uk" || langCode == "be"
	var b strings.Builder
	if ru {
		b.WriteString("Sova ничего не сделает без вашего согласия. Ожидают подтверждения:")
	} else {
		b.WriteString("Sova does nothing without your approval. Waiting for your decision:")
	}
	for i, a := range actions {
		fmt.Fprintf(&b, "\n%d. %s", i+1, ActionLine(langCode, a))
	}
	if ru {
		b.WriteString("\nВыполнить? Ответьте «да» или «нет».")
	} else {
		b.WriteString("\nGo ahead? Answer yes or no.")
	}
	return b.String()
}

// ActionLine is one held action in a line: its title and what it reaches.
func ActionLine(langCode string, a Action) string {
	ru := langCode == "ru" || langCode == "uk" || langCode == "be"
	label := map[bool][4]string{
		true:  {"кому", "тема", "время", "текст"},
		false: {"to", "subject", "time", "text"},
	}[ru]
	parts := []string{a.Title}
	if a.Title != a.Tool {
		parts[0] += " (" + a.Tool + ")"
	}
	q := func(s string) string {
		if ru {
			return "«" + s + "»"
		}
		return "“" + s + "”"
	}
	v := a.View
	if len(v.Recipients) > 0 {
		parts = append(parts, label[0]+": "+strings.Join(v.Recipients, ", "))
	}
	if v.Subject != "" {
		parts = append(parts, label[1]+": "+q(v.Subject))
	}
	if v.Time != "" {
		parts = append(parts, label[2]+": "+v.Time)
	}
	if v.Excerpt != "" {
		parts = append(parts, label[3]+": "+q(v.Excerpt))
	}
	return strings.Join(parts, "; ")
}
