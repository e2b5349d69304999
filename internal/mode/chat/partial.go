package chat

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// partialField reads one top-level string field out of a JSON object that
// is still streaming in, so that a structured answer's "answer" can be shown
// while the model writes it. It returns the field's value decoded so far.
// Escape sequences cut off at the end are left for the next call.
func partialField(raw, field string) string {
	depth := 0
	i := 0
	expectKey := false
	for i < len(raw) {
		c := raw[i]
		switch c {
		case '{', '[':
			depth++
			expectKey = c == '{' && depth == 1
			i++
		case '}', ']':
			depth--
			i++
		case ',':
			expectKey = depth == 1
			i++
		case '"':
			s, end, done := scanString(raw, i+1)
			if !done {
				if depth == 1 && !expectKey {
					return "" // inside some other value; nothing to show yet
				}
				return ""
			}
			i = end
			if depth == 1 && expectKey {
				expectKey = false
				// Skip to the colon and the value.
				j := skipSpace(raw, i)
				if j < len(raw) && raw[j] == ':' {
					j = skipSpace(raw, j+1)
				}
				if s == field && j < len(raw) && raw[j] == '"' {
					v, _, _ := scanString(raw, j+1)
					return v
				}
				i = j
			}
		default:
			i++
		}
	}
	return ""
}

func skipSpace(s string, i int) int {
	for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
		i++
	}
	return i
}

// scanString decodes a JSON string body starting at i (after the opening
// quote). It returns the decoded text, the index after the closing quote,
// and whether the string was closed.
func scanString(s string, i int) (string, int, bool) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, true
		case c == '\\':
			if i+1 >= len(s) {
				return b.String(), i, false
			}
			switch e := s[i+1]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'u':
				if i+6 > len(s) {
					return b.String(), i, false
				}
				n, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
				if err != nil {
					return b.String(), i, false
				}
				r := rune(n)
				adv := 6
				// Surrogate pair.
				if r >= 0xD800 && r < 0xDC00 {
					if i+12 > len(s) {
						return b.String(), i, false
					}
					if s[i+6] == '\\' && s[i+7] == 'u' {
						if lo, err := strconv.ParseUint(s[i+8:i+12], 16, 32); err == nil {
							r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
							adv = 12
						}
					}
				}
				if !utf8.ValidRune(r) {
					r = utf8.RuneError
				}
				b.WriteRune(r)
				i += adv
				continue
			default: // \" \\ \/
				b.WriteByte(e)
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), i, false
}
