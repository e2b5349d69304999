// One question and its answer: the state built from UI message stream
// chunks (or from a stored message), and its view. Chunks update the state
// and mark what changed; the view redraws the changed sections once per
// animation frame, reusing unchanged elements so that favicons and open
// disclosures stay put while an answer streams.

import { h, icon, spinner, hostOf, safeURL, safeImageURL } from './dom.js';
import { t, has, plural, humanize, lang, modeName, formatNumber } from './i18n.js';
import { renderMarkdown } from './markdown.js';
import { renderMath } from './math.js';
import { partView, toolView, answerView } from './views.js';
import { attachPreview, followUpChips, openPassage, isPassageURL } from './convenience.js';

const VISIBLE_SOURCES = 5;

export class Turn {
  // opts: question, mode, onAnswer(text) for clarifications, actions
  // {followUp(q), regenerate(turn), edit(turn), retry(turn)} offered under
  // the latest turn (convenience.js).
  constructor(opts) {
    this.question = opts.question || '';
    this.mode = opts.mode || '';
    this.onAnswer = opts.onAnswer || (() => {});
    this.actions = opts.actions || {};
    this.statuses = new Map(); // stage → {stage, message, detail}
    this.queries = new Map(); // part id → query_completion data
    this.candidates = new Map(); // url → source
    this.cited = new Map(); // number → source
    this.pages = new Map(); // url → page
    this.tools = new Map(); // toolCallId → {name, input, output, error}
    this.extras = new Map(); // key → {name, data}
    this.reasoning = '';
    this.text = '';
    this.error = null;
    this.aborted = false;
    this.finishReason = '';
    this.meta = {};
    this.usage = null;
    this.running = false;
    this.frozen = false;
    this.seq = 0;
    this.showAllSources = false;
    this.stepsToggled = false;
    this.dirty = new Set();
    this.frame = 0;
    this.cache = new Map(); // keyed elements: key → {sig, el}
    this.build();
  }

  // ---- state ----

  // apply folds one UI message stream chunk into the state.
  apply(c) {
    if (!c || typeof c.type !== 'string') return;
    switch (c.type) {
      case 'start':
        if (c.messageMetadata && typeof c.messageMetadata === 'object') Object.assign(this.meta, c.messageMetadata);
        if (c.messageId) this.meta.messageId = c.messageId;
        if (this.meta.mode) this.mode = this.meta.mode;
        this.mark('foot');
        break;
      case 'text-delta':
        if (typeof c.delta === 'string') this.text += c.delta;
        this.mark('answer');
        break;
      case 'reasoning-delta':
        if (typeof c.delta === 'string') this.reasoning += c.delta;
        this.mark('steps');
        break;
      case 'source-url': {
        const n = parseInt(c.sourceId, 10);
        // Sova marks a source the run never read (its search snippet is
        // all the answer had) in the part's provider metadata.
        const sova = c.providerMetadata && typeof c.providerMetadata === 'object' ? c.providerMetadata.sova : null;
        const snippetOnly = sova && sova.snippetOnly === true ? true : undefined;
        if (n > 0) this.addCited({ number: n, url: c.url, title: c.title, snippetOnly });
        break;
      }
      case 'source-document': {
        const n = parseInt(c.sourceId, 10);
        if (n > 0) this.addCited({ number: n, title: c.title || c.filename, kind: 'document' });
        break;
      }
      case 'error':
        this.error = String(c.errorText || 'error');
        this.mark('error');
        break;
      case 'abort':
        this.aborted = true;
        this.mark('error');
        break;
      case 'finish': {
        const md = c.messageMetadata && typeof c.messageMetadata === 'object' ? c.messageMetadata : {};
        Object.assign(this.meta, md);
        this.finishReason = md.finishReason || c.finishReason || 'stop';
        if (md.usage) this.usage = md.usage;
        if (Array.isArray(md.sources)) for (const s of md.sources) if (s && s.number > 0) this.addCited(s);
        this.mark('foot', 'answer', 'steps', 'sources');
        break;
      }
      default:
        if (c.type.startsWith('data-')) this.applyData(c.type.slice(5), c.id, c.data);
        else if (c.type.startsWith('tool-')) this.applyTool(c);
    }
  }

  applyData(name, id, d) {
    switch (name) {
      case 'status':
        if (d && d.stage) this.statuses.set(String(d.stage), d);
        this.mark('steps');
        return;
      case 'query_completion':
        if (d && typeof d.query === 'string') this.queries.set(id || `query-${d.iteration ?? 0}-${d.index ?? this.queries.size}`, d);
        this.mark('steps');
        return;
      case 'source':
        if (d && d.url && !this.candidates.has(d.url)) {
          this.candidates.set(d.url, d);
          this.mark('sources');
        }
        return;
      case 'page':
        if (d && d.url) this.pages.set(d.url, d);
        this.mark('steps');
        return;
      case 'usage':
        this.usage = d;
        this.mark('foot');
        return;
      case 'text_restart':
        // A run continued on another node wrote its answer anew: the text
        // that follows replaces what streamed before.
        this.text = '';
        this.mark('answer');
        return;
    }
    // Parts with an id replace the earlier part of that type and id, as
    // in the AI SDK; parts without one accumulate.
    const key = id ? `${name}\u0000${id}` : `${name}\u0000#${this.seq++}`;
    this.extras.set(key, { name, data: d });
    this.mark(name === 'clarification' || name === 'report' || name === 'followups' || name === 'assistant_confirmation' ? 'extras' : 'steps');
    // The questions of a clarification show in its card, not twice.
    if (name === 'clarification') this.mark('answer', 'foot');
  }

  // asksForAnswers reports whether the turn's text only repeats the
  // questions its clarification card shows (sgr_agent and deep_research
  // write them out for clients without the card).
  asksForAnswers() {
    for (const x of this.extras.values()) {
      if (x.name !== 'clarification') continue;
      const qs = Array.isArray(x.data?.questions) ? x.data.questions.filter((q) => typeof q === 'string' && q) : [];
      if (qs.length && qs.every((q) => this.text.includes(q))) return true;
    }
    return false;
  }

