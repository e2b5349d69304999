// Views of the search groups' tool results (internal/tools): papers,
// videos, Reddit posts, X posts, documentation, price and candlestick
// charts, coins, a conversion, the weather, places, a flight, a film, and
// the web search's images under the answer. Charts are inline SVG drawn
// with DOM calls; remote images load through the image proxy (dom.js).
//
// Every field comes from the network: each is checked, and a view returns
// null rather than throw when the shape is not what it expects.

import { h, icon, hostOf, safeURL } from '../dom.js';
import { addStrings, t, lang } from '../i18n.js';
import { registerToolView, registerAnswerView } from '../views.js';

addStrings({
  mode_web: 'Web', mode_academic: 'Academic', mode_youtube: 'YouTube', mode_reddit: 'Reddit', mode_code: 'Code',
  mode_x: 'X', mode_stocks: 'Stocks', mode_crypto: 'Crypto', mode_memory: 'Memory', mode_connectors: 'Connectors',
  g_pdf: 'PDF', g_cited: 'cited by {n}', g_abstract: 'Abstract', g_transcript: 'Transcript', g_views: '{n} views',
  g_comments: '{n} comments', g_points: '{n} points', g_docs: 'docs', g_change: 'Change', g_range: 'Range',
  g_open: 'Open', g_high: 'High', g_low: 'Low', g_close: 'Close', g_mcap: 'Market cap', g_volume: 'Volume (24 h)',
  g_ath: 'All-time high', g_rank: 'Rank #{n}', g_rates: 'Rates of {date}', g_feels: 'Feels like {t}',
  g_humidity: 'Humidity {n}%', g_wind: 'Wind {v}', g_map: 'Map', g_open_now: 'Open now', g_closed_now: 'Closed',
  g_within: 'within {n} m of {place}', g_images: 'Images', g_departure: 'Departure', g_arrival: 'Arrival',
  g_gate: 'Gate {g}', g_terminal: 'Terminal {t}', g_baggage: 'Baggage {b}', g_delay: '{n} min late',
  g_scheduled: 'Scheduled', g_estimated: 'Expected', g_actual: 'Actual', g_aircraft: 'Aircraft',
  g_altitude: '{n} m up, {s} km/h', g_runtime: '{n} min', g_seasons: '{n} seasons', g_directed: 'Directed by {p}',
  g_created: 'Created by {p}', g_cast: 'Cast', g_rating: '{r}/10 ({n} votes)', g_more: 'Also found', g_no_transcript: 'no transcript',
  g_flight_scheduled: 'Scheduled', g_flight_active: 'In the air', g_flight_landed: 'Landed', g_flight_cancelled: 'Cancelled',
  g_flight_incident: 'Incident', g_flight_diverted: 'Diverted', g_failed_symbol: '{s}: {e}', g_chart: 'Price chart of {s}',
  g_candles: 'Candlestick chart of {s}', g_source: 'Source: {s}',
}, {
  mode_web: 'Веб', mode_academic: 'Наука', mode_youtube: 'YouTube', mode_reddit: 'Reddit', mode_code: 'Код',
  mode_x: 'X', mode_stocks: 'Акции', mode_crypto: 'Криптовалюты', mode_memory: 'Память', mode_connectors: 'Коннекторы',
  modedesc_web: 'Ищет в интернете 3–5 запросами сразу, читает страницы, переводит, знает погоду, места, рейсы и фильмы; отвечает со ссылками.',
  modedesc_academic: 'Находит научные статьи (OpenAlex и arXiv или Exa) и отвечает по их аннотациям со ссылками.',
  modedesc_youtube: 'Находит видео, читает их субтитры и отвечает со ссылками на нужные моменты.',
  modedesc_reddit: 'Ищет посты и обсуждения Reddit за выбранный период и пересказывает, что говорят люди.',
  modedesc_code: 'Ищет документацию и примеры кода, сначала официальную документацию, и отвечает кодом.',
  modedesc_x: 'Ищет свежие посты в X (Twitter) через xAI и пересказывает их со ссылками (нужен XAI_API_KEY).',
  modedesc_stocks: 'Графики цен акций, фондов и индексов (Yahoo Finance) и пересчёт валют по свежим курсам.',
  modedesc_crypto: 'Цены, рыночные данные и свечные графики криптовалют и токенов из CoinGecko.',
  modedesc_memory: 'Отвечает, опираясь на то, что вы просили запомнить.',
  modedesc_connectors: 'Ищет в подключённых источниках: папках и WebDAV.',
  g_pdf: 'PDF', g_cited: 'цитируют {n}', g_abstract: 'Аннотация', g_transcript: 'Субтитры', g_views: '{n} просмотров',
  g_comments: 'комментариев: {n}', g_points: 'очков: {n}', g_docs: 'документация', g_change: 'Изменение', g_range: 'Период',
  g_open: 'Открытие', g_high: 'Максимум', g_low: 'Минимум', g_close: 'Закрытие', g_mcap: 'Капитализация', g_volume: 'Объём (24 ч)',
  g_ath: 'Исторический максимум', g_rank: 'Место №{n}', g_rates: 'Курсы на {date}', g_feels: 'Ощущается как {t}',
  g_humidity: 'Влажность {n}%', g_wind: 'Ветер {v}', g_map: 'Карта', g_open_now: 'Открыто', g_closed_now: 'Закрыто',
  g_within: 'в {n} м от места «{place}»', g_images: 'Изображения', g_departure: 'Вылет', g_arrival: 'Прилёт',
  g_gate: 'Выход {g}', g_terminal: 'Терминал {t}', g_baggage: 'Багаж: лента {b}', g_delay: 'задержка {n} мин',
  g_scheduled: 'По расписанию', g_estimated: 'Ожидается', g_actual: 'Фактически', g_aircraft: 'Самолёт',
  g_altitude: 'высота {n} м, {s} км/ч', g_runtime: '{n} мин', g_seasons: 'сезонов: {n}', g_directed: 'Режиссёр: {p}',
  g_created: 'Создатели: {p}', g_cast: 'В ролях', g_rating: '{r}/10 (голосов: {n})', g_more: 'Ещё найдено', g_no_transcript: 'без субтитров',
  g_flight_scheduled: 'По расписанию', g_flight_active: 'В полёте', g_flight_landed: 'Приземлился', g_flight_cancelled: 'Отменён',
  g_flight_incident: 'Происшествие', g_flight_diverted: 'Перенаправлен', g_failed_symbol: '{s}: {e}', g_chart: 'График цены {s}',
  g_candles: 'Свечной график {s}', g_source: 'Источник: {s}',
});

