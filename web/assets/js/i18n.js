// Interface strings in English and Russian. The language follows the
// browser (navigator.languages); anything but Russian gets English.

const en = {
  signInTitle: 'Sign in to Sova',
  userName: 'Name',
  password: 'Password',
  signIn: 'Sign in',
  signOut: 'Sign out',
  signInFailed: 'Could not sign in: {msg}',
  usageLeft: '{left} of {limit} messages left today; resets {reset}',
  chats: 'Chats',
  newChat: 'New chat',
  openMenu: 'Open menu',
  closeMenu: 'Close menu',
  heroTitle: 'What do you want to know?',
  heroSub: 'Sova searches the web, reads the pages and answers with sources.',
  placeholder: 'Ask anything…',
  placeholderFollowUp: 'Ask a follow-up…',
  question: 'Question',
  hint: 'Enter to send · Shift+Enter for a new line',
  send: 'Send',
  stop: 'Stop',
  mode: 'Mode',
  noChats: 'No chats yet. Ask something to begin.',
  untitled: 'Untitled chat',
  today: 'Today',
  yesterday: 'Yesterday',
  previous7: 'Previous 7 days',
  older: 'Older',
  delete: 'Delete',
  deleteChat: 'Delete chat',
  confirmDelete: 'Delete this chat?',
  cancel: 'Cancel',
  deleted: 'Chat deleted',
  deleteFailed: 'Could not delete the chat: {msg}',
  steps: 'Steps',
  working: 'Working…',
  iteration: 'Round {n}',
  reading: 'reading…',
  failed: 'failed',
  chars: '{n} characters',
  rewritten: 'Rewritten query',
  sources: 'Sources',
  answer: 'Answer',
  foundSources: 'Found while searching',
  snippetOnly: 'snippet only',
  snippetOnlyHint: 'This page could not be read: the answer relies on the search engine’s snippet of it alone.',
  showAll: 'Show all {n}',
  showLess: 'Show less',
  copy: 'Copy',
  copied: 'Copied',
  stopped: 'Stopped. The answer may be incomplete.',
  errorTitle: 'The run failed',
  networkError: 'Could not reach the server: {msg}',
  connectionLost: 'The connection to the server was lost.',
  loadFailed: 'Could not open the chat: {msg}',
  listFailed: 'Could not load the chats: {msg}',
  chatGone: 'This chat no longer exists.',
  answerVersions: 'Versions of the answer',
  copyCode: 'Copy code',
  modesAnswer: 'Answer',
  modesResearch: 'Research',
  modesFocus: 'Focus',
  modesOther: 'More',
  modeWithdrawnReason: 'Not available here: {why}',
  editSend: 'Send',
  versionPrev: 'Previous version',
  versionNext: 'Next version',
  versionOf: '{n} / {total}',
  setupTitle: 'Sova cannot answer questions until its setup is fixed.',
  setupEndpoint: 'The model endpoint cannot be reached.',
  setupKey: 'The model endpoint refuses the API key.',
  setupModel: 'The model endpoint does not serve the main model.',
  setupFastModel: 'The model endpoint does not serve the fast model.',
  setupOther: 'The “{check}” check failed.',
  setupSearch: 'Web search does not answer ({provider}): web questions will fail.',
  setupFix: 'An administrator can fix it:',
  modeWithdrawn: 'This chat ran in {mode}, which this server no longer offers; pick a mode for the next question.',
  clarifyTitle: 'A few questions before I start',
  clarifyPlaceholder: 'Your answer…',
  clarifySend: 'Answer',
  clarifyAnswered: 'Answered',
  reportTitle: 'The report is ready',
  reportPdf: 'PDF',
  reportMarkdown: 'Markdown',
  themeSystem: 'Theme: follows the system',
  themeLight: 'Theme: light',
  themeDark: 'Theme: dark',
  reasoning: 'Reasoning',
  tool: 'Tool: {name}',
  document: 'Document',
  spaces: 'Spaces',
  newSpace: 'New space',
  spaceName: 'Name of the space',
  create: 'Create',
  upload: 'Add files',
  uploading: 'Uploading {name}…',
  uploaded: 'Added {name}',
  uploadFailed: 'Could not add {name}: {msg}',
  useInAnswers: 'Search this space when answering',
  noDocuments: 'No documents yet.',
  deleteSpace: 'Delete space',
  deleteDocument: 'Delete document',
  confirmDeleteDocument: 'Click again to delete the document',
  spacesFailed: 'Spaces: {msg}',
  justNow: 'just now',
  model: 'Model',
  // Deep research progress (data-research_* and data-supervisor_decision).
  researchPlan: 'Research plan',
  planRevision: 'revision {n}',
  agent: 'Researcher',
  agentN: 'Researcher {n}',
  agentCurrent: 'Now:',
  agentState_ready: 'ready',
  agentState_working: 'working',
  agentState_reflecting: 'reflecting',
  agentState_waiting: 'waiting',
  agentState_done: 'done',
  todo_pending: 'pending',
  todo_in_progress: 'in progress',
  todo_done: 'done',
  todo_failed: 'failed',
  todo_skipped: 'skipped',
  researchNotes: 'Notes',
  decision_continue: 'Supervisor: continue',
  decision_replan: 'Supervisor: change the plan',
  decision_finish: 'Supervisor: finish the research',
  decisionOther: 'Supervisor: {decision}',
  decisionCall: 'review {n} of {max}',
  decisionForced: 'no decision given',
  decisionReviewed: 'Reviewed the work of {agent}',
  newTodos: 'New tasks',
  // Plural forms, keyed by Intl.PluralRules category.
  pl_results: { one: '{n} result', other: '{n} results' },
  pl_searches: { one: '{n} search', other: '{n} searches' },
  pl_pages: { one: '{n} page read', other: '{n} pages read' },
  pl_toolsFailed: { one: '{n} tool failed', other: '{n} tools failed' },
  pl_sources: { one: '{n} source', other: '{n} sources' },
  pl_tokens: { one: '{n} token', other: '{n} tokens' },
  pl_documents: { one: '{n} document', other: '{n} documents' },
  pl_chunks: { one: '{n} passage', other: '{n} passages' },
  pl_notes: { one: '{n} note', other: '{n} notes' },
  // Stages of a run, by the stable stage id of data-status parts. English
  // shows the server's own message, which carries numbers; these are the
  // fallback.
  stage_rewrite: 'Rewriting the question',
  stage_queries: 'Planning searches',
  stage_search: 'Searching',
  stage_rerank: 'Ranking results',
  stage_read: 'Reading pages',
  stage_synthesize: 'Writing the answer',
  stage_answer: 'Thinking',
  stage_plan: 'Planning',
  stage_research: 'Researching',
  stage_report: 'Writing the report',
  // Modes. Unknown modes show their id and the server's description.
  mode_chat: 'Chat',
  mode_search: 'Search',
  mode_deep_search: 'Deep search',
  mode_deep_research: 'Deep research',
  mode_docs: 'Documents',
  mode_sgr_agent: 'SGR agent',
  mode_extreme: 'Extreme',
  mode_assistant: 'Assistant',
  modedesc_chat: 'Talk with the model alone, without web search.',
  modedesc_search: 'Quick web search and a cited answer.',
  modedesc_deep_search: 'More searches and sources, a longer cited answer.',
  modedesc_deep_research: 'A team of researchers and a full report with PDF.',
  modedesc_docs: 'Answers from your own documents.',
  modedesc_sgr_agent: 'Schema-guided reasoning agent that may ask back.',
};

