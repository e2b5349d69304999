// Package lang detects the language a question was asked in, so that
// answers come back in the same language. Russian and English are told
// apart by the share of Cyrillic letters, which is exact enough for the
// two and costs nothing.
package lang

import "unicode"

// Language is a detected language.
type Language struct {
	Code string // ISO 639-1
	Name string // English name, used in prompts ("Answer in Russian")
}

// Known languages.
var (
	English = Language{Code: "en", Name: "English"}
	Russian = Language{Code: "ru", Name: "Russian"}
)

// Detect returns the language of text. Text with no letters is English.
func Detect(text string) Language {
	// Words, not letters, are counted: a Russian question often names Latin
	// products ("как настроить Kubernetes ingress"), while an English one may
	// quote a Russian word. A word counts for the script of its first letter;
	// ties go to Russian, whose function words rarely lose.
	var latin, cyrillic int
	inWord := false
	for _, r := range text {
		if !unicode.IsLetter(r) {
			inWord = false
			continue
		}
		if inWord {
			continue
		}
		inWord = true
		if unicode.Is(unicode.Cyrillic, r) {
			cyrillic++
		} else {
			latin++
		}
	}
	if cyrillic > 0 && cyrillic >= latin {
		return Russian
	}
	return English
}