  applyTool(c) {
    const id = c.toolCallId;
    if (!id) return;
    const tool = this.tools.get(id) || { name: c.toolName || '', input: null, output: undefined, error: null };
    if (c.toolName) tool.name = c.toolName;
    if (c.title) tool.title = c.title;
    if (c.type === 'tool-input-available') tool.input = c.input;
    else if (c.type === 'tool-output-available') tool.output = c.output;
    else if (c.type === 'tool-output-error' || c.type === 'tool-input-error') tool.error = c.errorText || 'error';
    this.tools.set(id, tool);
    this.mark('steps', 'extras');
  }

  addCited(s) {
    const prev = this.cited.get(s.number) || {};
    const cand = s.url ? this.candidates.get(s.url) : null;
    this.cited.set(s.number, { ...cand, ...prev, ...withoutEmpty(s) });
    this.mark('sources', 'answer', 'extras');
  }

  // fail records an error that happened outside the stream (HTTP status,
  // network).
  fail(message) {
    this.error = message;
    this.mark('error');
  }

  // begin and end bracket a live run.
  begin() {
    this.running = true;
    this.mark('steps', 'answer', 'foot');
    this.flush();
  }

  end({ aborted = false } = {}) {
    this.running = false;
    if (aborted) this.aborted = true;
    this.mark('steps', 'answer', 'foot', 'error', 'sources', 'extras');
    this.flush();
  }

  // freeze turns off the clarification form once the chat moved on.
  freeze() {
    if (this.frozen) return;
    this.frozen = true;
    this.mark('extras', 'foot', 'error');
  }

  // fromStored rebuilds a finished turn from stored messages (GET
  // /api/chats/{id}). assistant may be null for a question whose answer
  // never arrived.
  static fromStored(user, assistant, opts) {
    const turn = new Turn({ ...opts, question: user ? user.content : '', mode: (assistant || user || {}).mode });
    if (assistant) {
      turn.text = assistant.content || '';
      turn.error = assistant.error || null;
      turn.finishReason = assistant.finishReason || '';
      turn.aborted = assistant.finishReason === 'cancelled';
      if (assistant.error && turn.aborted) turn.error = null;
      turn.usage = assistant.usage || null;
      turn.meta = { model: assistant.model, mode: assistant.mode };
      for (const s of Array.isArray(assistant.sources) ? assistant.sources : []) if (s && s.number > 0) turn.cited.set(s.number, s);
      turn.restoreSteps(assistant.toolCalls);
      for (const p of Array.isArray(assistant.parts) ? assistant.parts : []) {
        if (!p || typeof p.type !== 'string') continue;
        if (p.type === 'reasoning' && typeof p.text === 'string') turn.reasoning = p.text;
        else if (p.type.startsWith('data-')) turn.applyData(p.type.slice(5), p.id, p.data);
        else if (p.type.startsWith('tool-') && p.toolCallId) {
          turn.tools.set(p.toolCallId, { name: p.type.slice(5), input: p.input, output: p.output, error: p.errorText || null });
        }
      }
    }
    turn.mark('steps', 'sources', 'answer', 'extras', 'error', 'foot');
    turn.flush();
    return turn;
  }

  // restoreSteps turns the stored record of a run's work into steps. The
  // search pipeline stores {rewrittenQuery, iterations[{queries}], pages};
  // agents store a list of tool calls. Anything else is ignored.
  restoreSteps(steps) {
    if (!steps || typeof steps !== 'object') return;
    // A search group's record: its tool calls with the JSON results they
    // gave, shown through the tools' views as they were live.
    if (!Array.isArray(steps) && typeof steps.group === 'string' && Array.isArray(steps.toolCalls)) {
      const results = new Map((Array.isArray(steps.toolResults) ? steps.toolResults : []).filter((r) => r && r.callId).map((r) => [r.callId, r]));
      // The structured results the stream showed where the model read text
      // (videos): the cards are drawn from them as they were live.
      const data = new Map((Array.isArray(steps.toolData) ? steps.toolData : []).filter((d) => d && d.callId && d.data != null).map((d) => [d.callId, d.data]));
      steps.toolCalls.forEach((c, i) => {
        if (!c || typeof c.name !== 'string') return;
        const r = results.get(c.id) || {};
        let output = data.has(c.id) && !r.error ? data.get(c.id) : r.output ?? null;
        if (typeof output === 'string') {
          try {
            output = JSON.parse(output);
          } catch {
            // a text result: shown as the step's summary
          }
        }
        this.tools.set(c.id || `stored-${i}`, { name: c.name, input: c.args ?? null, output, error: r.error || null });
      });
      return;
    }
    if (Array.isArray(steps)) {
      steps.forEach((s, i) => {
        if (!s || typeof s !== 'object') return;
        this.tools.set(`stored-${i}`, {
          name: s.name || s.toolName || s.tool || '',
          input: s.args ?? s.arguments ?? s.input ?? null,
          output: s.summary ?? s.result ?? s.output ?? null, // stored steps are done
          error: s.error || null,
        });
      });
      return;
    }
    if (!('rewrittenQuery' in steps || 'iterations' in steps || 'pages' in steps)) {
      // A research run's record holds the last state of its plan, agents
      // and decisions: they show as their live parts did.
      const research = 'plan' in steps && Array.isArray(steps.agents);
      if (research) {
        if (steps.plan && typeof steps.plan === 'object') this.extras.set('research_plan\u0000stored', { name: 'research_plan', data: steps.plan });
        steps.agents.forEach((a, i) => this.extras.set(`research_agent\u0000stored-${i}`, { name: 'research_agent', data: a }));
        const decisions = Array.isArray(steps.decisions) ? steps.decisions : [];
        decisions.forEach((d, i) => this.extras.set(`supervisor_decision\u0000stored-${i}`, { name: 'supervisor_decision', data: d }));
      }
      // Another mode's record: each structured field shows as a step.
      for (const [k, v] of Object.entries(steps)) {
        if (research && (k === 'plan' || k === 'agents' || k === 'decisions')) continue;
        if (v && typeof v === 'object' && Object.keys(v).length) this.extras.set(`${k}\u0000stored`, { name: k, data: v });
      }
      return;
    }
    if (typeof steps.rewrittenQuery === 'string' && steps.rewrittenQuery) {
      this.statuses.set('rewrite', { stage: 'rewrite', message: t('rewritten'), detail: steps.rewrittenQuery });
    }
    if (Array.isArray(steps.iterations) && steps.iterations.length) {
      this.statuses.set('search', { stage: 'search', message: t('stage_search') });
      steps.iterations.forEach((it, k) => {
        const qs = it && Array.isArray(it.queries) ? it.queries : [];
        qs.forEach((q, j) => {
          if (!q || typeof q.query !== 'string') return;
          this.queries.set(`query-${k + 1}-${j}`, {
            query: q.query, index: j, total: qs.length, iteration: k + 1,
            status: q.error ? 'error' : 'completed', resultsCount: q.results, error: q.error,
          });
        });
      });
    }
    if (Array.isArray(steps.pages) && steps.pages.length) {
      this.statuses.set('read', { stage: 'read', message: t('stage_read') });
      for (const p of steps.pages) {
        if (p && p.url) this.pages.set(p.url, { url: p.url, title: p.title, chars: p.chars, state: p.error ? 'failed' : 'read', error: p.error });
      }
    }
  }

