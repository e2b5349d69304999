// The setup banner: what the server's own start-up checks found unusable
// (GET /api/modes "setup": the model endpoint unreachable, its key
// refused, a model it does not serve, no search provider answering) and what an administrator sets,
// shown above every chat so that a first question does not fail without
// a reason.

import { h, icon } from './dom.js';
import { t } from './i18n.js';

// The check names of the server's model checks (internal/doctor).
const PROBLEM_KEYS = {
  'model endpoint': 'setupEndpoint',
  'API key': 'setupKey',
  'main model': 'setupModel',
  'fast model': 'setupFastModel',
};

// The search checks are named "web search: <provider>" (internal/doctor).
const SEARCH_CHECK = /^web search(?:: (.+))?$/;

function problemText(check) {
  if (PROBLEM_KEYS[check]) return t(PROBLEM_KEYS[check]);
  const m = SEARCH_CHECK.exec(check);
  if (m) return t('setupSearch', { provider: m[1] || 'web' });
  return t('setupOther', { check });
}

// setupBanner answers the banner for problems, or null when there are none.
export function setupBanner(problems) {
  const list = (Array.isArray(problems) ? problems : []).filter((p) => p && p.check);
  if (!list.length) return null;
  const lines = list.map((p) => h('li', { dataset: { check: p.check } },
    h('span', { class: 'setup-problem' }, problemText(p.check)),
    p.fix ? h('span', { class: 'setup-fix' }, ' ', t('setupFix'), ' ', h('code', {}, p.fix)) : null));
  return h('div', { class: 'setup-banner', id: 'setup-banner', role: 'alert' },
    icon('alert', 'setup-icon'),
    h('div', { class: 'setup-text' }, h('strong', {}, t('setupTitle')), h('ul', {}, ...lines)));
}
