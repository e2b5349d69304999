// The list of past chats, grouped by day, with a search box over their
// titles, renaming in place and a two-step delete (no modal dialog: the
// item itself asks for confirmation).

import { h, icon } from './dom.js';
import { t, dayGroup, modeName } from './i18n.js';
import './convenience.js'; // its strings

export class ChatList {
  // el: the container; onOpen(id), onDelete(id) → Promise, onRename(id,
  // title) → Promise.
  constructor(el, { onOpen, onDelete, onRename }) {
    this.el = el;
    this.onOpen = onOpen;
    this.onDelete = onDelete;
    this.onRename = onRename;
    this.chats = [];
    this.active = null;
    this.confirming = null;
    this.renaming = null;
    this.query = '';
    this.search = h('input', { class: 'chat-search', type: 'search', placeholder: t('searchChats'), 'aria-label': t('searchChats') });
    this.found = new Set(); // ids of chats whose messages match the query
    let timer = 0;
    let asked = 0;
    this.search.addEventListener('input', () => {
      this.query = this.search.value.trim().toLowerCase();
      this.found = new Set();
      this.render();
      // Titles filter at once; the chats' content is searched on the
      // server (GET /api/chats?q=) once typing pauses.
      clearTimeout(timer);
      if (this.query.length < 2) return;
      const q = this.query;
      const n = ++asked;
      timer = setTimeout(async () => {
        try {
          const res = await fetch('/api/chats?q=' + encodeURIComponent(q), { headers: { Accept: 'application/json' } });
          if (!res.ok || n !== asked) return;
          const body = await res.json();
          this.found = new Set((Array.isArray(body?.chats) ? body.chats : []).map((c) => c && c.id).filter(Boolean));
          this.render();
        } catch {
          // titles still filter
        }
      }, 250);
    });
    el.before(h('div', { class: 'chat-search-box' }, icon('search'), this.search));
    this.hints = new Map(); // chat id → its first question, until the server names the chat
  }

  // hint names a chat by its question while the server has no title yet.
  hint(id, question) {
    if (id && question && !this.hints.has(id)) this.hints.set(id, question.replace(/\s+/g, ' ').slice(0, 80));
  }

  set(chats) {
    this.chats = Array.isArray(chats) ? chats : [];
    this.render();
  }

  setActive(id) {
    this.active = id;
    for (const item of this.el.querySelectorAll('.chat-item')) item.classList.toggle('active', item.dataset.id === id);
  }

  // title is the chat's title, its question while untitled, or ''.
  title(id) {
    const c = this.chats.find((x) => x.id === id);
    return (c && c.title) || this.hints.get(id) || '';
  }

  render() {
    if (!this.chats.length) {
      this.el.replaceChildren(h('p', { class: 'chat-empty' }, t('noChats')));
      return;
    }
    const shown = this.query
      ? this.chats.filter((c) => this.found.has(c.id) || (c.title || this.hints.get(c.id) || '').toLowerCase().includes(this.query))
      : this.chats;
    if (!shown.length) {
      this.el.replaceChildren(h('p', { class: 'chat-empty' }, t('noMatches')));
      return;
    }
    const groups = new Map();
    const now = new Date();
    for (const c of shown) {
      const d = new Date(c.updatedAt || c.createdAt || Date.now());
      const g = dayGroup(d, now);
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(c);
    }
    const out = [];
    for (const [g, chats] of groups) {
      out.push(h('div', { class: 'chat-group' }, h('div', { class: 'chat-group-title' }, g), chats.map((c) => this.item(c))));
    }
    this.el.replaceChildren(...out);
  }

  item(c) {
    const title = c.title || this.hints.get(c.id) || t('untitled');
    if (this.confirming === c.id) {
      const yes = h('button', { class: 'btn danger small confirm-delete', type: 'button' }, t('delete'));
      const no = h('button', { class: 'btn small', type: 'button' }, t('cancel'));
      yes.addEventListener('click', async () => {
        yes.disabled = true;
        no.disabled = true;
        this.confirming = null;
        await this.onDelete(c.id);
      });
      no.addEventListener('click', () => {
        this.confirming = null;
        this.render();
      });
      setTimeout(() => no.focus(), 0);
      return h('div', { class: 'chat-item confirming', dataset: { id: c.id } },
        h('span', { class: 'chat-confirm-text' }, t('confirmDelete')), h('span', { class: 'chat-confirm-actions' }, no, yes));
    }
    if (this.renaming === c.id) return this.renameForm(c, title);
    const open = h('a', { class: 'chat-open', href: '/c/' + encodeURIComponent(c.id), title }, h('span', { class: 'chat-title' }, title),
      c.mode ? h('span', { class: 'chat-mode' }, modeName(c.mode)) : null);
    open.addEventListener('click', (e) => {
      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return; // new tab
      e.preventDefault();
      this.onOpen(c.id);
    });
    const del = h('button', { class: 'icon-btn chat-delete', type: 'button', title: t('deleteChat'), 'aria-label': t('deleteChat') }, icon('trash'));
    del.addEventListener('click', () => {
      this.confirming = c.id;
      this.render();
    });
    const ren = h('button', { class: 'icon-btn chat-rename', type: 'button', title: t('rename'), 'aria-label': t('rename') }, icon('pencil'));
    ren.addEventListener('click', () => {
      this.renaming = c.id;
      this.render();
    });
    return h('div', { class: ['chat-item', c.id === this.active && 'active'], dataset: { id: c.id } }, open, ren, del);
  }

  // renameForm edits a chat's title in place: Enter saves, Escape or
  // leaving the field keeps the old one.
  renameForm(c, title) {
    const input = h('input', { class: 'chat-rename-input', type: 'text', maxlength: '200', 'aria-label': t('rename') });
    input.value = c.title || title;
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      const next = input.value.trim();
      this.renaming = null;
      if (save && next && next !== c.title) {
        input.disabled = true;
        if (await this.onRename(c.id, next)) c.title = next;
      }
      this.render();
    };
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.isComposing) {
        e.preventDefault();
        finish(true);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        finish(false);
      }
    });
    input.addEventListener('blur', () => finish(false));
    setTimeout(() => {
      input.focus();
      input.select();
    }, 0);
    return h('div', { class: 'chat-item renaming', dataset: { id: c.id } }, input);
  }
}