  // ---- view ----

  build() {
    this.stepsSummary = h('summary', { class: 'steps-summary' });
    this.stepsBody = h('div', { class: 'steps-body' });
    this.stepsEl = h('details', { class: 'steps', open: true, hidden: true }, this.stepsSummary, this.stepsBody);
    this.stepsSummary.addEventListener('click', () => {
      this.stepsToggled = true;
    });
    this.sourcesEl = h('section', { class: 'sources', hidden: true });
    this.answerEl = h('div', { class: 'answer md' });
    // Copying part of an answer keeps the sources it cites.
    this.answerEl.addEventListener('copy', (e) => this.copySelection(e));
    this.answerHead = h('h3', { class: 'section-title answer-title', hidden: true }, icon('sparkle'), h('span', null, t('answer')));
    this.extrasEl = h('div', { class: 'extras' });
    this.errorEl = h('div', { class: 'turn-error', hidden: true, role: 'alert' });
    this.footEl = h('footer', { class: 'turn-foot', hidden: true });
    this.el = h('article', { class: 'turn' },
      h('h2', { class: 'turn-question' }, this.question),
      h('div', { class: 'turn-body' }, this.stepsEl, this.sourcesEl, h('section', { class: 'answer-block' }, this.answerHead, this.answerEl), this.extrasEl, this.errorEl, this.footEl));
  }

