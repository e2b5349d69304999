package fetch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// trimText shortens s to at most max characters (runes). It cuts at the
// last paragraph break, else line break, else sentence end, that keeps at
// least minKeepRatio of the allowance; failing those, at the last space;
// failing that (e.g. unbroken CJK text), at a character boundary. A
// heading left dangling at the end is dropped. max < 0 means no limit.
func trimText(s string, max int) (string, bool) {
	if max < 0 || utf8.RuneCountInString(s) <= max {
		return s, false
	}
	cut := 0
	for i := 0; i < max; i++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	head := s[:cut]
	rest := s[cut:]
	minKeep := len(head) * minKeepPercent / 100

	end := -1
	for _, sep := range []string{"\n\n", "\n"} {
		if i := strings.LastIndex(head, sep); i >= minKeep && i > 0 {
			end = i
			break
		}
	}
	if end < 0 {
		end = lastSentenceEnd(head, minKeep)
	}
	if end < 0 {
		if r, _ := utf8.DecodeRuneInString(rest); unicode.IsSpace(r) {
			end = len(head)
		} else if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 {
			end = i
		} else {
			end = len(head)
		}
	}
	out := strings.TrimRightFunc(head[:end], unicode.IsSpace)
	out = dropDanglingHeadings(out)
	return out, true
}

const minKeepPercent = 60

// lastSentenceEnd returns the byte offset just past the last sentence end
// in s at or after min, or -1.
func lastSentenceEnd(s string, min int) int {
	best := -1
	for _, p := range []string{". ", "! ", "? ", "。", "！", "？", ".\n"} {
		if i := strings.LastIndex(s, p); i >= min {
			e := i + len(strings.TrimRight(p, " \n"))
			if e > best {
				best = e
			}
		}
	}
	return best
}

// dropDanglingHeadings removes Markdown headings left at the end of a
// trimmed text with nothing under them.
func dropDanglingHeadings(s string) string {
	for {
		i := strings.LastIndex(s, "\n")
		last := s[i+1:]
		if !strings.HasPrefix(last, "#") || i < 0 {
			return s
		}
		s = strings.TrimRightFunc(s[:i], unicode.IsSpace)
	}
}
