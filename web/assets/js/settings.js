// The person's settings (GET/PUT /api/me): custom instructions added to
// every mode's prompt, the language answers are written in, a time zone
// and the model, picked from what the endpoint serves (GET /api/models).
// Shown as a modal dialog from the sidebar's foot.

import { h } from './dom.js';
import { t, addStrings } from './i18n.js';
import { errorFrom } from './api.js';

addStrings(
  {
    settings: 'Settings',
    settingsTitle: 'Your settings',
    customInstructions: 'Custom instructions',
    customInstructionsHint: 'Added to every answer’s instructions, in every mode.',
    answerLanguage: 'Language of answers',
    languageAuto: 'The question’s language',
    timeZone: 'Time zone',
    timeZoneHint: 'An IANA name such as Europe/Berlin; empty: your browser’s.',
    modelChoice: 'Model',
    modelDefault: 'Default ({model})',
    modelsUnavailable: 'The model list is not available: {msg}',
    save: 'Save',
    cancel: 'Cancel',
    settingsSaved: 'Settings saved',
    settingsFailed: 'Could not save: {msg}',
  },
  {
    settings: 'Настройки',
    settingsTitle: 'Ваши настройки',
    customInstructions: 'Собственные инструкции',
    customInstructionsHint: 'Добавляются к инструкциям каждого ответа во всех режимах.',
    answerLanguage: 'Язык ответов',
    languageAuto: 'Язык вопроса',
    timeZone: 'Часовой пояс',
    timeZoneHint: 'Имя IANA, например Europe/Moscow; пусто — пояс браузера.',
    modelChoice: 'Модель',
    modelDefault: 'По умолчанию ({model})',
    modelsUnavailable: 'Список моделей недоступен: {msg}',
    save: 'Сохранить',
    cancel: 'Отмена',
    settingsSaved: 'Настройки сохранены',
    settingsFailed: 'Не удалось сохранить: {msg}',
  },
);

// Languages offered for answers (the server knows these codes).
const LANGUAGES = [
  ['en', 'English'], ['ru', 'Русский'], ['de', 'Deutsch'], ['fr', 'Français'], ['es', 'Español'],
  ['it', 'Italiano'], ['pt', 'Português'], ['nl', 'Nederlands'], ['pl', 'Polski'], ['uk', 'Українська'],
  ['tr', 'Türkçe'], ['zh', '中文'], ['ja', '日本語'], ['ko', '한국어'], ['ar', 'العربية'],
  ['hi', 'हिन्दी'], ['cs', 'Čeština'], ['sv', 'Svenska'], ['fi', 'Suomi'], ['kk', 'Қазақша'],
];

function str(v) {
  return typeof v === 'string' ? v : '';
}

// settingsButton returns the sidebar item that opens the dialog.
export function settingsButton(toast) {
  const b = h('button', { class: 'icon-btn settings-open', id: 'settings-open', type: 'button' }, t('settings'));
  b.addEventListener('click', () => openSettings(toast));
  return b;
}

// openSettings loads the settings and the models and shows the dialog.
export async function openSettings(toast) {
  let me, models;
  try {
    const [r1, r2] = await Promise.all([
      fetch('/api/me', { headers: { Accept: 'application/json' } }),
      fetch('/api/models', { headers: { Accept: 'application/json' } }),
    ]);
    if (!r1.ok) throw await errorFrom(r1);
    me = await r1.json();
    models = r2.ok ? await r2.json() : { models: [], default: '' };
  } catch (e) {
    if (toast) toast(e.message);
    return;
  }
  const s = (me && typeof me.settings === 'object' && me.settings) || {};
  const instructions = h('textarea', { id: 'settings-instructions', rows: '6', maxlength: '4000' });
  instructions.value = str(s.custom_instructions);
  const language = h('select', { id: 'settings-language' },
    h('option', { value: '' }, t('languageAuto')),
    LANGUAGES.map(([code, name]) => h('option', { value: code }, name)));
  language.value = str(s.language);
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const tz = h('input', { id: 'settings-timezone', list: 'settings-timezones', autocomplete: 'off',
    placeholder: Intl.DateTimeFormat().resolvedOptions().timeZone || '' });
  tz.value = str(s.time_zone);
  const ids = Array.isArray(models.models) ? models.models.filter((m) => typeof m === 'string') : [];
  const chosen = str(s.model);
  if (chosen && !ids.includes(chosen)) ids.unshift(chosen);
  const model = h('select', { id: 'settings-model' },
    h('option', { value: '' }, t('modelDefault', { model: str(models.default) })),
    ids.map((id) => h('option', { value: id }, id)));
  model.value = chosen;
  const error = h('p', { class: 'settings-error', id: 'settings-error', role: 'alert', hidden: true });
  const note = typeof models.error === 'string' ? h('p', { class: 'settings-hint' }, t('modelsUnavailable', { msg: models.error })) : null;
  const save = h('button', { class: 'btn primary settings-save', id: 'settings-save', type: 'submit' }, t('save'));
  const cancel = h('button', { class: 'icon-btn', type: 'button' }, t('cancel'));
  const form = h('form', { class: 'settings', id: 'settings-form', method: 'dialog' },
    h('h2', {}, t('settingsTitle')),
    h('label', { for: 'settings-instructions' }, t('customInstructions')),
    instructions,
    h('p', { class: 'settings-hint' }, t('customInstructionsHint')),
    h('label', { for: 'settings-language' }, t('answerLanguage')),
    language,
    h('label', { for: 'settings-timezone' }, t('timeZone')),
    tz,
    h('datalist', { id: 'settings-timezones' }, zones.map((z) => h('option', { value: z }))),
    h('p', { class: 'settings-hint' }, t('timeZoneHint')),
    h('label', { for: 'settings-model' }, t('modelChoice')),
    model,
    note,
    error,
    h('div', { class: 'settings-actions' }, cancel, save));
  const dialog = h('dialog', { class: 'settings-dialog', id: 'settings-dialog' }, form);
  const close = () => { dialog.close(); dialog.remove(); };
  cancel.addEventListener('click', close);
  dialog.addEventListener('cancel', () => dialog.remove());
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    save.disabled = true;
    error.hidden = true;
    try {
      const res = await fetch('/api/me', {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({
          custom_instructions: instructions.value, language: language.value,
          time_zone: tz.value.trim(), model: model.value,
        }),
      });
      if (!res.ok) throw await errorFrom(res);
      close();
      if (toast) toast(t('settingsSaved'));
    } catch (e) {
      error.textContent = t('settingsFailed', { msg: e.message });
      error.hidden = false;
      save.disabled = false;
    }
  });
  document.body.append(dialog);
  dialog.showModal();
  instructions.focus();
}
