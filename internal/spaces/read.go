package spaces

import (
	"strings"
)

// Markdown reads a document file of any format a space takes (chosen as
// DetectFormat does) and returns its title and its text as Markdown:
// headings as "#" lines, paragraphs separated by blank lines.
func Markdown(name string, data []byte) (title, markdown string, err error) {
	format, err := DetectFormat(name, data)
	if err != nil {
		return "", "", err
	}
	p, err := parse(name, format, data)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	for _, bl := range p.blocks {
		text := strings.TrimSpace(bl.text)
		if text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if bl.kind == blockHeading {
			b.WriteString(strings.Repeat("#", min(max(bl.level, 1), 6)) + " ")
		}
		b.WriteString(text)
	}
	return p.title, b.String(), nil
}
