package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// repairJSON turns a reply that is almost a JSON object into one, so that
// a structured call need not re-ask for what can be mended:
//
//   - Markdown code fences and prose before or after the object;
//   - a truncated tail: an open string is closed, a member whose value was
//     cut off is dropped, and open arrays and objects are closed;
//   - trailing (and doubled) commas;
//   - strings in single quotes, where that is unambiguous: the repaired
//     text must parse, so an apostrophe that ends such a string early
//     makes the repair fail instead of guessing;
//   - Python's True, False and None.
//
// It returns the object as compact JSON and true, or "" and false when the
// reply cannot be repaired. Whether the repaired object fits the schema is
// for the caller to check: a truncated reply may lack required fields.
func repairJSON(text string) (string, bool) {
	body := text
	// A reply in a code fence: start after the fence's info line. An
	// unterminated fence (a cut-off reply) is fine.
	if i := strings.Index(body, "```"); i >= 0 && !strings.Contains(body[:i], "{") {
		body = body[i+3:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.Contains(body[:nl], "{") {
			body = body[nl+1:]
		}
	}
	// Prose before the object may hold braces of its own: try the first
	// few starting points.
	const maxStarts = 8
	start := 0
	for tries := 0; tries < maxStarts; tries++ {
		i := strings.IndexByte(body[start:], '{')
		if i < 0 {
			return "", false
		}
		start += i
		p := &repairer{s: body[start:]}
		if out, err := p.object(0); err == nil && json.Valid([]byte(out)) {
			return out, true
		}
		start++
	}
	return "", false
}

// Errors of the repairing parser.
var (
	errCutOff  = errors.New("cut off") // the text ended inside a value
	errSyntax  = errors.New("not repairable")
	maxNesting = 128
)

// repairer is a lenient JSON parser that writes what it reads back as
// strict JSON. It stops at the end of the first object.
type repairer struct {
	s   string
	pos int
}

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokPunct
	tokString
	tokLiteral
)

type token struct {
	kind  tokenKind
	punct byte
	text  string // a string's JSON (quoted), a literal's text
	cut   bool   // a string or literal the text ended in
}

func (p *repairer) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *repairer) peek() token {
	save := p.pos
	t := p.next()
	p.pos = save
	return t
}

func (p *repairer) next() token {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return token{kind: tokEOF}
	}
	c := p.s[p.pos]
	switch c {
	case '{', '}', '[', ']', ':', ',':
		p.pos++
		return token{kind: tokPunct, punct: c}
	case '"', '\'':
		return p.str(c)
	}
	startLit := p.pos
	for p.pos < len(p.s) && isLiteralByte(p.s[p.pos]) {
		p.pos++
	}
	if p.pos == startLit {
		p.pos++ // anything else is a syntax error
		return token{kind: tokPunct, punct: c}
	}
	lit := p.s[startLit:p.pos]
	switch lit {
	case "True":
		lit = "true"
	case "False":
		lit = "false"
	case "None":
		lit = "null"
	}
	return token{kind: tokLiteral, text: lit, cut: p.pos >= len(p.s)}
}

func isLiteralByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.'
}

// str reads a string quoted with q and returns it as a JSON string.
func (p *repairer) str(q byte) token {
	p.pos++ // the opening quote
	var b strings.Builder
	b.WriteByte('"')
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			b.WriteByte('"')
			return token{kind: tokString, text: b.String()}
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				p.pos++
				continue // a cut-off escape
			}
			e := p.s[p.pos+1]
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				b.WriteByte('\\')
				b.WriteByte(e)
			case 'u':
				if p.pos+6 > len(p.s) {
					p.pos = len(p.s) // a cut-off \u escape
					continue
				}
				b.WriteString(p.s[p.pos : p.pos+6])
				p.pos += 4
			case '\'':
				b.WriteByte('\'')
			default:
				b.WriteString(`\\`)
				b.WriteByte(e)
			}
			p.pos += 2
		case c == '"': // inside a single-quoted string
			b.WriteString(`\"`)
			p.pos++
		case c < 0x20:
			switch c {
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[c>>4])
				b.WriteByte("0123456789abcdef"[c&0xF])
			}
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
			if r == utf8.RuneError && size == 1 && p.pos+size >= len(p.s) {
				p.pos++ // a rune cut in half at the end
				continue
			}
			b.WriteString(p.s[p.pos : p.pos+size])
			p.pos += size
		}
	}
	b.WriteByte('"')
	return token{kind: tokString, text: b.String(), cut: true}
}