const ru = {
  chats: 'Чаты',
  newChat: 'Новый чат',
  signInTitle: 'Вход в Sova',
  userName: 'Имя',
  password: 'Пароль',
  signIn: 'Войти',
  signOut: 'Выйти',
  signInFailed: 'Не удалось войти: {msg}',
  usageLeft: 'Сегодня осталось {left} из {limit} сообщений; сброс {reset}',
  openMenu: 'Открыть меню',
  closeMenu: 'Закрыть меню',
  heroTitle: 'Что вы хотите узнать?',
  heroSub: 'Сова ищет в интернете, читает страницы и отвечает со ссылками на источники.',
  placeholder: 'Спросите что угодно…',
  placeholderFollowUp: 'Задайте уточняющий вопрос…',
  question: 'Вопрос',
  hint: 'Enter — отправить · Shift+Enter — новая строка',
  send: 'Отправить',
  stop: 'Остановить',
  mode: 'Режим',
  noChats: 'Чатов пока нет. Задайте первый вопрос.',
  untitled: 'Без названия',
  today: 'Сегодня',
  yesterday: 'Вчера',
  previous7: 'Последние 7 дней',
  older: 'Раньше',
  delete: 'Удалить',
  deleteChat: 'Удалить чат',
  confirmDelete: 'Удалить этот чат?',
  cancel: 'Отмена',
  deleted: 'Чат удалён',
  deleteFailed: 'Не удалось удалить чат: {msg}',
  steps: 'Ход работы',
  working: 'Работаю…',
  iteration: 'Раунд {n}',
  reading: 'читаю…',
  failed: 'ошибка',
  chars: '{n} симв.',
  rewritten: 'Уточнённый запрос',
  sources: 'Источники',
  answer: 'Ответ',
  foundSources: 'Найдено при поиске',
  snippetOnly: 'только сниппет',
  snippetOnlyHint: 'Страницу не удалось прочитать: ответ опирается только на её фрагмент из поисковой выдачи.',
  showAll: 'Показать все ({n})',
  showLess: 'Свернуть',
  copy: 'Копировать',
  copied: 'Скопировано',
  stopped: 'Остановлено. Ответ может быть неполным.',
  errorTitle: 'Запуск завершился ошибкой',
  networkError: 'Сервер недоступен: {msg}',
  connectionLost: 'Связь с сервером прервалась.',
  loadFailed: 'Не удалось открыть чат: {msg}',
  listFailed: 'Не удалось загрузить чаты: {msg}',
  chatGone: 'Этого чата больше нет.',
  answerVersions: 'Версии ответа',
  copyCode: 'Копировать код',
  modesAnswer: 'Ответ',
  modesResearch: 'Исследование',
  modesFocus: 'Фокус',
  modesOther: 'Ещё',
  modeWithdrawnReason: 'Недоступно на этом сервере: {why}',
  editSend: 'Отправить',
  versionPrev: 'Предыдущая версия',
  versionNext: 'Следующая версия',
  versionOf: '{n} / {total}',
  setupTitle: 'Sova не сможет отвечать, пока не исправлена настройка.',
  setupEndpoint: 'Сервер моделей недоступен.',
  setupKey: 'Сервер моделей не принимает ключ API.',
  setupModel: 'Сервер моделей не предоставляет основную модель.',
  setupFastModel: 'Сервер моделей не предоставляет быструю модель.',
  setupOther: 'Проверка «{check}» не пройдена.',
  setupSearch: 'Веб-поиск не отвечает ({provider}): вопросы с поиском в сети не получат ответа.',
  setupFix: 'Администратор может исправить:',
  modeWithdrawn: 'Этот чат шёл в режиме «{mode}», которого на сервере больше нет; выберите режим для следующего вопроса.',
  clarifyTitle: 'Несколько вопросов перед началом',
  clarifyPlaceholder: 'Ваш ответ…',
  clarifySend: 'Ответить',
  clarifyAnswered: 'Ответ отправлен',
  reportTitle: 'Отчёт готов',
  reportPdf: 'PDF',
  reportMarkdown: 'Markdown',
  themeSystem: 'Тема: как в системе',
  themeLight: 'Тема: светлая',
  themeDark: 'Тема: тёмная',
  reasoning: 'Рассуждение',
  tool: 'Инструмент: {name}',
  document: 'Документ',
  spaces: 'Пространства',
  newSpace: 'Новое пространство',
  spaceName: 'Название пространства',
  create: 'Создать',
  upload: 'Добавить файлы',
  uploading: 'Загружаю {name}…',
  uploaded: 'Добавлен {name}',
  uploadFailed: 'Не удалось добавить {name}: {msg}',
  useInAnswers: 'Искать в этом пространстве при ответе',
  noDocuments: 'Документов пока нет.',
  deleteSpace: 'Удалить пространство',
  deleteDocument: 'Удалить документ',
  confirmDeleteDocument: 'Нажмите ещё раз, чтобы удалить документ',
  spacesFailed: 'Пространства: {msg}',
  justNow: 'только что',
  model: 'Модель',
  researchPlan: 'План исследования',
  planRevision: 'редакция {n}',
  agent: 'Исследователь',
  agentN: 'Исследователь {n}',
  agentCurrent: 'Сейчас:',
  agentState_ready: 'готов',
  agentState_working: 'работает',
  agentState_reflecting: 'подводит итог',
  agentState_waiting: 'ждёт',
  agentState_done: 'закончил',
  todo_pending: 'в очереди',
  todo_in_progress: 'в работе',
  todo_done: 'готово',
  todo_failed: 'не удалось',
  todo_skipped: 'пропущено',
  researchNotes: 'Заметки',
  decision_continue: 'Руководитель: продолжать',
  decision_replan: 'Руководитель: изменить план',
  decision_finish: 'Руководитель: завершить исследование',
  decisionOther: 'Руководитель: {decision}',
  decisionCall: 'проверка {n} из {max}',
  decisionForced: 'без решения',
  decisionReviewed: 'Проверена работа: {agent}',
  newTodos: 'Новые задачи',
  pl_results: { one: '{n} результат', few: '{n} результата', many: '{n} результатов', other: '{n} результата' },
  pl_searches: { one: '{n} запрос', few: '{n} запроса', many: '{n} запросов', other: '{n} запроса' },
  pl_toolsFailed: { one: '{n} инструмент не сработал', few: '{n} инструмента не сработали', many: '{n} инструментов не сработали', other: '{n} инструмента не сработали' },
  pl_pages: { one: 'прочитана {n} страница', few: 'прочитано {n} страницы', many: 'прочитано {n} страниц', other: 'прочитано {n} страницы' },
  pl_sources: { one: '{n} источник', few: '{n} источника', many: '{n} источников', other: '{n} источника' },
  pl_tokens: { one: '{n} токен', few: '{n} токена', many: '{n} токенов', other: '{n} токена' },
  pl_documents: { one: '{n} документ', few: '{n} документа', many: '{n} документов', other: '{n} документа' },
  pl_chunks: { one: '{n} фрагмент', few: '{n} фрагмента', many: '{n} фрагментов', other: '{n} фрагмента' },
  pl_notes: { one: '{n} заметка', few: '{n} заметки', many: '{n} заметок', other: '{n} заметки' },
  stage_rewrite: 'Уточняю вопрос',
  stage_queries: 'Составляю запросы',
  stage_search: 'Ищу',
  stage_rerank: 'Ранжирую результаты',
  stage_read: 'Читаю страницы',
  stage_synthesize: 'Пишу ответ',
  stage_answer: 'Думаю',
  stage_plan: 'Составляю план',
  stage_research: 'Исследую',
  stage_report: 'Пишу отчёт',
  mode_chat: 'Чат',
  mode_search: 'Поиск',
  mode_deep_search: 'Глубокий поиск',
  mode_deep_research: 'Исследование',
  mode_docs: 'Документы',
  mode_sgr_agent: 'SGR-агент',
  mode_extreme: 'Экстрим',
  mode_assistant: 'Ассистент',
  modedesc_chat: 'Разговор с моделью, без поиска в интернете.',
  modedesc_search: 'Быстрый поиск в интернете и ответ со ссылками.',
  modedesc_deep_search: 'Больше запросов и источников, подробный ответ.',
  modedesc_deep_research: 'Команда исследователей и полный отчёт в PDF.',
  modedesc_docs: 'Ответы по вашим документам.',
  modedesc_sgr_agent: 'Агент со схемой рассуждений; может переспросить.',
};

