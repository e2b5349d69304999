package report

import (
	"math"
	"strings"
)

// rgb is a colour.
type rgb struct{ r, g, b int }

// align is the horizontal alignment of lines in their box.
type align uint8

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// textStyle is how a block sets its text.
type textStyle struct {
	size    float64 // points
	leading float64 // line height as a multiple of size
	color   rgb
	base    style // attributes every span gets (bold for headings)
	align   align
}

func (ts textStyle) lineHeight() float64 { return ts.size * ts.leading }

// frag is a piece of text in one font placed on a line.
type frag struct {
	text string
	font fontID
	size float64
	w    float64
	x    float64 // from the start of the line
	st   style
	link string
	span int // index of the span it came from
}

// line is one laid-out line of a block.
type line struct {
	frags []frag
	w     float64
}

// word is an unbreakable run of frags and the space before it.
type word struct {
	frags []frag
	w     float64
	space float64
	br    bool
}

// codeScale is the size of inline code relative to the text around it: the
// monospace face looks larger than the proportional one at the same size.
const codeScale = 0.88

// fontFor returns the face for a set of attributes.
func fontFor(st style) fontID {
	switch {
	case st&styleCode != 0:
		return fontMono
	case st&styleBold != 0 && st&styleItalic != 0:
		return fontBoldItalic
	case st&styleBold != 0:
		return fontBold
	case st&styleItalic != 0:
		return fontItalic
	}
	return fontRegular
}

// words splits spans into words at spaces.
func (m *metrics) words(spans []span, ts textStyle) []word {
	var (
		out     []word
		pending float64 // width of a space seen since the last word
		open    bool    // the last word may still grow
	)
	for si, s := range spans {
		if s.br {
			out = append(out, word{br: true})
			open, pending = false, 0
			continue
		}
		st := s.st | ts.base
		f := fontFor(st)
		size := ts.size
		if st&styleCode != 0 {
			size *= codeScale
		}
		text := m.clean(s.text, f)
		if strings.ContainsRune(text, '\n') {
			text = strings.ReplaceAll(text, "\n", " ")
		}
		start := 0
		for i := 0; i <= len(text); i++ {
			if i < len(text) && text[i] != ' ' {
				continue
			}
			if i > start {
				piece := text[start:i]
				fr := frag{text: piece, font: f, size: size, w: m.width(piece, f, size), st: st, link: s.link, span: si}
				if !open || pending > 0 {
					out = append(out, word{space: pending})
					pending = 0
				}
				wd := &out[len(out)-1]
				wd.frags = append(wd.frags, fr)
				wd.w += fr.w
				open = true
			}
			if i < len(text) {
				if sw := m.runeWidth(' ', f, size); sw > pending {
					pending = sw
				}
				open = false
			}
			start = i + 1
		}
	}
	return out
}

// breakAfter reports whether a long word such as a URL may be broken after r.
func breakAfter(r rune) bool {
	switch r {
	case '/', '-', '?', '&', '=', '_', '.', ',', ';', '#', '+', ':', '|', '–', '—':
		return true
	}
	return false
}

// lineBuilder fills lines greedily.
type lineBuilder struct {
	m     *metrics
	maxW  float64
	lines []line
	cur   line
}

func (lb *lineBuilder) flush() {
	lb.lines = append(lb.lines, lb.cur)
	lb.cur = line{}
}

// place appends frags to the current line after a space sp wide. A frag in
// the same face and style as the one before it joins it, across the space
// when sp is exactly that face's space, so that a line costs one text
// operator per run of style rather than one per word.
func (lb *lineBuilder) place(frags []frag, sp float64) {
	x := lb.cur.w + sp
	for i, f := range frags {
		f.x = x
		x += f.w
		if n := len(lb.cur.frags); n > 0 {
			last := &lb.cur.frags[n-1]
			gap := 0.0
			if i == 0 {
				gap = sp
			}
			if last.sameRun(f) {
				switch {
				case gap == 0:
					last.text += f.text
					last.w = f.x + f.w - last.x
					continue
				case math.Abs(gap-lb.m.runeWidth(' ', f.font, f.size)) < 1e-9:
					last.text += " " + f.text
					last.w = f.x + f.w - last.x
					continue
				}
			}
		}
		lb.cur.frags = append(lb.cur.frags, f)
	}
	lb.cur.w = x
}

// sameRun reports whether g can be drawn in one piece with f: same face,
// size, attributes and link, and for code the same span, whose background
// is one box.
func (f *frag) sameRun(g frag) bool {
	return f.font == g.font && f.size == g.size && f.st == g.st && f.link == g.link &&
		(f.st&styleCode == 0 || f.span == g.span)
}

// layout breaks spans into lines no wider than maxW. Words wider than a line
// are broken, at a URL's punctuation where that keeps most of the line.
func (m *metrics) layout(spans []span, ts textStyle, maxW float64) []line {
	lb := lineBuilder{m: m, maxW: maxW}
	const eps = 0.01
	for _, wd := range m.words(spans, ts) {
		if wd.br {
			lb.flush()
			continue
		}
		sp := wd.space
		if len(lb.cur.frags) == 0 {
			sp = 0
		}
		if lb.cur.w+sp+wd.w <= maxW+eps {
			lb.place(wd.frags, sp)
			continue
		}
		if len(lb.cur.frags) > 0 && (wd.w <= maxW+eps || maxW-lb.cur.w-sp < maxW/4) {
			lb.flush()
			sp = 0
			if wd.w <= maxW+eps {
				lb.place(wd.frags, 0)
				continue
			}
		}
		lb.placeLong(wd, sp)
	}
	if len(lb.cur.frags) > 0 {
		lb.flush()
	}
	return lb.lines
}

// glyph is one character of a long word being broken.
type glyph struct {
	frag int // index into the word's frags
	off  int // byte offset in that frag's text
	w    float64
	r    rune
}

// placeLong places a word wider than the room left, over as many lines as
// it takes. Every line gets at least one character, so it always ends.
func (lb *lineBuilder) placeLong(wd word, sp float64) {
	var gs []glyph
	for fi, f := range wd.frags {
		for off, r := range f.text {
			gs = append(gs, glyph{frag: fi, off: off, w: lb.m.runeWidth(r, f.font, f.size), r: r})
		}
	}
	start := 0
	for start < len(gs) {
		avail := lb.maxW - lb.cur.w - sp
		acc, end, brk, brkW := 0.0, start, -1, 0.0
		for end < len(gs) && (end == start || acc+gs[end].w <= avail) {
			acc += gs[end].w
			end++
			if breakAfter(gs[end-1].r) {
				brk, brkW = end, acc
			}
		}
		if end < len(gs) && brk > start && brk < end && brkW >= avail/2 {
			end = brk
		}
		lb.place(wd.pieces(gs, start, end), sp)
		sp = 0
		start = end
		if start < len(gs) {
			lb.flush()
		}
	}
}

// pieces returns the frags covering glyphs [a, b) of the word.
func (wd word) pieces(gs []glyph, a, b int) []frag {
	var out []frag
	for i := a; i < b; {
		fi := gs[i].frag
		j, w := i, 0.0
		for j < b && gs[j].frag == fi {
			w += gs[j].w
			j++
		}
		f := wd.frags[fi]
		endOff := len(f.text)
		if j < len(gs) && gs[j].frag == fi {
			endOff = gs[j].off
		}
		f.text = f.text[gs[i].off:endOff]
		f.w = w
		out = append(out, f)
		i = j
	}
	return out
}
