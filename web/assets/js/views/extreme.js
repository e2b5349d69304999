// Views of the extreme mode's data-extreme_search parts
// (internal/mode/extreme/parts.go): the research plan, each web search with
// the sources it found, each X search with its posts, and each code cell
// with its code, output and charts. Charts are images served by the
// run-files endpoint (same origin); nothing from the network becomes
// markup, and every field is checked before use.

import { registerPartView } from '../views.js';
import { addStrings, t } from '../i18n.js';
import { h, icon, spinner, hostOf, safeURL, safeImageURL } from '../dom.js';

addStrings({
  mode_extreme: 'Extreme',
  modedesc_extreme: 'A research plan, web and X searches, and Python that computes and draws charts.',
  ext_plan: 'Research plan',
  ext_query: 'Web search',
  ext_x: 'X search',
  ext_code: 'Code',
  ext_output: 'Output',
  ext_errors: 'Errors',
  ext_exit: 'exit status {n}',
  ext_limit: 'stopped at the {limit} limit',
  ext_reading: 'reading pages',
  ext_running: 'running',
  ext_chart: 'Chart',
  ext_showCode: 'Show code',
}, {
  mode_extreme: 'Экстрим',
  modedesc_extreme: 'План исследования, поиск в вебе и X, Python для расчётов и графиков.',
  ext_plan: 'План исследования',
  ext_query: 'Поиск в вебе',
  ext_x: 'Поиск в X',
  ext_code: 'Код',
  ext_output: 'Вывод',
  ext_errors: 'Ошибки',
  ext_exit: 'код выхода {n}',
  ext_limit: 'остановлен по лимиту {limit}',
  ext_reading: 'читаю страницы',
  ext_running: 'выполняется',
  ext_chart: 'График',
  ext_showCode: 'Показать код',
});

const MAX_ITEMS = 50;
const str = (v) => (typeof v === 'string' ? v : '');
const list = (v) => (Array.isArray(v) ? v.slice(0, MAX_ITEMS) : []);
const obj = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : null);

function stateIcon(status) {
  if (status === 'error') return icon('alert', 'bad');
  if (status === 'completed') return icon('check');
  return spinner();
}

function planView(d) {
  const status = obj(d.status);
  const themes = list(d.plan);
  return h('div', { class: 'ext-card ext-plan' },
    h('div', { class: 'ext-head' }, icon('list'), h('span', { class: 'ext-title' }, t('ext_plan')),
      status && str(status.title) ? h('span', { class: 'ext-status' }, str(status.title)) : null),
    themes.length ? h('ol', { class: 'ext-themes' }, themes.map((th) => {
      const theme = obj(th);
      if (!theme) return null;
      return h('li', null, h('span', { class: 'ext-theme' }, str(theme.title)),
        h('ul', { class: 'ext-todos' }, list(theme.todos).map((td) => (typeof td === 'string' ? h('li', null, td) : null))));
    })) : null);
}

function sourceChip(s) {
  const src = obj(s);
  const url = src && safeURL(src.url);
  if (!url) return null;
  const fav = safeImageURL(src.favicon);
  return h('a', { class: 'ext-source', href: url, target: '_blank', rel: 'noopener noreferrer', title: str(src.title) || url },
    fav ? h('img', { src: fav, alt: '', class: 'ext-favicon', loading: 'lazy', referrerpolicy: 'no-referrer' }) : null,
    h('span', { class: 'ext-source-title' }, str(src.title) || hostOf(url)),
    h('span', { class: 'ext-host' }, hostOf(url)));
}