const dictionaries = { en, ru };

// pickLanguage returns 'ru' when the first of the browser's languages that
// Sova speaks is Russian, else 'en'.
function pickLanguage(languages) {
  for (const l of languages || []) {
    const base = String(l).toLowerCase().split('-')[0];
    if (base in dictionaries) return base;
  }
  return 'en';
}

export const lang = pickLanguage(typeof navigator === 'undefined' ? [] : (navigator.languages?.length ? navigator.languages : [navigator.language]));
const dict = dictionaries[lang];
const plurals = new Intl.PluralRules(lang);
const numbers = new Intl.NumberFormat(lang);

function fill(s, vars) {
  return s.replace(/\{(\w+)\}/g, (m, k) => (vars && k in vars ? (typeof vars[k] === 'number' ? numbers.format(vars[k]) : String(vars[k])) : m));
}

// addStrings adds a view module's own strings, English and Russian, so
// that modules need not edit this file; existing keys are kept.
export function addStrings(moreEn, moreRu) {
  for (const [k, v] of Object.entries(moreEn || {})) if (!(k in en)) en[k] = v;
  for (const [k, v] of Object.entries(moreRu || {})) if (!(k in ru)) ru[k] = v;
}

// t returns the string for key in the interface language, with {name}
// placeholders filled from vars; the key itself when there is none.
export function t(key, vars) {
  const s = dict[key] ?? en[key];
  if (typeof s !== 'string') return key;
  return fill(s, vars);
}

