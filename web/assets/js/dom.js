// DOM construction without HTML parsing. Every piece of text from the
// network (titles, snippets, answers, errors) goes through here and becomes
// a Text node or an attribute value, never markup; the page's
// Content-Security-Policy forbids the HTML sinks (innerHTML and friends)
// outright, so a mistake fails loudly instead of running someone's script.

const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:']);
const IMAGE_SCHEMES = new Set(['http:', 'https:']);

// safeURL resolves raw against this page and returns it when its scheme is
// one a link may have (http, https, mailto), or null. javascript:, data:,
// vbscript: and anything unparsable are refused.
export function safeURL(raw, schemes = LINK_SCHEMES) {
  if (typeof raw !== 'string') return null;
  const s = raw.trim();
  if (!s) return null;
  let u;
  try {
    u = new URL(s, document.baseURI);
  } catch {
    return null;
  }
  return schemes.has(u.protocol) ? u.href : null;
}

// safeImageURL is safeURL for images: http and https, and data:image URLs
// of raster formats (search APIs inline some favicons that way).
export function safeImageURL(raw) {
  if (typeof raw === 'string' && /^data:image\/(png|gif|jpeg|webp|x-icon|vnd\.microsoft\.icon);/i.test(raw.trim())) {
    return raw.trim();
  }
  return safeURL(raw, IMAGE_SCHEMES);
}

// proxied returns the address the page loads an image from: its own
// origin's and data: URLs as they are, any other through Sova's image
// proxy (GET /api/image), so no other site sees who reads the page. The
// page's Content-Security-Policy allows no other image source.
export function proxied(raw) {
  const u = safeImageURL(raw);
  if (!u || u.startsWith('data:')) return u;
  if (new URL(u).origin === location.origin) return u;
  return '/api/image?url=' + encodeURIComponent(u);
}

// h creates an element. props: class, text, dataset, on<event> (functions
// only), href (checked by safeURL), src (checked, and remote images
// through the image proxy), anything else as an attribute.
// Children may be nodes, strings (Text nodes), arrays, null or false.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  add(el, children);
  return el;
}

function setProps(el, props) {
  if (!props) return;
  for (const [k, v] of Object.entries(props)) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) {
      if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    } else if (k === 'href') {
      const u = safeURL(v);
      if (u) el.setAttribute('href', u);
    } else if (k === 'src') {
      const u = proxied(v);
      if (u) el.setAttribute('src', u);
    } else if (k === 'style' || k === 'srcdoc') {
      throw new Error(`dom: ${k} is not supported`);
    } else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
}

