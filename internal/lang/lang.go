// Package lang detects the language a question was asked in, so that
// answers come back in the same language.
//
// Detection is in three steps, because questions are short and often mix
// scripts ("как настроить Kubernetes ingress в GKE?"):
//
//  1. The script most words are written in decides the family; words of
//     other scripts (product names, a quoted foreign word) are set aside.
//     A script that one language owns (Greek, Hangul, kana, Hebrew, …)
//     names it at once.
//  2. Letters only one language of the family uses decide next: ы, э, ъ
//     are Russian, ї, є, ґ Ukrainian; ß, ñ, ã, ł and their kin name German,
//     Spanish, Portuguese, Polish.
//  3. Otherwise whatlanggo's trigram profiles choose among the family's
//     languages Sova answers in; a short Latin text it cannot call reliably
//     is English, a Cyrillic one Russian, the commonest askers of each.
//
// whatlanggo (the fork go-trafilatura already links) adds nothing to the
// binary; docs/architecture.md has the measurement that chose it.
package lang

import (
	"strings"
	"unicode"

	"github.com/RadhiFadlillah/whatlanggo"
)

// Language is a detected language.
type Language struct {
	Code string // ISO 639-1
	Name string // English name, used in prompts ("Answer in Russian")
}

// Languages Sova answers in by name. Any other language whatlanggo finds
// is named by its English name.
var (
	English    = Language{Code: "en", Name: "English"}
	Russian    = Language{Code: "ru", Name: "Russian"}
	Ukrainian  = Language{Code: "uk", Name: "Ukrainian"}
	Belarusian = Language{Code: "be", Name: "Belarusian"}
	Bulgarian  = Language{Code: "bg", Name: "Bulgarian"}
	Serbian    = Language{Code: "sr", Name: "Serbian"}
	German     = Language{Code: "de", Name: "German"}
	French     = Language{Code: "fr", Name: "French"}
	Spanish    = Language{Code: "es", Name: "Spanish"}
	Italian    = Language{Code: "it", Name: "Italian"}
	Portuguese = Language{Code: "pt", Name: "Portuguese"}
	Polish     = Language{Code: "pl", Name: "Polish"}
	Dutch      = Language{Code: "nl", Name: "Dutch"}
	Czech      = Language{Code: "cs", Name: "Czech"}
	Turkish    = Language{Code: "tr", Name: "Turkish"}
	Swedish    = Language{Code: "sv", Name: "Swedish"}
	Greek      = Language{Code: "el", Name: "Greek"}
	Arabic     = Language{Code: "ar", Name: "Arabic"}
	Hebrew     = Language{Code: "he", Name: "Hebrew"}
	Hindi      = Language{Code: "hi", Name: "Hindi"}
	Chinese    = Language{Code: "zh", Name: "Chinese"}
	Japanese   = Language{Code: "ja", Name: "Japanese"}
	Korean     = Language{Code: "ko", Name: "Korean"}
	Thai       = Language{Code: "th", Name: "Thai"}
	Georgian   = Language{Code: "ka", Name: "Georgian"}
	Armenian   = Language{Code: "hy", Name: "Armenian"}
)

// family is the languages of one script that trigrams choose among, and
// the one a text too short to tell is taken for.
type family struct {
	langs    []Language
	fallback Language
	whatlang map[whatlanggo.Lang]bool // langs as whatlanggo's whitelist
}

var (
	latin    = newFamily(English, English, German, French, Spanish, Italian, Portuguese, Polish, Dutch, Czech, Turkish, Swedish)
	cyrillic = newFamily(Russian, Russian, Ukrainian, Belarusian, Bulgarian, Serbian)
)

func newFamily(fallback Language, langs ...Language) family {
	f := family{langs: langs, fallback: fallback}
	f.whatlang = f.whitelist()
	return f
}

// marks are letters that only one language of its family writes.
var marks = []struct {
	letters string
	lang    Language
}{
	// Belarusian writes ы, э and і too, so ў is looked for first; Bulgarian
	// writes ъ, so it tells nothing.
	{"ў", Belarusian},
	{"ђћџљњј", Serbian},
	{"ыэё", Russian},
	{"їєґі", Ukrainian},
	{"ß", German},
	{"ñ¿¡", Spanish},
	{"ãõ", Portuguese},
	{"łąęśźżń", Polish},
	{"ğış", Turkish},
	{"řůě", Czech},
	{"œ", French},
}

// Detect returns the language of text. Text with no letters is English.
func Detect(text string) Language {
	words := scriptWords(text)
	script, n := "", 0
	for _, s := range scriptOrder {
		// Ties go to the script met first in scriptOrder: non-Latin scripts
		// come first, since a question quoting a Latin product name is
		// still asked in its own script.
		if len(words[s]) > n {
			script, n = s, len(words[s])
		}
	}
	switch script {
	case "":
		return English
	case "latin":
		return detectIn(latin, words[script])
	case "cyrillic":
		return detectIn(cyrillic, words[script])
	case "han":
		if len(words["kana"]) > 0 {
			return Japanese
		}
		return Chinese
	}
	return scriptLanguage[script]
}

// detectIn chooses among a family's languages from the text's words of
// that family's script.
func detectIn(f family, words []string) Language {
	text := strings.ToLower(strings.Join(words, " "))
	for _, m := range marks {
		if strings.ContainsAny(text, m.letters) && f.has(m.lang) {
			return m.lang
		}
	}
	info := whatlanggo.DetectWithOptions(text, whatlanggo.Options{Whitelist: f.whatlang})
	guess, ok := f.byCode(info.Lang.Iso6391())
	ok = ok && len(words) > 3 // the trigrams of a few words say little ("last question" looks French to them)
	if ok && info.Confidence > 0.3 {
		return guess
	}
	// Trigrams of a few words mislead ("hello how are you" looks Italian
	// to them); the small words only one language uses do not.
	if l, ok := byFunctionWords(f, strings.Fields(text)); ok {
		return l
	}
	if ok && info.Confidence > 0.1 {
		return guess
	}
	return f.fallback
}

