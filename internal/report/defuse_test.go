package report

import (
	"strings"
	"testing"
)

func TestDefuseKeepsOrdinaryMarkdown(t *testing.T) {
	docs := []string{
		readTestdata(t, "report_ru.md"),
		readTestdata(t, "report_en.md"),
		longReport(10),
		"> quote\n> > nested\n\n- a\n  - b\n    - c\n",
		"```\n" + strings.Repeat("*[`<", 2000) + "\n```\n",
	}
	for i, md := range docs {
		if got := defuse(md); got != md {
			t.Errorf("document %d changed by defuse", i)
		}
	}
}

func TestDefuse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, out string)
	}{
		{"deep quotes are capped", strings.Repeat("> ", 100) + "text\n", func(t *testing.T, out string) {
			if n := strings.Count(out, ">"); n != maxNesting {
				t.Errorf("%d quote markers kept, want %d", n, maxNesting)
			}
			if !strings.HasSuffix(out, "text\n") {
				t.Errorf("text lost: %q", out)
			}
		}},
		{"deep mixed containers are capped", strings.Repeat("- > 1. ", 30) + "x\n", func(t *testing.T, out string) {
			if got := containerDepth(out); got != maxNesting {
				t.Errorf("depth %d, want %d", got, maxNesting)
			}
		}},
		{"indentation is capped", strings.Repeat(" ", 500) + "- x\n", func(t *testing.T, out string) {
			if out != strings.Repeat(" ", maxIndent)+"- x\n" {
				t.Errorf("got %q", out)
			}
		}},
		{"dense markup is escaped", strings.Repeat("[a](<b", 1000) + "\n", func(t *testing.T, out string) {
			if !strings.Contains(out, `\[a\](\<b`) {
				t.Errorf("not escaped: %.60q", out)
			}
		}},
		{"escaping keeps list markers and existing escapes", "- " + strings.Repeat(`*a\_ `, 600) + "\n", func(t *testing.T, out string) {
			if !strings.HasPrefix(out, `- \*a\_ \*a`) {
				t.Errorf("got %.40q", out)
			}
		}},
		{"markup in separate paragraphs stays", strings.Repeat("**bold** [link](https://x.org)\n\n", 2000), func(t *testing.T, out string) {
			if strings.Contains(out, `\`) {
				t.Error("markup escaped in ordinary paragraphs")
			}
		}},
		{"too wide a table is text", "|" + strings.Repeat("a|", 100) + "\n|" + strings.Repeat("-|", 100) + "\n", func(t *testing.T, out string) {
			if !strings.Contains(out, `|\-|\-|`) {
				t.Errorf("delimiter row kept: %.60q", out)
			}
		}},
		{"a table of reasonable size stays", "| a | b |\n|:--|--:|\n" + strings.Repeat("| 1 | 2 |\n", 500), func(t *testing.T, out string) {
			if strings.Contains(out, `\`) {
				t.Error("table changed")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, defuse(tt.in))
		})
	}
}

// containerDepth counts the container markers that open a line.
func containerDepth(line string) int {
	n := 0
	for {
		line = strings.TrimLeft(line, " ")
		m := markerLen(line)
		if m == 0 {
			return n
		}
		line = line[m:]
		n++
	}
}
