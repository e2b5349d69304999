package errtext

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode"
)

// SnippetRunes is how much of an answer's body an error quotes.
const SnippetRunes = 200

// bodyTagRE matches HTML tags, with the content of scripts and styles, so
// that an HTML error page reads as text.
var bodyTagRE = regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>|<[^>]*>`)

// Snippet returns the start of an HTTP answer's body as one line of at
// most SnippetRunes runes, for error messages: spaces and control
// characters collapsed, the text otherwise as sent (a "not JSON" error
// shows the "<!DOCTYPE html>" that explains it). The search providers and
// the provider API client quote bodies through it or TextSnippet.
func Snippet(body []byte) string { return oneLine(string(body)) }

// TextSnippet is Snippet with HTML tags (and scripts and styles) removed,
// so that an HTML error page reads as its text.
func TextSnippet(body []byte) string {
	s := string(body)
	if strings.Contains(s, "<") && strings.Contains(s, ">") {
		s = bodyTagRE.ReplaceAllString(s, " ")
	}
	return oneLine(s)
}

func oneLine(s string) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if n >= SnippetRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// HTTPStatus renders a status for people: "HTTP 503 Service Unavailable".
func HTTPStatus(status int) string {
	if t := http.StatusText(status); t != "" {
		return fmt.Sprintf("HTTP %d %s", status, t)
	}
	return fmt.Sprintf("HTTP %d", status)
}