function queryView(d) {
  const status = str(d.status);
  const sources = list(d.sources);
  return h('div', { class: 'ext-card ext-query', dataset: { status } },
    h('div', { class: 'ext-head' }, stateIcon(status), icon('search'), h('span', { class: 'ext-title' }, str(d.query) || t('ext_query')),
      status === 'reading_content' ? h('span', { class: 'ext-status' }, t('ext_reading')) : null,
      str(d.category) === 'news' ? h('span', { class: 'ext-tag' }, 'news') : null),
    str(d.error) ? h('div', { class: 'ext-error bad' }, str(d.error)) : null,
    sources.length ? h('div', { class: 'ext-sources' }, sources.map(sourceChip)) : null);
}

function xView(d) {
  const status = str(d.status);
  const result = obj(d.result);
  const posts = result ? list(result.sources) : [];
  return h('div', { class: 'ext-card ext-x', dataset: { status } },
    h('div', { class: 'ext-head' }, stateIcon(status), icon('chat'), h('span', { class: 'ext-title' }, str(d.query) || t('ext_x')),
      list(d.handles).length ? h('span', { class: 'ext-status' }, list(d.handles).filter((x) => typeof x === 'string').map((x) => '@' + x).join(' ')) : null),
    str(d.error) ? h('div', { class: 'ext-error bad' }, str(d.error)) : null,
    posts.length ? h('div', { class: 'ext-sources' }, posts.map((p) => {
      const post = obj(p);
      return post ? sourceChip({ url: post.link, title: post.title || post.text }) : null;
    })) : null);
}

function codeView(d) {
  const status = str(d.status);
  const result = obj(d.result);
  const charts = list(d.charts).map(obj).filter((c) => c && typeof c.url === 'string' && c.url.startsWith('/api/runs/'));
  const meta = [];
  if (result && typeof result.exitCode === 'number' && result.exitCode !== 0) meta.push(t('ext_exit', { n: result.exitCode }));
  if (str(d.limitHit)) meta.push(t('ext_limit', { limit: str(d.limitHit) }));
  if (status === 'running') meta.push(t('ext_running'));
  return h('div', { class: 'ext-card ext-code', dataset: { status } },
    h('div', { class: 'ext-head' }, stateIcon(status), icon('doc'), h('span', { class: 'ext-title' }, str(d.title) || t('ext_code')),
      meta.length ? h('span', { class: 'ext-status' }, meta.join(' · ')) : null),
    h('details', { class: 'ext-source-code' }, h('summary', null, t('ext_showCode')), h('pre', null, h('code', null, str(d.code)))),
    result && str(result.stdout) ? h('div', { class: 'ext-out' }, h('div', { class: 'ext-label' }, t('ext_output')), h('pre', null, str(result.stdout))) : null,
    result && str(result.stderr) ? h('div', { class: 'ext-out ext-err' }, h('div', { class: 'ext-label' }, t('ext_errors')), h('pre', null, str(result.stderr))) : null,
    str(d.error) ? h('div', { class: 'ext-error bad' }, str(d.error)) : null,
    charts.length ? h('div', { class: 'ext-charts' }, charts.map((c) => {
      const src = safeImageURL(c.url);
      if (!src) return null;
      const title = str(c.title) || str(c.name) || t('ext_chart');
      return h('figure', { class: 'ext-chart' },
        h('a', { href: src, target: '_blank', rel: 'noopener' }, h('img', { src, alt: title, loading: 'lazy' })),
        h('figcaption', null, title));
    })) : null);
}

const KINDS = { plan: planView, query: queryView, code: codeView, x_search: xView };

// One part: sources and contents show inside their query (whose part
// repeats its sources), so they render as nothing of their own.
function partView(d) {
  const v = obj(d);
  if (!v) return null;
  if (v.kind === 'source' || v.kind === 'content') return h('span', { hidden: true });
  const view = KINDS[v.kind];
  return view ? view(v) : null;
}

// A stored answer keeps the last state of every part as one list.
function extremeView(d) {
  if (Array.isArray(d)) return h('div', { class: 'ext-stored' }, d.slice(0, 200).map(partView));
  return partView(d);
}

registerPartView('extreme_search', extremeView, { block: 'extreme-block' });
