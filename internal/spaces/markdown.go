package spaces

import (
	"strings"
)

// parseMarkdown splits Markdown into headings and paragraphs. It knows
// what matters for chunking and nothing more: ATX (# …) and setext
// (underlined) headings, fenced code blocks (whose lines are never
// headings), YAML front matter (whose title is kept) and blank lines.
// Paragraph text keeps its Markdown.
func parseMarkdown(src string) *parsed {
	p := &parsed{}
	lines := strings.Split(normalizeNewlines(src), "\n")
	i := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for j := 1; j < len(lines); j++ {
			if t := strings.TrimSpace(lines[j]); t == "---" || t == "..." {
				p.title = frontMatterTitle(lines[1:j])
				i = j + 1
				break
			}
		}
	}

	var para []string
	flush := func() {
		if len(para) > 0 {
			text := strings.TrimSpace(strings.Join(para, "\n"))
			if text != "" {
				p.blocks = append(p.blocks, block{kind: blockText, text: text})
			}
			para = para[:0]
		}
	}
	heading := func(level int, text string) {
		flush()
		if text = strings.TrimSpace(text); text != "" {
			p.blocks = append(p.blocks, block{kind: blockHeading, level: level, text: text})
		}
	}
	for ; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if fence := codeFence(line); fence != "" {
			// The whole fenced block is one paragraph.
			flush()
			para = append(para, line)
			for i++; i < len(lines); i++ {
				para = append(para, lines[i])
				if strings.HasPrefix(strings.TrimSpace(lines[i]), fence) {
					break
				}
			}
			flush()
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		if level, text, ok := atxHeading(line); ok {
			heading(level, text)
			continue
		}
		if len(para) > 0 && isSetextUnderline(trimmed) {
			level := 1
			if trimmed[0] == '-' {
				level = 2
			}
			text := strings.Join(para, " ")
			para = para[:0]
			heading(level, text)
			continue
		}
		para = append(para, strings.TrimRight(line, " \t"))
	}
	flush()
	if p.title == "" {
		for _, b := range p.blocks {
			if b.kind == blockHeading && b.level == 1 {
				p.title = b.text
				break
			}
		}
	}
	return p
}

// codeFence returns the fence (``` or ~~~, at least three) that opens a
// code block on this line, or "".
func codeFence(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 {
		return ""
	}
	c := t[0]
	if c != '`' && c != '~' {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// atxHeading parses "## Title ##".
func atxHeading(line string) (level int, text string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0, "", false
	}
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	rest := t[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false // "#hashtag"
	}
	rest = strings.TrimSpace(rest)
	// A closing sequence of #s preceded by a space is not part of the text.
	if j := strings.TrimRight(rest, "#"); j != rest && (j == "" || strings.HasSuffix(j, " ")) {
		rest = strings.TrimSpace(j)
	}
	return level, rest, true
}

func isSetextUnderline(t string) bool {
	if len(t) < 2 || (t[0] != '=' && t[0] != '-') {
		return false
	}
	return strings.Trim(t, string(t[0])) == ""
}

// frontMatterTitle finds "title: …" in YAML front matter.
func frontMatterTitle(lines []string) string {
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "title") {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}
