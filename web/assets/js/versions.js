// Versions of an answer: Regenerate answers the last question again in
// place (POST /api/search with trigger "regenerate-message"); the earlier
// answers stay, reachable by arrows over the question. The newest version
// is the one later questions go on from.

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