  mark(...sections) {
    for (const s of sections) this.dirty.add(s);
    if (!this.frame && typeof requestAnimationFrame === 'function') {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.flush();
      });
    }
  }

  // flush redraws the sections marked dirty.
  flush() {
    if (this.frame) {
      cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
    const d = this.dirty;
    this.dirty = new Set();
    if (d.has('steps')) this.renderSteps();
    if (d.has('sources')) this.renderSources();
    if (d.has('answer')) this.renderAnswer();
    if (d.has('extras')) this.renderExtras();
    if (d.has('error')) this.renderError();
    if (d.has('foot')) this.renderFoot();
    if (d.size && this.onRender) this.onRender();
  }

  // keyed returns the cached element for key while sig is unchanged, else
  // a new one from make().
  keyed(key, sig, make) {
    const c = this.cache.get(key);
    if (c && c.sig === sig) return c.el;
    const el = make();
    this.cache.set(key, { sig, el });
    return el;
  }

  stageTitle(s) {
    const key = 'stage_' + s.stage;
    if (lang === 'en') return s.message || (has(key) ? t(key) : humanize(s.stage));
    return has(key) ? t(key) : s.message || humanize(s.stage);
  }

  renderSteps() {
    const statuses = [...this.statuses.values()];
    // A confirmation is a card of its own, outside the Steps panel.
    const generic = [...this.extras.entries()].filter(([, x]) => x.name !== 'clarification' && x.name !== 'report' && x.name !== 'assistant_confirmation');
    const hasWork = this.queries.size || this.pages.size || this.tools.size || generic.length || this.reasoning;
    const show = this.running ? statuses.length || hasWork : hasWork;
    this.stepsEl.hidden = !show;
    if (!show) return;

    const rows = [];
    const placed = { queries: false, pages: false };
    const last = statuses[statuses.length - 1];
    for (const s of statuses) {
      const active = this.running && s === last && !this.text;
      const sig = JSON.stringify([s, active]);
      rows.push(this.keyed('status:' + s.stage, sig, () => {
        const detail = s.detail ? h('div', { class: s.stage === 'rewrite' ? 'step-detail step-query' : 'step-detail' }, s.detail) : null;
        return h('div', { class: ['step', active && 'active'], title: lang === 'en' ? null : s.message },
          h('span', { class: 'step-icon' }, active ? spinner() : icon('check')),
          h('div', { class: 'step-main' }, h('div', { class: 'step-title' }, this.stageTitle(s)), detail));
      }));
      if (s.stage === 'search' || s.stage === 'queries') {
        if (!placed.queries && this.queries.size) rows.push(this.queriesBlock());
        placed.queries = true;
      }
      if (s.stage === 'read') {
        if (!placed.pages && this.pages.size) rows.push(this.pagesBlock());
        placed.pages = true;
      }
    }
    if (!placed.queries && this.queries.size) rows.push(this.queriesBlock());
    if (!placed.pages && this.pages.size) rows.push(this.pagesBlock());
    for (const [id, tool] of this.tools) rows.push(this.keyed('tool:' + id, JSON.stringify(tool), () => toolRow(tool)));
    // Research agents share one grid and notes one list, each placed where
    // its first part arrived; other parts are rows of their own.
    let agentGrid = null;
    let noteList = null;
    const blocks = new Map();
    for (const [key, x] of generic) {
      const registered = partView(x.name);
      const view = RESEARCH_VIEWS.get(x.name) || (registered && registered.view);
      const el = this.keyed('data:' + key, JSON.stringify(x.data), () => safeView(view, x.data, key) || genericRow(x.name, x.data));
      if (registered && registered.block) {
        let block = blocks.get(x.name);
        if (!block) {
          block = h('div', { class: ['step-block', registered.block] });
          blocks.set(x.name, block);
          rows.push(block);
        }
        block.append(el);
      } else if (x.name === 'research_agent') {
        if (!agentGrid) rows.push((agentGrid = h('div', { class: 'step-block agent-grid' })));
        agentGrid.append(el);
      } else if (x.name === 'research_note') {
        if (!noteList) {
          noteList = h('ul', { class: 'research-notes' });
          rows.push(h('div', { class: 'step-block notes-block' }, h('div', { class: 'query-iter' }, t('researchNotes')), noteList));
        }
        noteList.append(el);
      } else rows.push(el);
    }
    if (this.reasoning) {
      rows.push(this.keyed('reasoning', this.reasoning, () => h('details', { class: 'step reasoning' },
        h('summary', null, t('reasoning')), h('div', { class: 'reasoning-text' }, this.reasoning))));
    }
    this.stepsBody.replaceChildren(...rows);

    // Summary line: what is happening now, or what was done.
    const parts = [];
    if (this.running && !this.text) {
      parts.push(spinner(), h('span', { class: 'steps-now' }, last ? this.stageTitle(last) : t('working')));
    } else {
      const done = [...this.pages.values()].filter((p) => p.state === 'read').length;
      const bits = [];
      if (this.queries.size) bits.push(plural('searches', this.queries.size));
      if (done) bits.push(plural('pages', done));
      parts.push(icon('list'), h('span', { class: 'steps-now' }, [t('steps'), ...bits].join(' · ')));
    }
    const failed = this.failedTools().length;
    if (failed) parts.push(h('span', { class: 'steps-badge bad', title: plural('toolsFailed', failed) }, icon('alert'), h('span', null, plural('toolsFailed', failed))));
    parts.push(icon('chevron', 'chev'));
    this.stepsSummary.replaceChildren(...parts);
    // Once the answer is written the trail folds away, unless the person
    // opened or closed it themselves.
    if (!this.stepsToggled) this.stepsEl.open = this.running && !this.text;
  }

  queriesBlock() {
    const byIter = new Map();
    for (const [id, q] of this.queries) {
      const it = Number(q.iteration) || 1;
      if (!byIter.has(it)) byIter.set(it, []);
      byIter.get(it).push([id, q]);
    }
    const groups = [];
    const many = byIter.size > 1;
    for (const [it, qs] of [...byIter.entries()].sort((a, b) => a[0] - b[0])) {
      qs.sort((a, b) => (a[1].index ?? 0) - (b[1].index ?? 0));
      groups.push(h('div', { class: 'query-group' },
        many ? h('div', { class: 'query-iter' }, t('iteration', { n: it })) : null,
        h('ul', { class: 'queries' }, qs.map(([id, q]) => this.keyed('q:' + id, JSON.stringify(q), () => queryRow(q))))));
    }
    return h('div', { class: 'step-block' }, groups);
  }

  pagesBlock() {
    const items = [...this.pages.values()].map((p) => this.keyed('p:' + p.url, JSON.stringify(p), () => pageRow(p)));
    return h('div', { class: 'step-block' }, h('ul', { class: 'pages' }, items));
  }

  renderSources() {
    const cited = [...this.cited.values()].sort((a, b) => a.number - b.number);
    const useCited = cited.length > 0;
    // A stopped turn keeps the sources it had found: they are what it read.
    const list = useCited ? cited : this.running || this.aborted || !this.text ? [...this.candidates.values()] : [];
    this.sourcesEl.hidden = list.length === 0;
    if (!list.length) return;
    const title = useCited ? t('sources') : t('foundSources');
    const visible = this.showAllSources || list.length <= VISIBLE_SOURCES + 1 ? list : list.slice(0, VISIBLE_SOURCES);
    const cards = visible.map((s) => this.keyed('src:' + (useCited ? s.number : '') + ':' + s.url, JSON.stringify(s), () => sourceCard(s, useCited)));
    if (list.length > VISIBLE_SOURCES + 1) {
      cards.push(h('button', {
        class: 'source-more', type: 'button',
        onclick: () => {
          this.showAllSources = !this.showAllSources;
          this.mark('sources');
        },
      }, this.showAllSources ? t('showLess') : t('showAll', { n: list.length })));
    }
    this.sourcesEl.replaceChildren(
      h('h3', { class: 'section-title' }, icon(useCited ? 'book' : 'globe'), h('span', null, title), h('span', { class: 'count' }, formatNumber(list.length))),
      h('div', { class: useCited ? 'source-grid cited' : 'source-grid' }, cards));
  }

  renderAnswer() {
    if (this.asksForAnswers()) {
      this.answerHead.hidden = true;
      this.answerEl.replaceChildren();
      return;
    }
    const streaming = this.running && !!this.text;
    this.answerEl.classList.toggle('streaming', streaming);
    this.answerHead.hidden = !this.text && !(this.running && !this.error);
    if (!this.text) {
      this.answerEl.replaceChildren(...(this.running && !this.error ? [skeleton()] : []));
      return;
    }
    this.answerEl.replaceChildren(renderMarkdown(this.text, { citation: (n) => this.citation(n) }));
    // Formulas are drawn once the answer is complete: while it streams a
    // formula may be cut in half.
    if (!this.running) renderMath(this.answerEl);
    // Each code block gets its own copy button (the code only).
    for (const pre of this.answerEl.querySelectorAll('pre')) {
      const code = pre.querySelector('code');
      if (!code) continue;
      const btn = h('button', { class: 'icon-btn code-copy', type: 'button', title: t('copyCode'), 'aria-label': t('copyCode') }, icon('copy'));
      btn.addEventListener('click', async () => {
        if (await copyText(code.textContent)) {
          btn.replaceChildren(icon('check'));
          btn.classList.add('done');
          setTimeout(() => {
            btn.replaceChildren(icon('copy'));
            btn.classList.remove('done');
          }, 1500);
        }
      });
      pre.classList.add('has-copy');
      pre.append(btn);
    }
  }

  citation(n) {
    const s = this.cited.get(n);
    if (!s) return h('span', { class: 'cite pending' }, String(n));
    const url = s.kind === 'document' ? null : safeURL(s.url || '', new Set(['http:', 'https:']));
    if (url) return attachPreview(h('a', { class: 'cite', href: url, target: '_blank', rel: 'noopener noreferrer', dataset: { n: String(n) } }, String(n)), s);
    // A passage of the person's documents has no web address: the marker
    // opens the passage in the side panel, or points at its card.
    return attachPreview(h('button', {
      class: 'cite', type: 'button', dataset: { n: String(n) },
      onclick: () => {
        if (isPassageURL(s.url)) {
          openPassage(s.url);
          return;
        }
        const card = this.sourcesEl.querySelector(`.source-card[data-n="${n}"]`);
        if (!card) return;
        card.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
        card.classList.add('highlight');
        setTimeout(() => card.classList.remove('highlight'), 1600);
      },
    }, String(n)), s);
  }

  renderExtras() {
    const cards = [];
    // An assistant confirmation has its own Yes/No buttons (views/assistant.js):
    // the run's clarification form would ask the same question again.
    const confirms = [...this.extras.values()].some((x) => x.name === 'assistant_confirmation');
    for (const [key, x] of this.extras) {
      if (x.name === 'clarification' && !confirms) cards.push(this.clarifyCard(key, x.data));
      else if (x.name === 'assistant_confirmation') {
        // The held actions and the Yes/No buttons, which send the decision
        // with the actions' ids (views/assistant.js).
        const decide = (text, decision) => { this.freeze(); this.onAnswer(text, decision); };
        const view = partView(x.name)?.view;
        const el = this.keyed('confirm:' + key, JSON.stringify([x.data, this.frozen]), () => safeView(view, x.data, key, { decide, frozen: this.frozen }));
        if (el) cards.push(el);
      }
      else if (x.name === 'report') cards.push(this.keyed('report:' + key, JSON.stringify(x.data), () => reportCard(x.data)));
      else if (x.name === 'followups' && !this.frozen && this.actions.followUp) {
        const chips = followUpChips(x.data?.questions, (q) => this.actions.followUp(q));
        if (chips) cards.push(chips);
      }
    }
    // A group's results (papers, videos, posts, charts, coins…) show with
    // the answer, not only in the folded steps; items the answer cites
    // carry its citation numbers, the others none.
    const results = [];
    const citeOf = (url) => {
      for (const s of this.cited.values()) if (s.url && s.url === url) return s.number;
      return 0;
    };
    for (const [id, tool] of this.tools) {
      if (tool.error || tool.output == null) continue;
      const view = toolView(tool.name);
      const sig = JSON.stringify([tool.output, [...this.cited.keys()]]);
      const el = view && this.keyed('tool-result:' + id, sig, () => {
        const v = safeView(view, { ...tool, citeOf });
        return v && h('section', { class: 'tool-result', dataset: { tool: tool.name } },
          h('h3', { class: 'section-title' }, icon('layers'), h('span', null, tool.title || humanize(tool.name))), v);
      });
      if (el) results.push(el);
      const more = answerView(tool.name);
      const extra = more && this.keyed('answer-view:' + id, JSON.stringify(tool.output), () => safeView(more, tool));
      if (extra) results.push(extra);
    }
    // A tool that failed is said under the answer: the answer may rest on
    // less than it seems.
    const failed = this.failedTools();
    const notice = failed.length ? h('div', { class: 'tool-failures', role: 'note' }, icon('alert', 'bad'),
      h('div', null, h('strong', null, plural('toolsFailed', failed.length)),
        h('ul', null, failed.map((x) => h('li', { dataset: { tool: x.name } }, (x.title || t('tool', { name: humanize(x.name) || '?' })) + ': ' + String(x.error)))))) : null;
    const chips = cards.filter((c) => c.classList.contains('followups'));
    const rest = cards.filter((c) => !chips.includes(c));
    this.extrasEl.replaceChildren(...rest, ...results, ...(notice ? [notice] : []), ...chips);
  }

  // textWithSources is the answer as copied: its text, then the sources
  // its [n] markers point to, so that a pasted answer keeps them.
  copySelection(e) {
    const sel = document.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount || !e.clipboardData) return;
    const frag = sel.getRangeAt(0).cloneContents();
    const nums = new Set();
    for (const c of frag.querySelectorAll('.cite')) for (const n of c.textContent.match(/\d+/g) || []) nums.add(Number(n));
    const cited = [...nums].sort((a, b) => a - b).map((n) => this.cited.get(n)).filter(Boolean);
    if (!cited.length) return;
    const lines = cited.map((s) => `[${s.number}] ${s.title ? s.title + ' — ' : ''}${s.url || ''}`.trim());
    e.clipboardData.setData('text/plain', `${sel.toString().trim()}\n\n${t('sources')}:\n${lines.join('\n')}\n`);
    e.preventDefault();
  }

  textWithSources() {
    const cited = [...this.cited.values()].filter((s) => s && s.number > 0).sort((a, b) => a.number - b.number);
    if (!cited.length) return this.text;
    const lines = cited.map((s) => `[${s.number}] ${s.title ? s.title + ' — ' : ''}${s.url || ''}`.trim());
    return `${this.text.trim()}\n\n${t('sources')}:\n${lines.join('\n')}\n`;
  }

  // failedTools lists the calls that failed, once the run has ended (a
  // live one may still retry).
  failedTools() {
    return [...this.tools.values()].filter((x) => x.error);
  }

  clarifyCard(key, d) {
    return this.keyed('clarify:' + key, JSON.stringify([d, this.frozen]), () => {
      const questions = Array.isArray(d?.questions) ? d.questions : typeof d?.question === 'string' ? [d.question] : [];
      const input = h('textarea', { class: 'clarify-input', rows: 3, placeholder: t('clarifyPlaceholder'), 'aria-label': t('clarifyPlaceholder') });
      const button = h('button', { class: 'btn primary', type: 'submit' }, t('clarifySend'));
      const form = h('form', { class: 'clarify-form' }, input, h('div', { class: 'clarify-actions' }, button));
      const submit = (e) => {
        e?.preventDefault();
        const text = input.value.trim();
        if (!text) {
          input.focus();
          return;
        }
        this.freeze();
        this.onAnswer(text);
      };
      form.addEventListener('submit', submit);
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
      });
      if (this.frozen) {
        input.disabled = true;
        button.disabled = true;
        form.hidden = true;
      }
      return h('div', { class: 'card clarify' },
        h('div', { class: 'card-head' }, icon('question'), h('span', null, t('clarifyTitle')),
          this.frozen ? h('span', { class: 'badge' }, t('clarifyAnswered')) : null),
        h('ol', { class: 'clarify-questions' }, questions.map((q) => h('li', null, String(q)))),
        form);
    });
  }

  renderError() {
    const msg = this.error;
    const stopped = this.aborted || this.finishReason === 'cancelled';
    this.errorEl.hidden = !msg && !stopped;
    if (msg) {
      this.errorEl.className = 'turn-error';
      const retry = !this.frozen && !this.running && this.actions.retry
        ? h('button', { class: 'btn small retry-btn', type: 'button', onclick: () => this.actions.retry(this) }, icon('refresh'), h('span', null, t('retry'))) : null;
      this.errorEl.replaceChildren(icon('alert'), h('div', null, h('strong', null, t('errorTitle')), h('div', { class: 'error-text' }, msg), retry));
    } else if (stopped) {
      this.errorEl.className = 'turn-error note';
      this.errorEl.replaceChildren(icon('stop'), h('div', null, t('stopped')));
    }
  }

  renderFoot() {
    this.footEl.hidden = this.running || !this.text || this.asksForAnswers();
    if (this.footEl.hidden) return;
    const copy = h('button', { class: 'ghost-btn', type: 'button', title: t('copy') }, icon('copy'), h('span', null, t('copy')));
    copy.addEventListener('click', async () => {
      if (await copyText(this.textWithSources())) {
        copy.lastChild.textContent = t('copied');
        setTimeout(() => {
          copy.lastChild.textContent = t('copy');
        }, 1500);
      }
    });
    const info = [];
    const mode = this.meta.mode || this.mode;
    if (mode) info.push(modeName(mode));
    if (this.meta.model) info.push(this.meta.model);
    const total = this.usage && (this.usage.totalTokens || (this.usage.inputTokens || 0) + (this.usage.outputTokens || 0));
    if (total) info.push(plural('tokens', total));
    // The latest turn may be asked again, or its question edited and sent.
    const again = [];
    if (!this.frozen && this.actions.regenerate) {
      again.push(h('button', { class: 'ghost-btn regenerate-btn', type: 'button', title: t('regenerate'), onclick: () => this.actions.regenerate(this) }, icon('refresh'), h('span', null, t('regenerate'))));
    }
    if (!this.frozen && this.actions.edit) {
      again.push(h('button', { class: 'ghost-btn edit-btn', type: 'button', title: t('editQuestion'), onclick: () => this.actions.edit(this) }, icon('pencil'), h('span', null, t('editQuestion'))));
    }
    this.footEl.replaceChildren(copy, ...again, h('span', { class: 'foot-info' }, info.join(' · ')));
  }
}

