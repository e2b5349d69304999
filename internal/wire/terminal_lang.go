package wire

import (
	"regexp"
	"strconv"
	"strings"
)

// The terminal speaks the question's language: its own words and the
// modes' status messages. Modes write their messages in English (the UI
// stream and the logs carry them as they are); the terminal translates the
// ones it knows and shows any other as written. terminal_lang_test.go
// checks that every status message a mode writes has a translation.

// termWords are the terminal's own words in one language.
type termWords struct {
	rewritten, reading, read, failed, chars, done, failedRun, cancelled, length,
	in, tokens, tokensIn, tokensOut, errorWord, plan, revisedPlan string
	results, images, notes, sources func(n int) string
}

var english = termWords{
	rewritten: "Rewritten query", reading: "reading", read: "read", failed: "failed", chars: "chars",
	done: "✓ Done", failedRun: "✗ Failed", cancelled: "⚠ Cancelled", length: "⚠ Stopped at the length limit",
	in: " in ", tokens: "tokens", tokensIn: "in", tokensOut: "out", errorWord: "✗ Error: ",
	plan: "Research plan", revisedPlan: "Revised research plan",
	results: func(n int) string { return plural(n, "result") },
	images:  func(n int) string { return plural(n, "image") },
	notes:   func(n int) string { return plural(n, "note") },
	sources: func(n int) string { return plural(n, "source") },
}

var russian = termWords{
	rewritten: "Запрос переформулирован", reading: "читаю", read: "прочитано", failed: "не удалось", chars: "симв.",
	done: "✓ Готово", failedRun: "✗ Ошибка", cancelled: "⚠ Отменено", length: "⚠ Остановлено на пределе длины",
	in: " за ", tokens: "токенов", tokensIn: "на входе", tokensOut: "на выходе", errorWord: "✗ Ошибка: ",
	plan: "План исследования", revisedPlan: "Пересмотренный план исследования",
	results: func(n int) string {
		return ruPlural(n, "результат", "результата", "результатов")
	},
	images: func(n int) string {
		return ruPlural(n, "изображение", "изображения", "изображений")
	},
	notes: func(n int) string { return ruPlural(n, "заметка", "заметки", "заметок") },
	sources: func(n int) string {
		return ruPlural(n, "источник", "источника", "источников")
	},
}

// ruPlural picks the Russian form for n: one (1, 21), few (2–4, 22–24) or
// many (5–20, 25–30, …).
func ruPlural(n int, one, few, many string) string {
	m10, m100 := n%10, n%100
	w := many
	switch {
	case m10 == 1 && m100 != 11:
		w = one
	case m10 >= 2 && m10 <= 4 && (m100 < 12 || m100 > 14):
		w = few
	}
	return thousands(n) + " " + w
}

// SetLanguage makes the progress lines speak the language with this
// ISO 639-1 code; Russian is translated, any other code is English.
func (t *Terminal) SetLanguage(code string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lang = code
}

func (t *Terminal) words() *termWords {
	if t.lang == "ru" {
		return &russian
	}
	return &english
}

// translate returns a mode's status message in the terminal's language.
func (t *Terminal) translate(msg string) string {
	if t.lang != "ru" {
		return msg
	}
	for _, m := range ruMessages {
		if out, ok := m.apply(msg); ok {
			return out
		}
	}
	return msg
}

// message is one status message: the English text as the mode formats it
// (%d, %s and %q stand for values) and its translation, where {n} is the
// n-th value.
type message struct {
	en string
	re *regexp.Regexp
	to string
}

func (m message) apply(s string) (string, bool) {
	sub := m.re.FindStringSubmatch(s)
	if sub == nil {
		return "", false
	}
	out := m.to
	for i := len(sub) - 1; i >= 1; i-- {
		out = strings.ReplaceAll(out, "{"+strconv.Itoa(i)+"}", sub[i])
	}
	return out, true
}

var verb = regexp.MustCompile(`%[dsq]`)

