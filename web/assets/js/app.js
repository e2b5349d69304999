// Sova's browser UI: wiring of the page. A person picks a mode and asks;
// the answer streams from POST /api/search (AI SDK UI message stream) into
// a Turn; past chats live in the sidebar (/c/{id} links to one).

import { h, icon } from './dom.js';
import { t, applyStatic, modeName, modeDescription } from './i18n.js';
import { api } from './api.js';
import { uiMessageChunks } from './stream.js';
import { Turn } from './turn.js';
import { ChatList } from './sidebar.js';
import { SpacesPanel } from './spaces.js';
import { Attachments } from './attach.js';
import { ShareButton } from './sharebtn.js';
import { MemoriesPanel } from './memories.js';
import { currentUser, showSignIn, accountFoot, refreshUsage } from './account.js';
import { setupBanner } from './setup.js';
import { attachVersions, editInPlace } from './versions.js';
import { modelPicker } from './modelpicker.js';
import './views/all.js';

const $ = (id) => document.getElementById(id);
const MODE_KEY = 'sova.mode';
const THEME_KEY = 'sova.theme';
const MODE_ICONS = {
  chat: 'chat', search: 'search', deep_search: 'layers', deep_research: 'book', docs: 'folder', sgr_agent: 'sparkle',
  web: 'globe', academic: 'doc', youtube: 'play', reddit: 'chat', code: 'code', x: 'close', stocks: 'chart', crypto: 'coin',
};

// storage is localStorage that tolerates being disabled.
const storage = {
  get(k) {
    try {
      return localStorage.getItem(k);
    } catch {
      return null;
    }
  },
  set(k, v) {
    try {
      localStorage.setItem(k, v);
    } catch {
      // disabled: the choice lasts for this page only
    }
  },
  remove(k) {
    try {
      localStorage.removeItem(k);
    } catch {
      // disabled
    }
  },
};

const state = {
  modes: [],
  mode: storage.get(MODE_KEY) || 'search',
  chatId: null,
  chatMode: '', // the mode the chat on screen last ran in; follow-ups use it
  turns: [],
  live: null, // {chatId, turn, ctrl} of the run streaming now
  view: 0, // bumped on every navigation; stale loads check it
};

const el = {
  app: $('app'),
  thread: $('thread'),
  hero: $('hero'),
  scroller: $('scroller'),
  input: $('input'),
  composer: $('composer'),
  send: $('send'),
  modeBtn: $('mode-btn'),
  modeMenu: $('mode-menu'),
  title: $('topbar-title'),
  sidebar: $('sidebar'),
  backdrop: $('backdrop'),
  toast: $('toast'),
  theme: $('theme-toggle'),
};

const chats = new ChatList($('chat-list'), { onOpen: (id) => openChat(id, true), onDelete: deleteChat, onRename: renameChat });

// What the latest turn offers (convenience.js): its follow-up questions,
// asking it again, editing its question, trying a failed one again.
const turnActions = {
  followUp: (q) => ask(q),
  regenerate: (turn) => regenerate(turn),
  edit: (turn) => {
    if (!state.chatId || state.turns[state.turns.length - 1] !== turn) return;
    editInPlace(turn, (text) => rerun(turn, text, 'edit-message'));
  },
  retry: (turn) => ask(turn.question),
};

// The topbar's download of the chat as Markdown, shown once there is one.
const exportLink = h('a', { class: 'icon-btn export-chat', id: 'export-chat', hidden: true, download: '', title: t('exportChat'), 'aria-label': t('exportChat') }, icon('download'));
$('topbar-new').before(exportLink);
const share = new ShareButton(exportLink, { toast });
function showExport(id) {
  share.open(id);
  exportLink.hidden = !id;
  if (id) exportLink.href = `/api/chats/${encodeURIComponent(id)}/export.md`;
  else exportLink.removeAttribute('href');
}
const spaces = new SpacesPanel($('spaces'), { toast });
let attachments = null; // the composer's attached files (attach.js), set at boot
const memories = new MemoriesPanel($('memories'), { toast });

// ---- boot ----

