// The agent's voice (README, The agent's own voice): the service's PCM, already as floats at the
// context's rate, played in the order it came, and the count of samples played posted back every
// 20 ms, which is how the widget knows what the visitor heard. `stop` drops what is queued at once.
// Plain JavaScript: it is loaded as it is by audioWorklet.addModule.
const REPORT_EVERY = Math.round(sampleRate / 50);

class Playback extends AudioWorkletProcessor {
  constructor() {
    super();
    this.queue = [];
    this.head = undefined;
    this.at = 0;
    this.played = 0;
    this.reported = 0;
    this.port.onmessage = (event) => {
      if (event.data === 'stop') {
        this.queue = [];
        this.head = undefined;
        this.port.postMessage({ stopped: this.played });
      } else this.queue.push(event.data);
    };
  }

  process(_inputs, outputs) {
    const channels = outputs[0];
    const out = channels[0];
    let filled = 0;
    while (filled < out.length) {
      if (!this.head) {
        this.head = this.queue.shift();
        this.at = 0;
        if (!this.head) break;
      }
      const n = Math.min(out.length - filled, this.head.length - this.at);
      out.set(this.head.subarray(this.at, this.at + n), filled);
      filled += n;
      this.at += n;
      if (this.at >= this.head.length) this.head = undefined;
    }
    out.fill(0, filled);
    for (let c = 1; c < channels.length; c++) channels[c].set(out);
    this.played += filled;
    if (this.played - this.reported >= REPORT_EVERY || (filled < out.length && this.played !== this.reported)) {
      this.reported = this.played;
      this.port.postMessage(this.played);
    }
    return true;
  }
}

registerProcessor('concierge-playback', Playback);