// value reads one value. errCutOff means the text ended before the value
// did (except inside a string, which is closed and kept).
func (p *repairer) value(depth int) (string, error) {
	t := p.peek()
	switch {
	case t.kind == tokEOF:
		return "", errCutOff
	case t.kind == tokPunct && t.punct == '{':
		return p.object(depth + 1)
	case t.kind == tokPunct && t.punct == '[':
		return p.array(depth + 1)
	case t.kind == tokString:
		p.next()
		return t.text, nil
	case t.kind == tokLiteral:
		p.next()
		if t.cut && t.text != "true" && t.text != "false" && t.text != "null" {
			return "", errCutOff // "tru", "12" at the very end: perhaps incomplete
		}
		if !json.Valid([]byte(t.text)) {
			return "", errSyntax
		}
		return t.text, nil
	}
	return "", errSyntax
}

func (p *repairer) object(depth int) (string, error) {
	if depth > maxNesting {
		return "", errSyntax
	}
	if t := p.next(); t.kind != tokPunct || t.punct != '{' {
		return "", errSyntax
	}
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for {
		t := p.peek()
		switch {
		case t.kind == tokEOF:
			b.WriteByte('}')
			return b.String(), nil
		case t.kind == tokPunct && t.punct == '}':
			p.next()
			b.WriteByte('}')
			return b.String(), nil
		case t.kind == tokPunct && t.punct == ',':
			p.next() // trailing or doubled commas
			continue
		case t.kind != tokString:
			return "", errSyntax
		}
		key := p.next()
		if key.cut {
			b.WriteByte('}')
			return b.String(), nil
		}
		colon := p.next()
		if colon.kind == tokEOF {
			b.WriteByte('}')
			return b.String(), nil
		}
		if colon.kind != tokPunct || colon.punct != ':' {
			return "", errSyntax
		}
		v, err := p.value(depth)
		if errors.Is(err, errCutOff) {
			b.WriteByte('}')
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(key.text)
		b.WriteByte(':')
		b.WriteString(v)
		n++
		if t := p.peek(); !(t.kind == tokEOF || t.kind == tokPunct && (t.punct == ',' || t.punct == '}')) {
			return "", errSyntax
		}
	}
}

func (p *repairer) array(depth int) (string, error) {
	if depth > maxNesting {
		return "", errSyntax
	}
	p.next() // [
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	for {
		t := p.peek()
		switch {
		case t.kind == tokEOF:
			b.WriteByte(']')
			return b.String(), nil
		case t.kind == tokPunct && t.punct == ']':
			p.next()
			b.WriteByte(']')
			return b.String(), nil
		case t.kind == tokPunct && t.punct == ',':
			p.next()
			continue
		}
		v, err := p.value(depth)
		if errors.Is(err, errCutOff) {
			b.WriteByte(']')
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(v)
		n++
		if t := p.peek(); !(t.kind == tokEOF || t.kind == tokPunct && (t.punct == ',' || t.punct == ']')) {
			return "", errSyntax
		}
	}
}

// RepairJSON mends a text that is almost a JSON object (see repairJSON):
// tool-call arguments a model wrote in a code fence, cut off, with
// trailing commas or single quotes. It returns compact JSON and true, or
// "" and false when the text cannot be mended.
func RepairJSON(text string) (string, bool) { return repairJSON(text) }
