// Document spaces in the sidebar. The panel appears only when the server
// answers GET /api/spaces with 200, so a server without spaces shows
// nothing. It lists spaces, creates and deletes them, uploads documents
// (multipart, one request per file) and deletes them, and remembers which
// spaces answers should search.

import { h, icon, spinner } from './dom.js';
import { t, plural } from './i18n.js';
import { api } from './api.js';
import { connectorBlock, listConnectors } from './connectors.js';

const SELECTED_KEY = 'sova.spaces';

export class SpacesPanel {
  constructor(el, { toast }) {
    this.el = el;
    this.toast = toast;
    this.spaces = [];
    this.open = new Set();
    this.docs = new Map();
    this.busy = new Map(); // space id → status text
    this.creating = false;
    this.selected = new Set(load());
    this.connectors = null; // space id → connected source; null: none on this server
  }

  // init probes the server; the panel stays hidden without spaces.
  async init() {
    let spaces;
    try {
      spaces = await api.probeSpaces();
    } catch {
      spaces = null;
    }
    if (!spaces) {
      this.el.hidden = true;
      return false;
    }
    this.spaces = spaces.filter((s) => s && s.id != null);
    this.pruneSelection();
    this.connectors = await listConnectors();
    this.el.hidden = false;
    this.render();
    return true;
  }

  // selectedIds lists the spaces to search, for POST /api/search.
  selectedIds() {
    return this.el.hidden ? [] : [...this.selected];
  }

  async refresh() {
    try {
      this.spaces = (await api.spaces()).filter((s) => s && s.id != null);
      this.pruneSelection();
      this.connectors = await listConnectors();
    } catch (e) {
      this.toast(t('spacesFailed', { msg: e.message }));
    }
    this.render();
  }

  pruneSelection() {
    const ids = new Set(this.spaces.map((s) => String(s.id)));
    for (const id of this.selected) if (!ids.has(id)) this.selected.delete(id);
    save(this.selected);
  }

  async loadDocs(id) {
    try {
      this.docs.set(id, await api.documents(id));
    } catch (e) {
      this.docs.set(id, []);
      this.toast(t('spacesFailed', { msg: e.message }));
    }
    this.render();
  }

  render() {
    const add = h('button', { class: 'icon-btn', type: 'button', title: t('newSpace'), 'aria-label': t('newSpace') }, icon('plus'));
    add.addEventListener('click', () => {
      this.creating = !this.creating;
      this.render();
    });
    const rows = [h('div', { class: 'spaces-head' }, h('span', { class: 'chat-group-title' }, t('spaces')), add)];
    if (this.creating) rows.push(this.createForm());
    for (const s of this.spaces) rows.push(this.spaceRow(s));
    this.el.replaceChildren(...rows);
  }

  createForm() {
    const input = h('input', { class: 'input', type: 'text', placeholder: t('spaceName'), 'aria-label': t('spaceName'), maxlength: 200 });
    const form = h('form', { class: 'space-create' }, input, h('button', { class: 'btn small primary', type: 'submit' }, t('create')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      try {
        await api.createSpace(name);
        this.creating = false;
        await this.refresh();
      } catch (err) {
        this.toast(t('spacesFailed', { msg: err.message }));
      }
    });
    setTimeout(() => input.focus(), 0);
    return form;
  }