// add appends children to el; strings become Text nodes.
export function add(el, ...children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// hostOf returns the host name of a URL without "www.", or ''.
export function hostOf(raw) {
  try {
    return new URL(raw).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
}

const SVG = 'http://www.w3.org/2000/svg';

// Icon paths (24×24, stroked). Constants of this file, never data.
const ICONS = {
  plus: ['M12 5v14', 'M5 12h14'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  menu: ['M4 7h16', 'M4 12h16', 'M4 17h16'],
  arrowUp: ['M12 19V5', 'M6 11l6-6 6 6'],
  stop: ['M8 8h8v8H8z'],
  trash: ['M4 7h16', 'M10 11v6', 'M14 11v6', 'M6 7l1 12a2 2 0 0 0 2 2h6a2 2 0 0 0 2-2l1-12', 'M9 7V4h6v3'],
  check: ['M5 12.5l4.5 4.5L19 7.5'],
  alert: ['M12 8v5', 'M12 16.5v.5', 'M10.3 3.9L2.4 18a2 2 0 0 0 1.7 3h15.8a2 2 0 0 0 1.7-3L13.7 3.9a2 2 0 0 0-3.4 0z'],
  search: ['M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14z', 'M20 20l-4-4'],
  globe: ['M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z', 'M3 12h18', 'M12 3c2.5 2.7 3.8 5.7 3.8 9s-1.3 6.3-3.8 9c-2.5-2.7-3.8-5.7-3.8-9S9.5 5.7 12 3z'],
  doc: ['M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z', 'M14 3v5h5', 'M9 13h6', 'M9 17h6'],
  book: ['M4 5a2 2 0 0 1 2-2h13v16H6a2 2 0 0 0-2 2z', 'M4 19a2 2 0 0 1 2-2h13'],
  chat: ['M21 12a8 8 0 0 1-11.6 7.1L4 20l1-4.6A8 8 0 1 1 21 12z'],
  layers: ['M12 3l9 5-9 5-9-5 9-5z', 'M3 13l9 5 9-5'],
  sparkle: ['M12 3l1.8 5.2L19 10l-5.2 1.8L12 17l-1.8-5.2L5 10l5.2-1.8z', 'M19 16l.8 2.2L22 19l-2.2.8L19 22l-.8-2.2L16 19l2.2-.8z'],
  chevron: ['M6 9l6 6 6-6'],
  chevronLeft: ['M15 6l-6 6 6 6'],
  mic: ['M12 3a3 3 0 0 0-3 3v6a3 3 0 0 0 6 0V6a3 3 0 0 0-3-3z', 'M5 11a7 7 0 0 0 14 0', 'M12 18v3'],
  speaker: ['M4 9v6h4l5 4V5L8 9z', 'M16 9a4 4 0 0 1 0 6', 'M18.5 6.5a7.5 7.5 0 0 1 0 11'],
  wave: ['M4 10v4', 'M8 7v10', 'M12 4v16', 'M16 7v10', 'M20 10v4'],
  speakerOff: ['M4 9v6h4l5 4V5L8 9z', 'M17 10l4 4', 'M21 10l-4 4'],
  chevronRight: ['M9 6l6 6-6 6'],
  sun: ['M12 16a4 4 0 1 0 0-8 4 4 0 0 0 0 8z', 'M12 2v2', 'M12 20v2', 'M4.9 4.9l1.4 1.4', 'M17.7 17.7l1.4 1.4', 'M2 12h2', 'M20 12h2', 'M4.9 19.1l1.4-1.4', 'M17.7 6.3l1.4-1.4'],
  moon: ['M20 14.5A8 8 0 0 1 9.5 4a8 8 0 1 0 10.5 10.5z'],
  auto: ['M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z', 'M12 3v18'],
  copy: ['M9 9h10v12H9z', 'M5 15V3h10'],
  refresh: ['M20 11a8 8 0 1 0-2.3 5.7', 'M20 4v7h-7'],
  pencil: ['M4 20h4L19 9l-4-4L4 16z', 'M13.5 6.5l4 4'],
  download: ['M12 4v11', 'M7 10l5 5 5-5', 'M5 20h14'],
  upload: ['M12 20V9', 'M7 14l5-5 5 5', 'M5 4h14'],
  question: ['M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z', 'M9.5 9.5a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6v.6', 'M12 17v.5'],
  list: ['M9 6h11', 'M9 12h11', 'M9 18h11', 'M4.5 6h.5', 'M4.5 12h.5', 'M4.5 18h.5'],
  folder: ['M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z'],
  play: ['M3 7a3 3 0 0 1 3-3h12a3 3 0 0 1 3 3v10a3 3 0 0 1-3 3H6a3 3 0 0 1-3-3z', 'M10 9v6l5-3z'],
  chart: ['M4 20h16', 'M5 16l4-5 4 3 6-8'],
  coin: ['M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z', 'M14.5 9.5c-.4-1-1.3-1.5-2.5-1.5-1.5 0-2.5.7-2.5 1.8 0 2.7 5 1.5 5 4.2 0 1.2-1 2-2.5 2-1.3 0-2.2-.6-2.6-1.6', 'M12 6.5v11'],
  pin: ['M12 21s-7-6.2-7-11.5a7 7 0 0 1 14 0C19 14.8 12 21 12 21z', 'M12 12a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5z'],
  code: ['M8 7l-5 5 5 5', 'M16 7l5 5-5 5', 'M14 4l-4 16'],
  link: ['M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1', 'M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1'],
  paperclip: ['M20 11.5l-8.1 8.1a5 5 0 0 1-7.1-7.1l8.5-8.5a3.3 3.3 0 0 1 4.7 4.7l-8.5 8.5a1.7 1.7 0 0 1-2.4-2.4l7.8-7.8'],
};

// icon returns an SVG icon element.
export function icon(name, cls = '') {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', `icon ${cls}`.trim());
  for (const d of ICONS[name] || ICONS.sparkle) {
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', d);
    svg.append(p);
  }
  return svg;
}

// spinner returns a small animated ring.
export function spinner() {
  return h('span', { class: 'spinner', 'aria-hidden': 'true' });
}
