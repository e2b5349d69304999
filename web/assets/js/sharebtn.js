// The topbar's share button (share links, SOVA_SHARE_LINKS): it shows for
// a chat only when the server keeps links (GET /api/chats/{id}/shares
// answers), makes a read-only link to copy, and revokes links.

import { h, icon } from './dom.js';
import { addStrings, t } from './i18n.js';

addStrings({
  share: 'Share',
  shareCreate: 'Create a read-only link',
  shareCopy: 'Copy link',
  shareCopied: 'Link copied',
  shareRevoke: 'Revoke',
  shareHint: 'Anyone with a link can read this chat, without signing in, until you revoke it.',
  shareLinks: '{n} active link(s)',
  shareLinkLabel: 'Shared link',
}, {
  share: 'Поделиться',
  shareCreate: 'Создать ссылку только для чтения',
  shareCopy: 'Скопировать ссылку',
  shareCopied: 'Ссылка скопирована',
  shareRevoke: 'Отозвать',
  shareHint: 'Любой, у кого есть ссылка, может читать этот чат без входа, пока вы её не отзовёте.',
  shareLinks: 'Активных ссылок: {n}',
  shareLinkLabel: 'Ссылка',
});

async function call(method, path) {
  const res = await fetch(path, { method, headers: { Accept: 'application/json' } });
  const body = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) throw Object.assign(new Error(body?.error?.message || `${res.status} ${res.statusText}`), { status: res.status });
  return body;
}

export class ShareButton {
  constructor(before, { toast }) {
    this.toast = toast;
    this.chatId = null;
    this.links = [];
    this.made = ''; // the URL of the link made last: shown once
    this.button = h('button', { class: 'icon-btn share-btn', id: 'share-chat', type: 'button', hidden: true, title: t('share'), 'aria-label': t('share'), 'aria-expanded': 'false', onclick: () => this.toggle() }, icon('link'));
    this.panel = h('div', { class: 'share-panel', id: 'share-panel', role: 'dialog', 'aria-label': t('share'), hidden: true });
    before.before(this.button);
    before.parentElement.after(this.panel);
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !this.panel.hidden) this.close();
    });
  }

  // open shows the button for a chat whose links the server keeps.
  async open(chatId) {
    this.chatId = chatId;
    this.made = '';
    this.close();
    this.button.hidden = true;
    if (!chatId) return;
    try {
      const body = await call('GET', `/api/chats/${encodeURIComponent(chatId)}/shares`);
      if (this.chatId !== chatId) return;
      this.links = Array.isArray(body?.shares) ? body.shares : [];
      this.button.hidden = false;
    } catch {
      // share links off (404), or a chat not stored yet
    }
  }

  toggle() {
    if (this.panel.hidden) {
      this.panel.hidden = false;
      this.button.setAttribute('aria-expanded', 'true');
      this.render();
    } else this.close();
  }

  close() {
    this.panel.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
  }

  async create() {
    try {
      const l = await call('POST', `/api/chats/${encodeURIComponent(this.chatId)}/shares`);
      this.made = new URL(l.url, location.origin).href;
      this.links.push(l);
      this.render();
    } catch (e) {
      this.toast(e.message);
    }
  }

  async revoke(id) {
    try {
      await call('DELETE', `/api/chats/${encodeURIComponent(this.chatId)}/shares/${encodeURIComponent(id)}`);
      this.links = this.links.filter((l) => l.id !== id);
      if (this.links.length === 0) this.made = '';
      this.render();
    } catch (e) {
      this.toast(e.message);
    }
  }

  render() {
    const made = this.made
      ? h('div', { class: 'share-made' },
        h('input', { class: 'share-url', type: 'text', readonly: true, value: this.made, 'aria-label': t('shareLinkLabel'), onfocus: (e) => e.target.select() }),
        h('button', { class: 'btn share-copy', type: 'button', onclick: async () => {
          try {
            await navigator.clipboard.writeText(this.made);
            this.toast(t('shareCopied'));
          } catch (e) {
            this.toast(e.message);
          }
        } }, icon('copy'), h('span', null, t('shareCopy'))))
      : null;
    this.panel.replaceChildren(
      h('p', { class: 'share-hint' }, t('shareHint')),
      h('button', { class: 'btn share-create', type: 'button', onclick: () => this.create() }, icon('plus'), h('span', null, t('shareCreate'))),
      made,
      this.links.length ? h('ul', { class: 'share-links', 'aria-label': t('shareLinks', { n: this.links.length }) },
        this.links.map((l) => h('li', { class: 'share-link' },
          h('span', null, new Date(l.createdAt).toLocaleString()),
          h('button', { class: 'btn share-revoke', type: 'button', onclick: () => this.revoke(l.id) }, t('shareRevoke'))))) : null);
  }
}
