package assistant

import (
	"slices"
	"strings"
	"unicode"
)

// Answers to a confirmation.
const (
	Yes   = "yes"   // the whole reply is an unambiguous yes: the actions run
	No    = "no"    // a clear no: nothing runs
	Other = "other" // anything else: nothing runs and Sova asks again
)

// Words of a typed answer, lower case, "ё" as "е". A reply approves only
// when every word in it is a yes-word or a word that goes with one
// ("please", "send it"), at least one is a yes-word, and nothing negates.
var (
	yesWords = []string{
		"yes", "y", "yep", "yeah", "yup", "ok", "okay", "k", "sure", "confirm", "confirmed", "approve", "approved", "agreed", "agree", "absolutely", "certainly",
		"да", "ага", "угу", "ок", "окей", "оке", "конечно", "подтверждаю", "подтверждено", "давай", "давайте", "хорошо", "ладно", "согласен", "согласна", "согласны",
		"верно", "разумеется", "можно", "валяй", "годится", "идет",
		"ja", "oui", "si", "sí", "tak", "так",
	}
	// Imperatives of the act: a yes on their own ("отправляй", "go
	// ahead"), a no after a negation ("не отправляй").
	actWords = []string{
		"send", "create", "proceed", "continue", "run", "go", "do", "execute",
		"отправляй", "отправляйте", "отправь", "отправьте", "создавай", "создай", "создайте", "выполняй", "выполни", "выполняйте", "продолжай", "продолжайте",
		"делай", "сделай", "сделайте", "действуй", "запускай", "вперед",
	}
	// Words that may stand with a yes without changing it.
	withYes = []string{
		"please", "ahead", "it", "that", "this", "is", "fine", "right", "thanks", "thank", "you", "of", "course", "all", "good", "sounds", "let's", "lets", "now",
		"пожалуйста", "спасибо", "все", "так", "это", "именно", "точно", "конечно", "сейчас", "его", "ее", "их",
	}
	// Words that negate, cancel or put off, anywhere in the reply.
	negWords = []string{
		"no", "nope", "nah", "not", "don't", "dont", "do't", "doesn't", "never", "cancel", "cancelled", "stop", "abort", "wait", "hold", "nothing", "none", "neither", "nor",
		"later", "without", "decline", "declined", "deny", "refuse", "reject", "won't", "shouldn't", "mustn't", "n't", "but", "except", "instead", "unless", "maybe", "perhaps", "if",
		"нет", "не", "ни", "нельзя", "отмена", "отмени", "отменить", "отменяй", "отменяю", "стоп", "хватит", "погоди", "подожди", "подождите", "постой", "ничего", "никому", "никогда",
		"потом", "позже", "передумал", "передумала", "отказ", "отказываюсь", "но", "кроме", "вместо", "если", "может", "наверное", "пока", "нету", "неа",
		"nein", "nicht", "non", "pas", "ні",
	}
	// Replies that are a clear no as a whole.
	noWords = []string{"no", "nope", "nah", "cancel", "stop", "abort", "decline", "don't", "dont", "never", "not", "nothing",
		"нет", "не", "неа", "отмена", "отмени", "отменить", "отменяй", "стоп", "хватит", "ничего", "никому", "никогда", "надо", "нужно",
		"it", "please", "пожалуйста", "ни", "в", "коем", "случае", "nein", "non", "ні"}
)

// Decide reads a person's typed answer to a confirmation. Yes only when
// the whole reply is an unambiguous yes; a reply made of negations only is
// No; everything else, mixed replies above all ("Хорошо, но не
// отправляй", "Okay, cancel", "yes but don't send it"), is Other, and
// nothing runs.
func Decide(answer string) string {
	words := answerWords(answer)
	if len(words) == 0 {
		return Other
	}
	var yes, act, neg, foreign bool
	allNo := true
	for _, w := range words {
		if slices.Contains(negWords, w) || strings.HasSuffix(w, "n't") {
			neg = true
		}
		switch {
		case slices.Contains(yesWords, w):
			yes = true
		case slices.Contains(actWords, w):
			act = true
		case !slices.Contains(withYes, w):
			foreign = true
		}
		if !slices.Contains(noWords, w) && !slices.Contains(actWords, w) {
			allNo = false
		}
	}
	switch {
	case neg && allNo && !yes:
		return No
	case (yes || act) && !neg && !foreign:
		return Yes
	}
	return Other
}

// answerWords splits a reply into lower-case words ("ё" as "е"), with
// punctuation and emoji as separators; apostrophes stay in words.
func answerWords(s string) []string {
	s = strings.ReplaceAll(strings.ToLower(s), "ё", "е")
	s = strings.NewReplacer("’", "'", "`", "'").Replace(s)
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
	})
}