// ---- checks and formats ----

const MAX = 30;

const str = (v) => (typeof v === 'string' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const rec = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : null);
const arr = (v, n = MAX) => (Array.isArray(v) ? v.slice(0, n) : []);
const recs = (v, n = MAX) => arr(v, n).map(rec).filter(Boolean);

function fmt(n, opts) {
  if (num(n) === null) return '';
  try {
    return new Intl.NumberFormat(lang, opts).format(n);
  } catch {
    return String(n);
  }
}

// money formats a price in a currency (ISO code), or as a number when the
// code is not one Intl knows.
function money(n, currency, digits) {
  if (num(n) === null) return '';
  const abs = Math.abs(n);
  const max = digits ?? (abs >= 1000 ? 0 : abs >= 1 ? 2 : abs >= 0.01 ? 4 : 8);
  const cur = str(currency).toUpperCase();
  if (/^[A-Z]{3}$/.test(cur)) {
    try {
      return new Intl.NumberFormat(lang, { style: 'currency', currency: cur, maximumFractionDigits: max, minimumFractionDigits: Math.min(max, 2) }).format(n);
    } catch {
      // an unknown code, such as a coin's: the number and the code
    }
  }
  return fmt(n, { maximumFractionDigits: max }) + (cur ? ' ' + cur : '');
}

const compact = (n, currency) => (num(n) === null ? '' : (currency ? str(currency).toUpperCase() + ' ' : '') + fmt(n, { notation: 'compact', maximumFractionDigits: 2 }));

function pct(n) {
  if (num(n) === null) return '';
  return (n > 0 ? '+' : '') + fmt(n, { maximumFractionDigits: 2 }) + '%';
}

const trend = (n) => (num(n) === null || n === 0 ? 'flat' : n > 0 ? 'up' : 'down');

function date(s, withTime = false) {
  const v = str(s);
  if (!v) return '';
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return v;
  return d.toLocaleString(lang, withTime ? { dateStyle: 'medium', timeStyle: 'short' } : { dateStyle: 'medium' });
}

// link is an anchor that opens outside the page, or plain text without a
// usable URL.
function link(url, text, cls) {
  const u = safeURL(url, new Set(['http:', 'https:']));
  if (!u) return h('span', { class: cls }, text);
  return h('a', { class: cls, href: u, target: '_blank', rel: 'noopener noreferrer' }, text);
}

// badge is the answer's citation number of an item the answer cites
// (tool.citeOf by address), none for the others: the number a tool gave
// its results is not the number the answer shows.
const badge = (citeOf, url) => {
  const n = typeof citeOf === 'function' ? num(citeOf(str(url))) : null;
  return n > 0 ? h('span', { class: 'g-num', title: '[' + n + ']' }, String(n)) : null;
};

function thumb(url, cls, alt = '') {
  const u = str(url);
  if (!u) return null;
  const img = h('img', { class: cls, src: u, alt, loading: 'lazy', decoding: 'async', referrerpolicy: 'no-referrer' });
  img.addEventListener('error', () => img.classList.add('broken'), { once: true });
  return img;
}

function clip(s, n) {
  const v = str(s);
  return v.length > n ? v.slice(0, n - 1).trimEnd() + '…' : v;
}

// searches is a multi-query result's searches that have results.
const searches = (out) => recs(rec(out)?.searches, 5);

