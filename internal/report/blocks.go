package report

import (
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// headingStyles are the sizes and spacing of heading levels 1 to 6.
var headingStyles = [6]struct {
	size, before, after float64
	italic              bool
}{
	{18, 20, 8, false},
	{15, 16, 6, false},
	{12.5, 13, 5, false},
	{11, 10, 4, false},
	{10.5, 9, 3, true},
	{10.5, 9, 3, true},
}

const (
	listIndent  = 18.0 // per nesting level
	quoteIndent = 14.0
	// minColumn is the narrowest a nested block is set: deeper nesting
	// stops indenting rather than squeezing text into a sliver.
	minColumn = 200.0
)

// titleBlock sets the title, date and author at the top of the first page.
func (r *renderer) titleBlock() {
	if r.title == "" && r.date.IsZero() && r.author == "" {
		return
	}
	if r.title != "" {
		ts := textStyle{size: 22, leading: 1.25, color: colorHeading, base: styleBold}
		r.lines(box{x: r.left, w: r.width}, r.m.layout([]span{{text: r.title}}, ts, r.width), ts)
	}
	var meta []string
	if !r.date.IsZero() {
		meta = append(meta, formatDate(r.date, r.lang))
	}
	if r.author != "" {
		meta = append(meta, r.author)
	}
	if len(meta) > 0 {
		r.y += 4
		ts := textStyle{size: 9.5, leading: 1.4, color: colorMuted}
		r.lines(box{x: r.left, w: r.width}, r.m.layout([]span{{text: strings.Join(meta, "  ·  ")}}, ts, r.width), ts)
	}
	r.y += 8
	r.hline(r.left, r.left+r.width, r.y, 1.2, colorHeading)
	r.y += 2
	r.space(16)
}

var monthsRu = [12]string{"января", "февраля", "марта", "апреля", "мая", "июня",
	"июля", "августа", "сентября", "октября", "ноября", "декабря"}

// formatDate writes a date the way readers of the language expect.
func formatDate(t time.Time, lang string) string {
	if lang == "ru" {
		return strconv.Itoa(t.Day()) + " " + monthsRu[t.Month()-1] + " " + strconv.Itoa(t.Year()) + " г."
	}
	return t.Format("January 2, 2006")
}

// blocks renders the block children of parent.
func (r *renderer) blocks(b box, parent ast.Node) {
	for n := parent.FirstChild(); n != nil && !r.full; n = n.NextSibling() {
		if n.Type() != ast.TypeInline {
			r.block(b, n)
			continue
		}
		// Inline content straight in a container, which the parser does
		// not produce today: set the run of it as a paragraph.
		in := inliner{src: r.src, lang: r.lang}
		for ; n.NextSibling() != nil && n.NextSibling().Type() == ast.TypeInline; n = n.NextSibling() {
			in.node(n, 0, "")
		}
		in.node(n, 0, "")
		ts := styleIn(b, bodyStyle)
		r.lines(b, r.m.layout(in.spans, ts, b.w), ts)
		r.space(paraGap)
	}
}

func (r *renderer) block(b box, n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		r.heading(b, n)
	case *ast.Paragraph:
		if !r.imageParagraph(b, n) {
			r.paragraph(b, n)
		}
		r.space(paraGap)
	case *ast.TextBlock:
		r.paragraph(b, n)
		r.space(2)
	case *ast.List:
		r.list(b, n)
	case *ast.Blockquote:
		r.quote(b, n)
	case *ast.FencedCodeBlock:
		r.code(b, n.Lines())
	case *ast.CodeBlock:
		r.code(b, n.Lines())
	case *ast.ThematicBreak:
		r.rule(b)
	case *ast.HTMLBlock:
		r.html(b, n)
	case *east.Table:
		r.table(b, n)
	default:
		r.blocks(b, n)
	}
}

// styleIn is ts with the text colour of the box.
func styleIn(b box, ts textStyle) textStyle {
	if b.color != nil {
		ts.color = *b.color
	}
	return ts
}

func (r *renderer) spans(n ast.Node) []span {
	in := inliner{src: r.src, lang: r.lang}
	in.collect(n, 0, "")
	return in.spans
}

