import { spawn } from 'node:child_process';
import { type Recogniser, wavOf } from './recogniser.js';

const COMMAND = 'pocketsphinx_continuous';

/**
 * CMU PocketSphinx on this machine (Debian's `pocketsphinx` and `pocketsphinx-en-us`): one process
 * per utterance, the WAV on its standard input, nothing on disk. English only, and far less accurate
 * than a Whisper server: for trying voice without a speech server (README, Voice in every browser).
 */
export function pocketsphinx(): Recogniser {
  return {
    engine: 'pocketsphinx',
    languages: ['en'],
    recognise(utterance, signal) {
      return new Promise((resolve, reject) => {
        // Node's stdin pipe is a socket, which PocketSphinx cannot open as /dev/stdin: `cat` puts a real pipe in between.
        // A group of its own, so a cut-off recognition ends both processes of the pipeline.
        const child = spawn('sh', ['-c', `cat | exec ${COMMAND} -infile /dev/stdin -logfn /dev/null`], {
          stdio: ['pipe', 'pipe', 'ignore'],
          detached: true,
        });
        const cut = () => {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // Already gone.
          }
          reject(signal.reason);
        };
        if (signal.aborted) return cut();
        signal.addEventListener('abort', cut, { once: true });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.on('error', reject);
        child.on('close', (code) => {
          signal.removeEventListener('abort', cut);
          if (code === 0)
            resolve(
              out
                .split('\n')
                .map((l) => l.trim())
                .filter(Boolean)
                .join(' '),
            );
          else
            reject(
              new Error(
                code === 127
                  ? `${COMMAND} is not installed (apt-get install pocketsphinx pocketsphinx-en-us)`
                  : `${COMMAND} exited ${code}`,
              ),
            );
        });
        // The process may end before reading everything (a bad file): its stdin then errors, which the exit reports.
        child.stdin.on('error', () => {});
        child.stdin.end(wavOf(utterance));
      });
    },
  };
}
