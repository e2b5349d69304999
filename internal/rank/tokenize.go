package rank

import (
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/russian"
)

// Tokenize splits text into index terms: it lower-cases, splits on anything
// that is not a letter or digit, drops English and Russian stopwords, folds
// "ё" into "е" and stems each token with the Snowball stemmer of its script
// (Russian for tokens containing Cyrillic, English for Latin ones). Tokens
// of other scripts and numbers are kept as they are.
func Tokenize(text string) []string {
	var out []string
	var buf []byte
	eachWord(text, &buf, func(w []byte) {
		if t, ok := term(string(w)); ok {
			out = append(out, t)
		}
	})
	return out
}

// eachWord calls fn with every lower-cased word of text, with "ё" folded
// into "е". The slice passed to fn is only valid during the call; buf is
// reused between words and calls so that callers can avoid allocations.
func eachWord(text string, buf *[]byte, fn func(w []byte)) {
	b := (*buf)[:0]
	for _, r := range text {
		if r, ok := foldWordRune(r); ok {
			b = utf8.AppendRune(b, r)
			continue
		}
		if len(b) > 0 {
			fn(b)
			b = b[:0]
		}
	}
	if len(b) > 0 {
		fn(b)
	}
	*buf = b
}

// foldWordRune reports whether r belongs to a word and returns it
// lower-cased, with "ё" folded into "е". ASCII and basic Cyrillic take a
// fast path; the rest goes through the unicode tables.
func foldWordRune(r rune) (rune, bool) {
	switch {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		return r, true
	case r >= 'A' && r <= 'Z':
		return r + ('a' - 'A'), true
	case r < utf8.RuneSelf:
		return r, false
	case r >= 'а' && r <= 'я':
		return r, true
	case r >= 'А' && r <= 'Я':
		return r + ('а' - 'А'), true
	case r == 'ё', r == 'Ё':
		return 'е', true
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
		return unicode.ToLower(r), true
	}
	return r, false
}

// term turns a lower-cased word into its index term; ok is false for
// stopwords.
func term(w string) (t string, ok bool) {
	if isStopword(w) {
		return "", false
	}
	switch scriptOf(w) {
	case scriptCyrillic:
		return russian.Stem(w, true), true
	case scriptLatin:
		return english.Stem(w, true), true
	}
	return w, true
}

type script int

const (
	scriptOther script = iota
	scriptLatin
	scriptCyrillic
)

// scriptOf picks the stemmer for a word: Cyrillic if it has any Cyrillic
// letter, Latin if all its letters are Latin, otherwise none (digits and
// other scripts).
func scriptOf(w string) script {
	latin := false
	for _, r := range w {
		switch {
		case r < utf8.RuneSelf:
			if r >= 'a' && r <= 'z' {
				latin = true
			}
		case unicode.Is(unicode.Cyrillic, r):
			return scriptCyrillic
		case unicode.Is(unicode.Latin, r):
			latin = true
		case unicode.IsLetter(r):
			return scriptOther
		}
	}
	if latin {
		return scriptLatin
	}
	return scriptOther
}

// isStopword reports whether the lower-cased word w is a common English or
// Russian function word that carries no topical meaning.
func isStopword(w string) bool {
	switch w {
	// English
	case "a", "an", "and", "are", "as", "at", "be", "been", "but", "by",
		"can", "did", "do", "does", "for", "from", "had", "has", "have",
		"he", "her", "his", "how", "i", "if", "in", "into", "is", "it",
		"its", "me", "my", "no", "not", "of", "on", "or", "our", "she",
		"so", "than", "that", "the", "their", "them", "then", "there",
		"these", "they", "this", "those", "to", "us", "was", "we", "were",
		"what", "when", "where", "which", "who", "whom", "why", "will",
		"with", "would", "you", "your":
		return true
	// Russian ("ё" is already folded into "е")
	case "а", "без", "бы", "был", "была", "были", "было", "быть", "в",
		"вам", "вас", "весь", "во", "вот", "все", "всего", "всех", "вы",
		"где", "да", "для", "до", "его", "ее", "ей", "ему", "если", "есть",
		"еще", "же", "за", "и", "из", "или", "им", "их", "к", "как", "ко",
		"когда", "кто", "ли", "мне", "мы", "на", "над", "не", "него", "нет",
		"ни", "но", "о", "об", "он", "она", "они", "оно", "от", "по", "под",
		"при", "про", "с", "со", "так", "также", "там", "те", "тем", "то",
		"того", "тоже", "только", "том", "ты", "у", "уже", "чем", "что",
		"чтобы", "это", "этот", "эта", "эти", "я":
		return true
	}
	return false
}
