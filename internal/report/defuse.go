package report

import (
	"strings"
)

// The Markdown parser spends time that grows faster than the input on a few
// shapes: containers nested thousands deep, paragraphs dense with unmatched
// brackets or emphasis markers, tables with thousands of columns. A report
// never looks like that, but its text comes from a model reading the web, so
// defuse rewrites those shapes before parsing to keep rendering time
// proportional to the input. Ordinary documents pass through unchanged.
const (
	// maxNesting is the deepest chain of block quote and list markers kept
	// at the start of a line; deeper markers are dropped.
	maxNesting = 12
	// maxIndent is the most leading whitespace, in columns, kept on a line;
	// nesting by indentation is bounded with it.
	maxIndent = 48
	// maxSpecials is the most inline markup characters one block may hold
	// before they are escaped and shown literally.
	maxSpecials = 1024
	// specialsBudget bounds the sum over blocks of the square of their
	// markup characters, the parser's cost on the worst inputs; once spent,
	// only blocks with little markup keep it.
	specialsBudget = 1 << 25
	// smallSpecials is the markup a block may always keep.
	smallSpecials = 64
	// maxTableColumns and maxTableCells bound a table: the parser pads
	// every row to the header's width.
	maxTableColumns = 64
	maxTableCells   = 200_000
)

// defuse returns src with pathological shapes rewritten (see above).
func defuse(src string) string {
	lines := strings.SplitAfter(src, "\n")
	var (
		out     strings.Builder
		block   []string // current run of non-blank lines outside fences
		fence   string   // the open fence's marker, "" outside code
		spent   int
		changed bool
	)
	out.Grow(len(src) + len(src)/16)
	flush := func() {
		if len(block) == 0 {
			return
		}
		b, c := defuseBlock(block, &spent)
		changed = changed || c
		for _, l := range b {
			out.WriteString(l)
		}
		block = block[:0]
	}
	for _, line := range lines {
		if line == "" {
			continue
		}
		l, c := capNesting(line)
		changed = changed || c
		body := strings.TrimLeft(l[containerPrefix(l):], " \t")
		if fence != "" {
			out.WriteString(l)
			if closesFence(body, fence) {
				fence = ""
			}
			continue
		}
		if f := opensFence(body); f != "" {
			flush()
			fence = f
			out.WriteString(l)
			continue
		}
		if strings.TrimSpace(body) == "" {
			flush()
			out.WriteString(l)
			continue
		}
		block = append(block, l)
	}
	flush()
	if !changed {
		return src
	}
	return out.String()
}

// defuseBlock escapes inline markup in a block that holds too much of it and
// breaks tables that would expand too far. It reports whether it changed
// anything.
func defuseBlock(block []string, spent *int) ([]string, bool) {
	changed := false
	// Tables: the delimiter row fixes the column count; the rows after it
	// in the block are the table's rows.
	for i, l := range block {
		if cols := delimiterColumns(l[containerPrefix(l):]); cols > 0 {
			if cols > maxTableColumns || cols*(len(block)-i) > maxTableCells {
				block[i] = breakDelimiterRow(l)
				changed = true
			}
		}
	}
	// Table rows are parsed cell by cell, so each row is its own unit;
	// anything else is parsed as one block.
	units := [][]int{}
	var cur []int
	for i, l := range block {
		if strings.Contains(l, "|") {
			if len(cur) > 0 {
				units = append(units, cur)
				cur = nil
			}
			units = append(units, []int{i})
			continue
		}
		cur = append(cur, i)
	}
	if len(cur) > 0 {
		units = append(units, cur)
	}
	for _, u := range units {
		n := 0
		for _, i := range u {
			n += countSpecials(block[i][containerPrefix(block[i]):])
		}
		cost := n * n
		if n > maxSpecials || (n > smallSpecials && *spent+cost > specialsBudget) {
			for _, i := range u {
				block[i] = escapeSpecials(block[i])
			}
			changed = true
			continue
		}
		*spent += cost
	}
	return block, changed
}

// isSpecial reports whether c starts inline markup.
func isSpecial(c byte) bool {
	switch c {
	case '*', '_', '[', ']', '<', '`', '~', '!', '(':
		return true
	}
	return false
}