// functionWords are frequent small words, each used by only one language
// of its family (no "la", shared by French, Spanish and Italian).
var functionWords = map[string]Language{}

func init() {
	for l, words := range map[Language]string{
		English:    "the what why how who which where when is are does do did and of you this that with",
		German:     "der die das und ist warum wie wer wo nicht ein eine ich sind mit von",
		French:     "le les est pourquoi comment quelle quel qui où et des du une je sont avec ce",
		Spanish:    "el los las es qué cómo cuál quién dónde y",
		Italian:    "il gli è perché chi dove della sono di",
		Portuguese: "o os é quem qual onde não uma são em",
		Polish:     "jak jaka jaki dlaczego kto gdzie jest czy nie się",
		Dutch:      "het een wat hoe waarom waar niet zijn",
		Russian:    "что как это почему кто где когда какой какая и",
		Ukrainian:  "що як це чому хто де коли який яка та",
	} {
		for _, w := range strings.Fields(words) {
			if _, taken := functionWords[w]; taken {
				panic("lang: function word " + w + " listed twice")
			}
			functionWords[w] = l
		}
	}
}

// byFunctionWords returns the family's language whose function words the
// text has most of, when one has more than every other.
func byFunctionWords(f family, words []string) (Language, bool) {
	count := map[Language]int{}
	for _, w := range words {
		if l, ok := functionWords[strings.Trim(w, "'’-")]; ok && f.has(l) {
			count[l]++
		}
	}
	var best Language
	top, tie := 0, false
	for l, n := range count {
		switch {
		case n > top:
			best, top, tie = l, n, false
		case n == top:
			tie = true
		}
	}
	return best, top > 0 && !tie
}

func (f family) has(l Language) bool {
	_, ok := f.byCode(l.Code)
	return ok
}

func (f family) byCode(code string) (Language, bool) {
	for _, l := range f.langs {
		if l.Code == code {
			return l, true
		}
	}
	return Language{}, false
}

// whitelist is the family as whatlanggo's options. whatlanggo numbers its
// languages from 0 and has no list of them; numbers past the last have no
// ISO 639-1 code.
func (f family) whitelist() map[whatlanggo.Lang]bool {
	w := make(map[whatlanggo.Lang]bool, len(f.langs))
	for l := whatlanggo.Lang(0); l < 256; l++ {
		if code := l.Iso6391(); code != "" && f.has(Language{Code: code}) {
			w[l] = true
		}
	}
	return w
}

// scriptOrder lists the scripts counted; see Detect for why Latin is last.
var scriptOrder = []string{"cyrillic", "greek", "arabic", "hebrew", "devanagari", "hangul", "kana", "han", "thai", "georgian", "armenian", "latin"}

var scriptLanguage = map[string]Language{
	"greek": Greek, "arabic": Arabic, "hebrew": Hebrew, "devanagari": Hindi,
	"hangul": Korean, "kana": Japanese, "thai": Thai, "georgian": Georgian, "armenian": Armenian,
}

var scriptTables = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"latin", unicode.Latin}, {"cyrillic", unicode.Cyrillic}, {"greek", unicode.Greek},
	{"arabic", unicode.Arabic}, {"hebrew", unicode.Hebrew}, {"devanagari", unicode.Devanagari},
	{"hangul", unicode.Hangul}, {"kana", unicode.Hiragana}, {"kana", unicode.Katakana},
	{"han", unicode.Han}, {"thai", unicode.Thai}, {"georgian", unicode.Georgian}, {"armenian", unicode.Armenian},
}

// scriptWords splits text into words and files each under the script of its
// first letter. Han and kana have no spaces between words, so each of their
// characters counts as a word.
func scriptWords(text string) map[string][]string {
	out := map[string][]string{}
	var word []rune
	script := ""
	flush := func() {
		if len(word) > 0 && script != "" {
			out[script] = append(out[script], string(word))
		}
		word, script = word[:0], ""
	}
	for _, r := range text {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && r != '\'' && r != '’' {
			flush()
			continue
		}
		s := scriptOf(r)
		if s == "han" || s == "kana" || s == "thai" {
			flush()
			out[s] = append(out[s], string(r))
			continue
		}
		if len(word) == 0 {
			script = s
		}
		word = append(word, r)
	}
	flush()
	return out
}

func scriptOf(r rune) string {
	for _, t := range scriptTables {
		if unicode.Is(t.table, r) {
			return t.name
		}
	}
	return ""
}

// known are the languages a person may choose for answers, by ISO 639-1
// code.
var known = map[string]string{
	"en": "English", "ru": "Russian", "de": "German", "fr": "French", "es": "Spanish",
	"it": "Italian", "pt": "Portuguese", "nl": "Dutch", "pl": "Polish", "uk": "Ukrainian",
	"tr": "Turkish", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "ar": "Arabic",
	"hi": "Hindi", "cs": "Czech", "sv": "Swedish", "fi": "Finnish", "kk": "Kazakh",
}

// Parse returns the language of an ISO 639-1 code ("de"); ok is false for
// a code it does not know.
func Parse(code string) (Language, bool) {
	name, ok := known[code]
	return Language{Code: code, Name: name}, ok
}
