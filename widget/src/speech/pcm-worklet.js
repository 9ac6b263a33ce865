// The widget's audio for the service (README, Voice in every browser): the microphone's samples,
// at the audio context's rate, averaged down to 16 kHz 16-bit mono and posted 100 ms at a time
// with their loudness (RMS), which the page uses to hear the end of an utterance. Plain JavaScript:
// it is loaded as it is by audioWorklet.addModule.
const OUT_RATE = 16000;
const CHUNK = 1600;

class Pcm16k extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / OUT_RATE;
    this.position = 0;
    this.sum = 0;
    this.count = 0;
    this.chunk = new Int16Array(CHUNK);
    this.length = 0;
    this.energy = 0;
  }

  process(inputs) {
    const samples = inputs[0] && inputs[0][0];
    if (!samples) return true;
    for (let i = 0; i < samples.length; i++) {
      this.sum += samples[i];
      this.count++;
      this.position += 1;
      if (this.position < this.step) continue;
      this.position -= this.step;
      const value = Math.max(-1, Math.min(1, this.sum / this.count));
      this.sum = 0;
      this.count = 0;
      this.chunk[this.length++] = value < 0 ? value * 0x8000 : value * 0x7fff;
      this.energy += value * value;
      if (this.length === CHUNK) {
        this.port.postMessage({ pcm: this.chunk.buffer, rms: Math.sqrt(this.energy / CHUNK) }, [this.chunk.buffer]);
        this.chunk = new Int16Array(CHUNK);
        this.length = 0;
        this.energy = 0;
      }
    }
    return true;
  }
}

registerProcessor('concierge-pcm-16k', Pcm16k);