func countSpecials(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isSpecial(s[i]) {
			n++
		}
	}
	return n
}

// escapeSpecials backslash-escapes inline markup after a line's container
// prefix, so that the text shows literally.
func escapeSpecials(line string) string {
	p := containerPrefix(line)
	var b strings.Builder
	b.Grow(len(line) + len(line)/4)
	b.WriteString(line[:p])
	backslashes := 0
	for i := p; i < len(line); i++ {
		c := line[i]
		if isSpecial(c) && c != '(' && backslashes%2 == 0 {
			b.WriteByte('\\')
		}
		if c == '\\' {
			backslashes++
		} else {
			backslashes = 0
		}
		b.WriteByte(c)
	}
	return b.String()
}

// containerPrefix is the length of a line's leading block quote and list
// markers with their indentation.
func containerPrefix(line string) int {
	i := 0
	for {
		j := i
		for k := 0; k < 3 && j < len(line) && line[j] == ' '; k++ {
			j++
		}
		n := markerLen(line[j:])
		if n == 0 {
			return i
		}
		i = j + n
	}
}

// markerLen is the length of a block quote or list marker at the start of
// s, with the space after it, or 0.
func markerLen(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '>':
		if len(s) > 1 && (s[1] == ' ' || s[1] == '\t') {
			return 2
		}
		return 1
	case '-', '*', '+':
		if len(s) > 1 && (s[1] == ' ' || s[1] == '\t') {
			return 2
		}
		return 0
	}
	d := 0
	for d < len(s) && d < 9 && s[d] >= '0' && s[d] <= '9' {
		d++
	}
	if d > 0 && d+1 < len(s) && (s[d] == '.' || s[d] == ')') && (s[d+1] == ' ' || s[d+1] == '\t') {
		return d + 2
	}
	return 0
}

// capNesting drops container markers beyond maxNesting and leading
// whitespace beyond maxIndent columns.
func capNesting(line string) (string, bool) {
	changed := false
	// Nesting by markers.
	i, depth := 0, 0
	for {
		j := i
		for k := 0; k < 3 && j < len(line) && line[j] == ' '; k++ {
			j++
		}
		n := markerLen(line[j:])
		if n == 0 {
			break
		}
		depth++
		if depth > maxNesting {
			// Drop every further marker, keep the text.
			rest := line[j:]
			for {
				rest = strings.TrimLeft(rest, " ")
				m := markerLen(rest)
				if m == 0 {
					break
				}
				rest = rest[m:]
			}
			line = line[:i] + rest
			changed = true
			break
		}
		i = j + n
	}
	// Nesting by indentation.
	cols, k := 0, 0
	for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
		if line[k] == '\t' {
			cols += 4 - cols%4
		} else {
			cols++
		}
		k++
	}
	if cols > maxIndent {
		line = strings.Repeat(" ", maxIndent) + line[k:]
		changed = true
	}
	return line, changed
}

// opensFence returns the fence marker that body opens, or "".
func opensFence(body string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(body) && body[n] == c {
			n++
		}
		if n >= 3 {
			if c == '`' && strings.ContainsRune(body[n:], '`') {
				return "" // an inline code span, not a fence
			}
			return body[:n]
		}
	}
	return ""
}

// closesFence reports whether body closes the fence opened by marker.
func closesFence(body, marker string) bool {
	if !strings.HasPrefix(body, marker) {
		return false
	}
	return strings.TrimLeft(strings.TrimSpace(body), marker[:1]) == ""
}

// delimiterColumns returns the number of columns a table delimiter row
// (like "| --- | :-: |") declares, or 0 when s is not one.
func delimiterColumns(s string) int {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "-") {
		return 0
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '|', '-', ':', ' ', '\t':
		default:
			return 0
		}
	}
	s = strings.TrimPrefix(strings.TrimSuffix(s, "|"), "|")
	if !strings.Contains(s, "|") && !strings.Contains(s, ":") {
		// "---" alone is a thematic break or a setext underline.
		return 0
	}
	return strings.Count(s, "|") + 1
}

// breakDelimiterRow escapes a delimiter row's dashes so that it is text.
func breakDelimiterRow(line string) string {
	return strings.ReplaceAll(line, "-", `\-`)
}