function withoutEmpty(o) {
  const out = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}

function skeleton() {
  return h('div', { class: 'skeleton', 'aria-hidden': 'true' }, h('span'), h('span'), h('span'));
}

function queryRow(q) {
  const st = q.status;
  const stIcon = st === 'started' ? spinner() : st === 'error' ? icon('alert', 'bad') : icon('search');
  let count = null;
  if (st === 'error') count = h('span', { class: 'q-count bad', title: q.error || '' }, t('failed'));
  else if (typeof q.resultsCount === 'number') count = h('span', { class: 'q-count' }, plural('results', q.resultsCount));
  return h('li', { class: ['query', st], dataset: { status: st || '' } },
    h('span', { class: 'q-icon' }, stIcon), h('span', { class: 'q-text' }, q.query), count);
}

function pageRow(p) {
  let state;
  if (p.state === 'reading') state = h('span', { class: 'p-state' }, spinner(), t('reading'));
  else if (p.state === 'failed') state = h('span', { class: 'p-state bad', title: p.error || '' }, t('failed'));
  else state = h('span', { class: 'p-state' }, p.chars ? t('chars', { n: p.chars }) : icon('check'));
  const url = safeURL(p.url, new Set(['http:', 'https:']));
  const label = p.title || hostOf(p.url) || p.url;
  return h('li', { class: ['page', p.state], dataset: { state: p.state || '' } },
    favicon(p), url ? h('a', { class: 'p-title', href: url, target: '_blank', rel: 'noopener noreferrer', title: p.url }, label) : h('span', { class: 'p-title' }, label),
    h('span', { class: 'p-host' }, hostOf(p.url)), state);
}