// newMessage compiles an English format into the pattern that matches the
// messages it formats.
func newMessage(en, to string) message {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range verb.FindAllStringIndex(en, -1) {
		b.WriteString(regexp.QuoteMeta(en[last:loc[0]]))
		switch en[loc[0]+1] {
		case 'd':
			b.WriteString(`(-?\d+)`)
		case 'q':
			b.WriteString(`(".*?")`)
		default:
			b.WriteString(`(.+?)`)
		}
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(en[last:]))
	b.WriteString("$")
	return message{en: en, re: regexp.MustCompile(b.String()), to: to}
}

// ruMessages translates the modes' status messages into Russian.
var ruMessages = func() []message {
	pairs := [][2]string{
		// chat, search, deep_search
		{"Thinking", "Думаю"},
		{"Rewriting the question", "Переформулирую вопрос"},
		{"Rewritten query", "Запрос переформулирован"},
		{"Could not rewrite the question; searching for it as asked", "Не удалось переформулировать вопрос; ищу как есть"},
		{"Could not generate queries; searching for the rewritten question", "Не удалось составить запросы; ищу по вопросу"},
		{"Could not generate follow-up queries", "Не удалось составить уточняющие запросы"},
		{"Searching, iteration %d of %d", "Поиск, итерация {1} из {2}"},
		{"Search provider %s failed; trying %s", "Поисковик {1} не ответил; пробую {2}"},
		{"%d distinct results, %d best kept", "Разных результатов: {1}, оставлены лучшие: {2}"},
		{"Embedding rerank failed; ranking by keywords", "Ранжирование по смыслу не удалось; ранжирую по словам"},
		{"Reading %d pages", "Читаю страницы: {1}"},
		{"Answering without %d slow page(s)", "Отвечаю без медленных страниц: {1}"},
		{"No page could be read; answering from search snippets", "Ни одну страницу прочитать не удалось; отвечаю по фрагментам из поиска"},
		{"No page was read: the answer rests on search snippets, unverified", "Ни одна страница не прочитана: ответ опирается на фрагменты из поиска и не проверен"},
		{"Writing the answer", "Пишу ответ"},
		{"Searching %d document space(s)", "Ищу в пространствах документов: {1}"},
		{"Searching the documents failed", "Поиск по документам не удался"},
		{"%d passages found in the documents", "Найдено фрагментов в документах: {1}"},
		// docs and the search groups
		{"Searching your documents", "Ищу в ваших документах"},
		{"%s is not available: %s", "{1} недоступен: {2}"},
		{"Searching the web", "Ищу в интернете"},
		{"Searching papers", "Ищу научные статьи"},
		{"Searching YouTube", "Ищу на YouTube"},
		{"Searching Reddit", "Ищу на Reddit"},
		{"Looking up documentation", "Ищу в документации"},
		{"Searching X", "Ищу в X"},
		{"Getting market data", "Получаю рыночные данные"},
		{"Getting crypto data", "Получаю данные о криптовалютах"},
		{"Checking memories", "Проверяю память"},
		{"Searching connected sources", "Ищу в подключённых источниках"},
		// extreme
		{"Researching", "Исследую"},
		{"Could not write a plan; researching the question directly", "Не удалось составить план; исследую вопрос напрямую"},
		{"The research agent stopped early; answering from what it found", "Агент-исследователь остановился раньше; отвечаю по найденному"},
		{"A chart could not be kept", "Не удалось сохранить график"},
		{"The report could not be kept", "Не удалось сохранить отчёт"},
		{"The report's PDF could not be kept", "Не удалось сохранить PDF отчёта"},
		// assistant
		{"Too many hand-offs in one turn; the router answers", "Слишком много передач за один ход; отвечает маршрутизатор"},
		{"Your MCP servers could not be read", "Не удалось прочитать ваши MCP-серверы"},
		{"Task finished", "Задача выполнена"},
		{"The task's result could not be kept with the run", "Не удалось сохранить результат задачи"},
		{"The task's progress could not be saved", "Не удалось сохранить ход выполнения задачи"},
		{"Resuming the task: %d of %d subtasks already done", "Продолжаю задачу: выполнено подзадач {1} из {2}"},
		{"Continuing the research from its last checkpoint", "Продолжаю исследование с последней контрольной точки"},
		{"Resuming subtask %d after %d steps", "Продолжаю подзадачу {1} после шага {2}"},
		{"The task was finished before the run stopped", "Задача была выполнена до остановки запуска"},
		{"A chart of the run could not be read back; the report's PDF is without it", "Не удалось прочитать график запуска; PDF отчёта будет без него"},
		{"Continuing the run from its last checkpoint", "Продолжаю выполнение с последней контрольной точки"},
		{"Waiting for a free slot: %d runs ahead", "Жду свободного места: впереди запусков: {1}"},
		// sgr_agent
		{"Agent created", "Агент создан"},
		{"Continuing with your answers", "Продолжаю с вашими ответами"},
		{"Resuming the agent after step %d of %d", "Агент продолжает после шага {1} из {2}"},
		{"Step %d of %d", "Шаг {1} из {2}"},
		// deep_research
		{"Running an initial deep search for context", "Предварительный глубокий поиск для контекста"},
		{"The initial deep search failed; researching without it", "Предварительный поиск не удался; исследую без него"},
		{"Initial deep search done", "Предварительный поиск завершён"},
		{"Checking whether the request needs clarification", "Проверяю, нужны ли уточнения"},
		{"Could not decide on clarifying questions; researching as asked", "Не удалось решить об уточнениях; исследую как есть"},
		{"No clarification needed", "Уточнения не нужны"},
		{"Waiting for your answers", "Жду ваших ответов"},
		{"Analysing the request", "Анализирую запрос"},
		{"Could not analyse the request; planning from it directly", "Не удалось проанализировать запрос; планирую по нему"},
		{"Request analysed", "Запрос проанализирован"},
		{"Planning the research", "Планирую исследование"},
		{"Could not write a plan; researching the request as one task", "Не удалось составить план; исследую запрос одной задачей"},
		{"Research plan ready", "План исследования готов"},
		{"Replanning the research", "Пересматриваю план исследования"},
		{"Could not replan; the current todos stay", "Не удалось пересмотреть план; задачи остаются прежними"},
		{"Could not update main.md with the new plan", "Не удалось записать новый план в main.md"},
		{"Creating %d researcher agents", "Создаю агентов-исследователей: {1}"},
		{"Could not create agent profiles; using generalist researchers", "Не удалось создать профили агентов; работают универсальные исследователи"},
		{"%d agents are researching in parallel", "Агентов исследуют параллельно: {1}"},
		{"%s resumes %q from step %d", "{1} продолжает {2} с шага {3}"},
		{"%s could not finish %q", "{1} не смог завершить {2}"},
		{"%s reached the step limit (%d) on %q", "{1} достиг предела шагов ({2}) на {3}"},
		{"%s could not write its note; keeping the page summaries", "{1} не смог написать заметку; сохраняю пересказы страниц"},
		{"Supervisor reviewing %s's task (call %d of %d)", "Супервизор проверяет задачу {1} (вызов {2} из {3})"},
		{"The supervisor's review failed; the research goes on", "Проверка супервизора не удалась; исследование продолжается"},
		{"Supervisor call limit (%d) reached; agents finish their todos on their own", "Достигнут предел вызовов супервизора ({1}); агенты завершают задачи сами"},
		{"Compressing findings", "Сжимаю находки"},
		{"Writing the final report", "Пишу итоговый отчёт"},
		{"Writing the report from all findings", "Пишу отчёт по всем находкам"},
		{"The model could not write a structured report", "Модель не смогла написать структурированный отчёт"},
		{"The report is too short (%d characters, at least %d); asking for a fuller one", "Отчёт слишком короткий ({1} симв., нужно не меньше {2}); прошу полнее"},
		{"Report ready", "Отчёт готов"},
	}
	out := make([]message, len(pairs))
	for i, p := range pairs {
		out[i] = newMessage(p[0], p[1])
	}
	return out
}()
