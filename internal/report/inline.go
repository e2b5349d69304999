package report

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// style is a set of inline text attributes.
type style uint8

const (
	styleBold style = 1 << iota
	styleItalic
	styleCode
	styleStrike
)

// span is a run of text with one style and link target. A span with br set
// is a hard line break.
type span struct {
	text string
	st   style
	link string // clickable target, "" for none
	br   bool
}

// inliner turns a block's inline nodes into spans.
type inliner struct {
	src   []byte
	lang  string
	spans []span
}

// collect appends the spans of n's inline children.
func (in *inliner) collect(n ast.Node, st style, link string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		in.node(c, st, link)
	}
}

func (in *inliner) add(text string, st style, link string) {
	if text == "" {
		return
	}
	in.spans = append(in.spans, span{text: text, st: st, link: link})
}

func (in *inliner) node(n ast.Node, st style, link string) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(in.src)
		if n.IsRaw() {
			in.add(string(v), st, link)
		} else {
			in.add(unescape(v), st, link)
		}
		switch {
		case n.HardLineBreak():
			in.spans = append(in.spans, span{br: true})
		case n.SoftLineBreak():
			in.add(" ", st, link)
		}
	case *ast.String:
		in.add(string(n.Value), st, link)
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Value(in.src))
			case *ast.String:
				b.Write(t.Value)
			}
		}
		in.add(strings.ReplaceAll(b.String(), "\n", " "), st|styleCode, link)
	case *ast.Emphasis:
		if n.Level >= 2 {
			st |= styleBold
		} else {
			st |= styleItalic
		}
		in.collect(n, st, link)
	case *east.Strikethrough:
		in.collect(n, st|styleStrike, link)
	case *ast.Link:
		in.collect(n, st, linkTarget(n.Destination))
	case *ast.AutoLink:
		label := string(n.Label(in.src))
		target := string(n.URL(in.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(target), "mailto:") {
			target = "mailto:" + target
		} else if n.AutoLinkType == ast.AutoLinkURL && !strings.Contains(target, "://") {
			target = "http://" + target
		}
		in.add(label, st, linkTarget([]byte(target)))
	case *ast.Image:
		// A PDF of a report carries no images; the reader gets the
		// description and where the image is.
		alt := plainText(n, in.src)
		dest := string(n.Destination)
		if alt != "" {
			in.add(alt, st|styleItalic, link)
		} else {
			in.add(imageLabel(in.lang), st|styleItalic, link)
		}
		if dest != "" {
			shown := dest
			if len(shown) > 120 {
				shown = truncateRunes(shown, 100) + "…"
			}
			in.add(" (", st, link)
			in.add(shown, st, linkTarget(n.Destination))
			in.add(")", st, link)
		}
	case *ast.RawHTML:
		var b strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(in.src))
		}
		raw := b.String()
		if isBreakTag(raw) {
			in.spans = append(in.spans, span{br: true})
			return
		}
		in.add(strings.ReplaceAll(raw, "\n", " "), st, link)
	case *east.TaskCheckBox:
		if n.IsChecked {
			in.add("■ ", st, link)
		} else {
			in.add("□ ", st, link)
		}
	default:
		in.collect(n, st, link)
	}
}

// plainText is the text of n's inline descendants without markup.
func plainText(n ast.Node, src []byte) string {
	in := inliner{src: src}
	in.collect(n, 0, "")
	var b strings.Builder
	for _, s := range in.spans {
		if s.br {
			b.WriteByte(' ')
			continue
		}
		b.WriteString(s.text)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func imageLabel(lang string) string {
	if lang == "ru" {
		return "изображение"
	}
	return "image"
}

// isBreakTag reports whether raw is a <br> tag, which reports use to break
// lines inside table cells.
func isBreakTag(raw string) bool {
	s := strings.ToLower(strings.TrimSpace(raw))
	s = strings.TrimSuffix(strings.TrimSuffix(s, ">"), "/")
	return strings.TrimSpace(s) == "<br"
}

// linkTarget returns the URI for a link destination, or "" when it should
// not be clickable: only web and mail links are, since a report's links
// point at sources and a PDF viewer would hand anything else to the system.
func linkTarget(dest []byte) string {
	if len(dest) == 0 || len(dest) > 8<<10 {
		return ""
	}
	u := string(util.URLEscape(bytes.TrimSpace(dest), true))
	scheme, _, ok := strings.Cut(u, ":")
	if !ok {
		return ""
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "mailto", "ftp":
	default:
		return ""
	}
	for i := 0; i < len(u); i++ {
		if u[i] < 0x21 || u[i] > 0x7e {
			return "" // URLEscape leaves no such bytes; be sure
		}
	}
	return u
}

// unescape resolves backslash escapes and character references in Markdown
// text, as an HTML renderer would.
func unescape(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, 0) < 0 {
		return string(v)
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]):
			b.WriteByte(v[i+1])
			i++
		case c == 0:
			b.WriteRune('\uFFFD')
		case c == '&':
			if r, n := charRef(v[i:]); n > 0 {
				b.WriteString(r)
				i += n - 1
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// charRef decodes a character reference at the start of v ("&amp;",
// "&#1046;", "&#x416;") and returns its text and length, or 0.
func charRef(v []byte) (string, int) {
	end := bytes.IndexByte(v, ';')
	if end < 2 || end > 32 {
		return "", 0
	}
	name := string(v[1:end])
	if name[0] == '#' {
		num, base := name[1:], 10
		if num != "" && (num[0] == 'x' || num[0] == 'X') {
			num, base = num[1:], 16
		}
		if num == "" || len(num) > 7 {
			return "", 0
		}
		code, err := strconv.ParseUint(num, base, 32)
		if err != nil {
			return "", 0
		}
		r := rune(code)
		if r == 0 || !utf8.ValidRune(r) {
			r = '\uFFFD'
		}
		return string(r), end + 1
	}
	if e, ok := util.LookUpHTML5EntityByName(name); ok {
		return string(e.Characters), end + 1
	}
	return "", 0
}

func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
