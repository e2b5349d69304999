package fetch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// junctionContext is how many characters either side of a junction between
// two inline pieces are compared with the original page text.
const junctionContext = 24

// inlineElements are rendered inside a line of text; the whitespace between
// them and their neighbours is part of the text.
var inlineElements = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true,
	atom.Cite: true, atom.Code: true, atom.Data: true, atom.Dfn: true, atom.Em: true,
	atom.I: true, atom.Kbd: true, atom.Mark: true, atom.Q: true, atom.S: true,
	atom.Samp: true, atom.Small: true, atom.Span: true, atom.Strong: true, atom.Sub: true,
	atom.Sup: true, atom.Time: true, atom.U: true, atom.Var: true, atom.Del: true,
	atom.Ins: true, atom.Font: true, atom.Strike: true, atom.Tt: true, atom.Big: true,
}

// restoreSpaces puts back the spaces trafilatura drops between inline
// pieces of text. Its tree keeps the text of an element and the text after
// it ("tail") trimmed, so "fund <a>Evidence Action</a> to create" comes out
// as "fund<a>Evidence Action</a>to create" and the words run together. For
// each junction of two inline pieces where neither side has whitespace, the
// original page text (whitespace collapsed) decides: when it has the two
// sides with a space between them and not without, a space is inserted.
// When the original has neither (trafilatura also moves text around), a
// space goes between two letters or digits of scripts that separate words
// with spaces. Scripts without spaces between words (CJK, Thai) are left
// alone.
func restoreSpaces(content *html.Node, original string) {
	if content == nil || original == "" {
		return
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		for c := n.FirstChild; c != nil && c.NextSibling != nil; c = c.NextSibling {
			next := c.NextSibling
			if !isInline(c) || !isInline(next) {
				continue
			}
			left, right := lastText(c), firstText(next)
			if left == nil || right == nil {
				continue
			}
			l, _ := utf8.DecodeLastRuneInString(left.Data)
			r, _ := utf8.DecodeRuneInString(right.Data)
			if l == utf8.RuneError || r == utf8.RuneError || unicode.IsSpace(l) || unicode.IsSpace(r) {
				continue
			}
			tail := lastRunes(collapseSpace(textContent(c)), junctionContext)
			head := firstRunes(collapseSpace(textContent(next)), junctionContext)
			if tail == "" || head == "" {
				continue
			}
			spaced, joined := strings.Contains(original, tail+" "+head), strings.Contains(original, tail+head)
			if (spaced && !joined) || (!spaced && !joined && wordChar(l) && wordChar(r)) {
				left.Data += " "
			}
		}
	}
	walk(content)
}

// wordChar reports whether r is a letter or digit of a script that puts
// spaces between words.
func wordChar(r rune) bool {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return false
	}
	return !unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai,
		unicode.Lao, unicode.Khmer, unicode.Myanmar, unicode.Tibetan)
}

func isInline(n *html.Node) bool {
	return n.Type == html.TextNode || (n.Type == html.ElementNode && inlineElements[elementAtom(n)])
}

// elementAtom is n's atom. Trafilatura builds its output with elements that
// carry only a tag name, so the atom is looked up from that when missing.
func elementAtom(n *html.Node) atom.Atom {
	if n.DataAtom != 0 {
		return n.DataAtom
	}
	return atom.Lookup([]byte(strings.ToLower(n.Data)))
}

// lastText returns the last non-empty text node in n (n itself when it is
// one), descending only into inline elements.
func lastText(n *html.Node) *html.Node {
	if n.Type == html.TextNode {
		if n.Data == "" {
			return nil
		}
		return n
	}
	if !isInline(n) {
		return nil
	}
	for c := n.LastChild; c != nil; c = c.PrevSibling {
		if t := lastText(c); t != nil {
			return t
		}
		if c.Type == html.ElementNode && !isInline(c) {
			return nil
		}
	}
	return nil
}

// firstText is lastText from the other end.
func firstText(n *html.Node) *html.Node {
	if n.Type == html.TextNode {
		if n.Data == "" {
			return nil
		}
		return n
	}
	if !isInline(n) {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := firstText(c); t != nil {
			return t
		}
		if c.Type == html.ElementNode && !isInline(c) {
			return nil
		}
	}
	return nil
}

// collapseSpace trims s and turns every run of whitespace into one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func lastRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

func firstRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
