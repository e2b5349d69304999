// The page of a shared chat (/s/{secret}): the questions and answers with
// their sources, read-only. It reads GET /api/shared/{secret} and nothing
// else: no account, no chat list, no composer.

import { h, icon, hostOf } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { renderMath } from './math.js';
import { addStrings, applyStatic, t, lang } from './i18n.js';

addStrings({
  sharedBadge: 'Shared chat · read-only',
  sharedGone: 'This link opens no chat: it was revoked, or the chat was deleted.',
  sharedUntitled: 'Shared chat',
}, {
  sharedBadge: 'Общий чат · только чтение',
  sharedGone: 'Эта ссылка не открывает чат: её отозвали или чат удалён.',
  sharedUntitled: 'Общий чат',
});

async function main() {
  document.documentElement.lang = lang;
  applyStatic(document);
  const root = document.getElementById('shared');
  document.getElementById('shared-badge').textContent = t('sharedBadge');
  const secret = decodeURIComponent(location.pathname.replace(/^\/s\//, '').replace(/\/$/, ''));
  let body = null;
  try {
    const res = await fetch(`/api/shared/${encodeURIComponent(secret)}`, { headers: { Accept: 'application/json' } });
    if (res.ok) body = await res.json();
  } catch {
    // shown as a link that opens nothing
  }
  if (!body || !Array.isArray(body.messages)) {
    root.replaceChildren(h('p', { class: 'shared-gone', role: 'alert' }, t('sharedGone')));
    document.body.classList.add('ready');
    return;
  }
  const title = body.title || t('sharedUntitled');
  document.title = `${title} · Sova`;
  const items = [h('h1', { class: 'shared-title' }, title)];
  for (const m of body.messages) {
    if (m.role === 'user') {
      items.push(h('h2', { class: 'turn-question shared-question' }, m.content || ''));
      continue;
    }
    const sources = Array.isArray(m.sources) ? m.sources : [];
    const byNumber = new Map(sources.map((s) => [s.number, s]));
    const answer = h('div', { class: 'answer md' });
    answer.append(renderMarkdown(m.content || '', {
      citation: (n) => {
        const s = byNumber.get(n);
        return s && s.url ? h('a', { class: 'cite', href: s.url, target: '_blank', rel: 'noopener noreferrer' }, String(n)) : h('sup', { class: 'cite' }, String(n));
      },
    }));
    items.push(answer);
    if (m.error) items.push(h('p', { class: 'turn-error shared-error', role: 'note' }, icon('alert'), h('span', null, m.error)));
    if (sources.length) {
      items.push(h('section', { class: 'shared-sources' },
        h('h3', { class: 'section-title' }, icon('book'), h('span', null, t('sources'))),
        h('ol', null, sources.map((s) => h('li', { value: String(s.number) },
          s.url ? h('a', { href: s.url, target: '_blank', rel: 'noopener noreferrer' }, s.title || hostOf(s.url)) : h('span', null, s.title || ''),
          s.url ? h('span', { class: 'shared-host' }, ' · ' + hostOf(s.url)) : null)))));
    }
  }
  root.replaceChildren(...items);
  await renderMath(root);
  document.body.classList.add('ready');
}

main();
