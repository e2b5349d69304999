// What people expect of an answer page beside the answer itself: a preview
// of a cited source on hover or tap, the cited passage of their own
// documents in a side panel, follow-up questions as chips, and the search
// box over past chats. turn.js, sidebar.js and app.js call these; nothing
// here keeps state beyond the one panel and the one preview on the page.

import { h, icon, hostOf, safeURL } from './dom.js';
import { t, addStrings } from './i18n.js';

addStrings({
  followUps: 'Ask next',
  regenerate: 'Regenerate',
  editQuestion: 'Edit',
  retry: 'Try again',
  rename: 'Rename chat',
  renameFailed: 'Could not rename: {msg}',
  searchChats: 'Search chats',
  noMatches: 'No chat matches',
  exportChat: 'Export as Markdown',
  passageTitle: 'Cited passage',
  passageLoading: 'Loading the passage…',
  passageFailed: 'Could not open the passage: {msg}',
  passageOf: 'passage {n} of {total}',
  openSource: 'Open',
  close: 'Close',
}, {
  followUps: 'Спросить дальше',
  regenerate: 'Ответить заново',
  editQuestion: 'Изменить',
  retry: 'Повторить',
  rename: 'Переименовать чат',
  renameFailed: 'Не удалось переименовать: {msg}',
  searchChats: 'Поиск по чатам',
  noMatches: 'Ни один чат не подходит',
  exportChat: 'Скачать как Markdown',
  passageTitle: 'Цитируемый фрагмент',
  passageLoading: 'Загружаю фрагмент…',
  passageFailed: 'Не удалось открыть фрагмент: {msg}',
  passageOf: 'фрагмент {n} из {total}',
  openSource: 'Открыть',
  close: 'Закрыть',
});

// isPassageURL reports whether a source's address names a passage of the
// person's documents (sova://spaces/…#chunk-N).
export function isPassageURL(u) {
  return typeof u === 'string' && /^sova:\/\/spaces\/[^/]+\/documents\/[^/#]+#chunk-\d+$/.test(u);
}

// ---- the passage panel ----

let panel = null;

// openPassage shows the passage a document citation names in a side
// panel, fetched from GET /api/passages.
export async function openPassage(url) {
  if (!isPassageURL(url)) return;
  const body = h('div', { class: 'passage-body' }, h('p', { class: 'passage-note' }, t('passageLoading')));
  const close = h('button', { class: 'icon-btn passage-close', type: 'button', title: t('close'), 'aria-label': t('close') }, icon('close'));
  const head = h('div', { class: 'passage-head' }, icon('doc'), h('h2', { class: 'passage-title' }, t('passageTitle')), close);
  const el = h('aside', { class: 'passage-panel', role: 'dialog', 'aria-label': t('passageTitle'), tabindex: '-1' }, head, body);
  closePassage();
  panel = el;
  close.addEventListener('click', closePassage);
  document.body.append(el);
  el.focus();
  let p;
  try {
    const res = await fetch('/api/passages?url=' + encodeURIComponent(url), { headers: { Accept: 'application/json' } });
    const json = await res.json().catch(() => null);
    if (!res.ok) throw new Error(json?.error?.message || `${res.status}`);
    p = json?.passage;
  } catch (e) {
    if (panel === el) body.replaceChildren(h('p', { class: 'passage-note bad' }, t('passageFailed', { msg: e.message })));
    return;
  }
  if (panel !== el || !p || typeof p.text !== 'string') return;
  const where = [typeof p.space === 'string' ? p.space : '', p.seq > 0 && p.chunkCount > 0 ? t('passageOf', { n: p.seq, total: p.chunkCount }) : '',
    p.page > 0 ? `p. ${p.page}` : ''].filter(Boolean).join(' · ');
  const chunk = (c, cls) => (c && typeof c.text === 'string' ? h('div', { class: ['passage-chunk', cls] },
    typeof c.heading === 'string' && c.heading ? h('div', { class: 'passage-heading' }, c.heading) : null, h('p', null, c.text)) : null);
  body.replaceChildren(...[
    h('div', { class: 'passage-doc' }, h('strong', null, String(p.title || p.document || '')), where ? h('span', { class: 'passage-where' }, where) : null),
    chunk(p.before, 'context'), chunk(p, 'cited'), chunk(p.after, 'context')].filter(Boolean));
  el.querySelector('.passage-chunk.cited')?.scrollIntoView({ block: 'center' });
}

export function closePassage() {
  if (panel) panel.remove();
  panel = null;
}

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && panel) closePassage();
});