async function boot() {
  applyStatic(document);
  let me = null;
  try {
    me = await currentUser();
    if (!me) {
      showSignIn();
      return;
    }
  } catch (e) {
    toast(e.message);
  }
  accountFoot(document.querySelector('.sidebar-foot'), me, toast);
  for (const b of document.querySelectorAll('[data-icon]')) b.prepend(icon(b.dataset.icon));
  setupTheme();
  setupComposer();
  attachments = new Attachments(document.querySelector('.composer-bar'), document.querySelector('.composer-box'), { toast });
  setupModeMenu();
  const models = h('span', { class: 'model-picker' });
  document.querySelector('.composer-bar .mode-picker').after(models);
  modelPicker(models, me, toast);
  setupSidebar();
  // The modes appear once the chat list is drawn, so a page showing its
  // modes is a page fully loaded.
  loadModes(loadChats());
  spaces.init();
  memories.init();
  window.addEventListener('popstate', () => route(false));
  route(false);
  document.body.classList.add('ready');
}

function route(push) {
  const m = /^\/c\/([^/]+)\/?$/.exec(location.pathname);
  if (m) openChat(decodeURIComponent(m[1]), push);
  else newChat(push);
}

// ---- modes ----

async function loadModes(after) {
  try {
    const body = await api.modes();
    state.modes = Array.isArray(body?.modes) ? body.modes.filter((m) => m && m.id) : [];
    const banner = setupBanner(body?.setup);
    if (banner) document.querySelector('.topbar').after(banner);
  } catch (e) {
    toast(e.message);
  }
  await after;
  if (!state.modes.length) state.modes = [{ id: state.mode, description: '' }];
  if (!state.modes.some((m) => m.id === state.mode && !m.withdrawn)) {
    // A chat whose mode the server no longer offers says so rather than
    // quietly answering its follow-ups in another mode.
    if (state.chatMode && state.chatMode === state.mode) toast(t('modeWithdrawn', { mode: modeName(state.mode) }));
    state.mode = state.modes.some((m) => m.id === 'search') ? 'search' : state.modes[0].id;
  }
  renderModes();
}

// restoreChatMode puts the composer in the mode a reopened chat last ran
// in, whether or not /api/modes has answered yet (loadModes checks it
// when it does).
function restoreChatMode(id) {
  state.chatMode = id || '';
  if (!id) return;
  if (state.modes.length && !state.modes.some((m) => m.id === id && !m.withdrawn)) {
    toast(t('modeWithdrawn', { mode: modeName(id) }));
    return;
  }
  setMode(id);
}

function setMode(id) {
  state.mode = id;
  storage.set(MODE_KEY, id);
  renderModes();
}

// The mode menu's sections, in order; a mode not named here goes last.
const MODE_SECTIONS = [
  ['modesAnswer', ['search', 'chat', 'deep_search']],
  ['modesResearch', ['deep_research', 'extreme', 'sgr_agent', 'docs']],
  ['modesFocus', ['web', 'academic', 'youtube', 'reddit', 'code', 'x', 'stocks', 'crypto']],
];

function renderModes() {
  el.modeBtn.replaceChildren(icon(MODE_ICONS[state.mode] || 'sparkle'), h('span', { class: 'mode-name' }, modeName(state.mode)), icon('chevron', 'chev'));
  el.modeBtn.title = t('mode');
  el.modeBtn.dataset.mode = state.mode;
  const option = (m) => {
    // A group that cannot run here (X without its key) is shown, off,
    // with the reason, rather than offered.
    const off = !!m.withdrawn && m.id !== state.mode;
    const desc = off ? t('modeWithdrawnReason', { why: m.withdrawn }) : modeDescription(m.id, m.description);
    const opt = h('button', {
      class: ['mode-option', off && 'withdrawn'], type: 'button', role: 'option', 'aria-selected': String(m.id === state.mode), 'aria-disabled': off ? 'true' : null,
      dataset: { mode: m.id }, title: desc,
    }, h('span', { class: 'mode-icon' }, icon(MODE_ICONS[m.id] || 'sparkle')),
    h('span', { class: 'mode-text' }, h('span', { class: 'mode-option-name' }, modeName(m.id)), h('span', { class: 'mode-option-desc' }, desc)),
    m.id === state.mode ? icon('check', 'mode-check') : null);
    opt.addEventListener('click', () => {
      if (off) return;
      setMode(m.id);
      closeModeMenu();
      el.input.focus();
    });
    return opt;
  };
  const placed = new Set();
  const sections = [];
  for (const [title, ids] of MODE_SECTIONS) {
    const ms = ids.map((id) => state.modes.find((m) => m.id === id)).filter(Boolean);
    ms.forEach((m) => placed.add(m.id));
    if (ms.length) sections.push([title, ms]);
  }
  const rest = state.modes.filter((m) => !placed.has(m.id));
  if (rest.length) sections.push(['modesOther', rest]);
  el.modeMenu.replaceChildren(...sections.map(([title, ms]) => h('div', { class: 'mode-section', role: 'group', 'aria-label': t(title) },
    h('div', { class: 'mode-section-title', 'aria-hidden': 'true' }, t(title)), ms.map(option))));
}