function toolRow(tool) {
  // A call the action gate held has not run: it shows as held, not done.
  const held = tool.output && typeof tool.output === 'object' && tool.output.status === 'awaiting_confirmation';
  const st = tool.error ? icon('alert', 'bad') : tool.output === undefined ? spinner() : held ? icon('question') : icon('check');
  return h('div', { class: ['step tool', tool.error && 'failed', held && 'held'], dataset: { tool: tool.name || '' } },
    h('span', { class: 'step-icon' }, st),
    h('div', { class: 'step-main' },
      h('div', { class: 'step-title' }, tool.title || t('tool', { name: humanize(tool.name) || '?' })),
      toolInputText(tool.input) ? h('div', { class: 'step-detail' }, toolInputText(tool.input)) : null,
      tool.error ? h('div', { class: 'step-detail bad' }, String(tool.error)) : null));
}

// safeView calls a registered view; one that throws on odd data shows
// nothing rather than breaking the turn.
function safeView(view, ...args) {
  if (!view) return null;
  try {
    return view(...args) || null;
  } catch (err) {
    console.warn('view failed', err);
    return null;
  }
}

// toolInputText picks what a person wants to see of a tool's input: the
// query, the queries, the address.
function toolInputText(input) {
  if (input == null) return '';
  if (typeof input !== 'object') return String(input);
  for (const k of ['query', 'q', 'url', 'path', 'question', 'topic']) if (typeof input[k] === 'string') return input[k];
  if (Array.isArray(input.queries)) return input.queries.filter((q) => typeof q === 'string').join(' · ');
  return '';
}

