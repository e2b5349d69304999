// A small Markdown renderer that builds DOM nodes directly. It never parses
// HTML: markup in the source (<script>, <img onerror>, ...) is shown as the
// text it is. Links keep only http, https and mailto targets; images only
// http and https. It covers what answers and reports use: paragraphs, line
// breaks, headings, emphasis, strong, strikethrough, inline code, fenced
// code, block quotes, nested lists, tables, horizontal rules, links,
// autolinks, images, and citation markers [n], [n, m], [n-m].
//
// It re-renders from scratch on every streamed delta, so it is written to
// be cheap and to tolerate half-written constructs (an unclosed fence is a
// code block to the end; an unclosed ** is text).

import { h, safeURL, safeImageURL } from './dom.js';

const MAX_DEPTH = 24; // nesting of quotes, lists and emphasis

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const QUOTE = /^ {0,3}>[ ]?(.*)$/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*)|$)/;
const TABLE_SEP = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const BLANK = /^[ \t]*$/;
const MATH_BLOCK = /^ {0,3}(\$\$|\\\[)(.*)$/;
const CITATION = /^\s*\d{1,3}(?:\s*(?:[,;]|[-–])\s*\d{1,3})*\s*$/;
const PUNCT = /[!-/:-@[-`{-~]/;

// renderMarkdown renders src into a DocumentFragment. opts.citation(n)
// returns the node for citation marker n (default: <sup>n</sup>).
export function renderMarkdown(src, opts = {}) {
  const o = { citation: opts.citation || ((n) => h('sup', { class: 'cite' }, String(n))) };
  const lines = String(src ?? '').replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  const frag = document.createDocumentFragment();
  blocks(lines, frag, o, 0);
  return frag;
}

function indentOf(line) {
  let n = 0;
  while (n < line.length && line[n] === ' ') n++;
  return n;
}

function startsBlock(line) {
  return MATH_BLOCK.test(line) || FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || listItem(line) !== null;
}

function listItem(line) {
  const m = ITEM.exec(line);
  if (!m) return null;
  const text = m[4] ?? '';
  const space = m[3] ?? '';
  // More than four spaces after the marker start indented code in
  // CommonMark; here they just count as one, which is what writers mean.
  const pad = space.length === 0 || space.length > 4 ? 1 : space.length;
  return {
    indent: m[1].length,
    ordered: /\d/.test(m[2]),
    start: parseInt(m[2], 10),
    content: m[1].length + m[2].length + pad,
    text: space.length > 4 ? space.slice(1) + text : text,
  };
}

function blocks(lines, parent, o, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (BLANK.test(line)) {
      i++;
      continue;
    }
    if (depth >= MAX_DEPTH) {
      parent.append(h('p', null, lines.slice(i).join('\n')));
      return;
    }
    let m;
    if ((m = MATH_BLOCK.exec(line))) {
      // Display math: $$…$$ or \[…\], on one line or several.
      const close = m[1] === '$$' ? '$$' : '\\]';
      let body = m[2];
      let end = body.indexOf(close);
      let j = i;
      while (end < 0 && j + 1 < lines.length && !BLANK.test(lines[j + 1])) {
        j++;
        body += '\n' + lines[j];
        end = body.indexOf(close);
      }
      if (end >= 0 && body.slice(end + close.length).trim() === '' && body.slice(0, end).trim()) {
        const tex = body.slice(0, end).trim();
        parent.append(h('div', { class: 'math math-display', dataset: { tex } }, tex));
        i = j + 1;
        continue;
      }
    }
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const code = [];
      i++;
      while (i < lines.length) {
        const l = lines[i];
        const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(l);
        if (close && close[1][0] === fence[0] && close[1].length >= fence.length) {
          i++;
          break;
        }
        code.push(l);
        i++;
      }
      const lang = m[2].replace(/[^\w+#.-]/g, '');
      const c = h('code', lang ? { class: 'language-' + lang, dataset: { lang } } : null, code.join('\n'));
      parent.append(h('pre', null, c));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const el = h('h' + m[1].length);
      inline(m[2] || '', el, o, depth, false);
      parent.append(el);
      i++;
      continue;
    }
    if (HR.test(line)) {
      parent.append(h('hr'));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && !BLANK.test(lines[i])) {
        const q = QUOTE.exec(lines[i]);
        if (q) inner.push(q[1]);
        else if (startsBlock(lines[i])) break;
        else inner.push(lines[i]); // lazy continuation of the quoted paragraph
        i++;
      }
      const bq = h('blockquote');
      blocks(inner, bq, o, depth + 1);
      parent.append(bq);
      continue;
    }
    if (listItem(line)) {
      i = list(lines, i, parent, o, depth);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      const next = table(lines, i, parent, o, depth);
      if (next > i) {
        i = next;
        continue;
      }
    }
    // Paragraph: up to a blank line or the start of another block.
    const para = [line.trim()];
    i++;
    while (i < lines.length && !BLANK.test(lines[i]) && !startsBlock(lines[i])) {
      if (lines[i].includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) break;
      para.push(lines[i].trim());
      i++;
    }
    const p = h('p');
    inline(para.join('\n'), p, o, depth, false);
    parent.append(p);
  }
}

function list(lines, i, parent, o, depth) {
  const first = listItem(lines[i]);
  const el = h(first.ordered ? 'ol' : 'ul');
  if (first.ordered && first.start !== 1 && Number.isFinite(first.start)) el.setAttribute('start', String(first.start));
  let loose = false;
  let prev = first;
  while (i < lines.length) {
    const it = listItem(lines[i]);
    if (!it || it.ordered !== first.ordered || it.indent >= prev.content || (it !== first && it.indent < first.indent - 3)) break;
    const body = [it.text];
    i++;
    let blank = false;
    while (i < lines.length) {
      const l = lines[i];
      if (BLANK.test(l)) {
        body.push('');
        blank = true;
        i++;
        continue;
      }
      if (indentOf(l) >= it.content) {
        body.push(l.slice(it.content));
        blank = false;
        i++;
        continue;
      }
      if (!blank && !startsBlock(l)) {
        body.push(l.trim()); // lazy continuation
        i++;
        continue;
      }
      break;
    }
    while (body.length && body[body.length - 1] === '') body.pop();
    if (body.includes('')) loose = true;
    if (blank && i < lines.length) {
      const next = listItem(lines[i]);
      if (next && next.ordered === first.ordered && next.indent < it.content) loose = true;
      else {
        // A blank line then something that is not an item ends the list.
        const li = h('li');
        blocks(body, li, o, depth + 1);
        el.append(li);
        break;
      }
    }
    const li = h('li');
    blocks(body, li, o, depth + 1);
    el.append(li);
    prev = it;
  }
  if (!loose) {
    // A tight list shows its items' paragraphs without paragraph spacing.
    for (const li of el.children) {
      for (const p of [...li.children]) {
        if (p.tagName === 'P') {
          if (p.previousSibling) p.before(h('br'));
          p.replaceWith(...p.childNodes);
        }
      }
    }
  }
  parent.append(el);
  return i;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  let code = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '`') {
      code = !code;
      cur += c;
    } else if (c === '|' && !code) {
      cells.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

function table(lines, i, parent, o, depth) {
  const head = splitRow(lines[i]);
  const aligns = splitRow(lines[i + 1]).map((c) => {
    const l = c.startsWith(':');
    const r = c.endsWith(':');
    return l && r ? 'center' : r ? 'right' : l ? 'left' : '';
  });
  if (aligns.length !== head.length) return i;
  const cell = (tag, text, k) => {
    const el = h(tag, aligns[k] ? { class: 'align-' + aligns[k] } : null);
    inline(text ?? '', el, o, depth, false);
    return el;
  };
  const thead = h('thead', null, h('tr', null, head.map((c, k) => cell('th', c, k))));
  const tbody = h('tbody');
  i += 2;
  while (i < lines.length && !BLANK.test(lines[i]) && lines[i].includes('|')) {
    const row = splitRow(lines[i]);
    tbody.append(h('tr', null, head.map((_, k) => cell('td', row[k], k))));
    i++;
  }
  parent.append(h('div', { class: 'table-wrap' }, h('table', null, thead, tbody)));
  return i;
}

// ---- inline ----

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', mdash: '—', ndash: '–', hellip: '…', laquo: '«', raquo: '»' };

function decodeEntities(s) {
  if (!s.includes('&')) return s;
  return s.replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/gi, (m, e) => {
    if (e[0] === '#') {
      const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

const isSpace = (c) => c === undefined || /\s/.test(c);
const isWordChar = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

// inline renders src into parent. inLink forbids nested links.
function inline(src, parent, o, depth, inLink) {
  if (depth >= MAX_DEPTH) {
    parent.append(src);
    return;
  }
  let i = 0;
  let text = '';
  const flush = () => {
    if (text) parent.append(decodeEntities(text));
    text = '';
  };
  while (i < src.length) {
    const c = src[i];
    if (c === '$' || (c === '\\' && src[i + 1] === '(')) {
      const m = mathAt(src, i);
      if (m) {
        flush();
        parent.append(h('span', { class: m.display ? 'math math-display' : 'math', dataset: { tex: m.tex } }, m.tex));
        i = m.end;
        continue;
      }
    }
    if (c === '\\') {
      const n = src[i + 1];
      if (n === '\n') {
        flush();
        parent.append(h('br'));
        i += 2;
        continue;
      }
      if (n !== undefined && PUNCT.test(n)) {
        text += n;
        i += 2;
        continue;
      }
      text += c;
      i++;
      continue;
    }
    if (c === '\n') {
      text = text.replace(/ +$/, '');
      flush();
      parent.append(h('br'));
      i++;
      continue;
    }
    if (c === '`') {
      const end = codeSpanEnd(src, i);
      if (end) {
        flush();
        let code = src.slice(i + end.open, end.at);
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
        parent.append(h('code', null, code.replace(/\n/g, ' ')));
        i = end.at + end.open;
        continue;
      }
      const run = runLength(src, i, '`');
      text += src.slice(i, i + run);
      i += run;
      continue;
    }
    if (c === '*' || c === '_' || c === '~') {
      const done = emphasis(src, i, parent, o, depth, inLink, flush);
      if (done) {
        i = done;
        continue;
      }
      const run = runLength(src, i, c);
      text += src.slice(i, i + run);
      i += run;
      continue;
    }
    if (c === '!' && src[i + 1] === '[') {
      const l = linkAt(src, i + 1);
      if (l && l.dest !== null) {
        flush();
        const url = safeImageURL(l.dest);
        if (url && !url.startsWith('data:')) {
          parent.append(h('img', { src: url, alt: l.label, loading: 'lazy', referrerpolicy: 'no-referrer', title: l.title || null }));
        } else parent.append(l.label);
        i = l.end;
        continue;
      }
    }
    if (c === '[') {
      const l = linkAt(src, i);
      if (l && l.dest !== null && !inLink) {
        flush();
        const url = safeURL(l.dest);
        if (url) {
          const a = h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', title: l.title || null });
          inline(l.label, a, o, depth + 1, true);
          parent.append(a);
        } else inline(l.label, parent, o, depth + 1, inLink);
        i = l.end;
        continue;
      }
      if (l && l.dest === null && CITATION.test(l.label)) {
        // The space before a marker does not break: "claim [1]" wraps as one.
        text = text.replace(/ $/, '\u00a0');
        flush();
        for (const n of citationNumbers(l.label)) parent.append(o.citation(n));
        i = l.end;
        continue;
      }
    }
    if (c === '<') {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(src.slice(i, i + 2048));
      if (m && !inLink) {
        const url = safeURL(m[1]);
        if (url) {
          flush();
          parent.append(h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, m[1]));
          i += m[0].length;
          continue;
        }
      }
    }
    if ((c === 'h' || c === 'H') && !inLink && !isWordChar(src[i - 1])) {
      const m = /^https?:\/\/[^\s<>"'`]+/i.exec(src.slice(i, i + 2048));
      if (m) {
        let u = m[0];
        // Trailing punctuation belongs to the sentence, and a closing
        // parenthesis only to the URL when it opened one too.
        for (;;) {
          const last = u[u.length - 1];
          if (/[.,;:!?*_~'"»]/.test(last)) u = u.slice(0, -1);
          else if (last === ')' && count(u, '(') < count(u, ')')) u = u.slice(0, -1);
          else break;
        }
        const url = safeURL(u);
        if (url) {
          flush();
          parent.append(h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, u));
          i += u.length;
          continue;
        }
      }
    }
    text += c;
    i++;
  }
  flush();
}

// mathAt reads a formula at src[i]: \(…\), $$…$$, or $…$ as Pandoc reads
// it (no space after the opening $ nor before the closing one, and no digit
// right after it, so "$5 and $10" stays text). Null when there is none.
function mathAt(src, i) {
  if (src[i] === '\\') {
    const end = src.indexOf('\\)', i + 2);
    const tex = end > 0 ? src.slice(i + 2, end).trim() : '';
    return tex ? { tex, display: false, end: end + 2 } : null;
  }
  if (src[i + 1] === '$') {
    const end = src.indexOf('$$', i + 2);
    const tex = end > 0 ? src.slice(i + 2, end).trim() : '';
    return tex ? { tex, display: true, end: end + 2 } : null;
  }
  if (i > 0 && src[i - 1] === '$') return null;
  const first = src[i + 1];
  if (first === undefined || /\s/.test(first)) return null;
  for (let j = i + 1; j < src.length; j++) {
    const ch = src[j];
    if (ch === '\n' && src[j + 1] === '\n') return null;
    if (ch === '\\') {
      j++;
      continue;
    }
    if (ch !== '$') continue;
    if (/\s/.test(src[j - 1]) || /\d/.test(src[j + 1] || '')) return null;
    return { tex: src.slice(i + 1, j), display: false, end: j + 1 };
  }
  return null;
}

function count(s, ch) {
  let n = 0;
  for (const c of s) if (c === ch) n++;
  return n;
}

function runLength(src, i, ch) {
  let n = 0;
  while (src[i + n] === ch) n++;
  return n;
}

// codeSpanEnd finds the backtick run that closes the one at i.
function codeSpanEnd(src, i) {
  const open = runLength(src, i, '`');
  let j = i + open;
  while (j < src.length) {
    const k = src.indexOf('`', j);
    if (k < 0) return null;
    const run = runLength(src, k, '`');
    if (run === open) return { open, at: k };
    j = k + run;
  }
  return null;
}

// emphasis renders the emphasis opened at i and returns the index after
// its closer, or 0 when the delimiter run opens nothing.
function emphasis(src, i, parent, o, depth, inLink, flush) {
  const c = src[i];
  const run = runLength(src, i, c);
  if (c === '~' && run !== 2) return 0;
  const k = Math.min(run, 3);
  if (run > 3 && c !== '~') return 0;
  const after = src[i + run];
  if (isSpace(after)) return 0; // not left-flanking
  if (c === '_' && isWordChar(src[i - 1])) return 0; // snake_case stays text
  let j = i + run;
  while (j < src.length) {
    const ch = src[j];
    if (ch === '\\') {
      j += 2;
      continue;
    }
    if (ch === '`') {
      const end = codeSpanEnd(src, j);
      j = end ? end.at + end.open : j + runLength(src, j, '`');
      continue;
    }
    if (ch === '\n' && src[j + 1] === '\n') return 0;
    if (ch === c) {
      const m = runLength(src, j, c);
      if (m === k && !isSpace(src[j - 1]) && !(c === '_' && isWordChar(src[j + m]))) {
        flush();
        const inner = src.slice(i + k, j);
        let el;
        if (c === '~') el = h('del');
        else if (k === 1) el = h('em');
        else if (k === 2) el = h('strong');
        else el = h('strong');
        const target = k === 3 ? el.appendChild(h('em')) : el;
        inline(inner, target, o, depth + 1, inLink);
        parent.append(el);
        return j + m;
      }
      j += m;
      continue;
    }
    j++;
  }
  return 0;
}

// linkAt parses [label](dest "title") or [label] at i. dest is null when
// no (dest) follows the brackets.
function linkAt(src, i) {
  let depth = 0;
  let j = i;
  for (; j < src.length; j++) {
    const ch = src[j];
    if (ch === '\\') {
      j++;
      continue;
    }
    if (ch === '`') {
      const end = codeSpanEnd(src, j);
      if (end) j = end.at + end.open - 1;
      continue;
    }
    if (ch === '\n' && src[j + 1] === '\n') return null;
    if (ch === '[') depth++;
    else if (ch === ']') {
      depth--;
      if (depth === 0) break;
    }
  }
  if (j >= src.length) return null;
  const label = src.slice(i + 1, j);
  if (src[j + 1] !== '(') return { label, dest: null, end: j + 1 };
  let k = j + 2;
  while (src[k] === ' ') k++;
  let dest = '';
  if (src[k] === '<') {
    const close = src.indexOf('>', k);
    if (close < 0) return { label, dest: null, end: j + 1 };
    dest = src.slice(k + 1, close);
    k = close + 1;
  } else {
    let parens = 0;
    const start = k;
    for (; k < src.length; k++) {
      const ch = src[k];
      if (ch === '\\' && k + 1 < src.length) {
        k++;
        continue;
      }
      if (/\s/.test(ch)) break;
      if (ch === '(') parens++;
      else if (ch === ')') {
        if (parens === 0) break;
        parens--;
      }
    }
    dest = src.slice(start, k);
  }
  while (src[k] === ' ') k++;
  let title = '';
  const q = src[k];
  if (q === '"' || q === "'") {
    const close = src.indexOf(q, k + 1);
    if (close < 0) return { label, dest: null, end: j + 1 };
    title = src.slice(k + 1, close);
    k = close + 1;
    while (src[k] === ' ') k++;
  }
  if (src[k] !== ')') return { label, dest: null, end: j + 1 };
  return { label, dest: dest.replace(/\\([!-/:-@[-`{-~])/g, '$1'), title, end: k + 1 };
}

// citationNumbers expands "1, 3-5" into [1, 3, 4, 5]; a range spans at
// most 20 numbers.
function citationNumbers(label) {
  const out = [];
  for (const part of label.split(/[,;]/)) {
    const r = /^\s*(\d+)\s*(?:[-–]\s*(\d+))?\s*$/.exec(part);
    if (!r) continue;
    const a = parseInt(r[1], 10);
    const b = r[2] ? parseInt(r[2], 10) : a;
    if (b >= a && b - a < 20) for (let n = a; n <= b; n++) out.push(n);
    else out.push(a);
  }
  return out;
}
