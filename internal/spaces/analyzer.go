package spaces

import (
	"hash/maphash"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/lang/ru"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/russian"
)

// ruEnAnalyzerName is the name the analysis is registered under with
// Bleve. Each index keeps it in its stored mapping, so it must not change.
const ruEnAnalyzerName = "sova_ru_en"

// Bleve finds analyzers by name in a process-wide registry, so the
// analyzer is registered once, like a database/sql driver.
func init() {
	err := registry.RegisterAnalyzer(ruEnAnalyzerName, func(map[string]any, *registry.Cache) (analysis.Analyzer, error) {
		return newTermAnalyzer(), nil
	})
	if err != nil {
		panic(err)
	}
}

// termAnalyzer turns text into index terms for mixed Russian and English
// text in one pass: it splits words (letters and digits, with inner
// apostrophes), lower-cases them, folds "ё" into "е", drops English
// possessives ("nation's"), drops the stop words of both languages and
// stems each word with the Snowball stemmer of its script. Russian
// documents quote English names and English documents quote Russian
// words, so the script of each word decides, not a language guessed for
// the whole text. Words of other scripts and numbers are kept as they are.
//
// Words repeat, and stemming costs far more than a map lookup, so stems
// are cached (up to maxStemCache words, in shards to spread the locking).
type termAnalyzer struct {
	seed   maphash.Seed
	shards [stemShards]stemShard
}

const (
	stemShards   = 64
	maxStemCache = 1 << 20
)

type stemShard struct {
	mu sync.RWMutex
	m  map[string][]byte // word → stem; nil for a stop word
}

var _ analysis.Analyzer = (*termAnalyzer)(nil)

func newTermAnalyzer() *termAnalyzer {
	stop := analysis.NewTokenMap()
	_ = stop.LoadBytes(en.EnglishStopWords)
	_ = stop.LoadBytes(ru.RussianStopWords)
	a := &termAnalyzer{seed: maphash.MakeSeed()}
	for i := range a.shards {
		a.shards[i].m = map[string][]byte{}
	}
	for w := range stop {
		// The lists spell "ё" both ways; words are folded before the
		// lookup. Stop words live in the stem cache as nil stems, so that
		// each word costs one lookup.
		f := foldYo([]byte(w))
		a.shards[maphash.Bytes(a.seed, f)%stemShards].m[string(f)] = nil
	}
	return a
}

// Analyze implements analysis.Analyzer.
func (a *termAnalyzer) Analyze(input []byte) analysis.TokenStream {
	// Tokens are allocated together: one allocation instead of one each.
	store := make([]analysis.Token, 0, len(input)/7+1)
	a.terms(input, func(start, end, pos int, term []byte) {
		store = append(store, analysis.Token{
			Start: start, End: end, Term: term, Position: pos, Type: analysis.AlphaNumeric,
		})
	})
	out := make(analysis.TokenStream, len(store))
	for i := range store {
		out[i] = &store[i]
	}
	return out
}

// terms calls fn with the byte range, the 1-based position among all
// words and the term of every word of text that is not a stop word.
// Positions count stop words too, as phrase matching expects. The term
// slice must not be modified.
func (a *termAnalyzer) terms(text []byte, fn func(start, end, pos int, term []byte)) {
	var buf []byte
	pos := 0
	eachWordBytes(text, func(start, end int) {
		pos++
		buf = lowerFold(buf[:0], text[start:end])
		w := trimPossessive(buf)
		if len(w) == 0 {
			return
		}
		if t := a.stem(w); t != nil {
			fn(start, end, pos, t)
		}
	})
}

// term returns the index term of one word, or false for a stop word.
func (a *termAnalyzer) term(word string) (string, bool) {
	var t string
	ok := false
	a.terms([]byte(word), func(_, _, _ int, term []byte) {
		if !ok {
			t, ok = string(term), true
		}
	})
	return t, ok
}

// stem returns the stem of a lower-cased, folded word, or nil for a stop
// word.
func (a *termAnalyzer) stem(w []byte) []byte {
	sh := &a.shards[maphash.Bytes(a.seed, w)%stemShards]
	sh.mu.RLock()
	s, ok := sh.m[string(w)]
	sh.mu.RUnlock()
	if ok {
		return s
	}
	switch scriptOf(w) {
	case scriptLatin:
		env := snowballstem.NewEnv(string(w))
		english.Stem(env)
		s = []byte(env.Current())
	case scriptCyrillic:
		env := snowballstem.NewEnv(string(w))
		russian.Stem(env)
		s = []byte(env.Current())
	default:
		s = []byte(string(w))
	}
	if len(s) == 0 {
		s = []byte(string(w)) // never nil: nil means a stop word
	}
	sh.mu.Lock()
	if len(sh.m) < maxStemCache/stemShards {
		sh.m[string(w)] = s
	}
	sh.mu.Unlock()
	return s
}

// eachWordBytes calls fn with the byte range of every word of text: a run
// of letters, digits and combining marks, with apostrophes inside it.
func eachWordBytes(text []byte, fn func(start, end int)) {
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		var (
			r    rune
			size = 1
			word bool
		)
		if c < utf8.RuneSelf {
			word = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
			r = rune(c)
		} else {
			r, size = utf8.DecodeRune(text[i:])
			word = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		}
		if !word && start >= 0 && (r == '\'' || r == '’') && i+size < len(text) {
			// An apostrophe between letters stays in the word ("nation's").
			next, _ := utf8.DecodeRune(text[i+size:])
			word = unicode.IsLetter(next)
		}
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			fn(start, i)
			start = -1
		}
		i += size
	}
	if start >= 0 {
		fn(start, len(text))
	}
}

// lowerFold appends w lower-cased, with "ё" folded into "е", to dst.
func lowerFold(dst, w []byte) []byte {
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(w[i:])
		r = unicode.ToLower(r)
		switch r {
		case 'ё':
			r = 'е'
		case '’':
			r = '\''
		}
		dst = utf8.AppendRune(dst, r)
		i += size
	}
	return dst
}

type script int

const (
	scriptOther script = iota
	scriptLatin
	scriptCyrillic
)

// scriptOf is the script of a word's letters: Cyrillic if it has any,
// else Latin if it has any.
func scriptOf(w []byte) script {
	s := scriptOther
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				s = scriptLatin
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(w[i:])
		i += size
		switch {
		case unicode.Is(unicode.Cyrillic, r):
			return scriptCyrillic
		case unicode.Is(unicode.Latin, r):
			s = scriptLatin
		}
	}
	return s
}

// foldYo replaces "ё" by "е" in place (both are two bytes in UTF-8).
func foldYo(w []byte) []byte {
	for i := 0; i+1 < len(w); i++ {
		if w[i] == 0xD1 && w[i+1] == 0x91 { // ё
			w[i], w[i+1] = 0xD0, 0xB5 // е
		}
	}
	return w
}

// trimPossessive drops a trailing "'s" (lowerFold turned "’" into "'").
func trimPossessive(w []byte) []byte {
	n := len(w)
	switch {
	case n > 2 && w[n-1] == 's' && w[n-2] == '\'':
		return w[:n-2]
	}
	return w
}
