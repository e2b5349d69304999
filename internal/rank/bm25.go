// Package rank reorders search results by lexical relevance to a query
// with Okapi BM25 over stemmed English and Russian tokens (see Tokenize).
package rank

import (
	"math"
	"slices"
	"unicode/utf8"
)

// BM25 parameters used by Rerank.
const (
	DefaultK1 = 1.2  // term-frequency saturation
	DefaultB  = 0.75 // document-length normalisation
)

// Doc is a document to score. ID is carried for the caller and not used in
// scoring.
type Doc struct {
	ID   string
	Text string
}

// Scored is the score of docs[Index].
type Scored struct {
	Index int
	Score float64
}

// Term-cache markers for words that are not query terms.
const (
	wordStop  = -2 // a stopword: not indexed, does not count towards length
	wordOther = -1 // an indexed word that is not in the query
)

// BM25 scores every document against query and returns one Scored per
// document in input order (Scored[i].Index == i); use Rerank for a ranking.
//
// Repeated query terms count once. The IDF is the non-negative form
// ln(1 + (N-df+0.5)/(df+0.5)), so a term present in every document still
// adds a little. A document sharing no term with the query scores 0, as do
// all documents when the query has no terms (for example only stopwords).
//
// Allocation is independent of document length beyond tokenising, and each
// distinct word is stemmed once per call: words are looked up in a per-call
// cache before being stemmed.
func BM25(query string, docs []Doc, k1, b float64) []Scored {
	out := make([]Scored, len(docs))
	for i := range out {
		out[i].Index = i
	}
	if len(docs) == 0 {
		return out
	}

	qterms := uniqueTerms(query)
	nq := len(qterms)
	if nq == 0 {
		return out
	}
	termIdx := make(map[string]int, nq)
	for i, t := range qterms {
		termIdx[t] = i
	}
	heads := newTermHeads(qterms)

	// words maps a lower-cased surface word to its query-term index or to
	// wordStop / wordOther, so that each distinct word is stemmed once.
	words := make(map[string]int, 256)
	tf := make([]int32, len(docs)*nq) // tf[d*nq+t]
	dl := make([]int32, len(docs))
	df := make([]int, nq)
	var buf []byte
	total := 0

	for d, doc := range docs {
		row := tf[d*nq : (d+1)*nq]
		n := int32(0)
		eachWord(doc.Text, &buf, func(w []byte) {
			idx, ok := words[string(w)] // no allocation on lookup
			if !ok {
				idx = wordOther
				if isStopword(string(w)) {
					idx = wordStop
				} else if heads.may(w) {
					// Only a word that begins as a query term does is
					// stemmed: most words of a page are not.
					if t, indexed := term(string(w)); !indexed {
						idx = wordStop
					} else if ti, inQuery := termIdx[t]; inQuery {
						idx = ti
					}
				}
				words[string(w)] = idx
			}
			if idx == wordStop {
				return
			}
			n++
			if idx >= 0 {
				row[idx]++
			}
		})
		dl[d] = n
		total += int(n)
		for t, c := range row {
			if c > 0 {
				df[t]++
			}
		}
	}

	if total == 0 {
		return out
	}
	avgdl := float64(total) / float64(len(docs))
	idf := make([]float64, nq)
	N := float64(len(docs))
	for t, f := range df {
		idf[t] = math.Log(1 + (N-float64(f)+0.5)/(float64(f)+0.5))
	}
	for d := range docs {
		norm := k1 * (1 - b + b*float64(dl[d])/avgdl)
		s := 0.0
		for t, c := range tf[d*nq : (d+1)*nq] {
			if c > 0 {
				f := float64(c)
				s += idf[t] * f * (k1 + 1) / (f + norm)
			}
		}
		out[d].Score = s
	}
	return out
}

// Rerank ranks docs by BM25 relevance to query (k1 = DefaultK1,
// b = DefaultB) and returns the best topK (all when topK <= 0), highest
// score first. Ties keep input order, so documents that share no term with
// the query are not dropped: they follow the scored ones in their original
// (provider) order while topK leaves room. That keeps a provider's own
// ranking as the tie-breaker and never loses a result merely because its
// snippet uses different words.
func Rerank(query string, docs []Doc, topK int) []Scored {
	scored := BM25(query, docs, DefaultK1, DefaultB)
	slices.SortStableFunc(scored, func(x, y Scored) int {
		switch {
		case x.Score > y.Score:
			return -1
		case x.Score < y.Score:
			return 1
		}
		return 0
	})
	if topK > 0 && topK < len(scored) {
		scored = scored[:topK]
	}
	return scored
}

// uniqueTerms returns the distinct terms of query in first-seen order.
func uniqueTerms(query string) []string {
	var out []string
	for _, t := range Tokenize(query) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// termHeads holds how the query terms begin: their first two runes (the
// whole term when shorter). The Snowball stemmers, Russian and English,
// keep a word's first two runes, so a word can stem to a query term only
// if it begins with one of these heads (TestStemKeepsHead checks that on
// real text); BM25 stems no other word. Page words outnumber query terms
// by thousands, and stemming was most of the CPU of choosing passages.
type termHeads map[string]struct{}

func newTermHeads(terms []string) termHeads {
	h := make(termHeads, len(terms))
	var buf [8]byte
	for _, t := range terms {
		h[string(head(buf[:0], []byte(t), 2))] = struct{}{}
	}
	return h
}

// may reports whether w (lower-cased) can stem to a query term.
func (h termHeads) may(w []byte) bool {
	var buf [8]byte
	if _, ok := h[string(head(buf[:0], w, 2))]; ok { // no allocation on lookup
		return true
	}
	_, ok := h[string(head(buf[:0], w, 1))] // a query term of one rune
	return ok
}

// head appends to dst the first n runes of w (all of w when shorter),
// with a second rune "y" read as "i": English stems "dying" to "die".
func head(dst, w []byte, n int) []byte {
	for i := 0; n > 0 && i < len(w); n-- {
		r, size := utf8.DecodeRune(w[i:])
		if i > 0 && r == 'y' {
			r = 'i'
		}
		dst = utf8.AppendRune(dst, r)
		i += size
	}
	return dst
}
