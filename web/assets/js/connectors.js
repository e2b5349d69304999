// A space's connected source in the spaces panel: connect a WebDAV share
// (Nextcloud) or, for administrators, a folder of the server; see when it
// last synced and what changed; sync now; disconnect. The password is
// sent once and never comes back (the server says hasPassword).

import { h, icon, spinner } from './dom.js';
import { t, addStrings } from './i18n.js';
import { errorFrom } from './api.js';

addStrings(
  {
    connectSource: 'Connect a source',
    connectKindWebDAV: 'WebDAV share (Nextcloud)',
    connectKindFolder: 'Folder on the server',
    connectURL: 'https://cloud.example.com/remote.php/dav/files/USER/Documents',
    connectPath: '/srv/documents',
    connectUser: 'User name',
    connectPassword: 'Password or app password',
    connect: 'Connect',
    connecting: 'Checking the source…',
    syncNow: 'Sync now',
    syncing: 'Syncing…',
    disconnect: 'Disconnect',
    neverSynced: 'Not synced yet',
    syncedAt: 'Synced {when}: {added} added, {updated} updated, {removed} removed',
    connectorFailed: 'Source: {msg}',
  },
  {
    connectSource: 'Подключить источник',
    connectKindWebDAV: 'Папка WebDAV (Nextcloud)',
    connectKindFolder: 'Папка на сервере',
    connectURL: 'https://cloud.example.com/remote.php/dav/files/USER/Documents',
    connectPath: '/srv/documents',
    connectUser: 'Имя пользователя',
    connectPassword: 'Пароль или пароль приложения',
    connect: 'Подключить',
    connecting: 'Проверяем источник…',
    syncNow: 'Синхронизировать',
    syncing: 'Синхронизация…',
    disconnect: 'Отключить',
    neverSynced: 'Ещё не синхронизировано',
    syncedAt: 'Синхронизировано {when}: добавлено {added}, обновлено {updated}, удалено {removed}',
    connectorFailed: 'Источник: {msg}',
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

// listConnectors maps space id → connector; null when the server has none.
export async function listConnectors() {
  try {
    const body = await call('GET', '/api/connectors');
    const out = new Map();
    for (const c of body && Array.isArray(body.connectors) ? body.connectors : []) {
      if (c && typeof c.spaceId === 'string') out.set(c.spaceId, c);
    }
    return out;
  } catch {
    return null;
  }
}

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

// connectorBlock is the source part of an open space: the connector's
// state and buttons, or the form that connects one. onChange is called
// after anything changed the space.
export function connectorBlock(spaceID, connector, { onChange, toast }) {
  const base = `/api/spaces/${encodeURIComponent(spaceID)}/connector`;
  const box = h('div', { class: 'connector' });
  const busy = (text) => box.replaceChildren(h('div', { class: 'space-busy' }, spinner(), text));
  const fail = (e) => {
    toast(t('connectorFailed', { msg: e.message }));
    onChange();
  };
  if (connector && typeof connector.location === 'string') {
    const r = connector.lastResult || {};
    const when = typeof connector.lastSyncAt === 'string' ? new Date(connector.lastSyncAt) : null;
    const status = when && !Number.isNaN(when.getTime())
      ? t('syncedAt', { when: when.toLocaleString(), added: num(r.added), updated: num(r.updated), removed: num(r.removed) })
      : t('neverSynced');
    const sync = h('button', { class: 'btn small', type: 'button' }, icon('download'), t('syncNow'));
    sync.addEventListener('click', async () => {
      busy(t('syncing'));
      try {
        const c = await call('POST', `${base}/sync`);
        if (c && c.lastError) toast(t('connectorFailed', { msg: c.lastError }));
        onChange();
      } catch (e) {
        fail(e);
      }
    });
    const off = h('button', { class: 'btn small', type: 'button' }, t('disconnect'));
    off.addEventListener('click', async () => {
      try {
        await call('DELETE', base);
        onChange();
      } catch (e) {
        fail(e);
      }
    });
    box.append(...[
      h('div', { class: 'connector-source', title: connector.location }, icon(connector.kind === 'folder' ? 'folder' : 'globe'), h('span', null, connector.location)),
      h('p', { class: 'muted small' }, status),
      typeof connector.lastError === 'string' && connector.lastError ? h('p', { class: 'connector-error small' }, connector.lastError) : null,
      h('div', { class: 'connector-actions' }, sync, off),
    ].filter(Boolean));
    return box;
  }
  const kind = h('select', { class: 'input', 'aria-label': t('connectSource') },
    h('option', { value: 'webdav' }, t('connectKindWebDAV')), h('option', { value: 'folder' }, t('connectKindFolder')));
  const loc = h('input', { class: 'input', type: 'text', placeholder: t('connectURL'), 'aria-label': t('connectURL') });
  const user = h('input', { class: 'input', type: 'text', placeholder: t('connectUser'), 'aria-label': t('connectUser'), autocomplete: 'off' });
  const pass = h('input', { class: 'input', type: 'password', placeholder: t('connectPassword'), 'aria-label': t('connectPassword'), autocomplete: 'new-password' });
  kind.addEventListener('change', () => {
    const dav = kind.value === 'webdav';
    loc.placeholder = dav ? t('connectURL') : t('connectPath');
    user.hidden = pass.hidden = !dav;
  });
  const form = h('form', { class: 'connector-form' }, h('span', { class: 'small' }, t('connectSource')), kind, loc, user, pass,
    h('button', { class: 'btn small primary', type: 'submit' }, t('connect')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { kind: kind.value, location: loc.value.trim() };
    if (kind.value === 'webdav') Object.assign(body, { username: user.value.trim(), password: pass.value });
    if (!body.location) return;
    busy(t('connecting'));
    try {
      await call('POST', base, body);
      busy(t('syncing'));
      await call('POST', `${base}/sync`);
      onChange();
    } catch (err) {
      fail(err);
    }
  });
  box.append(form);
  return box;
}
