package spaces

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunk is one passage of a document: the unit that is indexed, found
// and cited.
type Chunk struct {
	// Seq is the passage's 1-based position in its document.
	Seq int `json:"seq"`
	// Heading is the path of headings the passage sits under,
	// "Part > Section"; empty before the first heading.
	Heading string `json:"heading,omitempty"`
	Text    string `json:"text"`
	// Page is the 1-based page of a PDF the passage starts on; 0 for
	// formats without pages.
	Page int `json:"page,omitempty"`
}

// headingSep joins the levels of a heading path.
const headingSep = " > "

// chunker cuts a document's blocks into chunks of about size characters.
// A chunk never spans two sections: each heading starts a new chunk and is
// carried, with its parents, by every chunk of its section, so a passage
// is always found and shown with its headings. A section longer than size
// is cut at paragraph, then sentence, then word boundaries; each of its
// later chunks begins with up to overlap characters of the end of the
// previous one (whole sentences where possible), so a fact cut in two is
// still found whole.
type chunker struct {
	size, overlap int

	emit     func(Chunk)
	n        int // chunks emitted
	headings []string
	cur      strings.Builder
	curLen   int // characters in cur
	page     int // page of cur's first paragraph
	lastPage int // page of the paragraph added last
	carried  int // characters at the start of cur that repeat the previous chunk
}

func chunkBlocks(blocks []block, size, overlap int) []Chunk {
	var out []Chunk
	eachChunk(blocks, size, overlap, func(c Chunk) { out = append(out, c) })
	return out
}

// eachChunk cuts blocks into chunks as chunkBlocks does, handing each to
// fn as it is made (so that a large document's chunks need not all be in
// memory at once), and returns how many there were.
func eachChunk(blocks []block, size, overlap int, fn func(Chunk)) int {
	c := &chunker{size: max(size, 100), overlap: max(0, min(overlap, size/2)), emit: fn}
	for _, b := range blocks {
		switch b.kind {
		case blockHeading:
			c.flush(false)
			level := max(1, b.level)
			if len(c.headings) >= level {
				c.headings = c.headings[:level-1]
			}
			// A copy: the heading is often a slice of the whole file's
			// text, which it would otherwise keep in memory.
			c.headings = append(c.headings, strings.Clone(oneLine(b.text)))
		case blockParagraphs:
			for para := range strings.SplitSeq(b.text, paraSep) {
				c.paragraph(para, b.page)
			}
		default:
			c.paragraph(b.text, b.page)
		}
	}
	c.flush(false)
	return c.n
}

func (c *chunker) paragraph(text string, page int) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	n := utf8.RuneCountInString(text)
	if n > c.size {
		// Pieces leave room for the overlap carried into their chunk.
		for _, piece := range splitLong(text, max(c.size-c.overlap-2, c.size/2)) {
			c.add(piece, utf8.RuneCountInString(piece), page, " ")
		}
		return
	}
	c.add(text, n, page, "\n\n")
}

// add appends a piece, first closing the chunk when the piece would not fit.
func (c *chunker) add(piece string, n, page int, sep string) {
	if c.curLen > c.carried && c.curLen+len(sep)+n > c.size {
		c.flush(true)
	}
	if c.carried > 0 && c.curLen == c.carried && c.curLen+len(sep)+n > c.size {
		// The piece does not fit after the carried overlap: drop the overlap.
		c.reset("", page)
	}
	if c.curLen == 0 {
		c.page = page
	}
	c.lastPage = page
	if c.cur.Len() > 0 {
		c.cur.WriteString(sep)
		c.curLen += len(sep)
	}
	c.cur.WriteString(piece)
	c.curLen += n
}

// flush closes the current chunk; with carry the next chunk of the same
// section starts with the end of this one.
func (c *chunker) flush(carry bool) {
	if c.curLen == 0 || c.curLen == c.carried {
		if !carry {
			c.reset("", 0)
		}
		return
	}
	text := c.cur.String()
	c.n++
	c.emit(Chunk{
		Seq:     c.n,
		Heading: strings.Join(c.headings, headingSep),
		Text:    text,
		Page:    c.page,
	})
	tail := ""
	if carry && c.overlap > 0 {
		tail = overlapTail(text, c.overlap)
	}
	c.reset(tail, c.lastPage)
}

