// The composer's model picker: the model that answers, chosen from what
// the endpoint serves (GET /api/models) and kept as the person's setting
// (PUT /api/me {model}), as the settings dialog does. Shown only to a
// person whose settings are kept, when the endpoint lists more than one.

import { h } from './dom.js';
import { t } from './i18n.js';

export async function modelPicker(container, me, toast) {
  if (!container || !me || !me.settings) return;
  let body;
  try {
    const res = await fetch('/api/models', { headers: { Accept: 'application/json' } });
    if (!res.ok) return;
    body = await res.json();
  } catch {
    return; // no list: the picker stays away, the settings dialog says why
  }
  const ids = (Array.isArray(body?.models) ? body.models : []).filter((m) => typeof m === 'string' && m);
  if (ids.length < 2) return;
  const def = typeof body.default === 'string' ? body.default : '';
  const select = h('select', { class: 'model-select', id: 'model-select', title: t('modelChoice'), 'aria-label': t('modelChoice') },
    h('option', { value: '' }, def || t('modelChoice')),
    ids.filter((id) => id !== def).map((id) => h('option', { value: id }, id)));
  let saved = typeof me.settings.model === 'string' && ids.includes(me.settings.model) && me.settings.model !== def ? me.settings.model : '';
  select.value = saved;
  select.addEventListener('change', async () => {
    try {
      const res = await fetch('/api/me', {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ model: select.value }),
      });
      if (!res.ok) throw new Error(String(res.status));
      saved = select.value;
    } catch (e) {
      select.value = saved;
      toast(t('settingsFailed', { msg: e.message }));
    }
  });
  container.append(select);
}