// genericRow shows a data part this page has no special view for as a
// readable tree of its fields.
function genericRow(name, data) {
  return h('div', { class: 'step generic', dataset: { part: name } },
    h('span', { class: 'step-icon' }, icon('sparkle')),
    h('div', { class: 'step-main' }, h('div', { class: 'step-title' }, humanize(name)), h('div', { class: 'value' }, valueView(data, 0))));
}

// ---- deep research progress ----
// Views of the research mode's parts (internal/mode/research/events.go).
// Payloads come from the network: every field is checked before use and a
// missing or odd one renders as nothing rather than throwing.

const MAX_ITEMS = 60;

function str(v) {
  return typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
}

function list(v) {
  return Array.isArray(v) ? v.slice(0, MAX_ITEMS).map(rec) : [];
}

function rec(v) {
  return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
}

function count(v) {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

// label translates a known value of a field (a state, a status) and shows
// an unknown one as words.
function label(prefix, v) {
  const s = str(v);
  if (!s) return '';
  return has(prefix + s) ? t(prefix + s) : humanize(s);
}

// agentName names an agent by its id ("agent_3" → "Researcher 3").
function agentName(id, number) {
  const n = count(number) || count((/^agent[_-](\d+)$/.exec(str(id)) || [])[1]);
  if (n) return t('agentN', { n });
  return str(id) || t('agent');
}

function planView(raw) {
  const d = rec(raw);
  const rev = count(d.revision);
  const themes = list(d.themes).map((th) => {
    const tasks = list(th.tasks).filter((tk) => str(tk.title));
    return h('li', { class: 'plan-theme' },
      h('div', { class: 'plan-theme-title' }, str(th.title) || '—'),
      str(th.description) ? h('div', { class: 'plan-theme-desc' }, str(th.description)) : null,
      tasks.length ? h('ul', { class: 'plan-tasks' }, tasks.map((tk) => h('li', { title: str(tk.objective) || null }, str(tk.title)))) : null);
  });
  return h('div', { class: 'step research-plan', dataset: { part: 'research_plan' } },
    h('span', { class: 'step-icon' }, icon('list')),
    h('div', { class: 'step-main' },
      h('div', { class: 'step-title' }, t('researchPlan'), rev ? h('span', { class: 'plan-rev' }, t('planRevision', { n: rev })) : null),
      str(d.goal) ? h('div', { class: 'plan-goal' }, str(d.goal)) : null,
      themes.length ? h('ol', { class: 'plan-themes' }, themes) : null));
}

function agentView(raw) {
  const d = rec(raw);
  const state = str(d.state);
  const busy = state === 'working' || state === 'reflecting';
  const todos = list(d.todos).map((td) => {
    const st = str(td.status);
    const mark = st === 'in_progress' ? spinner() : st === 'done' ? icon('check') : st === 'failed' ? icon('alert', 'bad') : h('span', { class: 'todo-dot' });
    return h('li', { class: 'todo', dataset: { status: st } },
      h('span', { class: 'todo-mark' }, mark),
      h('span', { class: 'todo-title' }, str(td.title)),
      st ? h('span', { class: 'todo-status' }, label('todo_', st)) : null);
  });
  const notes = count(d.notes);
  return h('div', { class: 'agent-card', dataset: { part: 'research_agent', agent: str(d.id), state } },
    h('div', { class: 'agent-head' },
      h('span', { class: 'agent-icon' }, busy ? spinner() : icon(state === 'done' ? 'check' : 'sparkle')),
      h('span', { class: 'agent-name' }, agentName(d.id, d.number)),
      state ? h('span', { class: 'agent-state' }, label('agentState_', state)) : null),
    str(d.specialisation) ? h('div', { class: 'agent-spec' }, str(d.specialisation)) : null,
    str(d.currentTodo) ? h('div', { class: 'agent-current' }, h('span', { class: 'muted' }, t('agentCurrent') + ' '), str(d.currentTodo)) : null,
    str(d.detail) ? h('div', { class: 'agent-detail' }, str(d.detail)) : null,
    todos.length ? h('ul', { class: 'agent-todos' }, todos) : null,
    h('div', { class: 'agent-foot' }, plural('notes', notes)));
}

function noteView(raw) {
  const d = rec(raw);
  const sources = list(d.sources).map((s) => {
    const url = safeURL(str(s.url), new Set(['http:', 'https:']));
    const text = str(s.title) || hostOf(str(s.url)) || str(s.url);
    if (!text) return null;
    const num = count(s.number) ? h('span', { class: 'note-src-n' }, String(count(s.number))) : null;
    return h('li', null, num, url ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', title: str(s.url) }, text) : h('span', null, text));
  }).filter(Boolean);
  return h('li', { class: 'research-note', dataset: { part: 'research_note', agent: str(d.agent) } },
    h('span', { class: 'q-icon' }, icon('doc')),
    h('div', { class: 'note-main' },
      h('div', { class: 'note-title' }, str(d.title) || str(d.todo) || '—'),
      h('div', { class: 'note-meta' }, [str(d.agent) ? agentName(d.agent) : '', str(d.todo) && str(d.title) ? str(d.todo) : ''].filter(Boolean).join(' · ')),
      sources.length ? h('ul', { class: 'note-sources' }, sources) : null));
}

function decisionView(raw) {
  const d = rec(raw);
  const decision = str(d.decision);
  const title = decision && has('decision_' + decision) ? t('decision_' + decision) : t('decisionOther', { decision: humanize(decision) || '—' });
  const call = count(d.call);
  const max = count(d.maxCalls);
  const todos = list(d.newTodos).filter((x) => str(x.title));
  return h('div', { class: 'step decision', dataset: { part: 'supervisor_decision', decision } },
    h('span', { class: 'step-icon' }, icon(decision === 'finish' ? 'check' : decision === 'replan' ? 'layers' : 'chat')),
    h('div', { class: 'step-main' },
      h('div', { class: 'step-title' }, h('span', { class: 'decision-text' }, title),
        call ? h('span', { class: 'decision-call' }, max ? t('decisionCall', { n: call, max }) : `#${call}`) : null,
        d.forced === true ? h('span', { class: 'decision-call' }, t('decisionForced')) : null),
      str(d.agent) ? h('div', { class: 'step-detail' }, t('decisionReviewed', { agent: agentName(d.agent) })) : null,
      str(d.reason) ? h('div', { class: 'decision-reason' }, str(d.reason)) : null,
      todos.length ? h('div', { class: 'decision-todos' }, h('div', { class: 'muted' }, t('newTodos')),
        h('ul', null, todos.map((x) => h('li', null, str(x.agent) ? h('span', { class: 'muted' }, agentName(x.agent) + ': ') : null, str(x.title))))) : null));
}

// RESEARCH_VIEWS maps part names to their views; a Map, so that a part
// named after an Object property ("constructor") finds nothing.
const RESEARCH_VIEWS = new Map([
  ['research_plan', planView],
  ['research_agent', agentView],
  ['research_note', noteView],
  ['supervisor_decision', decisionView],
]);

function valueView(v, depth) {
  if (v == null) return h('span', { class: 'muted' }, '—');
  if (typeof v === 'string') return h('span', { class: 'v-text' }, v.length > 4000 ? v.slice(0, 4000) + '…' : v);
  if (typeof v !== 'object') return h('span', null, String(v));
  if (depth >= 4) return h('code', null, JSON.stringify(v).slice(0, 500));
  if (Array.isArray(v)) {
    const items = v.slice(0, 50).map((x) => h('li', null, valueView(x, depth + 1)));
    if (v.length > 50) items.push(h('li', { class: 'muted' }, `… +${v.length - 50}`));
    return h('ul', { class: 'v-list' }, items);
  }
  const entries = Object.entries(v).slice(0, 40);
  return h('dl', { class: 'v-obj' }, entries.map(([k, x]) => [h('dt', null, humanize(k)), h('dd', null, valueView(x, depth + 1))]));
}

function reportCard(d) {
  const links = [];
  const pdf = d && safeURL(d.pdfUrl || '');
  const md = d && safeURL(d.markdownUrl || '');
  if (pdf) links.push(h('a', { class: 'btn primary', href: pdf, download: '' }, icon('download'), h('span', null, t('reportPdf'))));
  if (md) links.push(h('a', { class: 'btn', href: md, download: '' }, icon('download'), h('span', null, t('reportMarkdown'))));
  return h('div', { class: 'card report' },
    h('div', { class: 'card-head' }, icon('doc'), h('span', null, t('reportTitle'))),
    h('div', { class: 'report-links' }, links));
}

// favicon returns the icon of a source's site: the favicon the search
// service reported, else the site's /favicon.ico, else its initial.
function favicon(s) {
  if (s.kind === 'document') return h('span', { class: 'favicon doc' }, icon('doc'));
  let src = safeImageURL(s.favicon || '');
  if (!src) {
    try {
      const u = new URL(s.url);
      if (u.protocol === 'http:' || u.protocol === 'https:') src = u.origin + '/favicon.ico';
    } catch {
      src = null;
    }
  }
  const fallback = () => {
    const host = hostOf(s.url || '');
    // An address has no meaningful initial: a globe stands in for it.
    if (!host || /^[\d.]+$/.test(host) || host.includes(':')) return h('span', { class: 'favicon globe', 'aria-hidden': 'true' }, icon('globe'));
    return h('span', { class: 'favicon letter', 'aria-hidden': 'true' }, host[0].toUpperCase());
  };
  if (!src) return fallback();
  const img = h('img', { class: 'favicon', src, alt: '', width: 16, height: 16, loading: 'lazy', referrerpolicy: 'no-referrer', decoding: 'async' });
  img.addEventListener('error', () => img.replaceWith(fallback()), { once: true });
  return img;
}

function sourceCard(s, numbered) {
  const doc = s.kind === 'document';
  const url = doc ? null : safeURL(s.url || '', new Set(['http:', 'https:']));
  const host = doc ? [s.space || t('document'), s.position].filter(Boolean).join(' · ') : hostOf(s.url || '');
  // A cited source the run never read says so: the answer rests on the
  // search engine's snippet of it, not on the page.
  const snippetOnly = numbered && s.snippetOnly === true;
  const body = [
    h('span', { class: 'sc-title' }, s.title || s.document || host || s.url || ''),
    h('span', { class: 'sc-meta' }, favicon(s), h('span', { class: 'sc-host' }, host),
      snippetOnly ? h('span', { class: 'sc-flag', title: t('snippetOnlyHint') }, t('snippetOnly')) : null,
      numbered && s.number ? h('span', { class: 'sc-num' }, String(s.number)) : null),
  ];
  const hint = snippetOnly ? t('snippetOnlyHint') : '';
  const props = { class: ['source-card', doc && 'doc', snippetOnly && 'snippet-only'], title: [s.snippet || s.title || '', hint].filter(Boolean).join('\n\n'), dataset: { n: numbered && s.number ? String(s.number) : '' } };
  // A cited passage of the person's documents opens in the side panel.
  if (isPassageURL(s.url)) return h('button', { ...props, type: 'button', class: [...props.class, 'passage-link'], onclick: () => openPassage(s.url) }, body);
  if (!url) return h('div', props, body);
  return h('a', { ...props, href: url, target: '_blank', rel: 'noopener noreferrer' }, body);
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API is missing on plain-HTTP origins other than localhost.
    const ta = h('textarea', { class: 'offscreen', readonly: true });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}
