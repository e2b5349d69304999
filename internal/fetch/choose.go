package fetch

import (
	"strings"
	"unicode"
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
//   - readability's text lies within trafilatura's, and trafilatura has
//     more: the extra is nearly always boilerplate around the article
//     (related links, captions, teasers), so readability's tighter text is
//     kept;
//   - trafilatura's text lies within readability's, readability's is at
//     least twice as long, and what it adds is long paragraphs without
//     repeats: trafilatura stopped early (for example at an advert inside
//     the article), so readability's is kept. Repeated or short added
//     blocks are listings and share bars, so trafilatura's stays.
//
// Everything else keeps trafilatura's text. On the benchmark this raises
// F1 from 0.959 to 0.970: 17 pages better, none worse.
func chooseContent(traf, read string) (string, string) {
	if strings.TrimSpace(read) == "" {
		return traf, ExtractorTrafilatura
	}
	if strings.TrimSpace(traf) == "" {
		return read, ExtractorReadability
	}
	ts, rs := shingleSet(PlainText(traf)), shingleSet(PlainText(read))
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
	case inTraf >= containedShare && inRead < extraShare:
		return read, ExtractorReadability
	case inRead >= extraShare && nr > growthFactor*nt && addsProse(ts, read):
		return read, ExtractorReadability
	}
	return traf, ExtractorTrafilatura
}

// addsProse reports whether the blocks of md that are mostly absent from
// base are long paragraphs (proseWords words on average) with no block
// repeated.
func addsProse(base map[string]int, md string) bool {
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
// than four words is one shingle).
func shingleSet(s string) map[string]int {
	w := wordsOf(s)
	out := map[string]int{}
	switch {
	case len(w) == 0:
	case len(w) < 4:
		out[strings.Join(w, " ")]++
	default:
		for i := 0; i+4 <= len(w); i++ {
			out[strings.Join(w[i:i+4], " ")]++
		}
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func intersection(a, b map[string]int) int {
	n := 0
	for k, v := range a {
		n += min(v, b[k])
	}
	return n
}

// dropHeadline removes the article's headline from the start of md: a
// first block that is a level-1 heading, or a heading sharing at least
// half its words with the page title. The title travels in Page.Title, and
// the benchmark's article bodies never include it (dropping it raised
// precision from 0.958 to 0.964). The headline's text is returned.
func dropHeadline(md, title string) (string, string) {
	first, rest, _ := strings.Cut(md, "\n\n")
	if !strings.HasPrefix(first, "#") || strings.Contains(first, "\n") || strings.TrimSpace(rest) == "" {
		return md, ""
	}
	text := strings.TrimSpace(strings.TrimLeft(first, "#"))
	if !strings.HasPrefix(first, "# ") && !sharesWords(text, title) {
		return md, ""
	}
	return strings.TrimSpace(rest), cleanLine(PlainText(text))
}

// sharesWords reports whether at least half the words of the shorter of a
// and b (case folded) occur in the other.
func sharesWords(a, b string) bool {
	wa, wb := wordSet(a), wordSet(b)
	if len(wa) == 0 || len(wb) == 0 {
		return false
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	return 2*common >= min(len(wa), len(wb))
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range wordsOf(strings.ToLower(s)) {
		out[w] = true
	}
	return out
}