function queryHead(s) {
  const err = str(s.error);
  return h('div', { class: 'g-query' }, icon('search'), h('span', null, str(s.query)), err ? h('span', { class: 'g-bad', title: err }, clip(err, 80)) : null);
}

// ---- papers ----

function paper(p, citeOf) {
  const authors = arr(p.authors, 6).map(str).filter(Boolean);
  const meta = [authors.join(', ') + (arr(p.authors, 100).length > 6 ? ' et al.' : ''), str(p.year) || str(p.publishedDate).slice(0, 4), str(p.venue)].filter(Boolean);
  const cites = num(p.citations);
  const summary = str(p.summary);
  return h('li', { class: 'g-paper' },
    h('div', { class: 'g-line' }, badge(citeOf, p.url), link(p.url, str(p.title) || hostOf(str(p.url)), 'g-title')),
    meta.length ? h('div', { class: 'g-meta' }, meta.join(' · ')) : null,
    summary ? h('details', { class: 'g-abstract' }, h('summary', null, t('g_abstract')), h('p', null, clip(summary, 1500))) : null,
    h('div', { class: 'g-tags' },
      str(p.pdfUrl) ? link(p.pdfUrl, [icon('download'), t('g_pdf')], 'g-chip pdf') : null,
      str(p.doi) ? link('https://doi.org/' + str(p.doi).replace(/^https?:\/\/doi\.org\//, ''), 'DOI', 'g-chip') : null,
      cites !== null && cites > 0 ? h('span', { class: 'g-chip' }, t('g_cited', { n: fmt(cites) })) : null,
      str(p.source) ? h('span', { class: 'g-chip muted' }, str(p.source)) : null));
}

registerToolView('academic_search', (tool) => {
  const ss = searches(tool.output);
  if (!ss.length) return null;
  return h('div', { class: 'g-view g-papers' }, ss.map((s) => [ss.length > 1 ? queryHead(s) : null,
    h('ul', { class: 'g-list' }, recs(s.results, 20).map((p) => paper(p, tool.citeOf)))]));
});

// ---- videos ----

function video(v, citeOf) {
  const segs = recs(v.transcript, 6);
  const views = num(v.views);
  const meta = [str(v.channelTitle), str(v.duration), views !== null ? t('g_views', { n: fmt(views, { notation: 'compact' }) }) : '', date(v.publishedAt)].filter(Boolean);
  return h('li', { class: 'g-video' },
    link(v.url, [thumb(v.thumbnailUrl, 'g-thumb'), str(v.duration) ? h('span', { class: 'g-duration' }, str(v.duration)) : null], 'g-thumb-link'),
    h('div', { class: 'g-video-body' },
      h('div', { class: 'g-line' }, badge(citeOf, v.url), link(v.url, str(v.title) || str(v.id), 'g-title')),
      h('div', { class: 'g-meta' }, str(v.channelUrl) ? link(v.channelUrl, meta[0] || '', 'g-channel') : meta[0] || '', meta.length > 1 ? ' · ' + meta.slice(1).join(' · ') : ''),
      segs.length
        ? h('details', { class: 'g-transcript' }, h('summary', null, t('g_transcript')),
          h('ul', null, segs.map((s) => h('li', null, link(s.url || v.url, str(s.timestamp), 'g-time'), ' ', clip(s.text, 220)))))
        : h('div', { class: 'g-meta muted' }, str(v.transcriptError) || t('g_no_transcript'))));
}

registerToolView('youtube_search', (tool) => {
  const vs = recs(rec(tool.output)?.videos, 10);
  if (!vs.length) return null;
  return h('ul', { class: 'g-view g-videos' }, vs.map((v) => video(v, tool.citeOf)));
});

// ---- Reddit ----

function post(p, citeOf) {
  const score = num(p.score);
  const comments = recs(p.comments, 3);
  const meta = [str(p.subreddit) ? 'r/' + str(p.subreddit).replace(/^r\//, '') : '', str(p.author) ? 'u/' + str(p.author) : '', date(p.created)].filter(Boolean);
  return h('li', { class: 'g-post' },
    h('div', { class: 'g-line' }, badge(citeOf, p.url), link(p.url, str(p.title) || str(p.url), 'g-title')),
    h('div', { class: 'g-meta' }, meta.join(' · '),
      score !== null ? h('span', { class: 'g-chip' }, '▲ ', fmt(score, { notation: 'compact' })) : null,
      num(p.numComments) !== null ? h('span', { class: 'g-chip' }, icon('chat'), fmt(p.numComments)) : null),
    str(p.content) ? h('p', { class: 'g-snippet' }, clip(p.content, 280)) : null,
    comments.length ? h('ul', { class: 'g-comments' }, comments.map((c) => h('li', null,
      h('span', { class: 'g-author' }, str(c.author) ? 'u/' + str(c.author) : ''), num(c.score) !== null ? h('span', { class: 'g-meta' }, ' ▲ ' + fmt(c.score)) : null,
      h('div', null, clip(c.body, 240))))) : null);
}

registerToolView('reddit_search', (tool) => {
  const ss = searches(tool.output);
  if (!ss.length) return null;
  return h('div', { class: 'g-view g-reddit' }, ss.map((s) => [ss.length > 1 ? queryHead(s) : null, h('ul', { class: 'g-list' }, recs(s.results, 20).map((p) => post(p, tool.citeOf)))]));
});

// ---- X ----

function xPost(s, citeOf) {
  const title = str(s.title);
  const handle = (/^@?([A-Za-z0-9_]{1,15})\b/.exec(title) || /x\.com\/([A-Za-z0-9_]{1,15})\//.exec(str(s.link)) || [])[1] || '';
  return h('li', { class: 'g-xpost' },
    h('div', { class: 'g-line' }, badge(citeOf, s.link), h('span', { class: 'g-avatar', 'aria-hidden': 'true' }, (handle[0] || 'X').toUpperCase()),
      link(s.link, handle ? '@' + handle : title || hostOf(str(s.link)), 'g-title')),
    h('p', { class: 'g-snippet' }, clip(s.text || title, 400)));
}

registerToolView('x_search', (tool) => {
  const ss = searches(tool.output);
  if (!ss.length) return null;
  return h('div', { class: 'g-view g-x' }, ss.map((s) => [queryHead(s), h('ul', { class: 'g-list' }, recs(s.sources, 20).map((x) => xPost(x, tool.citeOf)))]));
});

// ---- code ----

registerToolView('code_context', (tool) => {
  const rs = recs(rec(tool.output)?.results, 10);
  if (!rs.length) return null;
  return h('ul', { class: 'g-view g-list g-code' }, rs.map((r) => h('li', null,
    h('div', { class: 'g-line' }, badge(tool.citeOf, r.url), link(r.url, str(r.title) || str(r.url), 'g-title'), r.docs === true ? h('span', { class: 'g-chip docs' }, t('g_docs')) : null),
    h('div', { class: 'g-meta' }, hostOf(str(r.url))),
    str(r.content) ? h('p', { class: 'g-snippet' }, clip(r.content, 240)) : null)));
});

// ---- charts ----

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c) el.append(c);
  return el;
}

const W = 640;
const H = 220;
const PAD = { l: 8, r: 64, t: 12, b: 22 };

// scale maps [lo, hi] to [a, b].
function scale(lo, hi, a, b) {
  const span = hi - lo || Math.abs(hi) || 1;
  return (v) => a + ((v - lo) / span) * (b - a);
}

function times(points) {
  return points.map((p) => new Date(str(p.time)).getTime()).map((x, i) => (Number.isFinite(x) ? x : i));
}

function axisLabels(lo, hi, y, format) {
  return [hi, (lo + hi) / 2, lo].map((v) => svg('text', { class: 'g-axis', x: W - PAD.r + 6, y: y(v) + 4 }, document.createTextNode(format(v))));
}

function timeLabels(xs, x) {
  if (xs.length < 2) return [];
  const first = xs[0];
  const last = xs[xs.length - 1];
  const span = last - first;
  const opts = span > 2 * 86400000 ? { month: 'short', day: 'numeric' } : { hour: '2-digit', minute: '2-digit' };
  const label = (v) => (v > 1e11 ? new Date(v).toLocaleString(lang, opts) : '');
  return [[first, 'start'], [last, 'end']].map(([v, anchor]) => svg('text', { class: 'g-axis', x: x(v), y: H - 6, 'text-anchor': anchor }, document.createTextNode(label(v))));
}

// lineChart draws one or several series of {time, close}: prices when
// there is one, changes in percent from the start when there are several
// (their prices and currencies differ).
function lineChart(series, title) {
  const rel = series.length > 1;
  const lines = series.map((s) => {
    const pts = s.points.filter((p) => num(p.close) !== null);
    const base = num(pts[0]?.close);
    return { ...s, xs: times(pts), ys: pts.map((p) => (rel && base ? (p.close / base - 1) * 100 : p.close)) };
  }).filter((l) => l.ys.length > 1);
  if (!lines.length) return null;
  const allX = lines.flatMap((l) => l.xs);
  const allY = lines.flatMap((l) => l.ys);
  const x = scale(Math.min(...allX), Math.max(...allX), PAD.l, W - PAD.r);
  const lo = Math.min(...allY);
  const hi = Math.max(...allY);
  const y = scale(lo, hi, H - PAD.b, PAD.t);
  const format = rel ? (v) => pct(v) : (v) => fmt(v, { maximumFractionDigits: Math.abs(hi) >= 100 ? 0 : 2 });
  const grid = [hi, (lo + hi) / 2, lo].map((v) => svg('line', { class: 'g-grid', x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v) }));
  const paths = lines.map((l, i) => {
    const d = l.xs.map((xv, k) => (k ? 'L' : 'M') + x(xv).toFixed(1) + ' ' + y(l.ys[k]).toFixed(1)).join(' ');
    const area = d + ` L${x(l.xs[l.xs.length - 1]).toFixed(1)} ${H - PAD.b} L${x(l.xs[0]).toFixed(1)} ${H - PAD.b} Z`;
    return [lines.length === 1 ? svg('path', { class: 'g-area ' + trend(l.ys[l.ys.length - 1] - l.ys[0]), d: area }) : null,
      svg('path', { class: `g-line-path s${i % 6}` + (lines.length === 1 ? ' ' + trend(l.ys[l.ys.length - 1] - l.ys[0]) : ''), d })];
  });
  return svg('svg', { class: 'g-chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, preserveAspectRatio: 'none' },
    svg('title', null, document.createTextNode(title)), grid, paths, axisLabels(lo, hi, y, format), timeLabels(allX, x));
}

function candleChart(candles, title) {
  const cs = candles.filter((c) => [c.open, c.high, c.low, c.close].every((v) => num(v) !== null));
  if (cs.length < 2) return null;
  const lo = Math.min(...cs.map((c) => c.low));
  const hi = Math.max(...cs.map((c) => c.high));
  const y = scale(lo, hi, H - PAD.b, PAD.t);
  const step = (W - PAD.l - PAD.r) / cs.length;
  const bw = Math.max(1, Math.min(14, step * 0.6));
  const xs = times(cs);
  const x = (i) => PAD.l + step * (i + 0.5);
  const grid = [hi, (lo + hi) / 2, lo].map((v) => svg('line', { class: 'g-grid', x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v) }));
  const bodies = cs.map((c, i) => {
    const cls = c.close >= c.open ? 'up' : 'down';
    const top = y(Math.max(c.open, c.close));
    const hgt = Math.max(1, Math.abs(y(c.open) - y(c.close)));
    return svg('g', { class: 'g-candle ' + cls },
      svg('title', null, document.createTextNode(`${date(c.time, true)} · O ${fmt(c.open)} H ${fmt(c.high)} L ${fmt(c.low)} C ${fmt(c.close)}`)),
      svg('line', { x1: x(i), x2: x(i), y1: y(c.high), y2: y(c.low) }),
      svg('rect', { x: (x(i) - bw / 2).toFixed(1), y: top.toFixed(1), width: bw.toFixed(1), height: hgt.toFixed(1) }));
  });
  const xScale = (v) => x(xs.indexOf(v));
  return svg('svg', { class: 'g-chart g-candles', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, preserveAspectRatio: 'none' },
    svg('title', null, document.createTextNode(title)), grid, bodies,
    axisLabels(lo, hi, y, (v) => fmt(v, { maximumFractionDigits: hi >= 100 ? 0 : 4 })), timeLabels(xs, xScale));
}

function change(c, currency) {
  const ch = rec(c) || {};
  const cls = 'g-change ' + trend(ch.percent ?? ch.absolute);
  return h('span', { class: cls }, [num(ch.absolute) !== null ? (ch.absolute > 0 ? '+' : '') + money(ch.absolute, currency) : '', pct(ch.percent)].filter(Boolean).join(' · '));
}

registerToolView('stock_chart', (tool) => {
  const out = rec(tool.output);
  const charts = recs(out?.charts, 10);
  if (!charts.length) return null;
  const ok = charts.filter((c) => !str(c.error) && arr(c.points, 2000).length > 1);
  const series = ok.map((c) => ({ symbol: str(c.symbol), points: recs(c.points, 2000) }));
  const title = t('g_chart', { s: charts.map((c) => str(c.symbol)).join(', ') });
  return h('div', { class: 'g-view g-stocks' },
    h('div', { class: 'g-legend' }, charts.map((c) => str(c.error)
      ? h('div', { class: 'g-legend-item bad' }, t('g_failed_symbol', { s: str(c.symbol), e: clip(c.error, 120) }))
      : h('div', { class: 'g-legend-item' },
        h('span', { class: `g-swatch s${ok.indexOf(c) % 6}`, 'aria-hidden': 'true' }), badge(tool.citeOf, c.url),
        link(c.url, str(c.symbol), 'g-symbol'), h('span', { class: 'g-name' }, clip(c.name, 40)),
        h('span', { class: 'g-price' }, money(c.price, c.currency)), change(c.change, c.currency)))),
    lineChart(series, title),
    h('div', { class: 'g-meta' }, [str(out.range) ? t('g_range') + ': ' + str(out.range) : '', [...new Set(charts.map((c) => str(c.exchange)).filter(Boolean))].join(', ')].filter(Boolean).join(' · ')));
});

// ---- crypto ----

function stat(label, value, cls) {
  return value ? h('div', { class: ['g-stat', cls] }, h('span', { class: 'g-stat-label' }, label), h('span', { class: 'g-stat-value' }, value)) : null;
}

function coinView(tool) {
  const c = rec(tool.output);
  if (!c || num(c.price) === null) return null;
  const cur = str(c.currency) || 'usd';
  return h('div', { class: 'g-view g-coin' },
    h('div', { class: 'g-coin-head' }, badge(tool.citeOf, c.url), link(c.url, str(c.name) || str(c.id), 'g-title'),
      h('span', { class: 'g-chip' }, str(c.symbol).toUpperCase()), num(c.marketCapRank) ? h('span', { class: 'g-chip muted' }, t('g_rank', { n: c.marketCapRank })) : null),
    h('div', { class: 'g-coin-price' }, h('span', { class: 'g-price big' }, money(c.price, cur)), h('span', { class: 'g-change ' + trend(c.priceChangePercent24h) }, pct(c.priceChangePercent24h) + ' 24h')),
    h('div', { class: 'g-stats' },
      stat('7d', pct(c.priceChangePercent7d), trend(c.priceChangePercent7d)), stat('30d', pct(c.priceChangePercent30d), trend(c.priceChangePercent30d)),
      stat('1y', pct(c.priceChangePercent1y), trend(c.priceChangePercent1y)),
      stat(t('g_mcap'), compact(c.marketCap, cur)), stat(t('g_volume'), compact(c.totalVolume, cur)),
      stat(t('g_high') + ' / ' + t('g_low') + ' 24h', [money(c.high24h, cur), money(c.low24h, cur)].filter(Boolean).join(' / ')),
      stat(t('g_ath'), money(c.ath, cur))),
    str(c.contractAddress) ? h('div', { class: 'g-meta mono' }, str(c.assetPlatformId) + ': ' + str(c.contractAddress)) : null);
}

registerToolView('coin_data', coinView);
registerToolView('coin_data_by_contract', coinView);

registerToolView('coin_ohlc', (tool) => {
  const c = rec(tool.output);
  const candles = recs(c?.candles, 1000);
  if (!c || candles.length < 2) return null;
  const cur = str(c.currency) || 'usd';
  return h('div', { class: 'g-view g-ohlc' },
    h('div', { class: 'g-legend' }, h('div', { class: 'g-legend-item' }, badge(tool.citeOf, c.url), link(c.url, str(c.id), 'g-symbol'),
      h('span', { class: 'g-name' }, str(c.days) ? str(c.days) + 'd' : ''), h('span', { class: 'g-price' }, money(c.close, cur)),
      change({ absolute: c.change, percent: c.changePercent }, cur))),
    candleChart(candles, t('g_candles', { s: str(c.id) })),
    h('div', { class: 'g-stats' }, stat(t('g_open'), money(c.open, cur)), stat(t('g_high'), money(c.high, cur)), stat(t('g_low'), money(c.low, cur)), stat(t('g_close'), money(c.close, cur))));
});

// ---- currency ----

registerToolView('currency_converter', (tool) => {
  const c = rec(tool.output);
  const quotes = recs(c?.quotes, 30).filter((q) => num(q.amount) !== null);
  if (!c || !quotes.length) return null;
  return h('div', { class: 'g-view g-fx' },
    h('div', { class: 'g-fx-from' }, money(c.amount, c.from)),
    h('ul', { class: 'g-fx-list' }, quotes.map((q) => h('li', null,
      h('span', { class: 'g-fx-to' }, money(q.amount, q.currency)),
      h('span', { class: 'g-meta' }, `1 ${str(c.from)} = ${fmt(q.rate, { maximumFractionDigits: 6 })} ${str(q.currency)}`)))),
    h('div', { class: 'g-meta' }, [str(c.date) ? t('g_rates', { date: date(c.date) }) : '', str(c.source)].filter(Boolean).join(' · ')));
});

// ---- weather ----

// weatherGlyph is a symbol for a WMO weather code (Open-Meteo's, which
// OpenWeather's conditions are mapped to).
function weatherGlyph(code) {
  const c = num(code);
  if (c === null) return '·';
  if (c === 0) return '☀';
  if (c <= 2) return '⛅';
  if (c === 3) return '☁';
  if (c <= 48) return '≋';
  if (c <= 67 || (c >= 80 && c <= 82)) return '☂';
  if (c <= 77 || c === 85 || c === 86) return '❄';
  return '⚡';
}

registerToolView('get_weather_data', (tool) => {
  const w = rec(tool.output);
  const cur = rec(w?.current);
  if (!w || !cur) return null;
  const u = rec(w.units) || {};
  const loc = rec(w.location) || {};
  const deg = (v) => (num(v) === null ? '' : fmt(Math.round(v)) + (str(u.temperature) || '°'));
  const days = recs(w.daily, 16);
  return h('div', { class: 'g-view g-weather' },
    h('div', { class: 'g-weather-now' },
      h('span', { class: 'g-weather-icon', 'aria-hidden': 'true' }, weatherGlyph(cur.code)),
      h('div', null,
        h('div', { class: 'g-weather-temp' }, deg(cur.temperature)),
        h('div', { class: 'g-weather-desc' }, str(cur.description))),
      h('div', { class: 'g-weather-place' },
        h('div', { class: 'g-title' }, [str(loc.name), str(loc.region), str(loc.country)].filter(Boolean).join(', ')),
        h('div', { class: 'g-meta' }, [num(cur.feelsLike) !== null ? t('g_feels', { t: deg(cur.feelsLike) }) : '', num(cur.humidity) !== null ? t('g_humidity', { n: Math.round(cur.humidity) }) : '',
          num(cur.windSpeed) !== null ? t('g_wind', { v: fmt(cur.windSpeed, { maximumFractionDigits: 1 }) + ' ' + str(u.windSpeed) }) : ''].filter(Boolean).join(' · ')))),
    days.length ? h('ol', { class: 'g-forecast' }, days.map((d) => {
      const dt = new Date(str(d.date) + 'T12:00:00');
      const prob = num(d.precipitationProbability);
      return h('li', { title: str(d.description) },
        h('span', { class: 'g-day' }, Number.isNaN(dt.getTime()) ? str(d.date) : dt.toLocaleDateString(lang, { weekday: 'short', day: 'numeric' })),
        h('span', { class: 'g-weather-icon small', 'aria-hidden': 'true' }, weatherGlyph(d.code)),
        h('span', { class: 'g-hi' }, deg(d.tempMax)), h('span', { class: 'g-lo' }, deg(d.tempMin)),
        prob !== null && prob > 0 ? h('span', { class: 'g-rain' }, Math.round(prob) + '%') : null);
    })) : null,
    str(w.provider) ? h('div', { class: 'g-meta' }, t('g_source', { s: str(w.provider) })) : null);
});

// ---- places ----

registerToolView('nearby_places_search', (tool) => {
  const out = rec(tool.output);
  const ps = recs(out?.places, 20);
  if (!out || !ps.length) return null;
  const center = rec(out.center) || {};
  return h('div', { class: 'g-view g-places' },
    h('div', { class: 'g-meta' }, str(center.name) ? t('g_within', { n: fmt(num(out.radius) ?? 0), place: clip(center.name, 60) }) : '',
      str(center.mapUrl) ? [' · ', link(center.mapUrl, t('g_map'))] : null),
    h('ol', { class: 'g-list' }, ps.map((p) => {
      const open = p.openNow === true ? h('span', { class: 'g-chip up' }, t('g_open_now')) : p.openNow === false ? h('span', { class: 'g-chip down' }, t('g_closed_now')) : null;
      const rating = num(p.rating);
      return h('li', { class: 'g-place' },
        h('span', { class: 'g-pin', 'aria-hidden': 'true' }, icon('pin')),
        h('div', { class: 'g-place-body' },
          h('div', { class: 'g-line' }, link(p.mapUrl, str(p.name) || str(p.category), 'g-title'),
            num(p.distance) !== null ? h('span', { class: 'g-chip muted' }, fmt(Math.round(p.distance)) + ' m') : null,
            rating !== null ? h('span', { class: 'g-chip' }, '★ ' + fmt(rating, { maximumFractionDigits: 1 })) : null, open),
          h('div', { class: 'g-meta' }, [str(p.category), str(p.address)].filter(Boolean).join(' · ')),
          str(p.openingHours) || str(p.website) || str(p.phone)
            ? h('div', { class: 'g-meta' }, str(p.openingHours), str(p.website) ? [' · ', link(p.website, hostOf(str(p.website)) || str(p.website))] : null, str(p.phone) ? ' · ' + str(p.phone) : '')
            : null));
    })));
});

// ---- flights ----

function endpoint(label, e, delayed) {
  const ep = rec(e) || {};
  const time = (v) => (str(v) ? new Date(str(v)).toLocaleString(lang, { hour: '2-digit', minute: '2-digit', day: 'numeric', month: 'short', timeZone: 'UTC' }) : '');
  const delay = num(ep.delay);
  return h('div', { class: 'g-flight-end' },
    h('div', { class: 'g-stat-label' }, label),
    h('div', { class: 'g-flight-code' }, str(ep.iata) || str(ep.icao)),
    h('div', { class: 'g-meta' }, str(ep.airport)),
    h('div', { class: 'g-flight-times' },
      str(ep.scheduled) ? h('div', null, t('g_scheduled') + ': ', time(ep.scheduled)) : null,
      str(ep.estimated) && !str(ep.actual) ? h('div', null, t('g_estimated') + ': ', time(ep.estimated)) : null,
      str(ep.actual) ? h('div', null, t('g_actual') + ': ', time(ep.actual)) : null),
    h('div', { class: 'g-tags' },
      str(ep.terminal) ? h('span', { class: 'g-chip' }, t('g_terminal', { t: str(ep.terminal) })) : null,
      str(ep.gate) ? h('span', { class: 'g-chip' }, t('g_gate', { g: str(ep.gate) })) : null,
      str(ep.baggage) ? h('span', { class: 'g-chip' }, t('g_baggage', { b: str(ep.baggage) })) : null,
      delayed && delay !== null && delay > 0 ? h('span', { class: 'g-chip down' }, t('g_delay', { n: delay })) : null));
}

registerToolView('track_flight', (tool) => {
  const out = rec(tool.output);
  const f = recs(out?.flights, 5)[0];
  if (!f) return null;
  const status = str(f.status);
  const air = rec(f.airline) || {};
  const live = rec(f.live);
  const craft = rec(f.aircraft);
  return h('div', { class: 'g-view g-flight' },
    h('div', { class: 'g-flight-head' },
      h('span', { class: 'g-title' }, [str(f.iata) || str(out.flightNumber), str(air.name)].filter(Boolean).join(' · ')),
      status ? h('span', { class: 'g-chip status-' + status }, t('g_flight_' + status) !== 'g_flight_' + status ? t('g_flight_' + status) : status) : null,
      h('span', { class: 'g-meta' }, date(f.date))),
    h('div', { class: 'g-flight-route' }, endpoint(t('g_departure'), f.departure, true), h('div', { class: 'g-flight-arrow', 'aria-hidden': 'true' }, '✈'), endpoint(t('g_arrival'), f.arrival, true)),
    live || craft ? h('div', { class: 'g-meta' },
      craft ? t('g_aircraft') + ': ' + [str(craft.iata), str(craft.registration)].filter(Boolean).join(' · ') : '',
      live && num(live.altitude) !== null ? (craft ? ' · ' : '') + t('g_altitude', { n: fmt(Math.round(live.altitude)), s: fmt(Math.round(num(live.speed) ?? 0)) }) : '',
      live && num(live.latitude) !== null ? [' · ', link(`https://www.openstreetmap.org/?mlat=${live.latitude}&mlon=${live.longitude}#map=6/${live.latitude}/${live.longitude}`, t('g_map'))] : null) : null,
    str(out.source) ? h('div', { class: 'g-meta' }, t('g_source', { s: str(out.source) })) : null);
});

// ---- films and series ----

registerToolView('movie_or_tv_search', (tool) => {
  const out = rec(tool.output);
  const m = rec(out?.result);
  if (!m) return null;
  const genres = arr(m.genres, 6).map(str).filter(Boolean);
  const people = arr(m.directors, 3).map(str).filter(Boolean);
  const creators = arr(m.creators, 3).map(str).filter(Boolean);
  const cast = recs(m.cast, 8);
  const others = recs(out.others, 5);
  return h('div', { class: 'g-view g-film' },
    h('div', { class: 'g-film-main' },
      thumb(m.posterUrl, 'g-poster', str(m.title)),
      h('div', { class: 'g-film-body' },
        h('div', { class: 'g-line' }, badge(tool.citeOf, m.url), link(m.url, str(m.title) + (str(m.year) ? ` (${str(m.year)})` : ''), 'g-title')),
        str(m.tagline) ? h('div', { class: 'g-meta italic' }, str(m.tagline)) : null,
        h('div', { class: 'g-tags' },
          num(m.rating) ? h('span', { class: 'g-chip' }, '★ ', t('g_rating', { r: fmt(m.rating, { maximumFractionDigits: 1 }), n: fmt(num(m.voteCount) ?? 0) })) : null,
          num(m.runtime) ? h('span', { class: 'g-chip' }, t('g_runtime', { n: m.runtime })) : null,
          num(m.seasons) ? h('span', { class: 'g-chip' }, t('g_seasons', { n: m.seasons })) : null,
          genres.map((g) => h('span', { class: 'g-chip muted' }, g))),
        people.length ? h('div', { class: 'g-meta' }, t('g_directed', { p: people.join(', ') })) : null,
        creators.length ? h('div', { class: 'g-meta' }, t('g_created', { p: creators.join(', ') })) : null,
        str(m.overview) ? h('p', { class: 'g-snippet' }, clip(m.overview, 600)) : null,
        cast.length ? h('div', { class: 'g-meta' }, h('strong', null, t('g_cast') + ': '), cast.map((c) => str(c.name) + (str(c.character) ? ` (${str(c.character)})` : '')).join(', ')) : null)),
    others.length ? h('div', { class: 'g-meta' }, t('g_more') + ': ', others.map((o, i) => [i ? ', ' : '', link(o.url, str(o.title) + (str(o.year) ? ` (${str(o.year)})` : ''))])) : null);
});

// ---- the web search's images, under the answer ----

registerAnswerView('web_search', (tool) => {
  const seen = new Set();
  const images = [];
  for (const s of searches(tool.output)) {
    for (const img of recs(s.images, 12)) {
      const u = str(img.url);
      if (!u || seen.has(u) || !safeURL(u, new Set(['http:', 'https:']))) continue;
      seen.add(u);
      images.push(img);
    }
  }
  if (!images.length) return null;
  return h('section', { class: 'g-images' },
    h('h3', { class: 'section-title' }, icon('sparkle'), h('span', null, t('g_images'))),
    h('div', { class: 'g-image-grid' }, images.slice(0, 12).map((img) => {
      const a = link(str(img.source) || str(img.url), thumb(str(img.thumbnail) || str(img.url), 'g-image', clip(img.description, 120)), 'g-image-link');
      if (str(img.description)) a.title = clip(img.description, 200);
      return a;
    })));
});