function setupModeMenu() {
  el.modeBtn.addEventListener('click', () => (el.modeMenu.hidden ? openModeMenu() : closeModeMenu()));
  el.modeMenu.addEventListener('keydown', (e) => {
    const opts = [...el.modeMenu.querySelectorAll('.mode-option')];
    const i = opts.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const n = opts.length;
      opts[(i + (e.key === 'ArrowDown' ? 1 : n - 1)) % n]?.focus();
    } else if (e.key === 'Escape') {
      e.preventDefault(); // it closes the menu, and stops nothing
      closeModeMenu();
      el.modeBtn.focus();
    }
  });
  document.addEventListener('click', (e) => {
    if (!el.modeMenu.hidden && !e.target.closest('.mode-picker')) closeModeMenu();
  });
  window.addEventListener('resize', () => {
    if (!el.modeMenu.hidden) placeModeMenu();
  });
}

function openModeMenu() {
  el.modeMenu.hidden = false;
  placeModeMenu();
  el.modeBtn.setAttribute('aria-expanded', 'true');
  (el.modeMenu.querySelector('[aria-selected="true"]') || el.modeMenu.querySelector('.mode-option'))?.focus();
}

// placeModeMenu opens the menu on the side of the button with more room
// and makes it no taller than that room, so every entry can be reached
// (it scrolls) on a short window or a phone.
function placeModeMenu() {
  const r = el.modeBtn.getBoundingClientRect();
  const margin = 12;
  const above = r.top - margin - 10;
  const below = window.innerHeight - r.bottom - margin - 10;
  const down = below > above;
  el.modeMenu.classList.toggle('below', down);
  el.modeMenu.style.maxHeight = Math.max(160, Math.floor(down ? below : above)) + 'px';
}

function closeModeMenu() {
  el.modeMenu.hidden = true;
  el.modeBtn.setAttribute('aria-expanded', 'false');
}

// ---- composer ----

function setupComposer() {
  const resize = () => {
    el.input.style.height = 'auto';
    el.input.style.height = Math.min(el.input.scrollHeight, 240) + 'px';
  };
  el.input.addEventListener('input', resize);
  el.input.addEventListener('keydown', (e) => {
    // Enter sends, Shift+Enter is a new line; an IME composing text keeps
    // its Enter.
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey && !e.isComposing) {
      e.preventDefault();
      el.composer.requestSubmit();
    }
  });
  // Esc stops the run on screen, unless it closes something first (the
  // mode menu, the drawer, a dialog, a form being edited).
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || e.defaultPrevented || !isLiveHere()) return;
    if (!el.modeMenu.hidden || el.app.classList.contains('drawer-open') || document.querySelector('dialog[open]')) return;
    if (e.target instanceof Element && e.target.closest('form:not(#composer)')) return;
    stop(state.live);
  });
  el.composer.addEventListener('submit', (e) => {
    e.preventDefault();
    if (isLiveHere()) {
      stop(state.live);
      return;
    }
    const text = el.input.value.trim();
    if (!text) return;
    el.input.value = '';
    resize();
    ask(text);
  });
}

// isLiveHere reports whether the chat on screen is the one streaming.
function isLiveHere() {
  const live = state.live;
  return !!live && (live.view === state.view || (!!live.chatId && live.chatId === state.chatId));
}

function updateSendButton() {
  const live = isLiveHere();
  el.send.replaceChildren(icon(live ? 'stop' : 'arrowUp'));
  el.send.title = live ? t('stop') : t('send');
  el.send.setAttribute('aria-label', el.send.title);
  el.send.classList.toggle('stop', live);
  el.composer.classList.toggle('busy', live);
  el.input.placeholder = state.turns.length ? t('placeholderFollowUp') : t('placeholder');
}

