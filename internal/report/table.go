package report

import (
	east "github.com/yuin/goldmark/extension/ast"
)

const (
	tableSize  = 9.0
	cellPadX   = 5.0
	cellPadY   = 3.5
	minCellTxt = 14.0 // narrowest text in a cell, points
	// maxColumns is the widest table drawn as a grid; wider ones cannot be
	// read on a portrait page and are set row by row as text.
	maxColumns = 12
)

type cell struct {
	spans []span
	align align
	lines []line
}

// table sets a GitHub table across the column: widths follow the content,
// cells wrap, the header repeats on each page the table continues on, and
// a row taller than a page is split between pages.
func (r *renderer) table(b box, t *east.Table) {
	var rows [][]cell
	header := false
	ncols := 0
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		if _, ok := row.(*east.TableHeader); ok && len(rows) == 0 {
			header = true
		}
		var cells []cell
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			al := alignLeft
			if tc, ok := c.(*east.TableCell); ok {
				switch tc.Alignment {
				case east.AlignCenter:
					al = alignCenter
				case east.AlignRight:
					al = alignRight
				}
			}
			cells = append(cells, cell{spans: r.spans(c), align: al})
		}
		ncols = max(ncols, len(cells))
		rows = append(rows, cells)
	}
	if ncols == 0 {
		return
	}
	if ncols > maxColumns {
		r.tableAsText(b, rows, header)
		return
	}
	body := styleIn(b, textStyle{size: tableSize, leading: 1.35, color: colorText})
	head := body
	head.base = styleBold
	head.color = colorHeading
	styleOf := func(i int) textStyle {
		if header && i == 0 {
			return head
		}
		return body
	}

	widths := r.columnWidths(rows, ncols, b.w, styleOf)
	for i := range rows {
		for len(rows[i]) < ncols {
			rows[i] = append(rows[i], cell{})
		}
		for j := range rows[i] {
			c := &rows[i][j]
			c.lines = r.m.layout(c.spans, styleOf(i), widths[j]-2*cellPadX)
		}
	}

	lh := body.lineHeight()
	rowLines := func(i int) int {
		n := 1
		for _, c := range rows[i] {
			n = max(n, len(c.lines))
		}
		return n
	}
	rowHeight := func(i int) float64 { return float64(rowLines(i))*lh + 2*cellPadY }
	pageRoom := r.maxY - pageMarginTop
	if header {
		pageRoom -= rowHeight(0)
	}

	r.space(paraGap)
	first := 0
	if header {
		keep := rowHeight(0)
		if len(rows) > 1 {
			keep += min(rowHeight(1), 3*lh+2*cellPadY)
		}
		r.need(keep)
		r.hline(b.x, b.x+b.w, r.y, 0.9, colorHeading)
		r.drawRow(b, rows[0], widths, 0, rowLines(0), head, colorTableHd, 0.6)
		first = 1
	} else {
		r.need(rowHeight(0))
		r.hline(b.x, b.x+b.w, r.y, 0.9, colorHeading)
	}
	continued := func() {
		r.newPage()
		if header {
			r.drawRow(b, rows[0], widths, 0, rowLines(0), head, colorTableHd, 0.6)
		}
	}
	for i := first; i < len(rows) && !r.full; i++ {
		bg := rgb{255, 255, 255}
		if (i-first)%2 == 1 {
			bg = colorZebra
		}
		h, n := rowHeight(i), rowLines(i)
		if r.y+h > r.maxY && h <= pageRoom && r.y > pageMarginTop+0.5 {
			continued()
		}
		for from := 0; from < n && !r.full; {
			k := int((r.maxY - r.y - 2*cellPadY) / lh)
			if k < 1 {
				continued()
				k = max(int((r.maxY-r.y-2*cellPadY)/lh), 1)
			}
			to := min(from+k, n)
			r.drawRow(b, rows[i], widths, from, to, body, bg, 0.3)
			from = to
			if from < n {
				continued()
			}
		}
	}
	r.hline(b.x, b.x+b.w, r.y, 0.9, colorHeading)
	r.space(paraGap + 3)
}

// drawRow draws lines [from, to) of a row's cells at r.y with a background
// and a rule under them, and moves r.y below.
func (r *renderer) drawRow(b box, row []cell, widths []float64, from, to int, ts textStyle, bg rgb, rule float64) {
	lh := ts.lineHeight()
	h := float64(to-from)*lh + 2*cellPadY
	if bg != (rgb{255, 255, 255}) {
		r.fillRect(b.x, r.y, b.w, h, bg)
	}
	r.drawMarker(b, r.y+cellPadY, ts)
	x := b.x
	for j, c := range row {
		cs := ts
		cs.align = c.align
		for k := from; k < to && k < len(c.lines); k++ {
			r.drawLine(c.lines[k], x+cellPadX, r.y+cellPadY+float64(k-from)*lh, widths[j]-2*cellPadX, cs)
		}
		x += widths[j]
	}
	r.y += h
	r.hline(b.x, b.x+b.w, r.y, rule, colorRule)
}

// columnWidths shares the width w between columns the way browsers do for
// tables: each column gets at least its longest word (within reason) and the
// rest goes to the columns whose text would otherwise wrap, in proportion
// to how much they would need on one line.
func (r *renderer) columnWidths(rows [][]cell, ncols int, w float64, styleOf func(int) textStyle) []float64 {
	pad := 2 * cellPadX
	mins := make([]float64, ncols)
	maxs := make([]float64, ncols)
	for i, row := range rows {
		ts := styleOf(i)
		for j, c := range row {
			// The widest line the cell has unwrapped, and its widest word.
			line := 0.0
			for _, wd := range r.m.words(c.spans, ts) {
				if wd.br {
					line = 0
					continue
				}
				if line > 0 {
					line += wd.space
				}
				line += wd.w
				maxs[j] = max(maxs[j], line)
				mins[j] = max(mins[j], wd.w)
			}
		}
	}
	var sumMin, sumMax float64
	for j := range ncols {
		// A long URL may wrap rather than claim the table.
		mins[j] = min(max(mins[j], minCellTxt), w*0.3) + pad
		maxs[j] = max(maxs[j]+pad, mins[j])
		sumMin += mins[j]
		sumMax += maxs[j]
	}
	widths := make([]float64, ncols)
	switch {
	case sumMax <= w:
		for j := range ncols {
			widths[j] = maxs[j] + (w-sumMax)*maxs[j]/sumMax
		}
	case sumMin >= w:
		for j := range ncols {
			widths[j] = mins[j] * w / sumMin
		}
	default:
		for j := range ncols {
			widths[j] = mins[j] + (w-sumMin)*(maxs[j]-mins[j])/(sumMax-sumMin)
		}
	}
	return widths
}

// tableAsText sets a table too wide for the page as one paragraph per row,
// cells separated by bars, the header in bold.
func (r *renderer) tableAsText(b box, rows [][]cell, header bool) {
	r.space(paraGap)
	for i, row := range rows {
		if r.full {
			return
		}
		var spans []span
		for j, c := range row {
			if j > 0 {
				spans = append(spans, span{text: " | "})
			}
			for _, s := range c.spans {
				if header && i == 0 {
					s.st |= styleBold
				}
				spans = append(spans, s)
			}
		}
		ts := styleIn(b, textStyle{size: tableSize, leading: 1.35, color: colorText})
		r.lines(b, r.m.layout(spans, ts, b.w), ts)
		r.space(3)
	}
	r.space(paraGap)
}