// paragraph sets a block's inline content.
func (r *renderer) paragraph(b box, n ast.Node) {
	ts := styleIn(b, bodyStyle)
	lns := r.m.layout(r.spans(n), ts, b.w)
	if len(lns) == 0 {
		return
	}
	r.lines(b, lns, ts)
}

// heading sets a heading, keeps it with the two lines after it, and adds it
// to the PDF outline.
func (r *renderer) heading(b box, h *ast.Heading) {
	level := min(max(h.Level, 1), 6)
	hs := headingStyles[level-1]
	ts := textStyle{size: hs.size, leading: 1.3, color: colorHeading, base: styleBold}
	if hs.italic {
		ts.base |= styleItalic
	}
	if b.color != nil {
		ts.color = *b.color
	}
	lns := r.m.layout(r.spans(h), ts, b.w)
	if len(lns) == 0 {
		return
	}
	r.space(hs.before)
	height := float64(len(lns))*ts.lineHeight() + hs.after
	if level <= 2 {
		height += 4
	}
	r.need(height + 2*bodyStyle.lineHeight())

	// Outline levels may rise by one at a time only.
	lvl := min(max(level-r.minLevel, 0), r.outline+1)
	r.outline = lvl
	r.setFont(fontBold, ts.size)
	r.pdf.Bookmark(r.m.clean(plainText(h, r.src), fontBold), lvl, r.y)

	r.lines(b, lns, ts)
	if level <= 2 && b.marker == nil {
		r.y += 2
		weight := 0.6
		if level == 2 {
			weight = 0.35
		}
		r.hline(b.x, b.x+b.w, r.y, weight, colorRule)
		r.y += 2
	}
	r.space(hs.after)
}

// list sets a bullet or numbered list; items are indented, nested lists
// further, with bullets that change by depth.
func (r *renderer) list(b box, l *ast.List) {
	indent := listIndent
	num := l.Start
	delim := string(l.Marker)
	if l.IsOrdered() {
		last := num + l.ChildCount() - 1
		w := r.m.width(strconv.Itoa(last)+delim, fontRegular, bodySize)
		indent = max(indent, w+7)
	}
	inner := b
	if b.w-indent >= minColumn {
		inner.x += indent
		inner.w -= indent
	}
	inner.depth++
	bullets := []string{"•", "◦", "▪"}
	for item := l.FirstChild(); item != nil && !r.full; item = item.NextSibling() {
		text := bullets[(b.depth)%len(bullets)]
		right := inner.x - 6
		if l.IsOrdered() {
			text = strconv.Itoa(num) + delim
			right = inner.x - 5
			num++
		}
		if cb := taskCheckBox(item); cb != nil {
			// A task item shows its box where the bullet would be.
			text, right = "□", inner.x-5
			if cb.IsChecked {
				text = "■"
			}
			cb.Parent().RemoveChild(cb.Parent(), cb)
		}
		mk := &marker{text: text, right: right}
		ib := inner
		ib.marker = mk
		r.blocks(ib, item)
		if !mk.done {
			// An empty item still shows its marker.
			r.need(bodyStyle.lineHeight())
			r.drawMarker(ib, r.y, bodyStyle)
			r.y += bodyStyle.lineHeight()
		}
		if l.IsTight {
			r.space(2)
		} else {
			r.space(paraGap)
		}
	}
	if b.depth == 0 || !l.IsTight {
		r.space(paraGap)
	}
}

// taskCheckBox returns the check box that opens a task list item, or nil.
func taskCheckBox(item ast.Node) *east.TaskCheckBox {
	if tb := item.FirstChild(); tb != nil {
		if cb, ok := tb.FirstChild().(*east.TaskCheckBox); ok {
			return cb
		}
	}
	return nil
}

