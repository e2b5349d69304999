package fetch

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/rank"
)

// Excerpt is the part of a page's content chosen for a question.
type Excerpt struct {
	// Markdown is what the model reads: the passages in page order, each
	// under the heading it sits under, "[…]" where text was left out.
	Markdown string
	// Sections are the headings of the passages chosen, in page order;
	// empty when the page has no headings or all of it fitted.
	Sections []string
	// Whole is true when the whole content fitted the budget.
	Whole bool
}

// Passage sizes: a block longer than maxPassage characters is split at
// sentence ends into pieces of about passageTarget.
const (
	maxPassage    = 900
	passageTarget = 600
	// openingShare is the share of the budget the page's first passage
	// may take when it is kept for context.
	openingShare = 4
	gapMark      = "[…]"
)

type passage struct {
	text    string
	heading string // the nearest heading above, as written ("## Pricing")
	chars   int
	index   int
}

// SelectPassages fills a budget of characters with the passages of md (a
// page's Markdown) that best match queries (the question and the searches
// made for it): paragraphs scored with BM25 (rank.BM25, stemmed English
// and Russian), the page's opening kept for context, then the best
// passages until the budget is spent, then the page's beginning to fill
// what is left; they are shown in page order, each under its heading.
// With no query terms, or when md fits, it is the page's beginning, as
// trimText cuts it. budget < 0 means no limit.
func SelectPassages(md string, queries []string, budget int) Excerpt {
	if budget < 0 || utf8.RuneCountInString(md) <= budget {
		return Excerpt{Markdown: md, Whole: true}
	}
	q := strings.TrimSpace(strings.Join(queries, "\n"))
	ps := splitPassages(md)
	if q == "" || len(ps) < 2 {
		out, _ := trimText(md, budget)
		return Excerpt{Markdown: out}
	}
	docs := make([]rank.Doc, len(ps))
	for i, p := range ps {
		docs[i] = rank.Doc{Text: strings.TrimLeft(p.heading, "# ") + "\n" + p.text}
	}
	scores := rank.BM25(q, docs, rank.DefaultK1, rank.DefaultB)
	chosen := make([]bool, len(ps))
	used := 0
	// cost is what adding passage i costs: its text, its heading when the
	// passage before it in the output has another, and a gap mark.
	cost := func(i int) int {
		c := ps[i].chars + 2
		if i == 0 || !chosen[i-1] {
			c += utf8.RuneCountInString(gapMark) + 2
			if ps[i].heading != "" {
				c += utf8.RuneCountInString(ps[i].heading) + 2
			}
		} else if ps[i].heading != ps[i-1].heading {
			c += utf8.RuneCountInString(ps[i].heading) + 2
		}
		return c
	}
	take := func(i int) bool {
		if chosen[i] || used+cost(i) > budget {
			return false
		}
		chosen[i] = true
		used += cost(i)
		return true
	}
	if ps[0].chars <= budget/openingShare {
		take(0)
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch sa, sb := scores[a].Score, scores[b].Score; {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	matched := false
	for _, i := range order {
		if scores[i].Score <= 0 {
			break
		}
		if take(i) {
			matched = true
		}
	}
	if !matched {
		out, _ := trimText(md, budget)
		return Excerpt{Markdown: out}
	}
	// What is left goes to the passages right after those chosen, then
	// to the page's beginning.
	for i := range ps {
		if chosen[i] && i+1 < len(ps) && !chosen[i+1] {
			take(i + 1)
		}
	}
	for i := range ps {
		take(i)
	}
	return renderPassages(ps, chosen, budget)
}

func renderPassages(ps []passage, chosen []bool, budget int) Excerpt {
	var b strings.Builder
	var sections []string
	lastHeading, last := "", -1
	for i, p := range ps {
		if !chosen[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if last >= 0 && i != last+1 {
			b.WriteString(gapMark + "\n\n")
		}
		if p.heading != "" && p.heading != lastHeading {
			b.WriteString(p.heading + "\n\n")
			if h := cleanLine(PlainText(p.heading)); len(sections) == 0 || sections[len(sections)-1] != h {
				sections = append(sections, h)
			}
		}
		lastHeading = p.heading
		b.WriteString(p.text)
		last = i
	}
	if last < len(ps)-1 {
		b.WriteString("\n\n" + gapMark)
	}
	out, _ := trimText(b.String(), budget)
	return Excerpt{Markdown: out, Sections: sections}
}

// splitPassages cuts md into passages: its blocks (split at blank lines,
// code fences kept whole), long ones split at sentence ends, each with
// the heading it sits under. Headings are not passages.
func splitPassages(md string) []passage {
	var out []passage
	var headings [7]string
	add := func(text string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		h := ""
		for l := 6; l >= 1; l-- {
			if headings[l] != "" {
				h = headings[l]
				break
			}
		}
		for _, piece := range splitLong(text) {
			out = append(out, passage{text: piece, heading: h, chars: utf8.RuneCountInString(piece), index: len(out)})
		}
	}
	for _, blk := range markdownBlocks(md) {
		if lvl := headingLevel(blk); lvl > 0 {
			headings[lvl] = strings.TrimSpace(blk)
			for l := lvl + 1; l < len(headings); l++ {
				headings[l] = ""
			}
			continue
		}
		add(blk)
	}
	return out
}

// headingLevel is the level of an ATX heading block of one line, else 0.
func headingLevel(blk string) int {
	if strings.Contains(strings.TrimSpace(blk), "\n") {
		return 0
	}
	n := 0
	for n < len(blk) && blk[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(blk) || blk[n] != ' ' {
		return 0
	}
	return n
}

// markdownBlocks splits md at blank lines, keeping fenced code blocks
// whole.
func markdownBlocks(md string) []string {
	var out []string
	var cur []string
	fenced := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if mdFence.MatchString(line) {
			fenced = !fenced
		}
		if !fenced && strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

// splitLong splits a block longer than maxPassage characters at line
// breaks or sentence ends into pieces of about passageTarget.
func splitLong(text string) []string {
	if utf8.RuneCountInString(text) <= maxPassage {
		return []string{text}
	}
	var out []string
	for utf8.RuneCountInString(text) > maxPassage {
		head, _ := trimText(text, passageTarget)
		if head == "" {
			break
		}
		out = append(out, head)
		text = strings.TrimSpace(text[len(head):])
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