// has reports whether key has a string.
export function has(key) {
  return typeof (dict[key] ?? en[key]) === 'string';
}

// plural returns the plural form of key (pl_<key>) for n.
export function plural(key, n) {
  const forms = dict['pl_' + key] ?? en['pl_' + key];
  if (!forms) return String(n);
  return fill(forms[plurals.select(n)] ?? forms.other, { n });
}

// modeName and modeDescription name a mode in the interface language,
// falling back to the server's id and description for modes this page
// does not know yet.
export function modeName(id) {
  return has('mode_' + id) ? t('mode_' + id) : humanize(id);
}

export function modeDescription(id, serverDescription) {
  if (lang === 'en' && serverDescription) return serverDescription;
  return has('modedesc_' + id) ? t('modedesc_' + id) : serverDescription || '';
}

// humanize turns an identifier (research_plan, extreme-search) into words.
export function humanize(id) {
  const s = String(id || '').replace(/[_-]+/g, ' ').trim();
  return s ? s[0].toUpperCase() + s.slice(1) : '';
}

// formatNumber formats n for the interface language.
export function formatNumber(n) {
  return numbers.format(n);
}

// applyStatic fills elements marked with data-i18n (text), data-i18n-title,
// data-i18n-placeholder and data-i18n-aria below root.
export function applyStatic(root) {
  document.documentElement.lang = lang;
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-title]')) {
    el.title = t(el.dataset.i18nTitle);
    el.setAttribute('aria-label', el.title);
  }
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
}

// dayGroup names the sidebar group a date falls in.
export function dayGroup(date, now = new Date()) {
  const startOfDay = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((startOfDay(now) - startOfDay(date)) / 86400000);
  if (days <= 0) return t('today');
  if (days === 1) return t('yesterday');
  if (days < 7) return t('previous7');
  return t('older');
}