// ask sends a question (or the answer to a clarifying question) in the
// current chat and streams the reply.
function ask(text, decision) {
  // Another chat may still be streaming: it finishes where it is.
  if (isLiveHere()) return;
  const mode = state.mode;
  state.chatMode = mode;
  for (const turn of state.turns) turn.freeze();
  const turn = new Turn({ question: text, mode, onAnswer: (answer, decision) => ask(answer, decision), actions: turnActions });
  turn.onRender = () => stickToBottom();
  state.turns.push(turn);
  el.hero.hidden = true;
  el.thread.append(turn.el);
  scrollToBottom();

  const body = {
    group: mode,
    messages: [{ id: messageId(), role: 'user', parts: [{ type: 'text', text }] }],
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
  if (state.chatId) body.id = state.chatId;
  // A decision about held actions names them by id (approve, decline).
  if (decision && Array.isArray(decision.approve)) body.approve = decision.approve;
  if (decision && Array.isArray(decision.decline)) body.decline = decision.decline;
  // Files still uploading are waited for: the question searches them.
  return runLive(turn, async (signal) => {
    await attachments.settled();
    const selected = [...new Set([...spaces.selectedIds(), ...attachments.ids()])];
    if (selected.length) body.spaces = selected;
    attachments.sent();
    return api.search(body, signal);
  });
}

// regenerate answers the chat's last question again in place: the new
// answer replaces the old one on screen, which stays reachable by the
// version arrows (versions.js), and the question is not stored twice.
function regenerate(old) {
  return rerun(old, old.question, 'regenerate-message');
}

// rerun runs the chat's last question again in place, as it was
// (regenerate-message) or rewritten (edit-message).
function rerun(old, question, trigger) {
  const i = state.turns.indexOf(old);
  if (isLiveHere() || !state.chatId || i !== state.turns.length - 1) return;
  const turn = new Turn({ question, mode: state.mode, onAnswer: (answer) => ask(answer), actions: turnActions });
  turn.onRender = () => stickToBottom();
  turn.versions = [...(old.versions || [old]), turn];
  old.freeze();
  state.turns[i] = turn;
  state.chatMode = state.mode;
  // The version shown may be an older one: the new one takes its place.
  const shown = turn.versions.find((v) => v.el.isConnected);
  if (shown) shown.el.replaceWith(turn.el);
  else el.thread.append(turn.el);
  attachVersions(turn.versions);
  const body = {
    id: state.chatId,
    group: state.mode,
    trigger,
    messages: [{ id: messageId(), role: 'user', parts: [{ type: 'text', text: question }] }],
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
  const selected = [...new Set([...spaces.selectedIds(), ...attachments.ids()])];
  if (selected.length) body.spaces = selected;
  return runLive(turn, (signal) => api.search(body, signal));
}

// runLive streams a run into turn. open(signal) starts the request and
// answers the response, or null when there is nothing to stream.
async function runLive(turn, open) {
  const view = state.view;
  const ctrl = new AbortController();
  const live = { chatId: state.chatId, view, turn, ctrl, runId: '', stopping: false };
  state.live = live;
  turn.begin();
  updateSendButton();
  let aborted = false;
  try {
    const res = await open(ctrl.signal);
    if (res) {
      live.runId = res.headers.get('X-Run-ID') || '';
      const chatId = res.headers.get('X-Chat-ID');
      if (chatId && !live.chatId) {
        live.chatId = chatId;
        chats.hint(chatId, turn.question);
        if (state.view === view) attachments.linked(chatId);
        if (state.view === view) {
          state.chatId = chatId;
          history.pushState(null, '', '/c/' + encodeURIComponent(chatId));
          chats.setActive(chatId);
          el.title.textContent = chats.title(chatId);
          showExport(chatId);
        }
        loadChats();
      }
      await follow(live, res);
    }
  } catch (e) {
    if (ctrl.signal.aborted) aborted = true;
    else turn.fail(e.status ? e.message : t('networkError', { msg: e.message }));
  } finally {
    turn.end({ aborted });
    if (state.live === live) state.live = null;
    updateSendButton();
    if (live.chatId) refreshTitles(live.chatId);
    refreshUsage();
  }
}

// follow reads a run's stream into its turn. Runs go on on the server when
// a connection drops, so a dropped stream is picked up again where it
// stopped (GET /api/chats/{id}/stream with Last-Event-ID).
async function follow(live, res) {
  const cursor = {};
  let finished = false;
  for (let attempt = 0; ; attempt++) {
    let dropped = null;
    try {
      for await (const chunk of uiMessageChunks(res.body, cursor)) {
        live.turn.apply(chunk);
        if (chunk.type === 'start' && !live.runId) live.runId = chunk.messageMetadata?.runId || '';
        if (chunk.type === 'finish') finished = true;
      }
    } catch (e) {
      if (live.ctrl.signal.aborted) throw e;
      dropped = e;
    }
    if (finished || cursor.done) return;
    if (!live.chatId || !cursor.lastEventId || attempt >= 4) throw dropped || new Error(t('connectionLost'));
    await sleep(400 * 2 ** attempt);
    res = await api.resume(live.chatId, cursor.lastEventId, live.ctrl.signal);
    if (!res) return;
  }
}

// stop asks the server to cancel the run; the stream then ends with the
// run's cancelled finish. A server that cannot cancel runs loses the
// stream instead.
async function stop(live) {
  if (live.stopping) return;
  live.stopping = true;
  if (live.runId) {
    try {
      await api.cancelRun(live.runId);
      setTimeout(() => live.ctrl.abort(), 8000); // the finish should come long before
      return;
    } catch {
      // no cancel endpoint, or the run is gone: drop the stream
    }
  }
  live.ctrl.abort();
}

function messageId() {
  const b = crypto.getRandomValues(new Uint8Array(12));
  return 'msg-' + [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

// refreshTitles reloads the chat list after a run; the server names a new
// chat in the background, so a missing title is looked for again shortly.
async function refreshTitles(chatId) {
  for (const wait of [0, 1000, 2500, 5000, 10000]) {
    if (wait) await sleep(wait);
    await loadChats();
    if (chatId === state.chatId) el.title.textContent = chats.title(chatId);
    if (chats.chats.some((c) => c.id === chatId && c.title)) return;
  }
}

// ---- chats ----

// The voice mode keeps its conversation as a chat (views/voicemode.js).
document.addEventListener('sova:chats-changed', () => {
  loadChats();
  refreshUsage();
});

async function loadChats() {
  try {
    const body = await api.chats();
    chats.set(body?.chats || []);
    chats.setActive(state.chatId);
  } catch (e) {
    toast(t('listFailed', { msg: e.message }));
  }
}

function resetView() {
  state.view++;
  state.turns = [];
  el.thread.replaceChildren();
  closeSidebar();
}

function newChat(push) {
  resetView();
  state.chatId = null;
  state.chatMode = '';
  attachments.open(null);
  el.hero.hidden = false;
  el.title.textContent = '';
  showExport(null);
  chats.setActive(null);
  if (push && location.pathname !== '/') history.pushState(null, '', '/');
  updateSendButton();
  el.input.focus();
}

async function openChat(id, push) {
  resetView();
  state.chatId = id;
  attachments.open(id);
  el.hero.hidden = true;
  showExport(id);
  chats.setActive(id);
  el.title.textContent = chats.title(id);
  if (push) history.pushState(null, '', '/c/' + encodeURIComponent(id));
  updateSendButton();
  const view = state.view;
  let body;
  try {
    body = await api.chat(id);
  } catch (e) {
    if (view !== state.view) return;
    el.thread.replaceChildren(h('p', { class: 'thread-note' }, e.status === 404 ? t('chatGone') : t('loadFailed', { msg: e.message })));
    return;
  }
  if (view !== state.view) return;
  el.title.textContent = body.chat?.title || '';
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  restoreChatMode(msgs.findLast((m) => m && m.mode)?.mode || body.chat?.mode);
  const turns = [];
  const rewritten = new Map(); // id of an edited question → its versions
  let pending = null;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (m.role !== 'user') continue;
    // A regenerated question has several answers (each replyTo it): the
    // newest shows, the others are versions behind the arrows.
    const answers = msgs.filter((x) => x.role === 'assistant' && x.replyTo && x.replyTo === m.id);
    if (!answers.length && msgs[i + 1] && msgs[i + 1].role === 'assistant') answers.push(msgs[i + 1]);
    const next = answers[answers.length - 1] || null;
    const last = !msgs.slice(i + 1).some((x) => x.role === 'user');
    // The run streaming now in this chat shows live instead of its
    // half-stored copy.
    if (last && !next && state.live && state.live.chatId === id) {
      turns.push(state.live.turn);
      continue;
    }
    const turn = Turn.fromStored(m, next, { onAnswer: (answer, decision) => ask(answer, decision), actions: turnActions });
    if (last && !next) pending = turn;
    const versions = [];
    // A question rewritten later (an edit replies to it) is a version of
    // its edit, shown only by the arrows.
    if (m.replyTo && rewritten.has(m.replyTo)) versions.push(...rewritten.get(m.replyTo));
    if (answers.length > 1) versions.push(...answers.slice(0, -1).map((a) => Turn.fromStored(m, a, { onAnswer: (answer) => ask(answer), actions: {} })));
    if (versions.length) {
      turn.versions = [...versions, turn];
      versions.forEach((v) => v.freeze());
      attachVersions(turn.versions);
    }
    if (msgs.some((x) => x.role === 'user' && x.replyTo === m.id)) {
      rewritten.set(m.id, turn.versions || [turn]);
      continue;
    }
    turns.push(turn);
  }
  turns.forEach((turn, k) => {
    if (k < turns.length - 1) turn.freeze();
    turn.onRender = () => stickToBottom();
  });
  state.turns = turns;
  el.thread.replaceChildren(...turns.map((x) => x.el));
  updateSendButton();
  scrollToBottom();
  // A question without an answer: its run may still be going (or ended
  // after this page left); the chat's stream replays and follows it.
  if (pending && !state.live) runLive(pending, (signal) => api.resume(id, '', signal));
}

// renameChat names a chat (PATCH /api/chats/{id}); true when it worked.
async function renameChat(id, title) {
  try {
    await api.renameChat(id, title);
  } catch (e) {
    toast(t('renameFailed', { msg: e.message }));
    return false;
  }
  if (state.chatId === id) el.title.textContent = title;
  loadChats();
  return true;
}

async function deleteChat(id) {
  try {
    await api.deleteChat(id);
  } catch (e) {
    toast(t('deleteFailed', { msg: e.message }));
    chats.render();
    return;
  }
  if (state.live && state.live.chatId === id) stop(state.live);
  toast(t('deleted'));
  if (state.chatId === id) newChat(true);
  await loadChats();
}

// ---- layout ----

function setupSidebar() {
  $('menu-btn').addEventListener('click', openSidebar);
  $('sidebar-close').addEventListener('click', closeSidebar);
  el.backdrop.addEventListener('click', closeSidebar);
  const fresh = (e) => {
    e.preventDefault();
    newChat(true);
  };
  $('new-chat').addEventListener('click', fresh);
  $('topbar-new').addEventListener('click', fresh);
  $('brand').addEventListener('click', fresh);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && el.app.classList.contains('drawer-open')) closeSidebar();
  });
}

