import { type ChildProcess, spawn } from 'node:child_process';

export interface Target {
  url: string;
  child: ChildProcess;
  /** Milliseconds from spawn to the `Listening on` line. */
  startMs: number;
  stop(): Promise<void>;
}

/** Starts a TypeScript entry in its own process (so load and server never share a core's loop). */
export function startTarget(entry: string, env: NodeJS.ProcessEnv = {}): Promise<Target> {
  const began = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      if (out === null) return;
      out += chunk;
      const match = /Listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      const startMs = performance.now() - began;
      // From here on its output is drained and dropped, like logs shipped elsewhere.
      out = null as unknown as string;
      resolve({
        url: match[1]!,
        child,
        startMs,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
}
