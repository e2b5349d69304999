package research

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/mode"
)

func TestIsNoise(t *testing.T) {
	tests := []struct {
		line  string
		noise bool
	}{
		{"Published: 2024-01-02", true},
		{"  Source: https://example.com/a", true},
		{"Источник: ria.ru", true},
		{"Дата публикации: 12.03.2024", true},
		{"https://example.com/page?id=3", true},
		{"- [Home](https://example.com/)", true},
		{"Read more", true},
		{"Подписывайтесь на наш канал", true},
		{"© 2024 History Monthly", true},
		{"By 1933 a quarter of the workforce was unemployed [2].", false},
		{"Share of GDP spent on relief rose to 5%.", false},
		{"Date ranges in the census were revised in 1935.", false},
		{"The source of the crisis was the banking system [1].", false},
		{"Безработица достигла 25% в 1933 году.", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isNoise(tt.line); got != tt.noise {
			t.Errorf("isNoise(%q) = %v, want %v", tt.line, got, tt.noise)
		}
	}
}

func TestCompressFindings(t *testing.T) {
	notes := []*note{
		{item: 1, agent: "agent_1", title: "Banks", relevance: "high", sources: []int{1},
			findings: "Banks reopened in March 1933 [1].\nPublished: 2024-01-01\n\n![chart](https://x/y.png)\nDeposits returned within weeks [1].",
			keyFacts: []string{"Banks reopened in March 1933 [1]", "The holiday lasted a week [1]"}},
		// The same finding, reworded only in punctuation and citation.
		{item: 2, agent: "agent_2", title: "Banks again", relevance: "high", sources: []int{2},
			findings: "Banks reopened in March, 1933 [2].\nDeposits returned within weeks [2]."},
		// A repeated line inside an otherwise new note.
		{item: 3, agent: "agent_3", title: "Jobs", relevance: "medium", sources: []int{3},
			findings: "Deposits returned within weeks [3].\nUnemployment peaked at 25 percent in 1933 [3]."},
		{item: 4, agent: "agent_4", title: "Nothing", relevance: "low", findings: "Nothing relevant was found for this task."},
		{item: 5, agent: "agent_1", title: "Banks", relevance: "high", sources: []int{1},
			findings: "Banks reopened in March 1933 [1].\nPublished: 2024-01-01\n\n![chart](https://x/y.png)\nDeposits returned within weeks [1]."},
	}
	got := compressFindings(notes)
	want := "### Banks (agent_1)\n\nBanks reopened in March 1933 [1].\n\nDeposits returned within weeks [1].\n\n- The holiday lasted a week [1]\n\n" +
		"### Jobs (agent_3)\n\nUnemployment peaked at 25 percent in 1933 [3]."
	if got != want {
		t.Errorf("got\n%s\n---\nwant\n%s", got, want)
	}
}

func TestCompleteTeam(t *testing.T) {
	tasks := []PlanTask{{Title: "A"}, {Title: "B"}, {Title: "C"}, {Title: "D"}, {Title: "E"}}
	tests := []struct {
		name   string
		agents []AgentProfile
		n      int
		todos  []int // todos per agent after completion
	}{
		{"model gave none", nil, 3, []int{2, 2, 1}},
		{"too many agents", []AgentProfile{{Specialisation: "x", Todos: tasks[:1]}, {Specialisation: "y"}, {Specialisation: "z"}}, 2, []int{2, 3}},
		{"duplicate assignment kept once", []AgentProfile{{Specialisation: "x", Todos: tasks}, {Specialisation: "y", Todos: tasks[:2]}}, 2, []int{5, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := completeTeam(tt.agents, tasks, tt.n, "Q")
			if len(got) != tt.n {
				t.Fatalf("%d agents, want %d", len(got), tt.n)
			}
			for i, a := range got {
				if a.Specialisation == "" || len(a.Todos) != tt.todos[i] {
					t.Errorf("agent %d: %q with %d todos, want %d", i+1, a.Specialisation, len(a.Todos), tt.todos[i])
				}
			}
		})
	}
}

func TestRenderReport(t *testing.T) {
	r := FinalReport{
		Title:            "  # Economy\nof the 1930s ",
		ExecutiveSummary: "Summary [1].",
		Sections: []ReportSection{
			{Title: "Banks", Content: "# Big\n\n## Sub\n\ntext [2]\n### Keep"},
			{Title: "", Content: "dropped"},
			{Title: "Jobs", Content: "more"},
		},
		Conclusion: "End.",
	}
	got := renderReport(r, lang.English, "Q")
	want := "# Economy of the 1930s\n\n## Executive summary\n\nSummary [1].\n\n## Banks\n\n### Big\n\n### Sub\n\ntext [2]\n### Keep\n\n## Jobs\n\nmore\n\n## Conclusion\n\nEnd.\n\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	list := sourceList([]sova.Source{{Number: 1, URL: "https://a", Title: "A [draft]"}, {Number: 2, URL: "https://b"}}, lang.Russian)
	if list != "## Источники\n\n1. [A (draft)](https://a)\n2. [https://b](https://b)\n" {
		t.Errorf("source list %q", list)
	}
}

func TestMemWorkspace(t *testing.T) {
	ctx := context.Background()
	w := NewMemWorkspace()
	if _, err := w.Read(ctx, "main.md"); !errors.Is(err, mode.ErrNoFile) {
		t.Errorf("missing file: %v", err)
	}
	_ = w.Write(ctx, "main.md", "a")
	_ = w.Append(ctx, "main.md", "b")
	_ = w.Append(ctx, "items/item_1.md", "x")
	if s, _ := w.Read(ctx, "main.md"); s != "ab" {
		t.Errorf("main.md = %q", s)
	}
	if l, _ := w.List(ctx); strings.Join(l, ",") != "items/item_1.md,main.md" {
		t.Errorf("list %v", l)
	}
	for _, bad := range []string{"", "/etc/passwd", "../x", "a/../../b", `a\b`} {
		if err := w.Write(ctx, bad, "x"); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
}
