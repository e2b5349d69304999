// The microphone's audio worklet for the voice mode (views/voicemode.js):
// it resamples what the microphone gives (the context's rate, often 48 kHz)
// to PCM16 at the rate the Realtime session takes (24 kHz) and posts it in
// 100 ms chunks. Loaded with audioWorklet.addModule, never imported.
class PCMCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.rate = options?.processorOptions?.rate || 24000;
    this.step = sampleRate / this.rate;
    this.pos = 0;
    this.size = Math.round(this.rate / 10);
    this.buf = new Int16Array(this.size);
    this.n = 0;
  }

  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (!ch || !ch.length) return true;
    // Linear interpolation is enough for speech recognition at 24 kHz.
    while (this.pos < ch.length) {
      const i = Math.floor(this.pos);
      const f = this.pos - i;
      const a = ch[i];
      const b = i + 1 < ch.length ? ch[i + 1] : a;
      const s = Math.max(-1, Math.min(1, a + (b - a) * f));
      this.buf[this.n++] = s < 0 ? s * 0x8000 : s * 0x7fff;
      if (this.n === this.size) {
        this.port.postMessage(this.buf.buffer, [this.buf.buffer]);
        this.buf = new Int16Array(this.size);
        this.n = 0;
      }
      this.pos += this.step;
    }
    this.pos -= ch.length;
    return true;
  }
}

registerProcessor('sova-pcm-capture', PCMCapture);
