// Who is signed in. GET /api/me answers 401 when this Sova has accounts
// and the browser has no session: the page then shows the sign-in form
// instead of the app. A signed-in person gets a sign-out item, and what
// their daily limit leaves, in the sidebar's foot.

import { h } from './dom.js';
import { t, addStrings } from './i18n.js';
import { errorFrom } from './api.js';
import { settingsButton } from './settings.js';

addStrings(
  { signInOr: 'or', ssoFailed: 'Single sign-on did not succeed. Try again, or ask the administrator.', longLeft: '{left} of {limit} long runs left today' },
  { signInOr: 'или', ssoFailed: 'Вход через единый вход не удался. Попробуйте ещё раз или обратитесь к администратору.', longLeft: 'Сегодня осталось {left} из {limit} долгих запусков' },
);

// ssoButton adds the single sign-on button to the form when this Sova
// offers it (GET /api/auth/providers).
async function ssoButton(form, before) {
  let p;
  try {
    const res = await fetch('/api/auth/providers', { headers: { Accept: 'application/json' } });
    if (!res.ok) return;
    p = await res.json();
  } catch {
    return;
  }
  const o = p && p.oidc;
  if (!o || typeof o.name !== 'string' || o.login !== '/api/auth/oidc/login') return;
  const b = h('button', { class: 'signin-sso', id: 'signin-sso', type: 'button' }, o.name);
  b.addEventListener('click', () => location.assign('/api/auth/oidc/login'));
  form.insertBefore(h('div', { class: 'signin-sso-row' }, b, h('span', { class: 'signin-or' }, t('signInOr'))), before);
}

// currentUser returns the /api/me body, or null when sign-in is needed.
export async function currentUser() {
  const res = await fetch('/api/me', { headers: { Accept: 'application/json' } });
  if (res.status === 401) return null;
  if (!res.ok) throw await errorFrom(res);
  return res.json();
}

// showSignIn replaces the page with the sign-in form; a successful sign-in
// reloads the page.
export function showSignIn() {
  const name = h('input', { id: 'signin-name', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', { id: 'signin-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = h('p', { class: 'signin-error', id: 'signin-error', role: 'alert', hidden: true });
  const submit = h('button', { class: 'signin-submit', type: 'submit' }, t('signIn'));
  const form = h(
    'form',
    { class: 'signin', id: 'signin' },
    h('img', { class: 'hero-mark', src: '/assets/sova.svg', alt: '', width: '56', height: '56' }),
    h('h1', { class: 'signin-title' }, t('signInTitle')),
    h('label', { for: 'signin-name' }, t('userName')),
    name,
    h('label', { for: 'signin-password' }, t('password')),
    password,
    error,
    submit,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    error.hidden = true;
    try {
      const res = await fetch('/api/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ name: name.value, password: password.value }),
      });
      if (!res.ok) throw await errorFrom(res);
      location.reload();
    } catch (e) {
      error.textContent = t('signInFailed', { msg: e.message });
      error.hidden = false;
      password.value = '';
      submit.disabled = false;
    }
  });
  if (new URLSearchParams(location.search).has('sso_error')) {
    error.textContent = t('ssoFailed');
    error.hidden = false;
  }
  ssoButton(form, form.querySelector('label'));
  document.getElementById('app').hidden = true;
  document.body.append(form);
  document.body.classList.add('ready');
  name.focus();
}

// usageText is what the sidebar says of a limit, or '' where there is none.
function usageText(key, u) {
  if (!u || typeof u.limit !== 'number' || u.limit < 0) return '';
  const args = { left: String(u.left), limit: String(u.limit) };
  if (key === 'usageLeft') args.reset = new Date(u.resets).toLocaleString();
  return t(key, args);
}

// refreshUsage redraws what the sidebar says is left of the person's
// limits: after each question or voice turn the count has moved.
export async function refreshUsage() {
  const line = document.getElementById('account-usage');
  const long = document.getElementById('account-long-usage');
  if (!line && !long) return;
  try {
    const me = await currentUser();
    if (line) line.textContent = usageText('usageLeft', me?.usage?.messages) || line.textContent;
    if (long) long.textContent = usageText('longLeft', me?.usage?.extreme) || long.textContent;
  } catch {
    // The line keeps its last figure; the next answer tries again.
  }
}

// accountFoot adds the person's name, what is left of their limit and a
// sign-out item to the sidebar's foot.
export function accountFoot(foot, me, toast) {
  if (!me) return;
  if (me.kind === 'local') {
    foot.prepend(h('div', { class: 'account' }, settingsButton(toast)));
    return;
  }
  if (me.kind !== 'account') return;
  const items = [h('span', { class: 'account-name', id: 'account-name' }, me.name || '')];
  const used = usageText('usageLeft', me.usage?.messages);
  if (used) items.push(h('span', { class: 'account-usage', id: 'account-usage' }, used));
  const long = usageText('longLeft', me.usage?.extreme);
  if (long) items.push(h('span', { class: 'account-usage', id: 'account-long-usage' }, long));
  items.push(settingsButton(toast));
  const out = h('button', { class: 'icon-btn sign-out', id: 'sign-out', type: 'button' }, t('signOut'));
  out.addEventListener('click', async () => {
    await fetch('/api/session', { method: 'DELETE' });
    location.assign('/');
  });
  items.push(out);
  foot.prepend(h('div', { class: 'account' }, ...items));
}