// quote sets a block quote: indented, in a softer colour, with a rule on
// its left that follows it across pages.
func (r *renderer) quote(b box, q *ast.Blockquote) {
	r.space(paraGap)
	r.need(bodyStyle.lineHeight())
	inner := b
	c := colorQuote
	inner.color = &c
	bar := &quoteBar{x: b.x, top: r.y}
	if b.w-quoteIndent >= minColumn {
		inner.x += quoteIndent
		inner.w -= quoteIndent
	}
	if b.marker != nil && !b.marker.done {
		// The item's marker goes beside the quote's first line.
		r.drawMarker(b, r.y, bodyStyle)
	}
	inner.marker = nil
	r.quotes = append(r.quotes, bar)
	r.blocks(inner, q)
	r.quotes = r.quotes[:len(r.quotes)-1]
	r.drawBar(bar, r.y)
	r.space(paraGap)
}

// code sets a code block: monospace, shaded, long lines wrapped, split
// across pages with the shading on each part.
func (r *renderer) code(b box, segs *text.Segments) {
	const padX, padY = 8.0, 6.0
	ts := styleIn(b, textStyle{size: 8.6, leading: 1.4, color: colorText})
	lh := ts.lineHeight()
	var vis []line
	inner := b.w - 2*padX
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		l := strings.Repeat(" ", seg.Padding) + string(seg.Value(r.src))
		l = strings.TrimRight(l, "\r\n")
		vis = append(vis, r.wrapCode(r.m.clean(expandTabs(l), fontMono), ts.size, inner)...)
	}
	for len(vis) > 0 && len(vis[len(vis)-1].frags) == 0 {
		vis = vis[:len(vis)-1]
	}
	if len(vis) == 0 {
		vis = []line{{}}
	}
	r.space(2)
	for i := 0; i < len(vis) && !r.full; {
		r.need(2*padY + lh)
		n := max(int((r.maxY-r.y-2*padY)/lh), 1)
		n = min(n, len(vis)-i)
		h := 2*padY + float64(n)*lh
		r.fillRect(b.x, r.y, b.w, h, colorCodeBg)
		r.drawMarker(b, r.y+padY, ts)
		for k := 0; k < n; k++ {
			r.drawLine(vis[i+k], b.x+padX, r.y+padY+float64(k)*lh, inner, ts)
		}
		r.y += h
		i += n
		if i < len(vis) {
			r.newPage()
		}
	}
	r.space(paraGap + 2)
}

// wrapCode breaks a line of code into lines no wider than w, keeping its
// spaces.
func (r *renderer) wrapCode(l string, size, w float64) []line {
	if l == "" {
		return []line{{}}
	}
	var out []line
	start, acc := 0, 0.0
	for i, c := range l {
		cw := r.m.runeWidth(c, fontMono, size)
		if acc+cw > w && i > start {
			out = append(out, codeLine(l[start:i], acc, size))
			start, acc = i, 0
		}
		acc += cw
	}
	return append(out, codeLine(l[start:], acc, size))
}

func codeLine(s string, w, size float64) line {
	return line{frags: []frag{{text: s, font: fontMono, size: size, w: w}}, w: w}
}

// expandTabs replaces tabs with spaces to the next multiple of four columns.
func expandTabs(s string) string {
	if !strings.ContainsRune(s, '\t') {
		return s
	}
	var b strings.Builder
	col := 0
	for _, c := range s {
		if c == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(c)
		col++
	}
	return b.String()
}

// html shows a raw HTML block as its text, line by line: a report has no
// business running markup, and hiding it would hide content.
func (r *renderer) html(b box, h *ast.HTMLBlock) {
	var spans []span
	add := func(v []byte) {
		spans = append(spans, span{text: strings.TrimRight(string(v), "\r\n")}, span{br: true})
	}
	segs := h.Lines()
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		add(seg.Value(r.src))
	}
	if h.HasClosure() {
		cl := h.ClosureLine
		add(cl.Value(r.src))
	}
	ts := styleIn(b, bodyStyle)
	ts.color = colorMuted
	lns := r.m.layout(spans, ts, b.w)
	// Lines that were blank come back empty; keep them as gaps.
	r.lines(b, lns, ts)
	r.space(paraGap)
}

// rule sets a thematic break.
func (r *renderer) rule(b box) {
	r.space(10)
	r.need(1)
	r.drawMarker(b, r.y-bodyStyle.lineHeight()/2, bodyStyle)
	r.hline(b.x, b.x+b.w, r.y, 0.6, colorRule)
	r.space(10)
}
