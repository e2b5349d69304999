// The assistant's voice mode (issue 27): a conversation over Sova's
// /v1/realtime WebSocket, authenticated by the page's session cookie (a
// browser WebSocket cannot set headers; the server checks the Origin).
// The microphone goes up as PCM16 at 24 kHz through an audio worklet
// (../voicecapture.js); the server detects the end of each turn. Both
// sides' transcripts, the agents' steps and the held actions (with the
// same card as the text assistant, whose buttons send sova.decide) show
// live; the answer's audio plays as it comes, and stops when the person
// speaks over it. The button appears only in the assistant mode, and only
// when GET /api/audio says the server has /v1/realtime.
import { h, icon } from '../dom.js';
import { addStrings, t } from '../i18n.js';
import { partView } from '../views.js';

addStrings({
  vmStart: 'Talk with the assistant', vmStop: 'End the conversation', vmTitle: 'Voice conversation',
  vmConnecting: 'Connecting…', vmListening: 'Listening', vmHearing: 'Hearing you', vmThinking: 'Thinking', vmSpeaking: 'Speaking', vmEnded: 'Ended',
  vmYou: 'You', vmAssistant: 'Assistant',
  vmNoSupport: 'This browser cannot record audio for a voice conversation.',
  vmNoMic: 'Microphone access was refused. Allow the microphone for this site and try again.',
  vmMicFailed: 'The microphone could not be opened: {msg}',
  vmClosed: 'The voice conversation ended: {msg}', vmConnectFailed: 'The voice conversation could not be opened. The server may have no voice models configured.',
  vmNotHeard: 'Your speech could not be transcribed: {msg}',
  vmTool: 'Uses {name}',
}, {
  vmStart: 'Поговорить с ассистентом', vmStop: 'Завершить разговор', vmTitle: 'Голосовой разговор',
  vmConnecting: 'Подключение…', vmListening: 'Слушаю', vmHearing: 'Слышу вас', vmThinking: 'Думаю', vmSpeaking: 'Говорю', vmEnded: 'Завершён',
  vmYou: 'Вы', vmAssistant: 'Ассистент',
  vmNoSupport: 'Этот браузер не может записывать звук для голосового разговора.',
  vmNoMic: 'Доступ к микрофону запрещён. Разрешите микрофон для этого сайта и попробуйте снова.',
  vmMicFailed: 'Не удалось открыть микрофон: {msg}',
  vmClosed: 'Голосовой разговор прервался: {msg}', vmConnectFailed: 'Не удалось начать голосовой разговор. Возможно, на сервере не настроены голосовые модели.',
  vmNotHeard: 'Не удалось распознать речь: {msg}',
  vmTool: 'Использует {name}',
});

const RATE = 24000; // the Realtime API's PCM16 rate, in and out

async function setup() {
  const composer = document.getElementById('composer');
  const send = document.getElementById('send');
  const modeBtn = document.getElementById('mode-btn');
  if (!composer || !send || !modeBtn) return;
  let status;
  try {
    const r = await fetch('/api/audio', { credentials: 'same-origin' });
    if (!r.ok) return;
    status = await r.json();
  } catch {
    return;
  }
  if (!status || status.realtime !== true) return;
  const btn = h('button', { class: 'icon-btn voice-mode-btn', type: 'button', title: t('vmStart'), 'aria-label': t('vmStart') }, icon('wave'));
  send.before(btn);
  const show = () => { btn.hidden = modeBtn.dataset.mode !== 'assistant'; };
  show();
  new MutationObserver(show).observe(modeBtn, { attributes: true, attributeFilter: ['data-mode'] });
  let current = null;
  btn.addEventListener('click', () => {
    if (current && !current.ended) {
      current.stop();
      return;
    }
    current = new VoiceSession(composer, btn);
    current.start();
  });
}

// VoiceSession is one conversation: its panel above the composer, the
// socket, the microphone and the playback.
class VoiceSession {
  constructor(composer, btn) {
    this.btn = btn;
    this.ended = false;
    this.lines = new Map(); // item id → the transcript line's text element
    this.playing = new Set();
    this.playHead = 0;
    this.audioBytes = 0;
    this.state = h('span', { class: 'vm-state muted' }, t('vmConnecting'));
    this.stopBtn = h('button', { class: 'btn vm-stop', type: 'button' }, icon('stop'), h('span', null, t('vmStop')));
    this.stopBtn.addEventListener('click', () => this.stop());
    this.error = h('p', { class: 'vm-error', role: 'alert', hidden: true });
    this.transcript = h('div', { class: 'vm-transcript', 'aria-live': 'polite' });
    this.steps = h('ul', { class: 'vm-steps' });
    this.confirm = h('div', { class: 'vm-confirm' });
    this.panel = h('section', { class: 'card voice-mode', 'aria-label': t('vmTitle'), dataset: { audioBytes: '0', state: 'connecting' } },
      h('div', { class: 'card-head' }, icon('wave'), h('span', null, t('vmTitle')), this.state, this.stopBtn),
      this.error, this.transcript, this.steps, this.confirm);
    document.querySelector('.voice-mode')?.remove();
    composer.before(this.panel);
    btn.classList.add('on');
    btn.title = t('vmStop');
    btn.setAttribute('aria-label', t('vmStop'));
  }