function openSidebar() {
  el.app.classList.add('drawer-open');
  el.backdrop.hidden = false;
}

function closeSidebar() {
  el.app.classList.remove('drawer-open');
  el.backdrop.hidden = true;
}

function nearBottom() {
  const s = el.scroller;
  return s.scrollHeight - s.scrollTop - s.clientHeight < 160;
}

let stick = true;
el.scroller.addEventListener('scroll', () => {
  stick = nearBottom();
}, { passive: true });

function stickToBottom() {
  if (stick) el.scroller.scrollTop = el.scroller.scrollHeight;
}

function scrollToBottom() {
  stick = true;
  requestAnimationFrame(() => {
    el.scroller.scrollTop = el.scroller.scrollHeight;
  });
}

// ---- theme ----

function setupTheme() {
  const render = () => {
    const cur = document.documentElement.dataset.theme || 'system';
    el.theme.replaceChildren(icon(cur === 'dark' ? 'moon' : cur === 'light' ? 'sun' : 'auto'),
      h('span', { class: 'theme-label' }, t(cur === 'dark' ? 'themeDark' : cur === 'light' ? 'themeLight' : 'themeSystem')));
    el.theme.title = t(cur === 'dark' ? 'themeDark' : cur === 'light' ? 'themeLight' : 'themeSystem');
    el.theme.dataset.theme = cur;
  };
  el.theme.addEventListener('click', () => {
    // system → light → dark → system
    const cur = document.documentElement.dataset.theme || 'system';
    const next = cur === 'system' ? 'light' : cur === 'light' ? 'dark' : 'system';
    if (next === 'system') {
      delete document.documentElement.dataset.theme;
      storage.remove(THEME_KEY);
    } else {
      document.documentElement.dataset.theme = next;
      storage.set(THEME_KEY, next);
    }
    render();
  });
  render();
}

// ---- helpers ----

let toastTimer = 0;
function toast(msg) {
  el.toast.textContent = msg;
  el.toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.toast.hidden = true;
  }, 3500);
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

boot();
