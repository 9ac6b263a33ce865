import { execFileSync, spawn } from 'node:child_process';
import type { Synthesiser } from './synthesiser.js';

const COMMAND = 'espeak-ng';
/** espeak-ng writes a 44-byte RIFF header before its 22.05 kHz samples. */
const WAV_HEADER_BYTES = 44;
const SAMPLE_RATE = 22_050;
/** espeak-ng's own pace, in words per minute: `speed` 1. */
const WORDS_PER_MINUTE = 175;
/** Voices whose name is not the language's tag. */
const ALIASES: Record<string, string> = { zh: 'cmn', fr: 'fr-fr', en: 'en-us', no: 'nb' };

/** The voice names this machine's espeak-ng has (`en-us`, `de`, `pt-br`, ...); empty when it is not installed. */
function installedVoices(): Set<string> {
  try {
    const listing = execFileSync(COMMAND, ['--voices'], { encoding: 'utf8', timeout: 5_000 });
    return new Set(
      listing
        .split('\n')
        .slice(1)
        .map((line) => line.trim().split(/\s+/)[1]?.toLowerCase())
        .filter((v): v is string => Boolean(v)),
    );
  } catch {
    return new Set();
  }
}

/**
 * Debian's espeak-ng on this machine: one process per sentence, the text on its standard input,
 * the WAV on its standard output, nothing on disk. Every language it has, instantly, and robotic:
 * for trying the service's voice without a speech server (README, The agent's own voice).
 */
export function espeakNg(): Synthesiser {
  const voices = installedVoices();
  return {
    engine: 'espeak-ng',
    sampleRate: SAMPLE_RATE,
    voiceFor({ voice, language }) {
      if (voice) return voice;
      const tag = language.toLowerCase();
      const base = tag.split('-')[0]!;
      for (const candidate of [tag, ALIASES[tag], ALIASES[base], base])
        if (candidate && voices.has(candidate)) return candidate;
      return 'en-us';
    },
    synthesise(request, audio, signal) {
      return new Promise((resolve, reject) => {
        const wpm = String(Math.round(WORDS_PER_MINUTE * request.speed));
        const child = spawn(COMMAND, ['--stdout', '-v', this.voiceFor(request), '-s', wpm], {
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        const cut = () => {
          child.kill('SIGKILL');
          reject(signal.reason);
        };
        if (signal.aborted) return cut();
        signal.addEventListener('abort', cut, { once: true });
        let header = WAV_HEADER_BYTES;
        child.stdout.on('data', (chunk: Buffer) => {
          const skip = Math.min(header, chunk.length);
          header -= skip;
          if (chunk.length > skip) audio(chunk.subarray(skip));
        });
        let why = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (why = (why + d).slice(-300)));
        child.on('error', (err) =>
          reject(
            (err as NodeJS.ErrnoException).code === 'ENOENT'
              ? new Error(`${COMMAND} is not installed (apt-get install espeak-ng)`)
              : err,
          ),
        );
        child.on('close', (code) => {
          signal.removeEventListener('abort', cut);
          if (code === 0) resolve();
          else reject(new Error(`${COMMAND} exited ${code}${why ? `: ${why.trim()}` : ''}`));
        });
        child.stdin.on('error', () => {});
        // One line: espeak-ng reads a newline as a pause, and the text is one sentence.
        child.stdin.end(request.text.replace(/\s+/g, ' '));
      });
    },
  };
}