  setState(key) {
    this.state.textContent = t(key);
    this.panel.dataset.state = key.slice(2).toLowerCase();
  }

  fail(msg) {
    this.error.textContent = msg;
    this.error.hidden = false;
  }

  async start() {
    if (!navigator.mediaDevices?.getUserMedia || !window.AudioWorkletNode || !window.WebSocket) {
      this.fail(t('vmNoSupport'));
      this.stop();
      return;
    }
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    } catch (e) {
      this.fail(e && (e.name === 'NotAllowedError' || e.name === 'SecurityError') ? t('vmNoMic') : t('vmMicFailed', { msg: e?.message || String(e) }));
      this.stop();
      return;
    }
    if (this.ended) return this.release();
    try {
      this.ctx = new AudioContext();
      await this.ctx.audioWorklet.addModule('/assets/js/voicecapture.js');
    } catch (e) {
      this.fail(t('vmMicFailed', { msg: e?.message || String(e) }));
      this.stop();
      return;
    }
    if (this.ended) return this.release();
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${location.host}/v1/realtime?model=assistant`);
    this.ws = ws;
    let opened = false;
    ws.addEventListener('open', () => {
      opened = true;
      this.setState('vmListening');
      this.capture();
    });
    ws.addEventListener('message', (e) => {
      let ev;
      try {
        ev = JSON.parse(e.data);
      } catch {
        return;
      }
      if (ev && typeof ev.type === 'string') this.onEvent(ev);
    });
    ws.addEventListener('close', (e) => {
      if (this.ended) return;
      this.fail(opened ? t('vmClosed', { msg: e.reason || String(e.code) }) : t('vmConnectFailed'));
      this.stop();
    });
  }

  // capture sends the microphone's PCM16 as input_audio_buffer.append.
  capture() {
    const src = this.ctx.createMediaStreamSource(this.stream);
    const node = new AudioWorkletNode(this.ctx, 'sova-pcm-capture', { processorOptions: { rate: RATE } });
    node.port.onmessage = (e) => {
      if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: toBase64(e.data) }));
    };
    // A muted path to the output keeps the worklet pulled by the graph.
    const mute = this.ctx.createGain();
    mute.gain.value = 0;
    src.connect(node).connect(mute).connect(this.ctx.destination);
    this.nodes = [src, node, mute];
  }

  onEvent(ev) {
    switch (ev.type) {
      case 'session.created':
        if (ev.session?.sova?.chat_id) this.panel.dataset.chat = String(ev.session.sova.chat_id);
        break;
      case 'input_audio_buffer.speech_started':
        // The person speaks over the answer: it stops at once.
        this.stopPlayback();
        this.setState('vmHearing');
        break;
      case 'input_audio_buffer.speech_stopped':
      case 'input_audio_buffer.committed':
        this.setState('vmThinking');
        break;
      case 'conversation.item.input_audio_transcription.completed':
        if (typeof ev.transcript === 'string' && ev.transcript.trim()) this.line(ev.item_id, 'user').textContent = ev.transcript;
        break;
      case 'conversation.item.input_audio_transcription.failed':
        this.fail(t('vmNotHeard', { msg: ev.error?.message || '' }));
        this.setState('vmListening');
        break;
      case 'response.output_audio_transcript.delta':
      case 'response.audio_transcript.delta':
      case 'response.output_text.delta':
      case 'response.text.delta':
        if (typeof ev.delta === 'string') this.line(ev.item_id, 'assistant').append(ev.delta);
        break;
      case 'response.output_audio.delta':
      case 'response.audio.delta':
        if (typeof ev.delta === 'string') this.play(ev.delta);
        break;
      case 'response.done':
        if (this.panel.dataset.state !== 'speaking') this.setState('vmListening');
        break;
      case 'sova.step':
        this.step(ev.step);
        break;
      case 'sova.handoff':
        if (typeof ev.agent === 'string') this.steps.append(h('li', { class: 'vm-step' }, icon('chevronRight'), t(`agent_${ev.agent}`)));
        break;
      case 'error':
        this.fail(ev.error?.message || 'error');
        break;
    }
  }

  line(itemID, role) {
    const key = `${role}:${itemID || ''}`;
    let text = this.lines.get(key);
    if (!text) {
      text = h('span', { class: 'vm-text' });
      this.transcript.append(h('p', { class: ['vm-line', `vm-${role}`] },
        h('strong', null, t(role === 'user' ? 'vmYou' : 'vmAssistant') + ': '), text));
      this.lines.set(key, text);
      this.transcript.scrollTop = this.transcript.scrollHeight;
    }
    return text;
  }

  // step shows one of the agents' events: a held action as the text
  // assistant's card, hand-offs and plans with their views, tool calls as
  // a line.
  step(s) {
    if (!s || typeof s !== 'object') return;
    if (s.type === 'data' && s.data && typeof s.data.name === 'string') {
      const view = partView(s.data.name)?.view;
      if (!view) return;
      if (s.data.name === 'assistant_confirmation') {
        const decide = (_label, decision) => this.send({ type: 'sova.decide', ...decision });
        let el = null;
        try {
          el = view(s.data.value, s.data.id || '', { decide, frozen: false });
        } catch { /* a view that cannot draw its data shows nothing */ }
        this.confirm.replaceChildren(...(el ? [el] : []));
        return;
      }
      // Who speaks is shown when it changes, not on every answer.
      if (s.data.name === 'assistant_agent') {
        if (s.data.value?.agent === this.agent) return;
        this.agent = s.data.value?.agent;
      }
      let el = null;
      try {
        el = view(s.data.value, s.data.id || '', {});
      } catch { /* as above */ }
      if (el) this.steps.append(h('li', { class: 'vm-step' }, el));
      return;
    }
    if (s.type === 'tool-call' && s.toolCall) {
      // A title is already a phrase ("Handing off to …"); a bare tool name
      // is not, and gets "Uses …".
      const text = s.toolCall.title ? String(s.toolCall.title) : t('vmTool', { name: String(s.toolCall.name || '') });
      this.steps.append(h('li', { class: 'vm-step muted' }, text));
    } else if (s.type === 'tool-result' && s.toolResult?.error) {
      this.steps.append(h('li', { class: 'vm-step vm-step-error' }, icon('alert'), String(s.toolResult.error)));
    }
  }

  send(ev) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(ev));
  }

  // play schedules a PCM16 chunk right after the ones before it.
  play(b64) {
    const bin = atob(b64);
    const n = bin.length >> 1;
    this.audioBytes += bin.length;
    this.panel.dataset.audioBytes = String(this.audioBytes);
    if (!this.ctx || !n) return;
    const buf = this.ctx.createBuffer(1, n, RATE);
    const ch = buf.getChannelData(0);
    for (let i = 0; i < n; i++) {
      let v = bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);
      if (v >= 0x8000) v -= 0x10000;
      ch[i] = v / 0x8000;
    }
    const src = this.ctx.createBufferSource();
    src.buffer = buf;
    src.connect(this.ctx.destination);
    const at = Math.max(this.ctx.currentTime, this.playHead);
    src.start(at);
    this.playHead = at + buf.duration;
    this.playing.add(src);
    this.setState('vmSpeaking');
    src.addEventListener('ended', () => {
      this.playing.delete(src);
      if (!this.playing.size && !this.ended && this.panel.dataset.state === 'speaking') this.setState('vmListening');
    });
  }

  stopPlayback() {
    for (const src of this.playing) {
      try {
        src.stop();
      } catch { /* not started yet */ }
    }
    this.playing.clear();
    this.playHead = 0;
  }

  // release lets go of the socket, the microphone and the audio context
  // (also when the person stopped while they were being opened).
  release() {
    this.stopPlayback();
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) this.ws.close(1000);
    this.stream?.getTracks().forEach((tr) => tr.stop());
    this.nodes?.forEach((n) => n.disconnect());
    if (this.ctx && this.ctx.state !== 'closed') this.ctx.close().catch(() => {});
  }

  stop() {
    if (this.ended) return;
    this.ended = true;
    this.release();
    this.setState('vmEnded');
    this.stopBtn.hidden = true;
    this.btn.classList.remove('on');
    this.btn.title = t('vmStart');
    this.btn.setAttribute('aria-label', t('vmStart'));
    // The conversation was kept as a chat: the sidebar lists it.
    if (this.panel.dataset.chat) document.dispatchEvent(new CustomEvent('sova:chats-changed'));
  }
}

function toBase64(buf) {
  const bytes = new Uint8Array(buf);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

setup();