// ---- the citation preview ----

let preview = null;
let hideTimer = 0;

// attachPreview shows a card for source s next to anchor on hover, on
// keyboard focus, and on a first tap (a second tap follows the link).
export function attachPreview(anchor, s) {
  if (!s) return anchor;
  anchor.addEventListener('mouseenter', () => showPreview(anchor, s));
  anchor.addEventListener('mouseleave', () => hidePreviewSoon());
  anchor.addEventListener('focus', () => showPreview(anchor, s));
  anchor.addEventListener('blur', () => hidePreviewSoon());
  anchor.addEventListener('pointerdown', (e) => {
    anchor.dataset.touch = e.pointerType === 'touch' ? '1' : '';
  });
  anchor.addEventListener('click', (e) => {
    if (anchor.dataset.touch === '1' && !(preview && preview.anchor === anchor)) {
      e.preventDefault();
      showPreview(anchor, s);
    }
  }, true);
  return anchor;
}

function showPreview(anchor, s) {
  clearTimeout(hideTimer);
  if (preview && preview.anchor === anchor) return;
  hidePreview();
  const doc = isPassageURL(s.url) || s.kind === 'document';
  const url = doc ? null : safeURL(s.url || '', new Set(['http:', 'https:']));
  const host = doc ? [s.space, s.position].filter((x) => typeof x === 'string' && x).join(' · ') : hostOf(s.url || '');
  const snippet = typeof s.snippet === 'string' ? s.snippet.slice(0, 320) : '';
  const open = url ? h('a', { class: 'preview-open', href: url, target: '_blank', rel: 'noopener noreferrer' }, t('openSource'))
    : doc && isPassageURL(s.url) ? h('button', { class: 'preview-open', type: 'button', onclick: () => { hidePreview(); openPassage(s.url); } }, t('openSource')) : null;
  const card = h('div', { class: 'cite-preview', role: 'tooltip' },
    h('div', { class: 'preview-head' }, h('span', { class: 'preview-num' }, String(s.number || '')), h('span', { class: 'preview-host' }, host)),
    h('div', { class: 'preview-title' }, String(s.title || s.document || s.url || '')),
    snippet ? h('div', { class: 'preview-snippet' }, snippet) : null, open);
  card.addEventListener('mouseenter', () => clearTimeout(hideTimer));
  card.addEventListener('mouseleave', () => hidePreviewSoon());
  document.body.append(card);
  const r = anchor.getBoundingClientRect();
  const w = Math.min(320, innerWidth - 16);
  card.style.width = w + 'px';
  card.style.left = Math.max(8, Math.min(r.left + r.width / 2 - w / 2, innerWidth - w - 8)) + 'px';
  const below = r.bottom + 8 + card.offsetHeight < innerHeight;
  card.style.top = (below ? r.bottom + 8 : Math.max(8, r.top - 8 - card.offsetHeight)) + 'px';
  preview = { anchor, card };
}

function hidePreviewSoon() {
  clearTimeout(hideTimer);
  hideTimer = setTimeout(hidePreview, 200);
}

export function hidePreview() {
  if (preview) preview.card.remove();
  preview = null;
}

document.addEventListener('scroll', hidePreview, { capture: true, passive: true });

// ---- follow-ups ----

// followUpChips renders suggested questions as buttons that ask them.
export function followUpChips(questions, onPick) {
  const qs = (Array.isArray(questions) ? questions : []).filter((q) => typeof q === 'string' && q.trim()).slice(0, 5);
  if (!qs.length) return null;
  return h('div', { class: 'followups' },
    h('div', { class: 'followups-title' }, icon('sparkle'), h('span', null, t('followUps'))),
    h('div', { class: 'followup-chips' }, qs.map((q) => h('button', { class: 'followup-chip', type: 'button', onclick: () => onPick(q) }, q))));
}
