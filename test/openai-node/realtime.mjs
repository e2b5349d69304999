// Talks to Sova's /v1/realtime with the official openai package's
// Realtime WebSocket client, as a voice app would: each turn is audio
// appended, committed, and a response asked for; it waits for the answer
// that turn expects and prints what it saw as JSON.
//
// node realtime.mjs <baseURL> <apiKey> <ga|beta> <turns.json>
// turns.json: [{"expect": "words the answer's speech has"}, ...]
// (a turn with "decide": {"approve": [...]} sends Sova's sova.decide
// event instead of speech).
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';

const [baseURL, apiKey, dialect, turnsFile] = process.argv.slice(2);
const turns = JSON.parse(readFileSync(turnsFile, 'utf8'));
const client = new OpenAI({ apiKey, baseURL });
const headers = dialect === 'beta' ? { 'OpenAI-Beta': 'realtime=v1' } : {};
// The test server's certificate is its own.
const rt = new OpenAIRealtimeWS({ model: 'gpt-4o-realtime-mini', options: { headers, rejectUnauthorized: false } }, client);

const seen = [];
const out = { chatId: '', turns: [], types: {}, errors: [], steps: 0, handoffs: [] };
rt.on('error', (err) => out.errors.push(String(err.message ?? err)));
rt.on('event', (ev) => {
  seen.push(ev);
  out.types[ev.type] = (out.types[ev.type] ?? 0) + 1;
  if (ev.type === 'sova.step') out.steps++;
  if (ev.type === 'sova.handoff') out.handoffs.push(ev.agent);
});

function next(pred, ms = 20000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { rt.off('event', on); reject(new Error('timed out; last events: ' + seen.slice(-8).map((e) => e.type).join(','))); }, ms);
    const on = (ev) => { if (pred(ev)) { clearTimeout(timer); rt.off('event', on); resolve(ev); } };
    rt.on('event', on);
  });
}

function said(ev) {
  return (ev.response?.output ?? []).flatMap((it) => (it.content ?? []).map((c) => c.transcript ?? c.text ?? '')).join(' ');
}

// 300 ms of a loud tone, PCM16 at 24 kHz.
const pcm = Buffer.alloc(24000 * 2 * 3 / 10);
for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE((Math.floor(i / 20) % 2 ? 8000 : -8000), i * 2);
const audio = pcm.toString('base64');

const created = await next((e) => e.type === 'session.created');
out.chatId = created.session?.sova?.chat_id ?? '';
out.path = created.session?.sova?.path ?? '';
const manual = dialect === 'beta'
  ? { modalities: ['audio', 'text'], voice: 'sage', turn_detection: null }
  : { type: 'realtime', audio: { input: { turn_detection: null } } };
rt.send({ type: 'session.update', session: manual });
await next((e) => e.type === 'session.updated');

const audioDelta = dialect === 'beta' ? 'response.audio.delta' : 'response.output_audio.delta';
for (const turn of turns) {
  const t0 = Date.now();
  let firstAudio = 0, textBefore = 0, text = 0;
  const transcriptDelta = dialect === 'beta' ? 'response.audio_transcript.delta' : 'response.output_audio_transcript.delta';
  const onAudio = (e) => {
    if (e.type === audioDelta && !firstAudio) { firstAudio = Date.now() - t0; textBefore = text; }
    if (e.type === transcriptDelta) text++;
  };
  rt.on('event', onAudio);
  const answered = next((e) => e.type === 'response.done' && said(e).includes(turn.expect));
  if (turn.decide) {
    rt.send({ type: 'sova.decide', ...turn.decide });
  } else {
    rt.send({ type: 'input_audio_buffer.append', audio });
    rt.send({ type: 'input_audio_buffer.commit' });
    rt.send({ type: 'response.create' });
  }
  try {
    const done = await answered;
    out.turns.push({ said: said(done), firstAudioMs: firstAudio, ms: Date.now() - t0, transcriptDeltasBeforeAudio: textBefore, transcriptDeltas: text });
  } catch (err) {
    out.turns.push({ error: String(err.message) });
    break;
  } finally {
    rt.off('event', onAudio);
  }
}
// Held actions seen in Sova's steps, for the decide-by-id turns.
out.held = seen.filter((e) => e.type === 'sova.step' && e.step?.data?.name === 'assistant_confirmation')
  .flatMap((e) => (e.step.data.value.actions ?? []).map((a) => a.id));
out.transcripts = seen.filter((e) => e.type === 'conversation.item.input_audio_transcription.completed').map((e) => e.transcript);
rt.close();
console.log(JSON.stringify(out));
