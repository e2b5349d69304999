package fetch

import (
	"regexp"
	"strings"
)

var (
	mdImage      = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink       = regexp.MustCompile(`\[([^\]]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"]*")?\)`)
	mdAutolink   = regexp.MustCompile(`<((?:https?|ftp)://[^>\s]+)>`)
	mdEscape     = regexp.MustCompile("\\\\([!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~])")
	mdLinePrefix = regexp.MustCompile(`^(?:\s*>)*\s*(?:#{1,6}\s+|[-*+]\s+|\d{1,9}[.)]\s+)?`)
	mdFence      = regexp.MustCompile("^\\s*(?:```|~~~)")
	mdTableRule  = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$`)
	mdEmphasis   = regexp.MustCompile(`\*{1,3}|~~`)
)

// escapeBase is the start of a private-use range where escaped ASCII
// characters wait while Markdown syntax is removed.
const escapeBase = 0xF0000

// PlainText reduces the Markdown the fetcher produces to plain text: link
// targets, images, escapes, heading, list and quote markers, emphasis and
// table rules go; the words stay, in order, one block per paragraph. It is
// meant for comparing extracted text with plain references and for
// lexical or embedding scoring, where URLs and syntax would only add noise.
func PlainText(md string) string {
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	for _, line := range lines {
		// Each pattern is tried only on lines holding the characters it
		// needs: most lines are prose with none, and the regular
		// expressions were a fifth of choosing between the extractors.
		if (strings.Contains(line, "```") || strings.Contains(line, "~~~")) && mdFence.MatchString(line) ||
			strings.Contains(line, "---") && mdTableRule.MatchString(line) {
			continue
		}
		if hasLinePrefix(line) {
			line = mdLinePrefix.ReplaceAllString(line, "")
		} else {
			line = strings.TrimLeft(line, " \t\n\f\r")
		}
		if strings.Contains(line, "![") {
			line = mdImage.ReplaceAllString(line, "")
		}
		if strings.Contains(line, "](") {
			line = mdLink.ReplaceAllString(line, "$1")
		}
		if strings.Contains(line, "://") {
			line = mdAutolink.ReplaceAllString(line, "$1")
		}
		// Escaped characters are set aside first so that an escaped "*"
		// is not taken for emphasis.
		if strings.Contains(line, "\\") {
			line = mdEscape.ReplaceAllStringFunc(line, func(m string) string {
				return string(rune(escapeBase + int(m[1])))
			})
		}
		if strings.Contains(line, "*") || strings.Contains(line, "~~") {
			line = mdEmphasis.ReplaceAllString(line, "")
		}
		line = strings.Map(func(r rune) rune {
			if r >= escapeBase && r < escapeBase+128 {
				return r - escapeBase
			}
			return r
		}, line)
		if strings.Contains(line, "|") && strings.Count(line, "|") >= 2 {
			line = strings.TrimSpace(strings.ReplaceAll(line, "|", " "))
		}
		out = append(out, strings.TrimRight(line, " \t"))
	}
	return tidyMarkdown(strings.Join(out, "\n"))
}

// hasLinePrefix reports whether line may start with a quote, heading or
// list marker (mdLinePrefix); otherwise that pattern removes only the
// leading white space.
func hasLinePrefix(line string) bool {
	t := strings.TrimLeft(line, " \t\n\f\r")
	if t == "" {
		return false
	}
	switch c := t[0]; {
	case c == '>' || c == '#' || c == '-' || c == '*' || c == '+':
		return true
	case c >= '0' && c <= '9':
		return true
	}
	return false
}
