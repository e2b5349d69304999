package fetch

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Thresholds of chooseContent, measured on the article-extraction
// benchmark (see chooseContent).
const (
	// containedShare: the share of readability's shingles that must also be
	// in trafilatura's text for readability's to count as contained in it.
	containedShare = 0.9
	// extraShare: trafilatura's text is "larger" when fewer than this share
	// of its shingles are in readability's.
	extraShare = 0.95
	// growthFactor, proseWords: readability replaces a contained
	// trafilatura text when it is this many times longer and what it adds
	// is paragraphs of at least proseWords words on average, none repeated.
	growthFactor = 2
	proseWords   = 40
	// shortChars, shortFactor, shortGain: a trafilatura text under
	// shortChars characters gives way to a readability text shortFactor
	// times as long and at least shortGain characters longer.
	shortChars  = 700
	shortFactor = 2
	shortGain   = 400
)

// Extractor names, for Page.Extractor and the benchmark.
const (
	ExtractorTrafilatura = "trafilatura"
	ExtractorReadability = "readability"
)

// chooseContent picks between trafilatura's and readability's Markdown of
// the same page. Trafilatura is the better extractor on its own (shingle F1
// 0.958 against 0.949 on the article-extraction benchmark), but the two
// fail differently, and where one's text contains the other's, the
// difference says which failed:
//
//   - trafilatura's text is a short block (under shortChars: a standfirst,
//     a byline, a cookie notice, an "about us" blurb) and readability's is
//     several times longer: trafilatura latched on to the wrong block, and
//     readability's is kept whether or not the two overlap;
//   - readability's text lies within trafilatura's, and trafilatura has
//     more: the extra is nearly always boilerplate around the article
//     (related links, captions, teasers), so readability's tighter text is
//     kept — unless trafilatura's opens with a prose paragraph readability
//     lacks (losesOpening): then readability cut the article's opening;
//   - trafilatura's text lies within readability's, readability's is at
//     least twice as long, and what it adds is long paragraphs without
//     repeats: trafilatura stopped early (for example at an advert inside
//     the article), so readability's is kept. Repeated or short added
//     blocks are listings and share bars, so trafilatura's stays.
//
// Everything else keeps trafilatura's text. On the article-extraction
// benchmark the choice raises F1 from 0.959 to 0.970. The short-block and
// lost-opening rules came from the trafilatura evaluation set (snippets,
// about 980 pages), where the choice without them scored below
// trafilatura alone; they leave the benchmark's figure as it was (see
// docs/benchmarks.md).
func chooseContent(traf, read string) (string, string) {
	if strings.TrimSpace(read) == "" {
		return traf, ExtractorTrafilatura
	}
	if strings.TrimSpace(traf) == "" {
		return read, ExtractorReadability
	}
	pt, pr := PlainText(traf), PlainText(read)
	ts, rs := shingleSet(pt), shingleSet(pr)
	nt, nr := total(ts), total(rs)
	if nt == 0 || nr == 0 {
		if nr > nt {
			return read, ExtractorReadability
		}
		return traf, ExtractorTrafilatura
	}
	common := intersection(ts, rs)
	inTraf := float64(common) / float64(nr) // share of readability's text in trafilatura's
	inRead := float64(common) / float64(nt) // share of trafilatura's text in readability's
	switch {
	case shortTraf(utf8.RuneCountInString(pt), utf8.RuneCountInString(pr)):
		return read, ExtractorReadability
	case inTraf >= containedShare && inRead < extraShare && !losesOpening(traf, rs):
		return read, ExtractorReadability
	case inRead >= extraShare && nr > growthFactor*nt && addsProse(ts, read):
		return read, ExtractorReadability
	}
	return traf, ExtractorTrafilatura
}

// shortTraf reports, from the lengths of their plain texts, whether
// trafilatura's text is a short block (a standfirst, a byline, a cookie
// notice, a blurb: under shortChars) while readability's is several times
// longer: trafilatura then latched on to the wrong block, whether or not
// the two overlap.
func shortTraf(nt, nr int) bool {
	return nt < shortChars && nr >= shortFactor*nt && nr-nt >= shortGain
}

// losesOpening reports whether trafilatura's text opens, before the first
// block it shares with readability's (shingles read), with a paragraph of
// at least proseWords words: readability's text is then the article less
// its opening (a lede, an introduction), not the article less
// boilerplate, which comes in short blocks.
func losesOpening(traf string, read map[uint64]int) bool {
	for _, b := range strings.Split(traf, "\n\n") {
		pt := PlainText(b)
		s := shingleSet(pt)
		n := total(s)
		if n == 0 {
			continue
		}
		if 2*intersection(s, read) >= n {
			return false
		}
		if len(wordsOf(pt)) >= proseWords {
			return true
		}
	}
	return false
}

// addsProse reports whether the blocks of md that are mostly absent from
// base are long paragraphs (proseWords words on average) with no block
// repeated.
func addsProse(base map[uint64]int, md string) bool {
	seen := map[string]bool{}
	words, blocks := 0, 0
	for _, b := range strings.Split(PlainText(md), "\n\n") {
		s := shingleSet(b)
		n := total(s)
		if n == 0 || 2*intersection(s, base) >= n {
			continue
		}
		k := squash(b)
		if seen[k] {
			return false
		}
		seen[k] = true
		words += len(wordsOf(b))
		blocks++
	}
	return blocks > 0 && words >= proseWords*blocks
}

// wordsOf splits text into runs of letters, numbers and underscores.
func wordsOf(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_')
	})
}

