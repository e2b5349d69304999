// Memories in the sidebar: what the person asked Sova to remember (the
// memory group's add_memory), listed newest first, searched, added and
// deleted through /api/memories. The panel appears only when the server
// answers GET /api/memories with 200.

import { h, icon, spinner } from './dom.js';
import { t, addStrings } from './i18n.js';
import { errorFrom } from './api.js';

addStrings(
  {
    memories: 'Memories',
    addMemory: 'Add a memory',
    memoryPlaceholder: 'Something to remember…',
    searchMemories: 'Search memories',
    noMemories: 'Nothing remembered yet. Ask in the Memory mode, or add one here.',
    noMemoryMatch: 'No memory matches.',
    deleteMemory: 'Forget this memory (click twice)',
    memoriesFailed: 'Memories: {msg}',
    remember: 'Remember',
    mode_memory: 'Memory',
    mode_connectors: 'Connectors',
    modedesc_connectors: 'Searches the spaces kept in sync with a folder or a WebDAV share.',
  },
  {
    memories: 'Память',
    addMemory: 'Добавить воспоминание',
    memoryPlaceholder: 'Что запомнить…',
    searchMemories: 'Искать в памяти',
    noMemories: 'Пока ничего не запомнено. Попросите в режиме «Память» или добавьте здесь.',
    noMemoryMatch: 'Ничего не найдено.',
    deleteMemory: 'Забыть (нажмите дважды)',
    memoriesFailed: 'Память: {msg}',
    remember: 'Запомнить',
    mode_memory: 'Память',
    mode_connectors: 'Подключения',
    modedesc_memory: 'Запоминает, что вы попросите, и вспоминает это позже.',
    modedesc_connectors: 'Ищет в пространствах, синхронизированных с папкой или WebDAV.',
  },
);

async function call(method, path, body) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await errorFrom(res);
  return res.status === 204 ? null : res.json();
}

// memoriesOf keeps the well-formed memories of an answer.
function memoriesOf(body) {
  const list = body && Array.isArray(body.memories) ? body.memories : [];
  return list.filter((m) => m && typeof m.id === 'string' && typeof m.content === 'string');
}

export class MemoriesPanel {
  constructor(el, { toast }) {
    this.el = el;
    this.toast = toast;
    this.items = [];
    this.query = '';
    this.adding = false;
    this.loading = false;
    this.open = false;
    this.provider = '';
  }

  async init() {
    let res;
    try {
      res = await fetch('/api/memories?limit=200', { headers: { Accept: 'application/json' } });
    } catch {
      res = null;
    }
    if (!res || res.status !== 200) {
      this.el.hidden = true;
      return false;
    }
    const body = await res.json().catch(() => null);
    this.items = memoriesOf(body);
    this.provider = body && typeof body.provider === 'string' ? body.provider : '';
    this.el.hidden = false;
    this.render();
    return true;
  }

  async load() {
    this.loading = true;
    this.render();
    try {
      const q = this.query.trim();
      const body = await call('GET', q ? `/api/memories?q=${encodeURIComponent(q)}&limit=50` : '/api/memories?limit=200');
      this.items = memoriesOf(body);
    } catch (e) {
      this.toast(t('memoriesFailed', { msg: e.message }));
    }
    this.loading = false;
    this.render();
  }

  render() {
    const toggle = h('button', { class: 'memories-toggle', type: 'button', 'aria-expanded': String(this.open) },
      icon('sparkle'), h('span', { class: 'chat-group-title' }, t('memories')),
      this.items.length && !this.query ? h('span', { class: 'count' }, String(this.items.length)) : null);
    toggle.addEventListener('click', () => {
      this.open = !this.open;
      this.render();
    });
    const add = h('button', { class: 'icon-btn', type: 'button', title: t('addMemory'), 'aria-label': t('addMemory') }, icon('plus'));
    add.addEventListener('click', () => {
      this.adding = !this.adding;
      this.open = true;
      this.render();
    });
    const rows = [h('div', { class: 'spaces-head' }, toggle, add)];
    if (this.open) {
      if (this.adding) rows.push(this.addForm());
      rows.push(this.searchBox());
      if (this.loading) rows.push(h('div', { class: 'space-busy' }, spinner()));
      else if (!this.items.length) rows.push(h('p', { class: 'muted small' }, this.query ? t('noMemoryMatch') : t('noMemories')));
      else rows.push(h('ul', { class: 'memory-list' }, this.items.map((m) => this.row(m))));
    }
    this.el.replaceChildren(...rows);
  }

  addForm() {
    const input = h('textarea', { class: 'input memory-input', rows: 2, maxlength: 4000, placeholder: t('memoryPlaceholder'), 'aria-label': t('addMemory') });
    const form = h('form', { class: 'memory-add' }, input, h('button', { class: 'btn small primary', type: 'submit' }, t('remember')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const content = input.value.trim();
      if (!content) return;
      try {
        await call('POST', '/api/memories', { content });
        this.adding = false;
        this.query = '';
        await this.load();
      } catch (err) {
        this.toast(t('memoriesFailed', { msg: err.message }));
      }
    });
    setTimeout(() => input.focus(), 0);
    return form;
  }

  searchBox() {
    const input = h('input', { class: 'input memory-search', type: 'search', placeholder: t('searchMemories'), 'aria-label': t('searchMemories') });
    input.value = this.query;
    let timer = 0;
    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.query = input.value;
        this.load().then(() => {
          const again = this.el.querySelector('.memory-search');
          if (again) {
            again.focus();
            again.setSelectionRange(again.value.length, again.value.length);
          }
        });
      }, 250);
    });
    return input;
  }

  row(m) {
    const del = h('button', { class: 'icon-btn small', type: 'button', title: t('deleteMemory'), 'aria-label': t('deleteMemory') }, icon('trash'));
    del.addEventListener('click', async () => {
      if (!del.classList.contains('armed')) {
        del.classList.add('armed'); // second click deletes
        setTimeout(() => del.classList.remove('armed'), 3000);
        return;
      }
      try {
        await call('DELETE', `/api/memories/${encodeURIComponent(m.id)}`);
        this.items = this.items.filter((x) => x.id !== m.id);
        this.render();
      } catch (e) {
        this.toast(t('memoriesFailed', { msg: e.message }));
      }
    });
    const when = typeof m.createdAt === 'string' ? new Date(m.createdAt) : null;
    const date = when && !Number.isNaN(when.getTime()) && when.getFullYear() > 1970 ? when.toLocaleDateString() : '';
    return h('li', { class: 'memory' }, h('span', { class: 'memory-text' }, m.content),
      date ? h('span', { class: 'muted small memory-date' }, date) : null, del);
  }
}
