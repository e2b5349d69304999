package realtime

import (
	"regexp"
	"strings"
)

var (
	citeRe   = regexp.MustCompile(`\s*\[\d+(?:\s*[,;]\s*\d+)*\]`)
	linkRe   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	urlRe    = regexp.MustCompile(`(?i)\(?\b(?:https?://|www\.)[^\s)]+\)?`)
	markRe   = regexp.MustCompile("(?m)^\\s*(?:#{1,6}\\s+|>\\s?|[-*+]\\s+|\\d+[.)]\\s+)|\\*\\*|__|`|\\|")
	spacesRe = regexp.MustCompile(`\s+`)
	emptyRe  = regexp.MustCompile(`\(\s*\)|\s+([.,;:!?])`)
)

// Speakable is text as it is said aloud: no citation markers ([1],
// [2][3]), no URLs (a link says its words), no JSON or code, no Markdown
// marks.
func Speakable(s string) string {
	s = dropCode(s)
	s = linkRe.ReplaceAllString(s, "$1")
	s = urlRe.ReplaceAllString(s, "")
	s = citeRe.ReplaceAllString(s, "")
	s = markRe.ReplaceAllString(s, "")
	s = spacesRe.ReplaceAllString(s, " ")
	s = emptyRe.ReplaceAllString(s, "$1")
	return strings.TrimSpace(s)
}

// dropCode removes fenced blocks and JSON: balanced {…} spans, and […]
// spans that open a JSON list ([{ or [").
func dropCode(s string) string {
	for {
		i := strings.Index(s, "```")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+3:], "```")
		if j < 0 {
			s = s[:i]
			break
		}
		s = s[:i] + " " + s[i+3+j+3:]
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		opens := ch == '{' || (ch == '[' && i+1 < len(s) && strings.ContainsRune(`{"`, rune(nextNonSpace(s[i+1:]))))
		switch {
		case depth == 0 && opens:
			depth = 1
		case depth > 0 && (ch == '{' || ch == '['):
			depth++
		case depth > 0 && (ch == '}' || ch == ']'):
			depth--
		case depth == 0:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func nextNonSpace(s string) byte {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\n' && s[i] != '\t' {
			return s[i]
		}
	}
	return 0
}

// splitter cuts an answer streaming in pieces into sentences: at . ! ? …
// followed by a space, and at line ends, never inside a code fence or a
// JSON object, so the first sentence can be spoken while the rest is
// still being written.
type splitter struct {
	buf strings.Builder
}

func (p *splitter) add(delta string) []string {
	p.buf.WriteString(delta)
	s := p.buf.String()
	var out []string
	start, depth, fence := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "```"):
			fence = !fence
			i += 2
			continue
		case fence:
			continue
		case s[i] == '{':
			depth++
		case s[i] == '}' && depth > 0:
			depth--
		}
		if depth > 0 || i+1 >= len(s) {
			continue
		}
		end := s[i] == '\n' || (strings.ContainsRune(".!?;", rune(s[i])) && (s[i+1] == ' ' || s[i+1] == '\n')) ||
			(strings.HasPrefix(s[i:], "…") && i+3 < len(s) && s[i+3] == ' ')
		if end {
			if sentence := strings.TrimSpace(s[start : i+1]); sentence != "" {
				out = append(out, sentence)
			}
			start = i + 1
		}
	}
	// An open block stays in the buffer until it closes.
	rest := s[start:]
	p.buf.Reset()
	p.buf.WriteString(rest)
	return out
}

// flush returns what is left at the end of the answer.
func (p *splitter) flush() string {
	s := strings.TrimSpace(p.buf.String())
	p.buf.Reset()
	return s
}
