package mode

import (
	"strings"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
)

// StageUnverified is the status stage of a run that ends without having
// read any source.
const StageUnverified = "unverified"

// UnverifiedNote is the note an answer starts with when its run read no
// source at all: the answer is the model's own knowledge, unverified. It
// is in the question's language and ends with a blank line. searched
// says whether the run searched the web (and found nothing it could
// read) or did not search.
func UnverifiedNote(l lang.Language, searched bool) string {
	switch {
	case l == lang.Russian && searched:
		return "> **Без источников.** Веб-поиск не дал ни одной страницы, которую удалось бы прочитать, поэтому ответ написан по собственным знаниям модели и не проверен.\n\n"
	case l == lang.Russian:
		return "> **Без источников.** Для этого ответа не прочитано ни одной страницы: он написан по собственным знаниям модели и не проверен.\n\n"
	case searched:
		return "> **No sources.** The web search turned up no page that could be read, so this answer comes from the model's own knowledge and is unverified.\n\n"
	}
	return "> **No sources.** No page was read for this answer: it comes from the model's own knowledge and is unverified.\n\n"
}

// Unverified marks the answer of a run that read no source: it emits the
// status that says so (stage StageUnverified) and returns text with the
// note in front (text as it is when it has the note already). failure is
// the run's last search failure (tools.Run.SearchFailure), nil when the
// searches answered or it is not known: with one, the status names the
// search provider as the cause, not the model.
func Unverified(sink event.Sink, l lang.Language, searched bool, failure error, text string) string {
	detail := "no web search was made"
	switch {
	case searched && failure != nil:
		detail = "the web search failed: " + failure.Error()
	case searched:
		detail = "the web search failed or found nothing readable"
	}
	Status(sink, StageUnverified, "No source was read: the answer is the model's own knowledge, unverified", detail)
	return WithUnverifiedNote(l, searched, text)
}

// WithUnverifiedNote returns text with the note in front, once.
func WithUnverifiedNote(l lang.Language, searched bool, text string) string {
	note := UnverifiedNote(l, searched)
	if strings.HasPrefix(text, note) {
		return text
	}
	return note + text
}

// SnippetsNote is the note an answer starts with when no page could be
// read and it rests on the search engines' snippets alone, in the
// question's language, ending with a blank line.
func SnippetsNote(l lang.Language) string {
	if l == lang.Russian {
		return "> **Только фрагменты из поиска.** Ни одну найденную страницу не удалось прочитать: ответ опирается лишь на короткие фрагменты из результатов поиска и не проверен по самим страницам.\n\n"
	}
	return "> **Search snippets only.** None of the pages found could be read: this answer rests on the search engines' short snippets alone and is not checked against the pages.\n\n"
}
