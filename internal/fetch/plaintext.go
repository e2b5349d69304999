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
		if mdFence.MatchString(line) || mdTableRule.MatchString(line) {
			continue
		}
		line = mdLinePrefix.ReplaceAllString(line, "")
		line = mdImage.ReplaceAllString(line, "")
		line = mdLink.ReplaceAllString(line, "$1")
		line = mdAutolink.ReplaceAllString(line, "$1")
		// Escaped characters are set aside first so that an escaped "*"
		// is not taken for emphasis.
		line = mdEscape.ReplaceAllStringFunc(line, func(m string) string {
			return string(rune(escapeBase + int(m[1])))
		})
		line = mdEmphasis.ReplaceAllString(line, "")
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