func (c *chunker) reset(tail string, page int) {
	c.cur.Reset()
	c.cur.WriteString(tail)
	c.curLen = utf8.RuneCountInString(tail)
	c.carried = c.curLen
	c.page = page
}

// overlapTail returns the longest run of whole sentences at the end of
// text that fits in n characters, or else the words that do.
func overlapTail(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return ""
	}
	// Byte index where the last n characters start.
	start := len(text)
	for i := 0; i < n && start > 0; i++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	window := text[start:]
	for _, end := range sentenceEnds(window) {
		if rest := strings.TrimSpace(window[end:]); rest != "" {
			return rest
		}
	}
	// No sentence starts inside the window: take whole words.
	if r, _ := utf8.DecodeLastRuneInString(text[:start]); unicode.IsSpace(r) {
		return strings.TrimSpace(window)
	}
	if i := strings.IndexAny(window, " \n\t"); i >= 0 {
		return strings.TrimSpace(window[i:])
	}
	return ""
}

// splitLong cuts a paragraph longer than size into pieces of at most size
// characters at sentence ends, or at spaces inside very long sentences.
func splitLong(text string, size int) []string {
	var (
		out   []string
		cur   strings.Builder
		curN  int
		start int
	)
	emit := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
		curN = 0
	}
	addSentence := func(s string) {
		n := utf8.RuneCountInString(s)
		if curN > 0 && curN+1+n > size {
			emit()
		}
		if n > size {
			for _, w := range splitWords(s, size) {
				if curN > 0 {
					emit()
				}
				cur.WriteString(w)
				curN = utf8.RuneCountInString(w)
			}
			return
		}
		if curN > 0 {
			cur.WriteByte(' ')
			curN++
		}
		cur.WriteString(s)
		curN += n
	}
	for _, end := range sentenceEnds(text) {
		addSentence(strings.TrimSpace(text[start:end]))
		start = end
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		addSentence(rest)
	}
	emit()
	return out
}

// splitWords cuts text at spaces into pieces of at most size characters
// (a single longer word is cut where it must be).
func splitWords(text string, size int) []string {
	var out []string
	for len(text) > 0 {
		if utf8.RuneCountInString(text) <= size {
			out = append(out, text)
			break
		}
		cut, count := 0, 0
		lastSpace := -1
		for i := range text {
			if count == size {
				cut = i
				break
			}
			if text[i] == ' ' {
				lastSpace = i
			}
			count++
		}
		if lastSpace > 0 {
			cut = lastSpace
		}
		out = append(out, strings.TrimSpace(text[:cut]))
		text = strings.TrimSpace(text[cut:])
	}
	return out
}

// sentenceEnds returns the byte offsets just after each sentence end in
// text: a '.', '!', '?' or '…' (with any closing quotes or brackets)
// followed by white space and then something that can start a sentence,
// or a line break.
func sentenceEnds(text string) []int {
	var ends []int
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r == '\n' {
			ends = append(ends, i)
			continue
		}
		if r != '.' && r != '!' && r != '?' && r != '…' {
			continue
		}
		j := i
		for j < len(text) {
			q, qs := utf8.DecodeRuneInString(text[j:])
			if !strings.ContainsRune(`"')]»”’`, q) {
				break
			}
			j += qs
		}
		if j >= len(text) {
			continue
		}
		sp, ss := utf8.DecodeRuneInString(text[j:])
		if !unicode.IsSpace(sp) {
			continue
		}
		k := j + ss
		for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
			k++
		}
		if k >= len(text) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(text[k:])
		if unicode.IsUpper(next) || unicode.IsDigit(next) || strings.ContainsRune(`"'(«“‘-—[`, next) || next == '\n' {
			ends = append(ends, j)
		}
	}
	return ends
}

// oneLine collapses white space, for headings.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