// shingleSet returns the multiset of 4-word shingles of s (a text shorter
// than four words is one shingle), each shingle by a 64-bit hash of its
// words: building a string per shingle was most of the cost of choosing
// between the extractors, and a collision among a page's few thousand
// shingles is vanishingly rare.
func shingleSet(s string) map[uint64]int {
	w := wordsOf(s)
	out := make(map[uint64]int, max(0, len(w)-3))
	switch {
	case len(w) == 0:
	case len(w) < 4:
		out[wordsHash(w)]++
	default:
		for i := 0; i+4 <= len(w); i++ {
			out[wordsHash(w[i:i+4])]++
		}
	}
	return out
}

// wordsHash is the FNV-1a hash of words joined by spaces.
func wordsHash(words []string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i, w := range words {
		if i > 0 {
			h = (h ^ ' ') * prime
		}
		for j := 0; j < len(w); j++ {
			h = (h ^ uint64(w[j])) * prime
		}
	}
	return h
}

func total(m map[uint64]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func intersection(a, b map[uint64]int) int {
	if len(b) < len(a) {
		a, b = b, a
	}
	n := 0
	for k, v := range a {
		n += min(v, b[k])
	}
	return n
}

// dropHeadline removes the article's headline from the start of md: a
// first block that is a heading whose words are mostly the title's (see
// isHeadline), or, when no title is known, a level-1 heading. The title
// travels in Page.Title, and the benchmark's article bodies never include
// it (dropping it raised precision from 0.958 to 0.964). Any other
// heading is part of the article and stays: dropping every first level-1
// heading lost standfirsts and section names on pages of the trafilatura
// evaluation set. The headline's text is returned.
func dropHeadline(md, title string) (string, string) {
	first, rest, _ := strings.Cut(md, "\n\n")
	if !strings.HasPrefix(first, "#") || strings.Contains(first, "\n") || strings.TrimSpace(rest) == "" {
		return md, ""
	}
	text := strings.TrimSpace(strings.TrimLeft(first, "#"))
	// With no title known, a level-1 heading is taken for the headline.
	if !isHeadline(text, title) && (title != "" || !strings.HasPrefix(first, "# ")) {
		return md, ""
	}
	return strings.TrimSpace(rest), cleanLine(PlainText(text))
}

// isHeadline reports whether heading is the page's title: most of its
// words (headlineShare) are words of the title. A heading that is not the
// title (a standfirst set as a heading, a section's name) is part of the
// article.
func isHeadline(heading, title string) bool {
	wh, wt := wordSet(PlainText(heading)), wordSet(title)
	if len(wh) == 0 || len(wt) == 0 {
		return false
	}
	common := 0
	for w := range wh {
		if wt[w] {
			common++
		}
	}
	return float64(common) >= headlineShare*float64(len(wh))
}

// headlineShare is the share of a heading's words the title must have for
// the heading to count as the headline.
const headlineShare = 0.6

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range wordsOf(strings.ToLower(s)) {
		out[w] = true
	}
	return out
}

// edgeLinkWords is the most words a lone link at either end of the
// content may have to be taken for navigation ("Read more", "Back to the
// list", "Next article").
const edgeLinkWords = 4

// loneLink matches a block that is one link and nothing else, list marker
// or emphasis aside.
var loneLink = regexp.MustCompile(`^(?:[-*+]\s+)?[*_]{0,2}\[([^\]]*)\]\([^)]*\)[*_]{0,2}\s*[»›>→]?$`)

// dropEdgeLinks removes, from both ends of md, blocks that are a single
// short link: "read more", "back to list" and other navigation the
// extractors keep with the article.
func dropEdgeLinks(md string) string {
	blocks := strings.Split(md, "\n\n")
	isNav := func(b string) bool {
		m := loneLink.FindStringSubmatch(strings.TrimSpace(b))
		return m != nil && len(wordsOf(m[1])) <= edgeLinkWords
	}
	for len(blocks) > 1 && isNav(blocks[len(blocks)-1]) {
		blocks = blocks[:len(blocks)-1]
	}
	for len(blocks) > 1 && isNav(blocks[0]) {
		blocks = blocks[1:]
	}
	return strings.Join(blocks, "\n\n")
}

// commentsMarker matches the short block that opens a comment section:
// "12 Comments", "Leave a Reply", "Schreibe einen Kommentar",
// "Комментарии" and the like, as a heading or a line of its own.
var commentsMarker = regexp.MustCompile(`(?i)^(?:#+\s*)?(?:\d+\s+)?(?:comments?|reader comments|leave a (?:reply|comment)|post a comment|add a comment|join the discussion|kommentare?|leserkommentare|schreibe einen kommentar|kommentar schreiben|commentaires?|laisser un commentaire|comentarios?|deja un comentario|deixe um comentário|commenti|lascia un commento|komentarze|dodaj komentarz|комментари[ийя]|оставьте комментарий|добавить комментарий)(?:\s*\(\d+\))?\s*:?$`)

// commentsStart is the share of the content, in characters, that must
// come before a comment-section marker for the cut: a marker near the
// start is more likely a link bar than the end of the article.
const commentsStart = 0.3

// maxMarkerBytes bounds the blocks tested for a comment-section marker
// (a marker with a link to the comments is still short).
const maxMarkerBytes = 200

// dropComments cuts md at a comment-section marker found after the first
// commentsStart of the text: comment threads that the page does not mark
// as comments are otherwise read as part of the article.
func dropComments(md string) string {
	blocks := strings.Split(md, "\n\n")
	total, pos := len(md), 0
	for i, b := range blocks {
		if i > 0 && len(b) <= maxMarkerBytes && float64(pos) >= commentsStart*float64(total) &&
			commentsMarker.MatchString(strings.TrimSpace(PlainText(b))) {
			return strings.TrimSpace(strings.Join(blocks[:i], "\n\n"))
		}
		pos += len(b) + 2
	}
	return md
}
