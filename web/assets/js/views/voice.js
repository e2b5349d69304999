// Voice (seed 004): a microphone button in the composer records speech
// (MediaRecorder) and puts its transcription in the question box; a
// speaker button turns on reading answers aloud. Both appear only when
// GET /api/audio says the server has the models.
import { h, icon } from '../dom.js';
import { addStrings, t } from '../i18n.js';

addStrings({
  voiceRecord: 'Speak your question', voiceStop: 'Stop recording', voiceSpeakOn: 'Read answers aloud', voiceSpeakOff: 'Stop reading answers aloud',
  voiceFailed: 'Speech could not be recognised',
}, {
  voiceRecord: 'Сказать вопрос голосом', voiceStop: 'Остановить запись', voiceSpeakOn: 'Читать ответы вслух', voiceSpeakOff: 'Не читать ответы вслух',
  voiceFailed: 'Не удалось распознать речь',
});

const SPEAK_KEY = 'sova.speak';

async function setup() {
  const composer = document.getElementById('composer');
  const input = document.getElementById('input');
  const send = document.getElementById('send');
  if (!composer || !input || !send) return;
  let status;
  try {
    const r = await fetch('/api/audio', { credentials: 'same-origin' });
    if (!r.ok) return;
    status = await r.json();
  } catch {
    return;
  }
  if (status && status.transcription === true && window.MediaRecorder && navigator.mediaDevices) {
    send.before(micButton(input));
  }
  if (status && status.speech === true) {
    send.before(speakerButton(composer));
  }
}

function micButton(input) {
  // Inline SVG, not emoji: a system without a colour emoji font draws
  // those as empty boxes.
  const btn = h('button', { class: 'icon-btn voice-mic', type: 'button', title: t('voiceRecord'), 'aria-label': t('voiceRecord') }, icon('mic'));
  let rec = null;
  let chunks = [];
  btn.addEventListener('click', async () => {
    if (rec) {
      rec.stop();
      return;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch {
      return;
    }
    chunks = [];
    rec = new MediaRecorder(stream);
    rec.addEventListener('dataavailable', (e) => { if (e.data && e.data.size) chunks.push(e.data); });
    rec.addEventListener('stop', async () => {
      stream.getTracks().forEach((tr) => tr.stop());
      rec = null;
      btn.classList.remove('recording');
      btn.replaceChildren(icon('mic'));
      btn.title = t('voiceRecord');
      const blob = new Blob(chunks, { type: chunks[0]?.type || 'audio/webm' });
      const form = new FormData();
      form.append('file', blob, 'speech.webm');
      try {
        const r = await fetch('/api/audio/transcriptions', { method: 'POST', body: form, credentials: 'same-origin' });
        const d = await r.json();
        if (r.ok && typeof d.text === 'string') {
          input.value = (input.value ? input.value + ' ' : '') + d.text;
          input.dispatchEvent(new Event('input'));
          input.focus();
        } else btn.title = t('voiceFailed');
      } catch {
        btn.title = t('voiceFailed');
      }
    });
    rec.start();
    btn.classList.add('recording');
    btn.replaceChildren(icon('stop'));
    btn.title = t('voiceStop');
  });
  return btn;
}

// speakerButton reads the newest answer aloud when a run ends (the
// composer stops being busy), while it is turned on.
function speakerButton(composer) {
  let on = localStorage.getItem(SPEAK_KEY) === '1';
  const btn = h('button', { class: 'icon-btn voice-speak', type: 'button' });
  const show = () => {
    btn.classList.toggle('on', on);
    btn.replaceChildren(icon(on ? 'speaker' : 'speakerOff'));
    btn.title = on ? t('voiceSpeakOff') : t('voiceSpeakOn');
    btn.setAttribute('aria-label', btn.title);
    btn.setAttribute('aria-pressed', String(on));
  };
  show();
  btn.addEventListener('click', () => {
    on = !on;
    localStorage.setItem(SPEAK_KEY, on ? '1' : '0');
    show();
  });
  let busy = composer.classList.contains('busy');
  let audio = null;
  new MutationObserver(async () => {
    const now = composer.classList.contains('busy');
    if (busy && !now && on) {
      const answers = document.querySelectorAll('.answer');
      const text = answers.length ? answers[answers.length - 1].textContent.trim().slice(0, 4096) : '';
      if (text) {
        try {
          const r = await fetch('/api/audio/speech', {
            method: 'POST', credentials: 'same-origin',
            headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ text }),
          });
          if (r.ok) {
            if (audio) audio.pause();
            audio = new Audio(URL.createObjectURL(await r.blob()));
            audio.play().catch(() => {});
          }
        } catch { /* speech is optional */ }
      }
    }
    busy = now;
  }).observe(composer, { attributes: true, attributeFilter: ['class'] });
  return btn;
}

setup();