  spaceRow(s) {
    const id = String(s.id);
    const name = s.name || s.title || id;
    const count = s.documentCount ?? s.documentsCount ?? s.document_count ?? (Array.isArray(s.documents) ? s.documents.length : null);
    const check = h('input', { type: 'checkbox', title: t('useInAnswers'), 'aria-label': t('useInAnswers') });
    check.checked = this.selected.has(id);
    check.addEventListener('change', () => {
      if (check.checked) this.selected.add(id);
      else this.selected.delete(id);
      save(this.selected);
    });
    const linked = this.connectors && this.connectors.has(id);
    const toggle = h('button', { class: 'space-name', type: 'button', 'aria-expanded': String(this.open.has(id)) }, icon(linked ? 'globe' : 'folder'), h('span', null, name),
      count != null ? h('span', { class: 'count' }, String(count)) : null);
    toggle.addEventListener('click', () => {
      if (this.open.has(id)) this.open.delete(id);
      else {
        this.open.add(id);
        this.loadDocs(id);
      }
      this.render();
    });
    const file = h('input', { type: 'file', multiple: true, hidden: true });
    file.addEventListener('change', () => this.upload(id, [...file.files]));
    const up = h('button', { class: 'icon-btn', type: 'button', title: t('upload'), 'aria-label': t('upload') }, icon('upload'));
    up.addEventListener('click', () => file.click());
    const del = h('button', { class: 'icon-btn', type: 'button', title: t('deleteSpace'), 'aria-label': t('deleteSpace') }, icon('trash'));
    del.addEventListener('click', async () => {
      if (!del.classList.contains('armed')) {
        del.classList.add('armed'); // second click deletes
        setTimeout(() => del.classList.remove('armed'), 3000);
        return;
      }
      try {
        await api.deleteSpace(id);
        this.selected.delete(id);
        save(this.selected);
        await this.refresh();
      } catch (e) {
        this.toast(t('spacesFailed', { msg: e.message }));
      }
    });
    const row = h('div', { class: 'space' }, h('div', { class: 'space-row' }, check, toggle, up, del, file));
    if (this.busy.has(id)) row.append(h('div', { class: 'space-busy' }, spinner(), this.busy.get(id)));
    if (this.open.has(id) && this.connectors) {
      row.append(connectorBlock(id, this.connectors.get(id), {
        toast: this.toast,
        onChange: async () => {
          await this.refresh();
          if (this.open.has(id)) await this.loadDocs(id);
        },
      }));
    }
    if (this.open.has(id)) {
      const docs = this.docs.get(id);
      if (!docs) row.append(h('div', { class: 'space-busy' }, spinner()));
      else if (!docs.length) row.append(h('p', { class: 'muted small' }, t('noDocuments')));
      else row.append(h('ul', { class: 'docs' }, docs.map((d) => this.docRow(id, d))));
    }
    return row;
  }

  docRow(spaceID, d) {
    const name = d.name || d.filename || d.title || String(d.id);
    const size = d.size ?? d.bytes;
    const del = h('button', { class: 'icon-btn small', type: 'button', title: t('deleteDocument'), 'aria-label': t('deleteDocument') }, icon('trash'));
    del.addEventListener('click', async () => {
      if (!del.classList.contains('armed')) {
        // A second click deletes, as for a space: a stray click keeps it.
        del.classList.add('armed');
        del.title = t('confirmDeleteDocument');
        setTimeout(() => {
          del.classList.remove('armed');
          del.title = t('deleteDocument');
        }, 3000);
        return;
      }
      try {
        await api.deleteDocument(spaceID, String(d.id));
        await this.loadDocs(spaceID);
        await this.refresh();
      } catch (e) {
        this.toast(t('spacesFailed', { msg: e.message }));
      }
    });
    return h('li', { class: 'doc' }, icon('doc'), h('span', { class: 'doc-name', title: name }, name),
      typeof size === 'number' ? h('span', { class: 'muted small', title: d.chunkCount ? plural('chunks', d.chunkCount) : null }, formatSize(size)) : null, del);
  }

  async upload(id, files) {
    let added = 0;
    for (const f of files) {
      this.busy.set(id, t('uploading', { name: f.name }));
      this.render();
      try {
        await api.upload(id, f);
        added++;
      } catch (e) {
        this.toast(t('uploadFailed', { name: f.name, msg: e.message }));
      }
    }
    this.busy.delete(id);
    if (added) this.toast(added === 1 ? t('uploaded', { name: files[0].name }) : plural('documents', added));
    if (this.open.has(id)) await this.loadDocs(id);
    await this.refresh();
  }
}

function formatSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function load() {
  try {
    const v = JSON.parse(localStorage.getItem(SELECTED_KEY) || '[]');
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

function save(set) {
  try {
    localStorage.setItem(SELECTED_KEY, JSON.stringify([...set]));
  } catch {
    // storage disabled: the selection lasts for this page only
  }
}
