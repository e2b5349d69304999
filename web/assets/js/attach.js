// Files attached to a question. They go to a document space private to
// the chat (an ordinary space of the person, marked with the chat's id in
// its description), and the chat's questions search it along with what
// else they search. Uploads run one at a time: the server caps how many
// uploads one person runs at once, and a queue never hits the cap.

import { h, icon } from './dom.js';
import { addStrings, t } from './i18n.js';

addStrings({
  attach: 'Attach files',
  attachSpace: 'Chat attachments',
  attachRemove: 'Remove {name}',
  attachFailed: '{name}: {msg}',
}, {
  attach: 'Прикрепить файлы',
  attachSpace: 'Вложения чата',
  attachRemove: 'Убрать {name}',
  attachFailed: '{name}: {msg}',
});

// MARK prefixes the description of a chat's attachment space.
const MARK = 'sova:chat:';

// upload sends one file with progress reports (fetch has none for
// uploads). It resolves with the document, or rejects with the server's
// own message (a file over the size limit names the limit).
function upload(spaceId, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/spaces/${encodeURIComponent(spaceId)}/documents`);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: the status line says enough
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(new Error(body?.error?.message || `${xhr.status} ${xhr.statusText}`));
    });
    xhr.addEventListener('error', () => reject(new Error(t('networkError', { msg: 'upload' }))));
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

async function json(method, path, body) {
  const res = await fetch(path, {
    method, headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const out = await res.json().catch(() => null);
  if (!res.ok) throw new Error(out?.error?.message || `${res.status} ${res.statusText}`);
  return out;
}

export class Attachments {
  // bar gets the attach button; box (the composer box) the list of files.
  constructor(bar, box, { toast }) {
    this.toast = toast;
    this.chatId = null;
    this.spaceId = null;
    this.files = []; // {name, size, progress, state: queued|uploading|done|error, error}
    this.queue = Promise.resolve();
    this.input = h('input', { type: 'file', multiple: true, hidden: true, class: 'attach-input', 'aria-label': t('attach') });
    this.input.addEventListener('change', () => {
      this.add([...this.input.files]);
      this.input.value = '';
    });
    this.button = h('button', { class: 'icon-btn attach-btn', type: 'button', title: t('attach'), 'aria-label': t('attach'), onclick: () => this.input.click() }, icon('paperclip'));
    this.list = h('ul', { class: 'attach-list', hidden: true, 'aria-live': 'polite' });
    bar.prepend(this.button, this.input);
    box.prepend(this.list);
  }

  // open switches to a chat (null for a new one): its attachment space,
  // if it has one, is searched with its questions.
  async open(chatId) {
    this.chatId = chatId;
    this.spaceId = null;
    this.files = [];
    this.render();
    if (!chatId) return;
    try {
      const body = await json('GET', '/api/spaces');
      const list = Array.isArray(body) ? body : body?.spaces || body?.data || [];
      const sp = list.find((s) => s && s.description === MARK + chatId);
      if (this.chatId === chatId && sp) this.spaceId = sp.id;
    } catch {
      // spaces off or unreachable: the chat has no attachments
    }
  }

  // linked is told the chat id once a new chat has one: its space is
  // marked as the chat's.
  async linked(chatId) {
    if (this.chatId === chatId) return;
    this.chatId = chatId;
    if (!this.spaceId) return;
    try {
      await json('PATCH', `/api/spaces/${encodeURIComponent(this.spaceId)}`, { description: MARK + chatId });
    } catch (e) {
      this.toast(e.message);
    }
  }

  // ids lists the space to search with the next question, if any file
  // of the chat was added.
  ids() {
    return this.spaceId ? [this.spaceId] : [];
  }

  // busy reports files still uploading: a question waits for them.
  busy() {
    return this.files.some((f) => f.state === 'queued' || f.state === 'uploading');
  }

  // settled resolves when every queued upload has ended.
  settled() {
    return this.queue;
  }

  // sent clears the files that were added: the chat's space holds them.
  sent() {
    this.files = this.files.filter((f) => f.state !== 'done');
    this.render();
  }

  add(files) {
    for (const file of files) {
      const f = { name: file.name, size: file.size, progress: 0, state: 'queued', error: '' };
      this.files.push(f);
      this.queue = this.queue.then(() => this.send(f, file));
    }
    this.render();
  }

  async send(f, file) {
    f.state = 'uploading';
    this.render();
    let made = null; // the space made for this file, while it holds nothing
    try {
      if (!this.spaceId) {
        // Space names are unique per person: the time and a random tail
        // tell one chat's attachments from another's.
        const name = `${t('attachSpace')} ${new Date().toISOString().slice(0, 16).replace('T', ' ')} ${crypto.randomUUID().slice(0, 6)}`;
        const sp = await json('POST', '/api/spaces', { name, description: MARK + (this.chatId || '') });
        this.spaceId = made = sp.id;
      }
      await upload(this.spaceId, file, (p) => {
        f.progress = p;
        this.render();
      });
      f.state = 'done';
      f.progress = 1;
    } catch (e) {
      f.state = 'error';
      f.error = e.message;
      if (made && this.spaceId === made) {
        // The first file was refused: the space made for it would stay
        // in the person's list, empty. The next file makes a new one.
        this.spaceId = null;
        try {
          await json('DELETE', `/api/spaces/${encodeURIComponent(made)}`);
        } catch {
          // an empty space left behind is harmless; the file's error is what to show
        }
      }
    }
    this.render();
  }

  render() {
    this.list.hidden = this.files.length === 0;
    this.list.replaceChildren(...this.files.map((f) => h('li', { class: ['attach-item', f.state], dataset: { state: f.state } },
      icon(f.state === 'error' ? 'alert' : 'doc'),
      h('span', { class: 'attach-name', title: f.name }, f.name),
      f.state === 'uploading' || f.state === 'queued'
        ? h('progress', { class: 'attach-progress', max: '100', value: String(Math.round(f.progress * 100)), 'aria-label': f.name })
        : null,
      f.state === 'error' ? h('span', { class: 'attach-error', role: 'alert' }, f.error) : null,
      f.state === 'error'
        ? h('button', { class: 'icon-btn attach-remove', type: 'button', title: t('attachRemove', { name: f.name }), 'aria-label': t('attachRemove', { name: f.name }),
          onclick: () => {
            this.files = this.files.filter((x) => x !== f);
            this.render();
          } }, icon('close'))
        : null)));
  }
}
