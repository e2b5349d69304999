// Versions of an exchange: Regenerate answers the last question again in
// place (POST /api/search with trigger "regenerate-message"), Edit
// rewrites it in place and answers it anew ("edit-message"); the earlier
// versions stay, reachable by arrows under the question. The newest
// version is the one later questions go on from.

import { h, icon } from './dom.js';
import { t } from './i18n.js';

// attachVersions puts the arrows on each turn of versions (oldest first);
// none when there is only one.
export function attachVersions(versions) {
  versions.forEach((v, k) => {
    v.el.querySelector(':scope > .turn-versions')?.remove();
    v.el.classList.toggle('versioned', versions.length > 1);
    if (versions.length < 2) return;
    const go = (to) => () => {
      if (to < 0 || to >= versions.length) return;
      v.el.replaceWith(versions[to].el);
      versions[to].el.querySelector(to < k ? '.version-next' : '.version-prev')?.focus();
    };
    const nav = h('div', { class: 'turn-versions', role: 'group', 'aria-label': t('answerVersions') },
      h('button', { class: 'icon-btn version-prev', type: 'button', disabled: k === 0, title: t('versionPrev'), 'aria-label': t('versionPrev'), onclick: go(k - 1) }, icon('chevronLeft')),
      h('span', { class: 'turn-versions-n' }, t('versionOf', { n: k + 1, total: versions.length })),
      h('button', { class: 'icon-btn version-next', type: 'button', disabled: k === versions.length - 1, title: t('versionNext'), 'aria-label': t('versionNext'), onclick: go(k + 1) }, icon('chevronRight')));
    v.el.querySelector('.turn-question')?.after(nav);
  });
}

// editInPlace turns a turn's question into a form; submit(text) gets the
// rewritten question, Esc or Cancel puts the question back.
export function editInPlace(turn, submit) {
  const heading = turn.el.querySelector('.turn-question');
  if (!heading || turn.el.querySelector('.question-edit')) return;
  const input = h('textarea', { class: 'question-edit-input', rows: 2, 'aria-label': t('editQuestion') });
  input.value = turn.question;
  const cancel = () => form.replaceWith(heading);
  const form = h('form', { class: 'question-edit' }, input,
    h('div', { class: 'question-edit-actions' },
      h('button', { class: 'btn', type: 'button', onclick: cancel }, t('cancel')),
      h('button', { class: 'btn primary', type: 'submit' }, t('editSend'))));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return input.focus();
    form.replaceWith(heading);
    if (text !== turn.question) submit(text);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      cancel();
    } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  heading.replaceWith(form);
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
}
